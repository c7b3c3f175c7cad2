//! The one way to start an engine: `EngineBuilder` reads the config, opens
//! the agent root with its scopes, opens the store and settles what an
//! earlier process left half-written, chooses the providers (`[routing]`),
//! registers the tools and starts the engine task. Every front end, test
//! and bench starts here; nothing else assembles an engine.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::EngineContext;
use super::door::{Engine, Facts};
use crate::config::{Config, LoadedConfig, RoutingConfig, RoutingMode, SETUP_HINT, ollama_answers};
use crate::llm::{Provider, build_provider};
use crate::store::{StateDirs, Store, StoreError, Target};
use crate::tools::{Registry, Tool};
use crate::workspace::{ScopeSpec, Workspace};

/// Why an engine could not be built; `usage()` tells a mistake of the
/// caller's (a bad config, flag or folder: exit 2) from a failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Failed(String),
}

impl BuildError {
    pub fn usage(&self) -> bool {
        matches!(self, BuildError::Usage(_))
    }
}

pub(super) fn store_error(e: StoreError) -> BuildError {
    match e {
        StoreError::NotFound(_) | StoreError::Invalid(_) => BuildError::Usage(e.to_string()),
        e if e.is_fatal() => BuildError::Usage(e.to_string()),
        e => BuildError::Failed(e.to_string()),
    }
}

/// Whether the engine needs a model.
pub enum Providers {
    /// Build them; none is an error (exit 2).
    Required,
    /// Build them if one is set up; else jobs fail with the setup hint and
    /// the rest works (the TUI).
    Optional,
    /// None: review, apply, rollback and queries only.
    Off,
    /// These (tests, benches, eval).
    Given(Box<dyn Provider>, Option<Box<dyn Provider>>),
}

/// Where the engine records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recording {
    /// The state home's store (`[storage]`), with the upgrade import.
    Home,
    /// A SQLite file of its own (eval's scratch store, tests).
    Sqlite(PathBuf),
    /// Nothing: no sessions, checkpoints or audit (tests, benches, `tool`).
    Off,
}

/// How long the front end lives, which decides whether the engine may
/// start work nobody asked for (`[verify] auto`'s verifies).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrontEnd {
    /// A command that ends with its last reply (`exec`, `review`, `eval`,
    /// tests): a verify started on its own would be cancelled with the
    /// engine at once and recorded so, so `[verify] auto` starts none
    /// (`--verify` runs one and waits for it).
    OneShot,
    /// The TUI or the server: it lives on and shows a verify's result.
    Lasting,
}

/// Builds an engine for one agent root.
pub struct EngineBuilder {
    root: PathBuf,
    config_file: Option<PathBuf>,
    config: Option<Config>,
    add_dirs: Vec<String>,
    pub(super) provider: Option<String>,
    pub(super) model: Option<String>,
    pub(super) routing: Option<String>,
    providers: Providers,
    recording: Recording,
    recover: bool,
    remember: bool,
    tools: Vec<Box<dyn Tool>>,
    store: Option<Store>,
    read_only: bool,
    front_end: FrontEnd,
    front_name: &'static str,
}

impl EngineBuilder {
    /// An engine for the agent root `root`: the config by the usual
    /// lookup, the state home's store, no provider.
    pub fn new(root: impl Into<PathBuf>) -> EngineBuilder {
        EngineBuilder {
            root: root.into(),
            config_file: None,
            config: None,
            add_dirs: Vec::new(),
            provider: None,
            model: None,
            routing: None,
            providers: Providers::Off,
            recording: Recording::Home,
            recover: true,
            remember: false,
            tools: Vec::new(),
            store: None,
            read_only: false,
            front_end: FrontEnd::OneShot,
            front_name: "cli",
        }
    }

    /// `--config FILE` (else `$AGENT_TUI_CONFIG`, else the config dir's).
    pub fn config_file(mut self, file: Option<PathBuf>) -> Self {
        self.config_file = file;
        self
    }

    /// This config instead of a file.
    pub fn config(mut self, config: Config) -> Self {
        self.config = Some(config);
        self
    }

    /// `--add-dir DIR[:rw]`, relative to the current folder.
    pub fn add_dirs(mut self, dirs: Vec<String>) -> Self {
        self.add_dirs = dirs;
        self
    }

