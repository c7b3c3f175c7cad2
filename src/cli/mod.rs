//! Headless front ends: the parsed command line is dispatched here, one
//! module per subcommand. Errors become SPEC's exit codes.

mod args;
mod context;
mod doctor;
mod eval;
mod exec;
mod history;
mod hooks;
mod index;
mod keys;
mod logging;
mod mcp;
mod output;
mod review;
mod serve;
mod store;
mod tool;

pub use args::{Cli, Command};

use std::process::ExitCode;

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
        Command::Tool(args) => tool::run_tool(&cli.global, args),
        Command::Index(args) => index::run_index(&cli.global, &args),
        Command::Doctor(args) => doctor::run(&cli.global, &args),
        Command::Exec(args) => exec::run_exec(&cli.global, args),
        Command::Eval(args) => eval::run(&cli.global, &args),
        Command::Sessions(args) => history::sessions(&cli.global, &args),
        Command::Review(args) => review::run_review(&cli.global, &args),
        Command::Checkpoints(args) => history::checkpoints(&cli.global, &args),
        Command::Rollback(args) => rollback(&cli.global, &args),
        Command::Audit(args) => match args.action {
            args::AuditAction::Verify { root } => history::audit_verify(&cli.global, &root),
            args::AuditAction::List {
                root,
                user,
                session,
                limit,
                json,
            } => history::audit_list(&cli.global, &root, user, session, limit, json),
        },
        Command::Store(args) => store::run(&cli.global, &args),
        Command::Mcp(args) => mcp::run_mcp(&cli.global, &args),
        Command::Hooks(args) => hooks::run_hooks(&cli.global, args),
        Command::Serve(args) => serve::run(&cli.global, &args),
    }
}

/// `agent-tui rollback CHECKPOINT [--hunks ...]`: exit 3 on conflict.
fn rollback(global: &args::GlobalArgs, args: &args::RollbackArgs) -> Exit {
    use crate::protocol::{Command, EngineError};
    let (rt, engine) = match context::start(context::builder(global, &args.root)) {
        Ok(started) => started,
        Err(exit) => return exit,
    };
    context::run(rt, engine, |engine| async move {
        let mut events = engine.subscribe(crate::agent::Filter::All);
        // The checkpoint's session records the rollback, and its model
        // hears of it on the next --continue (unless another agent-tui
        // drives that session now).
        let session = engine.checkpoints().await.ok().and_then(|all| {
            all.into_iter()
                .find(|c| c.checkpoint_id == args.checkpoint)
                .and_then(|c| c.session_id)
        });
        let rollback = |tell: Option<String>| Command::Rollback {
            checkpoint_id: args.checkpoint.clone(),
            hunks: args.hunks.clone(),
            files: args.files.clone(),
            tell,
        };
        let mut done = engine.command(rollback(session.clone())).await;
        if let (Err(EngineError::Busy { .. }), Some(id)) = (&done, &session) {
            eprintln!(
                "agent-tui: session {id} is open in another agent-tui: the rollback is not \
                 recorded there, and its model does not hear of it"
            );
            done = engine.command(rollback(None)).await;
        }
        // What happened, as events (recoveries first, then the rollback's).
        let mut printer = output::Printer::new(false);
        while events.pending() {
            match events.next().await {
                Some(event) => printer.print(&event),
                None => break,
            }
        }
        printer.flush();
        match done {
            Ok(_) => Exit::Ok,
            Err(EngineError::Conflict { .. }) => Exit::Conflict,
            Err(EngineError::NotFound { .. } | EngineError::Invalid { .. }) => Exit::Usage,
            Err(_) => Exit::Failed,
        }
    })
}

/// `agent-tui [PATH] [--continue | --resume [ID]]`: the terminal UI.
fn tui(cli: &Cli) -> Exit {
    use crate::agent::Providers;
    use crate::tui::TuiStart;
    use std::io::IsTerminal;
    let root = cli
        .path
        .clone()
        .unwrap_or_else(|| std::path::PathBuf::from("."));
    // The config's own mistakes come first, then a missing terminal.
    let loaded = match crate::config::load(cli.global.config.as_deref(), &crate::agent::process_env)
    {
        Ok(loaded) => loaded,
        Err(e) => return context::usage(e),
    };
    if let Some(mode) = &cli.global.routing
        && let Err(e) = crate::config::RoutingMode::parse(mode)
    {
        return context::usage(e);
    }
    let keymap = match keys::keymap(&loaded) {
        Ok(k) => k,
        Err(e) => return context::usage(e),
    };
    let config = loaded.config;
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        eprintln!(
            "agent-tui: the TUI needs a terminal; for scripts use `agent-tui exec` (see --help)"
        );
        return Exit::Usage;
    }
    let builder = context::builder(&cli.global, &root)
        .config(config)
        .providers(Providers::Optional)
        .remember(true)
        .front_end(crate::agent::FrontEnd::Lasting)
        .front_name("tui");
    let (rt, engine) = match context::start(builder) {
        Ok(started) => started,
        Err(exit) => return exit,
    };
    let resume = match rt.block_on(resume(&engine, cli)) {
        Ok(r) => r,
        Err(exit) => return context::run(rt, engine, |_| async move { exit }),
    };
    let start = TuiStart {
        mode: engine.config().ui.default_mode,
        keymap,
        resume,
    };
    match crate::tui::run(rt, engine, start) {
        Ok(()) => Exit::Ok,
        Err(e) => context::failed(e),
    }
}

/// Which session the TUI opens with: `--continue` (the latest; exit 2
/// when there is none), `--resume ID` (exit 2 when it is not here),
/// `--resume` alone (a picker when there is more than one), or a new one.
async fn resume(engine: &crate::agent::Engine, cli: &Cli) -> Result<crate::tui::Resume, Exit> {
    use crate::tui::Resume;
    match (&cli.resume, cli.continue_session) {
        (Some(id), _) if !id.is_empty() => {
            let known = engine
                .sessions()
                .await
                .map_err(context::engine_error)?
                .iter()
                .any(|s| &s.session_id == id);
            if !known {
                return Err(context::usage(format!(
                    "cannot resume session {id}: no session {id} in this agent root \
                     (agent-tui sessions list shows them)"
                )));
            }
            Ok(Resume::Session(id.clone()))
        }
        (Some(_), _) | (None, true) => {
            let sessions = engine.sessions().await.map_err(context::engine_error)?;
            if cli.resume.is_some() && sessions.len() > 1 {
                return Ok(Resume::Pick(sessions));
            }
            match sessions.last() {
                Some(s) => Ok(Resume::Session(s.session_id.clone())),
                None => Err(context::usage(
                    "there is no session to resume in this agent root",
                )),
            }
        }
        (None, false) => Ok(Resume::New),
    }
}
