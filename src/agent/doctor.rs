//! What is true of an installation, for `doctor`, `mcp list` and `store
//! check|backup`: which config, state home, store, root and provider are in
//! force, whether the provider answers, how commands are confined; each MCP
//! server started and listed; the store checked or copied. These work where
//! an engine cannot be built (that is what they are for), so most live on
//! the builder.

use std::path::Path;
use std::time::Duration;

use super::builder::{BuildError, EngineBuilder, process_env};
use super::door::Engine;
use crate::config::{Config, ProviderConfig};
use crate::context::ContextWindow;
use crate::llm::build_provider;
use crate::protocol::{
    StoreCheck,
    api::{DoctorFact, DoctorReport, McpServerReport, McpToolInfo},
};
use crate::store::{StateDirs, Store, Target};

const PROBE_BUDGET: Duration = Duration::from_millis(4500);

/// Collects the report's lines.
pub(super) struct Report(pub(super) Vec<DoctorFact>);

impl Report {
    pub(super) fn ok(&mut self, label: &str, text: String) {
        self.0.push(DoctorFact {
            label: label.into(),
            text,
            problem: false,
        });
    }

    pub(super) fn problem(&mut self, label: &str, text: String) {
        self.0.push(DoctorFact {
            label: label.into(),
            text: format!("PROBLEM: {text}"),
            problem: true,
        });
    }
}

/// What the config grants beyond the root: `[exec] writable` folders
/// (a missing one said) and the MCP servers (started by `agent-tui mcp
/// list`, not here).
fn extra_lines(r: &mut Report, config: &crate::config::Config) {
    for path in config.exec.writable_paths() {
        let shown = path.display();
        if path.is_dir() {
            r.ok(
                "writable",
                format!("{shown} (commands may write there too)"),
            );
        } else {
            r.problem(
                "writable",
                format!("{shown} (in [exec] writable) does not exist; commands get no such folder"),
            );
        }
    }
    let servers: Vec<String> = config
        .mcp_servers
        .iter()
        .map(|(name, s)| match s.enabled {
            true => name.clone(),
            false => format!("{name} (disabled)"),
        })
        .collect();
    if !servers.is_empty() {
        r.ok(
            "mcp",
            format!(
                "{} ({}); agent-tui mcp list starts them and says how each went",
                crate::protocol::words::counted(servers.len(), "server"),
                servers.join(", ")
            ),
        );
    }
}

impl EngineBuilder {
    /// Checks what this builder would build with, line by line; nothing is
    /// created (a store that does not exist yet stays so). Blocking.
    pub fn doctor(self) -> DoctorReport {
        let mut r = Report(Vec::new());
        let (provider, model) = (self.provider.clone(), self.model.clone());
        let routing = self.routing.clone();
        let done = |r: Report, usage_error| DoctorReport {
            version: env!("CARGO_PKG_VERSION").to_string(),
            facts: r.0,
            usage_error,
        };
        let loaded = match self.load_config() {
            Ok(l) => l,
            Err(e) => return done(r, Some(e.to_string())),
        };
        match &loaded.path {
            Some(path) => r.ok(
                "config",
                format!("{} (from {})", path.display(), loaded.origin),
            ),
            None => r.ok("config", "no file found; built-in defaults in use".into()),
        }
        let store_exists = state_lines(&mut r, &loaded.config);
        r.ok(
            "commands",
            crate::tools::confine::probe().describe(loaded.config.exec.network),
        );
        extra_lines(&mut r, &loaded.config);
        let recording = if store_exists {
            super::builder::Recording::Home
        } else {
            super::builder::Recording::Off
        };
        if let Some(root) = root_lines(&mut r, self.recording(recording).remember(false)) {
            use crate::config::VerifyCommand;
            let found = loaded
                .config
                .verify
                .command_for(std::path::Path::new(&root));
            let warning = match &found {
                VerifyCommand::Set(c) | VerifyCommand::Detected { command: c, .. } => {
                    crate::tools::verify::missing_program(c).map(|p| {
                        format!("; warning: `{p}` is not on PATH, so the check cannot run")
                    })
                }
                VerifyCommand::Off => None,
            }
            .unwrap_or_default();
            let verify = match found {
                VerifyCommand::Set(c) => format!("{c} (from the config){warning}"),
                VerifyCommand::Detected { command, from } => format!(
                    "{command} (detected from {from}; [verify] command sets another){warning}"
                ),
                VerifyCommand::Off if loaded.config.verify.command.is_some() => {
                    "off: [verify] command = \"\" in the config".into()
                }
                VerifyCommand::Off => {
                    "off: no [verify] command, and no Cargo.toml, npm test script, pytest \
                     config or go.mod to detect one from"
                        .into()
                }
            };
            r.ok("verify", verify);
        }
        // The providers jobs start on (and fall back to) under the routing.
        let flags = (routing.as_deref(), provider.as_deref(), model.as_deref());
        let usage_error = super::doctor_routing::routing_lines(&mut r, &loaded.config, flags).err();
        done(r, usage_error)
    }

