//! Headless front ends: the parsed command line is dispatched here, one
//! module per subcommand. Errors become SPEC's exit codes.

mod args;
mod context;
mod doctor;
mod eval;
mod exec;
mod history;
mod logging;
mod mcp;
mod output;
mod reopen;
mod review;
mod store;
mod tool;

pub use args::{Cli, Command};

use std::process::ExitCode;

use crate::config::{self, LoadedConfig};

/// SPEC section 2 exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Ok,
    /// The job or command failed (message on stderr).
    Failed,
    /// Usage or configuration error.
    Usage,
    /// Hash mismatch on apply or rollback.
    Conflict,
    Interrupted,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(match e {
            Exit::Ok => 0,
            Exit::Failed => 1,
            Exit::Usage => 2,
            Exit::Conflict => 3,
            Exit::Interrupted => 130,
        })
    }
}

/// The process environment, as the engine's injectable lookups expect it.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Exit {
    let opens_tui = cli.path.is_some() || cli.continue_session || cli.resume.is_some();
    if cli.command.is_some() && opens_tui {
        eprintln!(
            "agent-tui: PATH, --continue and --resume open the TUI; they cannot be combined \
             with a subcommand (subcommands take --root PATH)"
        );
        return Exit::Usage;
    }
    let _logging = logging::start(cli.global.verbose);
    let Some(command) = cli.command else {
        return tui(&cli);
    };
    match command {
        Command::Tool(args) => tool::run(&cli.global, args),
        Command::Doctor(args) => doctor::run(&cli.global, &args),
        Command::Exec(args) => exec::run(&cli.global, args),
        Command::Eval(args) => eval::run(&cli.global, &args),
        Command::Sessions(args) => history::sessions(&cli.global, &args),
        Command::Review(args) => review::run(&cli.global, &args),
        Command::Checkpoints(args) => history::checkpoints(&cli.global, &args),
        Command::Rollback(args) => rollback(&cli.global, &args),
        Command::Audit(args) => match args.action {
            args::AuditAction::Verify { root } => history::audit_verify(&cli.global, &root),
        },
        Command::Store(args) => store::run(&cli.global, &args),
        Command::Mcp(args) => mcp::run(&cli.global, &args),
    }
}

/// Loads the configuration or reports why not (exit 2).
fn load_config(global: &args::GlobalArgs) -> Result<LoadedConfig, Exit> {
    config::load(global.config.as_deref(), &process_env).map_err(|e| {
        eprintln!("agent-tui: {e}");
        Exit::Usage
    })
}

/// `agent-tui rollback CHECKPOINT [--hunks ...]`: exit 3 on conflict.
fn rollback(global: &args::GlobalArgs, args: &args::RollbackArgs) -> Exit {
    use crate::protocol::{EventBody, Op};
    let ctx =
        match context::engine_context_for(global, &args.root, crate::agent::SessionChoice::None) {
            Ok(c) => c,
            Err(exit) => return exit,
        };
    let op = Op::Rollback {
        checkpoint_id: args.checkpoint.clone(),
        hunks: args.hunks.clone(),
        files: args.files.clone(),
    };
    context::drive_ops(ctx, vec![op], false, |event| match &event.body {
        EventBody::RollbackCompleted { .. } => Some(Exit::Ok),
        EventBody::RollbackFailed { code, .. } => Some(match code.as_str() {
            "conflict" => Exit::Conflict,
            "unknown_hunk" | "unknown_file" | "not_found" => Exit::Usage,
            _ => Exit::Failed,
        }),
        _ => None,
    })
}

/// `agent-tui [PATH] [--continue | --resume [ID]]`: the terminal UI.
fn tui(cli: &Cli) -> Exit {
    use crate::agent::SessionChoice;
    use std::io::IsTerminal;
    let root = cli
        .path
        .clone()
        .unwrap_or_else(|| std::path::PathBuf::from("."));
    let loaded = match load_config(&cli.global) {
        Ok(c) => c,
        Err(exit) => return exit,
    };
    // A bad --routing is a usage error, not a missing provider.
    if let Err(e) = context::routing(&cli.global, &loaded.config) {
        return context::usage(e);
    }
    let keymap = match crate::tui::KeyMap::from_config(&loaded.config.keys) {
        Ok(k) => k,
        Err(e) => return context::usage(e),
    };
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        eprintln!(
            "agent-tui: the TUI needs a terminal; for scripts use `agent-tui exec` (see --help)"
        );
        return Exit::Usage;
    }
    let workspace = match context::open_workspace(&cli.global, &loaded.config, &root) {
        Ok(w) => w,
        Err(exit) => return exit,
    };
    let (state, recovered) = match context::open_root(&loaded.config, &workspace) {
        Ok(s) => s,
        Err(exit) => return exit,
    };
    // `--resume` without an id opens a picker when there is anything to pick.
    let pick_session = matches!(&cli.resume, Some(id) if id.is_empty())
        && state.sessions().is_ok_and(|l| l.len() > 1);
    let resume = match (&cli.resume, cli.continue_session) {
        (Some(id), _) if !id.is_empty() => Some(id.clone()),
        (Some(_), _) if pick_session => None,
        (Some(_), _) | (None, true) => match state.latest_session() {
            Ok(Some(id)) => Some(id),
            Ok(None) => return context::usage("there is no session to resume in this agent root"),
            Err(e) => return context::store_error(e),
        },
        (None, false) => None,
    };
    if let Some(id) = &resume
        && !state.has_session(id).unwrap_or(false)
    {
        return context::usage(format!(
            "cannot resume session {id}: no session {id} in this agent root \
             (agent-tui sessions list shows them)"
        ));
    }
    let choice = resume
        .clone()
        .map_or(SessionChoice::New, SessionChoice::Resume);
    let mut ctx =
        match context::engine_context(&cli.global, &root, choice, false, (state, recovered)) {
            Ok(c) => c,
            Err(exit) => return exit,
        };
    let providers = context::tui_providers(&cli.global, &loaded.config);
    let ok = providers.routed.is_some();
    if let Some(routed) = providers.routed {
        ctx.provider = Some(routed.primary);
        ctx.fallback = routed.fallback;
    }
    let start = crate::tui::TuiStart {
        mode: loaded.config.ui.default_mode,
        provider_label: providers.label,
        provider_ok: ok,
        notice: providers.notice,
        resumed: resume,
        pick_session,
        keymap,
        opener: ctx.state.as_ref().map(|s| {
            // A synced write: kept off the way to the first frame.
            let (store, path) = (s.store.clone(), s.path().to_string());
            std::thread::spawn(move || store.remember_root(&path));
            reopen::CliOpener::shared(&cli.global, &loaded.config, &s.store)
        }),
    };
    let store = ctx.state.as_ref().map(|s| s.store.clone());
    let exit = match crate::tui::run(ctx, start) {
        Ok(()) => Exit::Ok,
        Err(e) => context::failed(e),
    };
    match store.map(|s| s.flush()) {
        Some(Err(e)) => context::usage(e),
        _ => exit,
    }
}