    /// `--provider`, `--model`, `--routing`.
    pub fn choose(
        mut self,
        provider: Option<String>,
        model: Option<String>,
        routing: Option<String>,
    ) -> Self {
        self.provider = provider;
        self.model = model;
        self.routing = routing;
        self
    }

    pub fn providers(mut self, providers: Providers) -> Self {
        self.providers = providers;
        self
    }

    pub fn recording(mut self, recording: Recording) -> Self {
        self.recording = recording;
        self
    }

    /// Whether interrupted applies and rollbacks are settled first (they
    /// are unless a command only looks, like `doctor` before a store exists).
    pub fn recover(mut self, recover: bool) -> Self {
        self.recover = recover;
        self
    }

    /// Notes the root among the recent ones (`Ctrl+O`), off the way.
    pub fn remember(mut self, remember: bool) -> Self {
        self.remember = remember;
        self
    }

    /// An engine that changes nothing in its root on its own (a server's
    /// `read_only` workspace): no commands, no git writes, no MCP servers;
    /// edits are proposed, never applied by it (the front end refuses).
    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// What front end the engine serves (one-shot unless said).
    pub fn front_end(mut self, front_end: FrontEnd) -> Self {
        self.front_end = front_end;
        self
    }

    /// The front end's name, as hooks read it (`tui`, `exec`, `serve`).
    pub fn front_name(mut self, name: &'static str) -> Self {
        self.front_name = name;
        self
    }

    /// A tool of the caller's besides the built-in ones (tests).
    pub fn tool(mut self, tool: Box<dyn Tool>) -> Self {
        self.tools.push(tool);
        self
    }

    /// The loaded config, with `--routing` applied.
    pub(super) fn load_config(&self) -> Result<LoadedConfig, BuildError> {
        let mut loaded = match &self.config {
            Some(config) => LoadedConfig {
                config: config.clone(),
                path: None,
                origin: crate::config::ConfigOrigin::Default,
            },
            None => crate::config::load(self.config_file.as_deref(), &process_env)
                .map_err(|e| BuildError::Usage(e.to_string()))?,
        };
        loaded.config.routing = routing(&loaded.config, self.routing.as_deref())?;
        match self.front_end {
            FrontEnd::Lasting => {}
            FrontEnd::OneShot => loaded.config.verify.auto = false,
        }
        if self.read_only {
            let approvals = &mut loaded.config.approvals;
            approvals.exec = crate::config::ApprovalPolicy::Never;
            approvals.git = crate::config::ApprovalPolicy::Never;
            approvals.mcp = crate::config::ApprovalPolicy::Never;
            loaded.config.mcp_servers.clear();
        }
        Ok(loaded)
    }

    /// Builds the engine and starts its task on the current tokio runtime.
    pub fn build(mut self) -> Result<Engine, BuildError> {
        let loaded = self.load_config()?;
        let workspace = open_workspace(&loaded.config, &self.add_dirs, &self.root)
            .map_err(BuildError::Usage)?;
        let store = match (&self.store, &self.recording) {
            (Some(store), _) => Some(store.clone()),
            (None, Recording::Home) => Some(open_home(&loaded.config)?),
            (None, Recording::Sqlite(path)) => {
                Some(Store::open_target(&Target::Sqlite(path.clone())).map_err(store_error)?)
            }
            (None, Recording::Off) => None,
        };
        let state = store.as_ref().map(|s| s.root(workspace.root()));
        let recovered = match (&state, self.recover) {
            (Some(state), true) => super::settle_interrupted(&workspace, state)
                .map_err(|e| BuildError::Failed(e.to_string()))?,
            _ => Vec::new(),
        };
        if let (true, Some(state)) = (self.remember, &state) {
            // A synced write: kept off the way to the first frame.
            let (store, path) = (state.store.clone(), state.path().to_string());
            std::thread::spawn(move || store.remember_root(&path));
        }
        let template = Template {
            config: loaded.clone(),
            add_dirs: self.add_dirs.clone(),
            provider: self.provider.clone(),
            model: self.model.clone(),
            routing: self.routing.clone(),
            optional: matches!(self.providers, Providers::Optional),
            store: store.clone(),
            front_end: self.front_end,
            front_name: self.front_name,
        };
        let (routed, notice) = self.routed(&loaded.config)?;
        let mut registry = Registry::for_root(workspace.root(), &loaded.config)
            .map_err(|e| BuildError::Failed(format!("internal error: {e}")))?;
        for tool in self.tools {
            registry.register(tool).map_err(BuildError::Usage)?;
        }
        let (provider, fallback) = match routed {
            Some((p, f)) => (Some(p), f),
            None => (None, None),
        };
        let facts = Facts {
            provider_label: provider.as_ref().map_or("no provider".to_string(), |p| {
                format!("{} {}", p.name(), p.model())
            }),
            provider_notice: notice,
            recovered,
        };
        let tracker = state
            .as_ref()
            .map(|s| Arc::new(crate::checkpoint::ExecTracker::new(s, &workspace)));
        let lasting = matches!(self.front_end, FrontEnd::Lasting);
        let index = super::code_index(workspace.root(), &loaded.config.index, lasting);
        let trusted = super::hooks::trusted_in(state.as_ref());
        let hooks = super::hooks::Hooks::new(super::hooks::HookSet::load(
            workspace.root(),
            &loaded.config.hooks,
            &trusted,
        ));
        let ctx = EngineContext {
            hooks,
            front_name: self.front_name,
            observers: Arc::default(),
            index,
            workspace,
            config: loaded.config,
            registry,
            provider,
            fallback,
            state,
            tracker,
        };
        Engine::start(Arc::new(ctx), facts, template)
    }