    /// Checks the whole store: integrity, snapshots, checkpoints, every
    /// audit chain. Blocking.
    pub fn check_store(self) -> Result<StoreCheck, BuildError> {
        let loaded = self.load_config()?;
        // A damaged store (not a database, broken pages) is the check's
        // finding (exit 1), not a usage error; a newer one is still that.
        let store = super::builder::open_home_as(&loaded.config, |e| match e {
            crate::store::StoreError::Corrupt { .. } => BuildError::Failed(e.to_string()),
            e => super::builder::store_error(e),
        })?;
        let check = store
            .check()
            .map_err(|e| BuildError::Failed(e.to_string()))?;
        Ok(StoreCheck {
            store: store.location().to_string(),
            kind: store.kind().as_str().to_string(),
            schema_version: store.schema_version(),
            sessions: check.sessions,
            checkpoints: check.checkpoints,
            snapshots: check.snapshots,
            audit_records: check.audit_records,
            problems: check.problems,
        })
    }

    /// A consistent copy of a SQLite store at `file` while it is in use:
    /// the store's location and the copy's size. Blocking.
    pub fn backup_store(self, file: &Path) -> Result<(String, u64), BuildError> {
        let store = self.open_store()?;
        match store.backup(file) {
            Ok(bytes) => Ok((store.location().to_string(), bytes)),
            Err(crate::store::StoreError::Invalid(m)) => Err(BuildError::Usage(m)),
            Err(e) => Err(BuildError::Failed(e.to_string())),
        }
    }

    /// The state home's store as `[storage]` names it.
    fn open_store(&self) -> Result<Store, BuildError> {
        let loaded = self.load_config()?;
        super::builder::open_home(&loaded.config)
    }
}

/// The state home and the store; whether the store exists.
fn state_lines(r: &mut Report, config: &Config) -> bool {
    let Some(dirs) = StateDirs::locate(&process_env) else {
        r.problem(
            "state home",
            "cannot be determined: set AGENT_TUI_HOME".into(),
        );
        return false;
    };
    r.ok(
        "state home",
        format!("{} (from {})", dirs.home.display(), dirs.origin),
    );
    let target = match Target::resolve(&dirs.home, &config.storage, &process_env) {
        Ok(t) => t,
        Err(e) => {
            r.problem("store", e.to_string());
            return false;
        }
    };
    if let Target::Sqlite(path) = &target
        && !path.exists()
    {
        r.ok(
            "store",
            format!("sqlite at {} (created on first use)", path.display()),
        );
        return false;
    }
    match Store::open(
        &dirs.home,
        &config.storage,
        &process_env,
        &super::LegacySessions,
    ) {
        Ok(store) => {
            let info = store.info();
            let size = info.size.map_or("size unknown".into(), human_size);
            r.ok(
                "store",
                format!(
                    "{} at {} (schema version {}, {size})",
                    info.kind.as_str(),
                    info.location,
                    info.schema_version
                ),
            );
            true
        }
        Err(e) => {
            r.problem("store", e.to_string());
            false
        }
    }
}

