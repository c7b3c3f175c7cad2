//! Shared set-up of the commands: an engine built from the command line's
//! flags (through the engine's one builder), the one-thread runtime it runs
//! on, and SPEC's exit codes for what the engine says.

use std::path::Path;

use super::Exit;
use super::args::GlobalArgs;
use crate::agent::{BuildError, Engine, EngineBuilder};
use crate::protocol::EngineError;

/// Prints `message` as a usage/configuration error.
pub fn usage(message: impl std::fmt::Display) -> Exit {
    eprintln!("agent-tui: {message}");
    Exit::Usage
}

/// Prints `message` as a failure of the command.
pub fn failed(message: impl std::fmt::Display) -> Exit {
    eprintln!("agent-tui: {message}");
    Exit::Failed
}

/// A builder for `root` with the global flags (`--config`, `--add-dir`,
/// `--provider`, `--model`, `--routing`).
pub fn builder(global: &GlobalArgs, root: &Path) -> EngineBuilder {
    EngineBuilder::new(root)
        .config_file(global.config.clone())
        .add_dirs(global.add_dir.clone())
        .choose(
            global.provider.clone(),
            global.model.clone(),
            global.routing.clone(),
        )
}

/// Why the engine could not be built, as an exit.
pub fn build_error(e: BuildError) -> Exit {
    if e.usage() { usage(e) } else { failed(e) }
}

/// A refused command or query as an exit: a conflict is 3, what names
/// nothing or is malformed 2, the rest 1.
pub fn engine_error(e: EngineError) -> Exit {
    let exit = match &e {
        EngineError::Conflict { .. } => Exit::Conflict,
        EngineError::NotFound { .. }
        | EngineError::Invalid { .. }
        | EngineError::Forbidden { .. } => Exit::Usage,
        EngineError::Busy { .. } | EngineError::Failed { .. } | EngineError::Unavailable { .. } => {
            Exit::Failed
        }
    };
    eprintln!("agent-tui: {e}");
    exit
}

/// The headless commands' runtime: one thread. A job's events pass from
/// its task to the engine to the printer; on one thread that costs no
/// wake-ups between threads (blocking tools still run on their own pool).
pub fn runtime() -> Result<tokio::runtime::Runtime, Exit> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| failed(format!("cannot start the async runtime: {e}")))
}

/// Builds the engine on a fresh runtime.
pub fn start(builder: EngineBuilder) -> Result<(tokio::runtime::Runtime, Engine), Exit> {
    let rt = runtime()?;
    let engine = {
        let _guard = rt.enter();
        builder.build().map_err(build_error)?
    };
    Ok((rt, engine))
}

/// `start`, saying on stderr what starting settled (commands that print
/// no events).
pub fn start_reported(builder: EngineBuilder) -> Result<(tokio::runtime::Runtime, Engine), Exit> {
    let started = start(builder)?;
    for r in started.1.recovered() {
        eprintln!("agent-tui: recovered: {}", r.summary());
    }
    Ok(started)
}

/// Runs `work` with the engine, then shuts it down: everything it recorded
/// is in the store before the command ends (exit 2 if some could not be).
pub fn run<F, Fut>(rt: tokio::runtime::Runtime, engine: Engine, work: F) -> Exit
where
    F: FnOnce(Engine) -> Fut,
    Fut: std::future::Future<Output = Exit>,
{
    let exit = rt.block_on(crate::agent::no_blocking(async {
        let exit = work(engine.clone()).await;
        match engine.shutdown().await {
            Ok(()) => exit,
            Err(e) => usage(e),
        }
    }));
    drop(engine);
    drop(rt);
    exit
}
