//! `agent-tui-confine`: the command wrapper on its own (`__confine`),
//! installed beside `agent-tui`, which runs it for
//! every confined command and hook. It holds nothing but the wrapper, so
//! it starts fast; `agent-tui` itself still answers both steps when it is
//! not there.

use std::process::ExitCode;

fn main() -> ExitCode {
    use agent_tui::agent::confine;
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let code = match args.get(1) {
        Some(a) if a == confine::CONFINE_ARG => confine::wrapper_main(&args[2..]),
        _ => {
            eprintln!(
                "agent-tui-confine is agent-tui's command wrapper; agent-tui runs it \
                 ({} NETWORK WRITABLE... -- PROGRAM [ARGS...])",
                confine::CONFINE_ARG
            );
            2
        }
    };
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
