//! MCP servers (SPEC 5): the `[mcp_servers.NAME]` a session may use, each
//! started at the first job that offers their tools (never at TUI start),
//! its tools offered as `mcp__<server>__<tool>`; a server that fails, hangs
//! or dies makes its calls return an error naming it and the tail of its
//! stderr, and is restarted at the next call (at most 3 times a job).

mod result;
mod server;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::Mutex;

use crate::config::{Config, McpServerConfig};
use server::{CallError, Connection, Tail};

pub use crate::protocol::names::MCP_PREFIX as PREFIX;
/// Restarts of one server within one job.
pub const MAX_RESTARTS_PER_JOB: u32 = 3;

/// Where a server is.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ServerState {
    /// Not started yet: servers start at the first job that offers them.
    Stopped,
    Running {
        #[serde(rename = "tool_count")]
        tools: usize,
    },
    /// Failed to start or died; restarted at the next call.
    Failed { error: String },
    /// `enabled = false`.
    Disabled,
}

impl ServerState {
    pub fn label(&self) -> String {
        match self {
            ServerState::Stopped => "not started".into(),
            ServerState::Running { tools } => format!("running, {tools} tools"),
            ServerState::Failed { error } => format!("failed: {error}"),
            ServerState::Disabled => "disabled".into(),
        }
    }
}

/// One tool of a server, as offered to the model.
#[derive(Debug, Clone, Serialize)]
pub struct McpTool {
    /// `mcp__<server>__<tool>`.
    pub name: String,
    pub server: String,
    /// The name the server knows it by.
    pub tool: String,
    pub description: String,
    pub schema: Value,
}

struct Server {
    name: String,
    config: McpServerConfig,
    state: ServerState,
    conn: Option<Connection>,
    tools: Vec<McpTool>,
    tail: Tail,
}

/// Every configured server of one engine; shared by its jobs.
pub struct McpHub {
    servers: Vec<Arc<Mutex<Server>>>,
    cwd: PathBuf,
    secrets: Vec<String>,
    log_dir: Option<PathBuf>,
    /// Results are cut at this many bytes before the context's own cap.
    cap: usize,
}

