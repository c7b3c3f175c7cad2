//! The real binary under strace: to trace its syscalls, or to crash it (or
//! fail a syscall) at an exact point with strace's fault injection.

use std::process::Command;

use super::Env;
use super::jobs::KEY;

/// Whether strace is here; required when AGENT_TUI_REQUIRE_STRACE=1 (CI).
pub fn available() -> bool {
    if Command::new("strace").arg("-V").output().is_ok() {
        return true;
    }
    let why = "strace is not installed";
    assert!(
        std::env::var("AGENT_TUI_REQUIRE_STRACE").as_deref() != Ok("1"),
        "{why}"
    );
    eprintln!("skipped: {why}");
    false
}

/// `strace STRACE_ARGS agent-tui` with the env's environment; add the
/// binary's arguments and run it.
pub fn command(env: &Env, strace_args: &[&str]) -> Command {
    let plain = env.cmd();
    let mut cmd = Command::new("strace");
    cmd.args(strace_args)
        .arg(plain.get_program())
        .env("TEST_LLM_KEY", KEY);
    for (key, value) in plain.get_envs() {
        match value {
            Some(v) => cmd.env(key, v),
            None => cmd.env_remove(key),
        };
    }
    cmd
}