/// The agent root, its scopes and what opening its state settled (an
/// engine built without a provider, then let go).
fn root_lines(r: &mut Report, builder: EngineBuilder) -> Option<String> {
    let built = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| BuildError::Failed(format!("cannot start the async runtime: {e}")))
        .and_then(|rt| {
            let _guard = rt.enter();
            let engine = builder.build()?;
            let facts = (
                engine.root().display().to_string(),
                engine.scopes(),
                engine.recovered().to_vec(),
                engine.records(),
            );
            rt.block_on(async {
                let _ = engine.shutdown().await;
            });
            Ok(facts)
        });
    match built {
        Ok((root, scopes, recovered, recorded)) => {
            r.ok("agent root", root.clone());
            for s in scopes.iter().filter(|s| !s.primary) {
                r.ok("scope", format!("{} {} ({})", s.id, s.path, s.access));
            }
            // Doctor creates no state: with no store yet, nothing was interrupted.
            if recorded && recovered.is_empty() {
                r.ok("recovery", "no interrupted apply or rollback".into());
            }
            for rec in &recovered {
                r.ok("recovery", rec.summary());
            }
            Some(root)
        }
        Err(e) => {
            r.problem("agent root", e.to_string());
            None
        }
    }
}

/// The provider: which, why, its key, whether it answers, its window.
pub(super) fn provider_lines(
    r: &mut Report,
    name: &str,
    reason: &str,
    p: &ProviderConfig,
    all: &Config,
) {
    r.ok(
        "provider",
        format!("{name} ({reason}): model {} at {}", p.model, p.base_url),
    );
    if let Some(var) = &p.api_key_env {
        if process_env(var).is_some_and(|v| !v.trim().is_empty()) {
            r.ok("api key", format!("${var} is set"));
        } else {
            r.problem(
                "api key",
                format!("${var} is not set; export it with your key"),
            );
        }
    }
    let reachable = match probe(name, p, all.agent.request_timeout_secs) {
        Ok(report) => {
            r.ok("reachable", report);
            true
        }
        Err(problem) => {
            r.problem("reachable", problem);
            false
        }
    };
    r.ok("context", context_line(name, p, all, reachable));
    r.ok("tools", tools_line(name, p, all, reachable));
}

/// How tools reach the model; for `auto` on a reachable server, whether
/// its chat template keeps them (a one-token request with a tool and one
/// without: the same prompt count means the template dropped the tool).
fn tools_line(name: &str, config: &ProviderConfig, all: &Config, reachable: bool) -> String {
    use crate::config::ToolProtocol;
    match config.tool_protocol {
        ToolProtocol::Native => return "native tool calls (tool_protocol = \"native\")".into(),
        ToolProtocol::Json => {
            return "described in the prompt, calls read from the reply (tool_protocol = \"json\")"
                .into();
        }
        ToolProtocol::Auto => {}
    }
    let unchecked = "native tool calls unless the server's chat template drops them (a \
                     one-token probe before the first request) or the server refuses them; then \
                     described in the prompt (tool_protocol = \"auto\")";
    if !reachable {
        return unchecked.into();
    }
    let Ok(provider) = build_provider(
        name,
        config,
        Duration::from_secs(all.agent.request_timeout_secs),
        &process_env,
    ) else {
        return unchecked.into();
    };
    match probe_tools(&*provider) {
        Some(Probe::Refused(why)) => format!(
            "the server refuses native tools for this model (\"{why}\"): with tool_protocol = \
             \"auto\" they go in the prompt"
        ),
        Some(Probe::Counted { with, without }) if with <= without + 2 => format!(
            "the server's chat template drops tool definitions ({with} prompt tokens with a \
             tool, {without} without): with tool_protocol = \"auto\" they go in the prompt"
        ),
        Some(Probe::Counted { with, without }) => format!(
            "native tool calls: the server's chat template keeps them ({with} prompt tokens \
             with a tool, {without} without)"
        ),
        None => unchecked.into(),
    }
}

/// What two one-token requests told of the server's tools.
enum Probe {
    /// It refused the request with a tool, in these words.
    Refused(String),
    /// The prompt tokens it counted with one tool and without.
    Counted { with: u64, without: u64 },
}