impl McpHub {
    pub fn new(config: &Config, cwd: PathBuf, log_dir: Option<PathBuf>) -> McpHub {
        let servers = config
            .mcp_servers
            .iter()
            .map(|(name, cfg)| {
                Arc::new(Mutex::new(Server {
                    name: name.clone(),
                    config: cfg.clone(),
                    state: if cfg.enabled {
                        ServerState::Stopped
                    } else {
                        ServerState::Disabled
                    },
                    conn: None,
                    tools: Vec::new(),
                    tail: Tail::default(),
                }))
            })
            .collect();
        McpHub {
            servers,
            cwd,
            secrets: config.secret_env_names(),
            log_dir,
            cap: usize::try_from(config.exec.max_output_bytes).unwrap_or(usize::MAX),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// Starts every enabled server not running yet, all at once; returns
    /// each server's state.
    pub async fn start_all(&self) -> BTreeMap<String, ServerState> {
        let starts = self.servers.iter().map(|s| async move {
            let mut server = s.lock().await;
            if matches!(server.state, ServerState::Stopped) {
                self.start(&mut server).await;
            }
            (server.name.clone(), server.state.clone())
        });
        futures_util::future::join_all(starts)
            .await
            .into_iter()
            .collect()
    }

    async fn start(&self, server: &mut Server) {
        if let Some(old) = server.conn.take() {
            old.close().await;
        }
        // A new process, a new tail: an earlier one's last words are not
        // this one's.
        server.tail = server::Tail::default();
        let log = self.log_dir.as_ref().map(|d| {
            let _ = std::fs::create_dir_all(d);
            d.join(format!("mcp-{}.log", server.name))
        });
        match server::connect(&server.config, &self.cwd, &self.secrets, &server.tail, log).await {
            Ok((conn, listed)) => {
                server.tools = offerable(&server.name, listed);
                server.state = ServerState::Running {
                    tools: server.tools.len(),
                };
                server.conn = Some(conn);
            }
            Err(e) => {
                settle().await;
                server.state = ServerState::Failed {
                    error: with_tail(&e, &server.tail),
                };
            }
        }
    }

    /// Each server's state, by name.
    pub async fn states(&self) -> BTreeMap<String, ServerState> {
        let mut out = BTreeMap::new();
        for s in &self.servers {
            let server = s.lock().await;
            out.insert(server.name.clone(), server.state.clone());
        }
        out
    }

    /// The tools of every running server.
    pub async fn tools(&self) -> Vec<McpTool> {
        let mut out = Vec::new();
        for s in &self.servers {
            out.extend(s.lock().await.tools.iter().cloned());
        }
        out
    }

    /// Calls tool `name` (`mcp__<server>__<tool>`). A server that is down
    /// is restarted first while `restarts` allows. Errors are the JSON the
    /// model gets.
    pub async fn call(
        &self,
        name: &str,
        arguments: Value,
        restarts: &mut BTreeMap<String, u32>,
    ) -> Result<Value, Value> {
        let Some((server_name, _)) = name
            .strip_prefix(PREFIX)
            .and_then(|rest| rest.split_once("__"))
        else {
            return Err(error(
                "unknown_tool",
                format!("`{name}` is not an MCP tool name"),
            ));
        };
        let Some(slot) = self.find(server_name).await else {
            return Err(error(
                "unknown_tool",
                format!("there is no MCP server `{server_name}` in this project's configuration"),
            ));
        };
        let mut server = slot.lock().await;
        self.running(&mut server, restarts).await?;
        let Some(tool) = server.tools.iter().find(|t| t.name == name).cloned() else {
            let known: Vec<String> = server.tools.iter().map(|t| t.name.clone()).collect();
            return Err(error(
                "unknown_tool",
                format!(
                    "MCP server `{server_name}` has no tool `{name}`; its tools: {}",
                    known.join(", ")
                ),
            ));
        };
        let args = match arguments {
            Value::Object(map) => map,
            Value::Null => serde_json::Map::new(),
            _ => {
                return Err(error(
                    "invalid_arguments",
                    "arguments must be a JSON object".into(),
                ));
            }
        };
        let timeout = Duration::from_secs(server.config.tool_timeout_secs.max(1));
        let outcome = match &server.conn {
            Some(conn) => conn.call(&tool.tool, args, timeout).await,
            None => Err(CallError::Broken("it is not running".into())),
        };
        match outcome {
            Ok(result) => result::to_model(server_name, &tool.tool, result, self.cap),
            Err(CallError::Refused(why)) => Err(error(
                "mcp_tool_error",
                format!("MCP server `{server_name}` refused `{}`: {why}", tool.tool),
            )),
            Err(CallError::Broken(why)) => {
                if let Some(conn) = server.conn.take() {
                    conn.close().await;
                }
                settle().await;
                let why = with_tail(&why, &server.tail);
                server.state = ServerState::Failed { error: why.clone() };
                Err(error(
                    "mcp_server_failed",
                    format!(
                        "MCP server `{server_name}` failed during `{}`: {why}; it is restarted at \
                         the next call",
                        tool.tool
                    ),
                ))
            }
        }
    }

    /// The server up: started again if it is down, while the job's
    /// restarts allow; else the error the model gets, naming the server,
    /// how it failed (its exit, a timeout) and its stderr's tail.
    async fn running(
        &self,
        server: &mut Server,
        restarts: &mut BTreeMap<String, u32>,
    ) -> Result<(), Value> {
        let name = server.name.clone();
        if matches!(server.state, ServerState::Disabled) {
            return Err(error(
                "mcp_server_failed",
                format!("MCP server `{name}` is disabled (enabled = false in its configuration)"),
            ));
        }
        if server.conn.as_ref().is_some_and(Connection::is_alive) {
            return Ok(());
        }
        let used = restarts.entry(name.clone()).or_insert(0);
        if *used >= MAX_RESTARTS_PER_JOB {
            let last = match &server.state {
                ServerState::Failed { error } => format!(" (last: {error})"),
                _ => String::new(),
            };
            return Err(error(
                "mcp_server_failed",
                format!(
                    "MCP server `{name}` is down and was restarted {MAX_RESTARTS_PER_JOB} times in \
                     this job{last}; continue without it"
                ),
            ));
        }
        // Not counted when it was never started in this engine.
        if !matches!(server.state, ServerState::Stopped) {
            *used += 1;
        }
        self.start(server).await;
        match &server.state {
            ServerState::Failed { error: why } => Err(error(
                "mcp_server_failed",
                format!("MCP server `{name}` failed: {why}"),
            )),
            _ => Ok(()),
        }
    }

    /// For a name `mcp__<server>__<tool>` of a configured server whose
    /// tools a job does not offer (it failed to start, or died since):
    /// the server started again while the job's restarts allow (`Ok`: its
    /// tools can be offered now), else why it cannot be used. `None` when
    /// no configured server has that name.
    pub async fn revive(
        &self,
        name: &str,
        restarts: &mut BTreeMap<String, u32>,
    ) -> Option<Result<(), Value>> {
        let (server_name, _) = name.strip_prefix(PREFIX)?.split_once("__")?;
        let slot = self.find(server_name).await?;
        let mut server = slot.lock().await;
        Some(self.running(&mut server, restarts).await)
    }

    async fn find(&self, name: &str) -> Option<Arc<Mutex<Server>>> {
        for s in &self.servers {
            if s.lock().await.name == name {
                return Some(s.clone());
            }
        }
        None
    }

    /// Stops every server.
    pub async fn shutdown(&self) {
        for s in &self.servers {
            let mut server = s.lock().await;
            if let Some(conn) = server.conn.take() {
                conn.close().await;
            }
            if !matches!(server.state, ServerState::Disabled) {
                server.state = ServerState::Stopped;
            }
        }
    }
}

/// Longest function name the providers take (OpenAI: `^[a-zA-Z0-9_-]{1,64}$`).
const MAX_NAME: usize = 64;

/// `mcp__<server>__<tool>`, with characters a model's function name cannot
/// hold replaced by `_`; a name longer than providers take is cut and
/// ended with a hash of the tool's own name, so it stays one of a kind.
pub fn tool_name(server: &str, tool: &str) -> String {
    let clean: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let name = format!("{PREFIX}{server}__{clean}");
    if name.len() <= MAX_NAME {
        return name;
    }
    use sha2::Digest;
    let digest = sha2::Sha256::digest(tool.as_bytes());
    let tag: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("{}_{tag}", &name[..MAX_NAME - tag.len() - 1])
}

/// The tools a server listed that a model can be offered: unnamed ones
/// and later ones whose name repeats an earlier one are left out (a
/// provider refuses a request with two tools of one name), and said.
fn offerable(server: &str, listed: Vec<server::Listed>) -> Vec<McpTool> {
    let mut seen = std::collections::HashSet::new();
    let mut tools = Vec::new();
    for t in listed {
        let name = tool_name(server, &t.name);
        if t.name.trim().is_empty() || !seen.insert(name.clone()) {
            tracing::warn!(
                "MCP server `{server}`: tool {:?} left out (no name, or one it already has)",
                t.name
            );
            continue;
        }
        tools.push(McpTool {
            name,
            server: server.to_string(),
            tool: t.name,
            description: t.description,
            schema: t.schema,
        });
    }
    tools
}

/// A failing server's last words may still be in its stderr pipe: a
/// moment for them to arrive (only on the failure path).
async fn settle() {
    tokio::time::sleep(Duration::from_millis(150)).await;
}

/// `why`, then how the process ended and the last lines of its stderr,
/// when known.
fn with_tail(why: &str, tail: &Tail) -> String {
    let mut out = why.to_string();
    if let Some(exit) = tail.exit() {
        out = format!("{out}; {exit}");
    }
    let lines = tail.text();
    if !lines.is_empty() {
        out = format!("{out}; its stderr ends with:\n{lines}");
    }
    out
}

fn error(code: &str, message: String) -> Value {
    json!({ "code": code, "message": message })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(name: &str) -> server::Listed {
        server::Listed {
            name: name.into(),
            description: String::new(),
            schema: serde_json::json!({"type": "object"}),
        }
    }

    #[test]
    fn names_fit_providers_and_stay_one_of_a_kind() {
        let long = "x".repeat(300);
        let tools = offerable(
            "names",
            ["echo", "echo", "", "../../etc/passwd", &long, "a b"]
                .into_iter()
                .map(listed)
                .collect(),
        );
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names.len(), 4, "{names:?}");
        assert_eq!(names[0], "mcp__names__echo");
        assert!(names.iter().all(|n| {
            n.len() <= 64
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        }));
        // Another long name of the same start is a name of its own.
        let other = format!("{}y", "x".repeat(299));
        assert_ne!(tool_name("names", &long), tool_name("names", &other));
        assert_eq!(tool_name("names", &long), names[2]);
    }
}
