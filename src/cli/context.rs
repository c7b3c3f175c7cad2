//! Shared set-up of the headless commands: configuration, workspace, state
//! dir, provider, tokio runtime, and an engine to drive.

use std::path::Path;
use std::time::Duration;

use super::args::GlobalArgs;
use super::{Exit, load_config, process_env};
use crate::agent::{EngineContext, SessionChoice, settle_interrupted};
use crate::checkpoint::Recovery;
use crate::config::{Config, RoutingConfig, RoutingMode, SETUP_HINT, ollama_answers};
use crate::llm::{Provider, build_provider};
use crate::store::{RootStore, StateDirs, Store, StoreError};
use crate::tools::Registry;
use crate::workspace::{ScopeSpec, Workspace};

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

/// The agent root `root` with its scopes: `[workspace] extra_roots`
/// (relative to the root) and `--add-dir` (relative to the current folder).
pub fn open_workspace(
    global: &GlobalArgs,
    config: &Config,
    root: &Path,
) -> Result<Workspace, Exit> {
    workspace(global, config, root).map_err(usage)
}

/// `open_workspace` without printing: the reason it cannot be opened.
pub fn workspace(global: &GlobalArgs, config: &Config, root: &Path) -> Result<Workspace, String> {
    let mut specs = Vec::new();
    for text in &config.workspace.extra_roots {
        let spec =
            ScopeSpec::parse(text, root).map_err(|e| format!("[workspace] extra_roots: {e}"))?;
        specs.push(spec);
    }
    let here = std::env::current_dir().unwrap_or_default();
    for text in &global.add_dir {
        specs.push(ScopeSpec::parse(text, &here).map_err(|e| format!("--add-dir: {e}"))?);
    }
    Workspace::open_scoped(root, &specs).map_err(|e| e.to_string())
}

/// The store of the state home, as `[storage]` says: opened once by each
/// command and passed down. A store that cannot be used is exit 2.
pub fn open_store(config: &Config) -> Result<Store, Exit> {
    let dirs = StateDirs::locate(&process_env)
        .ok_or_else(|| usage("cannot find a place for agent-tui's state: set AGENT_TUI_HOME"))?;
    Store::open(
        &dirs.home,
        &config.storage,
        &process_env,
        &crate::agent::LegacySessions,
    )
    .map_err(store_error)
}

/// `workspace`'s part of the store `config` names, with any apply or
/// rollback an earlier process left half-written settled first (the
/// caller reports what was settled).
pub fn open_root(
    config: &Config,
    workspace: &Workspace,
) -> Result<(RootStore, Vec<Recovery>), Exit> {
    let state = open_store(config)?.root(workspace.root());
    let recovered = settle_interrupted(workspace, &state).map_err(failed)?;
    Ok((state, recovered))
}

/// `open_root` for a command that reports recoveries as plain lines.
pub fn open_root_reported(config: &Config, workspace: &Workspace) -> Result<RootStore, Exit> {
    let (state, recovered) = open_root(config, workspace)?;
    for r in &recovered {
        eprintln!("agent-tui: recovered: {}", r.summary());
    }
    Ok(state)
}

/// A store error as an exit: 2 when the store is unusable or the request
/// is malformed, 1 otherwise.
pub fn store_error(e: StoreError) -> Exit {
    match e {
        StoreError::NotFound(_) | StoreError::Invalid(_) => usage(e),
        e if e.is_fatal() => usage(e),
        e => failed(e),
    }
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

/// The providers a job runs on: the first one, and for `hybrid_auto` the
/// one it falls back to.
pub struct Routed {
    pub primary: Box<dyn Provider>,
    pub fallback: Option<Box<dyn Provider>>,
}

/// The providers chosen by flags, `[routing]`, config or detection; exit 2 if none.
pub fn providers(global: &GlobalArgs, config: &Config) -> Result<Routed, Exit> {
    quiet_providers(global, config).map_err(usage)
}

/// `[routing]` with `--routing` applied.
pub fn routing(global: &GlobalArgs, config: &Config) -> Result<RoutingConfig, String> {
    let mut routing = config.routing.clone();
    if let Some(mode) = &global.routing {
        routing.mode = RoutingMode::parse(mode)?;
    }
    Ok(routing)
}

/// The providers, or the reason there are none (for the TUI, which opens
/// anyway). `remote` and `local` build one provider and never the other.
pub fn quiet_providers(global: &GlobalArgs, config: &Config) -> Result<Routed, String> {
    providers_for(global, config, &routing(global, config)?)
}

/// The providers of `routing` (its mode may differ from the config's: eval).
pub fn providers_for(
    global: &GlobalArgs,
    config: &Config,
    routing: &RoutingConfig,
) -> Result<Routed, String> {
    let build = |name: Option<&str>, model: Option<&str>| -> Result<Box<dyn Provider>, String> {
        let choice = config
            .choose_provider(name, model, &process_env, ollama_answers)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| SETUP_HINT.to_string())?;
        build_provider(
            &choice.name,
            &choice.provider,
            Duration::from_secs(config.agent.request_timeout_secs),
            &process_env,
        )
        .map_err(|e| e.to_string())
    };
    let named = |key: &str, name: &Option<String>| {
        name.clone().ok_or_else(|| {
            format!(
                "routing mode {} needs [routing] {key} = \"<provider name>\" in the config",
                routing.mode.as_str()
            )
        })
    };
    let model = global.model.as_deref();
    Ok(match routing.mode {
        RoutingMode::Remote => Routed {
            primary: build(
                global.provider.as_deref().or(routing.remote.as_deref()),
                model,
            )?,
            fallback: None,
        },
        RoutingMode::Local => {
            let local = match &global.provider {
                Some(name) => name.clone(),
                None => named("local", &routing.local)?,
            };
            Routed {
                primary: build(Some(&local), model)?,
                fallback: None,
            }
        }
        RoutingMode::HybridAuto => {
            let local = named("local", &routing.local)?;
            let remote = named("remote", &routing.remote)?;
            Routed {
                primary: build(Some(&local), model)?,
                fallback: Some(build(Some(&remote), None)?),
            }
        }
    })
}