/// A one-token request with a tool and one without (or, when the first
/// gives no count, the same request streamed to see why); `None` when
/// nothing could be told.
fn probe_tools(provider: &dyn crate::llm::Provider) -> Option<Probe> {
    let tool = crate::llm::ToolDef {
        name: "read_file".into(),
        description: "Read a file of the project by its path.".into(),
        parameters: serde_json::json!({"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}),
    };
    let messages = [crate::llm::Message::User("hello".into())];
    let tools = [tool];
    let with_tool = crate::llm::Request {
        system: "You are a coding agent.",
        messages: &messages,
        tools: &tools,
        max_output_tokens: Some(1),
        brief_tools: false,
        reply_schema: None,
        reply_limit: None,
        stop_repeats: false,
    };
    let without_tool = crate::llm::Request {
        tools: &[],
        ..with_tool
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    runtime.block_on(async {
        let with = tokio::time::timeout(PROBE_BUDGET, provider.prompt_tokens(with_tool));
        let Some(with) = with.await.ok().flatten() else {
            // No count: maybe the server refuses tools for this model.
            let mut quiet = |_: crate::llm::Delta<'_>| {};
            let step = tokio::time::timeout(PROBE_BUDGET, provider.step(with_tool, &mut quiet));
            return match step.await {
                Ok(Err(e)) => e
                    .tools_unsupported()
                    .map(|why| Probe::Refused(why.to_string())),
                _ => None,
            };
        };
        let without = tokio::time::timeout(PROBE_BUDGET, provider.prompt_tokens(without_tool));
        let without = without.await.ok().flatten()?;
        Some(Probe::Counted { with, without })
    })
}

/// The window in force, where it came from, and what is reserved of it.
fn context_line(name: &str, config: &ProviderConfig, all: &Config, reachable: bool) -> String {
    let server = match (config.context_window, reachable) {
        (None, true) => build_provider(name, config, Duration::from_secs(5), &process_env)
            .ok()
            .and_then(|provider| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .ok()?;
                runtime.block_on(async {
                    tokio::time::timeout(PROBE_BUDGET, provider.discover_window())
                        .await
                        .ok()
                        .flatten()
                })
            }),
        _ => None,
    };
    let window = ContextWindow::resolve(config.context_window, server, &config.model);
    format!(
        "{} tokens ({}); {} kept for the reply; tool results cut at {} tokens; compaction at {}%",
        window.tokens,
        window.source,
        window.output_reserve(config.max_output_tokens),
        window.tool_output_cap(all.context.max_tool_output_tokens),
        all.context.compact_at_percent
    )
}

/// Lists the provider's models (a cheap authenticated request), in under 5 s.
fn probe(name: &str, config: &ProviderConfig, timeout_secs: u64) -> Result<String, String> {
    let provider = build_provider(
        name,
        config,
        Duration::from_secs(timeout_secs),
        &process_env,
    )
    .map_err(|e| format!("skipped: {e}"))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    runtime.block_on(async {
        match tokio::time::timeout(PROBE_BUDGET, provider.probe()).await {
            Ok(Ok(report)) => Ok(report),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!(
                "{} did not answer within {} s",
                config.base_url,
                PROBE_BUDGET.as_secs()
            )),
        }
    })
}

/// Bytes as people read them.
fn human_size(bytes: u64) -> String {
    match bytes {
        b if b < 1 << 10 => format!("{b} B"),
        b if b < 1 << 20 => format!("{:.1} KiB", b as f64 / 1024.0),
        b if b < 1 << 30 => format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64),
        b => format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64),
    }
}

impl Engine {
    /// Starts each configured MCP server the way a job would, lists its
    /// state and tools, then stops them.
    pub async fn mcp_servers(&self) -> Vec<McpServerReport> {
        let ctx = &self.inner.ctx;
        let logs = StateDirs::locate(&process_env).map(|d| d.home.join("logs"));
        let hub = crate::mcp::McpHub::new(&ctx.config, ctx.workspace.root().to_path_buf(), logs);
        let states = hub.start_all().await;
        let tools = hub.tools().await;
        hub.shutdown().await;
        states
            .iter()
            .map(|(name, state)| {
                let http = ctx
                    .config
                    .mcp_servers
                    .get(name)
                    .is_some_and(|c| c.url.is_some());
                McpServerReport {
                    name: name.clone(),
                    transport: if http { "http" } else { "stdio" }.to_string(),
                    state: serde_json::to_value(state).unwrap_or_default(),
                    label: state.label(),
                    tools: tools
                        .iter()
                        .filter(|t| &t.server == name)
                        .map(|t| McpToolInfo {
                            name: t.name.clone(),
                            tool: t.tool.clone(),
                            description: t.description.clone(),
                        })
                        .collect(),
                }
            })
            .collect()
    }
}