    /// The providers this builder asks for, or why there are none (a
    /// notice when they are optional).
    #[allow(clippy::type_complexity)]
    fn routed(
        &mut self,
        config: &Config,
    ) -> Result<
        (
            Option<(Box<dyn Provider>, Option<Box<dyn Provider>>)>,
            Option<String>,
        ),
        BuildError,
    > {
        let providers = std::mem::replace(&mut self.providers, Providers::Off);
        let chosen = || {
            providers_for(
                config,
                &config.routing,
                self.provider.as_deref(),
                self.model.as_deref(),
            )
        };
        match providers {
            Providers::Off => Ok((None, None)),
            Providers::Given(p, f) => Ok((Some((p, f)), None)),
            Providers::Required => chosen().map(|r| (Some(r), None)).map_err(BuildError::Usage),
            Providers::Optional => Ok(match chosen() {
                Ok(r) => (Some(r), None),
                Err(why) => (None, Some(why)),
            }),
        }
    }
}

/// What an engine was built with, to build one for another root the
/// same way (`Engine::open_root`).
#[derive(Clone)]
pub(super) struct Template {
    pub config: LoadedConfig,
    pub add_dirs: Vec<String>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub routing: Option<String>,
    pub optional: bool,
    pub store: Option<Store>,
    pub front_end: FrontEnd,
    pub front_name: &'static str,
}

impl Template {
    /// A builder for `root` like this engine's, sharing its store.
    pub fn builder(&self, root: &Path) -> EngineBuilder {
        let mut b = EngineBuilder::new(root)
            .config(self.config.config.clone())
            .add_dirs(self.add_dirs.clone())
            .choose(
                self.provider.clone(),
                self.model.clone(),
                self.routing.clone(),
            )
            .providers(if self.optional {
                Providers::Optional
            } else {
                Providers::Off
            })
            .remember(true)
            .front_end(self.front_end)
            .front_name(self.front_name);
        // The routing override is applied already.
        b.routing = None;
        b.store = self.store.clone();
        if self.store.is_none() {
            b.recording = Recording::Off;
        }
        b
    }
}

/// The process environment, as the engine's injectable lookups expect it.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// `[routing]` with `--routing` applied.
fn routing(config: &Config, flag: Option<&str>) -> Result<RoutingConfig, BuildError> {
    let mut routing = config.routing.clone();
    if let Some(mode) = flag {
        routing.mode = RoutingMode::parse(mode).map_err(BuildError::Usage)?;
    }
    Ok(routing)
}