/// An engine context for `root` recording into `state`; with
/// `with_provider` a model is set up too.
pub fn engine_context(
    global: &GlobalArgs,
    root: &Path,
    session: SessionChoice,
    with_provider: bool,
    state: (RootStore, Vec<Recovery>),
) -> Result<EngineContext, Exit> {
    let config = load_config(global)?.config;
    let workspace = open_workspace(global, &config, root)?;
    let routed = if with_provider {
        Some(providers(global, &config)?)
    } else {
        None
    };
    assemble(global, config, workspace, session, routed, state).map_err(usage)
}

/// An engine context from its parts: `[routing]` with `--routing`, the
/// tools of the root.
pub fn assemble(
    global: &GlobalArgs,
    mut config: Config,
    workspace: Workspace,
    session: SessionChoice,
    routed: Option<Routed>,
    (state, recovered): (RootStore, Vec<Recovery>),
) -> Result<EngineContext, String> {
    config.routing = routing(global, &config)?;
    let registry = Registry::for_root(workspace.root(), &config)
        .map_err(|e| format!("internal error: {e}"))?;
    let (provider, fallback) = match routed {
        Some(r) => (Some(r.primary), r.fallback),
        None => (None, None),
    };
    Ok(EngineContext {
        workspace,
        config,
        registry,
        provider,
        fallback,
        state: Some(state),
        session,
        recovered,
    })
}

/// The TUI's providers: none is not fatal (the tree and review still
/// work); the status bar's label, and why there is none.
pub struct TuiProviders {
    pub routed: Option<Routed>,
    pub label: String,
    pub notice: Option<String>,
}

pub fn tui_providers(global: &GlobalArgs, config: &Config) -> TuiProviders {
    match quiet_providers(global, config) {
        Ok(routed) => TuiProviders {
            label: format!("{} {}", routed.primary.name(), routed.primary.model()),
            routed: Some(routed),
            notice: None,
        },
        Err(why) => TuiProviders {
            routed: None,
            label: "no provider".to_string(),
            notice: Some(why),
        },
    }
}

/// `engine_context` for `root`, opening its store here.
pub fn engine_context_for(
    global: &GlobalArgs,
    root: &Path,
    session: SessionChoice,
) -> Result<EngineContext, Exit> {
    let config = load_config(global)?.config;
    let state = open_root(&config, &open_workspace(global, &config, root)?)?;
    engine_context(global, root, session, false, state)
}

/// Sends `ops` to a fresh engine for `ctx` and prints its events until
/// `done` maps one to an exit code.
pub fn drive_ops(
    ctx: EngineContext,
    ops: Vec<crate::protocol::Op>,
    json: bool,
    mut done: impl FnMut(&crate::protocol::Event) -> Option<Exit>,
) -> Exit {
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(exit) => return exit,
    };
    let store = ctx.state.as_ref().map(|s| s.store.clone());
    let exit = rt.block_on(async move {
        let mut engine = match crate::agent::spawn(ctx) {
            Ok(e) => e,
            Err(e) => return usage(e),
        };
        for op in ops {
            if engine.ops.send(op).is_err() {
                return failed("the engine stopped unexpectedly");
            }
        }
        let mut printer = super::output::Printer::new(json);
        while let Some(event) = engine.events.recv().await {
            printer.print(&event);
            if engine.events.is_empty() {
                printer.flush();
            }
            if let Some(exit) = done(&event) {
                return exit;
            }
        }
        failed("the engine stopped unexpectedly")
    });
    drop(rt);
    // What the engine recorded is in the store before the command ends.
    match store.map(|s| s.flush()) {
        Some(Err(e)) => usage(e),
        _ => exit,
    }
}
