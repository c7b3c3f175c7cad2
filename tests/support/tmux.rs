//! A real pseudo-terminal for end-to-end TUI tests: a private tmux server
//! per test, keys in, screen text out.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use std::time::{Duration, Instant};

/// One tmux server (its own socket) with one session named `e2e`; killed on drop.
pub struct Tmux {
    pub socket: String,
}

impl Tmux {
    /// A new server named after `name` running `command` in a `w`x`h` pane.
    pub fn start(name: &str, command: &str, (w, h): (u16, u16)) -> Tmux {
        let tmux = Tmux {
            socket: format!("agent-tui-{name}-{}", std::process::id()),
        };
        let (w, h) = (w.to_string(), h.to_string());
        let started = tmux
            .cmd()
            .args([
                "new-session",
                "-d",
                "-s",
                "e2e",
                "-x",
                &w,
                "-y",
                &h,
                command,
            ])
            .status()
            .unwrap();
        assert!(started.success());
        tmux
    }

    /// A tmux format of the pane, e.g. `#{pane_tty}` or `#{alternate_on}`.
    pub fn pane(&self, format: &str) -> String {
        let out = self
            .cmd()
            .args(["display", "-p", "-t", "e2e", format])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// `stty -a` of the pane's terminal.
    pub fn stty(&self) -> String {
        let out = Command::new("stty")
            .args(["-a", "-F", &self.pane("#{pane_tty}")])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn cmd(&self) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.socket]);
        c
    }

    pub fn keys(&self, keys: &[&str]) {
        let ok = self
            .cmd()
            .args(["send-keys", "-t", "e2e"])
            .args(keys)
            .status()
            .unwrap();
        assert!(ok.success());
    }

    pub fn screen(&self) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-t", "e2e"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Ctrl+C twice, and waits until the TUI (and so its session) is gone.
    pub fn quit(&self) {
        self.keys(&["C-c"]);
        self.keys(&["C-c"]);
        let deadline = Instant::now() + Duration::from_secs(10);
        while self
            .cmd()
            .args(["has-session", "-t", "e2e"])
            .status()
            .is_ok_and(|s| s.success())
        {
            assert!(Instant::now() < deadline, "Ctrl+C twice did not quit");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until the screen shows `text`.
    pub fn wait_for(&self, text: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let s = self.screen();
            if s.contains(text) {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {text:?}; screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").status();
    }
}

/// The test build of agent-tui in a fresh tmux server (120x36) on `root`,
/// with a clean environment: only the test key, the state and config dirs
/// of `env`, and `extra` arguments after the root (`--continue` ...).
pub fn start_agent(
    env: &super::Env,
    cfg: &std::path::Path,
    root: &std::path::Path,
    name: &str,
    extra: &str,
) -> Tmux {
    start_agent_sized(env, cfg, root, name, extra, (120, 36))
}

/// `start_agent` in a terminal of `size` (columns, rows).
pub fn start_agent_sized(
    env: &super::Env,
    cfg: &std::path::Path,
    root: &std::path::Path,
    name: &str,
    extra: &str,
    size: (u16, u16),
) -> Tmux {
    let home = env.home.path();
    let command = format!(
        "env -i PATH=/usr/bin:/bin HOME={h} TERM=xterm-256color AGENT_TUI_HOME={h}/state XDG_CONFIG_HOME={h}/config TEST_LLM_KEY={key} {bin} --config {cfg} {root} {extra}",
        h = home.display(),
        key = super::jobs::KEY,
        bin = env!("CARGO_BIN_EXE_agent-tui"),
        cfg = cfg.display(),
        root = root.display(),
    );
    Tmux::start(name, &command, size)
}
