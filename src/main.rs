//! The `agent-tui` binary: parse the command line, hand it to a front end.

use std::process::ExitCode;

use clap::Parser;

/// Exit status of a process whose reader went away (128 + SIGPIPE).
const CLOSED_PIPE: i32 = 141;

fn main() -> ExitCode {
    use agent_tui::agent::confine;
    // The wrapper that confines a command, before anything else starts.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == confine::CONFINE_ARG) {
        let code = confine::wrapper_main(&args[2..]);
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    if let Ok(exe) = std::env::current_exe() {
        // The small wrapper installed beside us, else this binary itself.
        let small = exe.with_file_name("agent-tui-confine");
        confine::install_wrapper(if small.is_file() { small } else { exe });
    }
    // Our environment holds API keys: no process of this user reads it
    // (or our memory) through /proc or ptrace, a command least of all.
    confine::keep_to_ourselves();
    quiet_on_closed_pipe();
    let cli = agent_tui::cli::Cli::parse();
    agent_tui::cli::run(cli).into()
}

/// `agent-tui sessions show | head` closes stdout early; printing then
/// fails, which Rust reports as a panic. Such a reader wants no more: end
/// quietly, as a program killed by SIGPIPE would.
fn quiet_on_closed_pipe() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if message.contains("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(CLOSED_PIPE);
        }
        previous(info);
    }));
}