/// The agent root `root` with its scopes: `[workspace] extra_roots`
/// (relative to the root) and `--add-dir` (relative to the current folder).
fn open_workspace(config: &Config, add_dirs: &[String], root: &Path) -> Result<Workspace, String> {
    let mut specs = Vec::new();
    for text in &config.workspace.extra_roots {
        let spec =
            ScopeSpec::parse(text, root).map_err(|e| format!("[workspace] extra_roots: {e}"))?;
        specs.push(spec);
    }
    let here = std::env::current_dir().unwrap_or_default();
    for text in add_dirs {
        specs.push(ScopeSpec::parse(text, &here).map_err(|e| format!("--add-dir: {e}"))?);
    }
    Workspace::open_scoped(root, &specs).map_err(|e| e.to_string())
}

/// The state home's store, as `[storage]` says (the upgrade import once).
pub(super) fn open_home(config: &Config) -> Result<Store, BuildError> {
    open_home_as(config, store_error)
}

/// `open_home` with the store's own error mapped by `mapped`.
pub(super) fn open_home_as(
    config: &Config,
    mapped: impl FnOnce(StoreError) -> BuildError,
) -> Result<Store, BuildError> {
    let dirs = StateDirs::locate(&process_env).ok_or_else(|| {
        BuildError::Usage("cannot find a place for agent-tui's state: set AGENT_TUI_HOME".into())
    })?;
    Store::open(
        &dirs.home,
        &config.storage,
        &process_env,
        &super::LegacySessions,
    )
    .map_err(mapped)
}

/// Whether `config`'s routing (with `--provider`, `--model`) has providers
/// that can be built, or why not: for a front end that must know before it
/// starts anything (eval's modes).
pub fn check_providers(
    config: &Config,
    provider: Option<&str>,
    model: Option<&str>,
) -> Result<(), String> {
    providers_for(config, &config.routing, provider, model).map(|_| ())
}

/// A provider a routing mode uses: its name (`None`: the usual choice,
/// `provider` in the config or detection), the `--model` it gets, and
/// where the name comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Leg {
    pub name: Option<String>,
    pub model: Option<String>,
    pub from: Option<&'static str>,
}

/// The providers of `routing`: the one jobs start on, and for
/// `hybrid_auto` the one they fall back to (`remote` and `local` use one
/// and never the other). What `providers_for` builds and `doctor` checks.
pub(super) fn legs(
    routing: &RoutingConfig,
    provider: Option<&str>,
    model: Option<&str>,
) -> Result<(Leg, Option<Leg>), String> {
    let named = |key: &str, name: &Option<String>| {
        name.clone().ok_or_else(|| {
            format!(
                "routing mode {} needs [routing] {key} = \"<provider name>\" in the config",
                routing.mode.as_str()
            )
        })
    };
    let model = model.map(str::to_string);
    let flag = provider.map(|p| (p.to_string(), "--provider"));
    Ok(match routing.mode {
        RoutingMode::Remote => {
            let name = flag.or_else(|| routing.remote.clone().map(|r| (r, "[routing] remote")));
            let leg = Leg {
                from: name.as_ref().map(|(_, from)| *from),
                name: name.map(|(name, _)| name),
                model,
            };
            (leg, None)
        }
        RoutingMode::Local => {
            let (name, from) = match flag {
                Some(flag) => flag,
                None => (named("local", &routing.local)?, "[routing] local"),
            };
            let leg = Leg {
                name: Some(name),
                model,
                from: Some(from),
            };
            (leg, None)
        }
        RoutingMode::HybridAuto => {
            let local = Leg {
                name: Some(named("local", &routing.local)?),
                model,
                from: Some("[routing] local"),
            };
            let remote = Leg {
                name: Some(named("remote", &routing.remote)?),
                model: None,
                from: Some("[routing] remote"),
            };
            (local, Some(remote))
        }
    })
}

/// The providers of `routing` (see `legs`), built.
#[allow(clippy::type_complexity)]
pub(super) fn providers_for(
    config: &Config,
    routing: &RoutingConfig,
    provider: Option<&str>,
    model: Option<&str>,
) -> Result<(Box<dyn Provider>, Option<Box<dyn Provider>>), String> {
    let build = |leg: &Leg| -> Result<Box<dyn Provider>, String> {
        let choice = config
            .choose_provider(
                leg.name.as_deref(),
                leg.model.as_deref(),
                &process_env,
                ollama_answers,
            )
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
    let (first, fallback) = legs(routing, provider, model)?;
    Ok((build(&first)?, fallback.as_ref().map(build).transpose()?))
}
