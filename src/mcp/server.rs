//! One MCP server connection: a child process spoken to over stdio (its
//! stderr kept as a tail and a log file, never shown on the screen) or a
//! streamable HTTP endpoint; started with a timeout, its tools listed.

use std::collections::VecDeque;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use process_wrap::tokio::{ChildWrapper, CommandWrap, CommandWrapper};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use tokio::io::AsyncBufReadExt;

use crate::config::McpServerConfig;
use crate::tools::is_secret;

/// Lines of a server's stderr kept for error messages.
const TAIL_LINES: usize = 20;

type Client = RunningService<RoleClient, ClientConfig>;

/// What a server left: the last lines it wrote to stderr and, once its
/// process was reaped, how it ended.
#[derive(Debug, Default, Clone)]
pub struct Tail {
    lines: Arc<Mutex<VecDeque<String>>>,
    exit: Arc<Mutex<Option<ExitStatus>>>,
}

impl Tail {
    fn push(&self, line: String) {
        if let Ok(mut lines) = self.lines.lock() {
            if lines.len() == TAIL_LINES {
                lines.pop_front();
            }
            let mut line = line;
            line.truncate(400);
            lines.push_back(line);
        }
    }

    /// The tail as one text ("" when it wrote nothing).
    pub fn text(&self) -> String {
        self.lines
            .lock()
            .map(|l| l.iter().cloned().collect::<Vec<_>>().join("\n"))
            .unwrap_or_default()
    }

    fn ended(&self, status: ExitStatus) {
        if let Ok(mut exit) = self.exit.lock() {
            exit.get_or_insert(status);
        }
    }

    /// How its process ended ("exited with status 3", "was killed by
    /// signal 11 (SIGSEGV)"), once it was reaped.
    pub fn exit(&self) -> Option<String> {
        let status = (*self.exit.lock().ok()?)?;
        crate::platform::process::describe_exit(status)
    }
}

/// Notes in a `Tail` how the child ended, whoever waits for it (rmcp
/// reaps it when the connection goes).
#[derive(Debug)]
struct NoteExit(Tail);

impl CommandWrapper for NoteExit {
    fn wrap_child(
        &mut self,
        child: Box<dyn ChildWrapper>,
        _core: &CommandWrap,
    ) -> std::io::Result<Box<dyn ChildWrapper>> {
        Ok(Box::new(NotedChild {
            inner: child,
            tail: self.0.clone(),
        }))
    }
}

#[derive(Debug)]
struct NotedChild {
    inner: Box<dyn ChildWrapper>,
    tail: Tail,
}

impl ChildWrapper for NotedChild {
    fn inner(&self) -> &dyn ChildWrapper {
        self.inner.as_ref()
    }

    fn inner_mut(&mut self) -> &mut dyn ChildWrapper {
        self.inner.as_mut()
    }

    fn into_inner(self: Box<Self>) -> Box<dyn ChildWrapper> {
        self.inner
    }

    fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        let status = self.inner.try_wait()?;
        if let Some(status) = status {
            self.tail.ended(status);
        }
        Ok(status)
    }

    fn wait(
        &mut self,
    ) -> std::pin::Pin<Box<dyn Future<Output = std::io::Result<ExitStatus>> + Send + '_>> {
        Box::pin(async move {
            let status = self.inner.wait().await?;
            self.tail.ended(status);
            Ok(status)
        })
    }
}

/// A running connection.
pub struct Connection {
    client: Client,
    /// The stdio server's process group, ended when the connection goes
    /// (however it goes: also when the runtime is shutting down).
    group: Option<u32>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        if let Some(pid) = self.group {
            crate::platform::process::kill_group(pid);
        }
    }
}

/// A tool as the server describes it.
pub struct Listed {
    pub name: String,
    pub description: String,
    pub schema: serde_json::Value,
}

/// Starts the server and lists its tools, within `startup`.
pub async fn connect(
    config: &McpServerConfig,
    cwd: &Path,
    secrets: &[String],
    tail: &Tail,
    log: Option<PathBuf>,
) -> Result<(Connection, Vec<Listed>), String> {
    let startup = Duration::from_secs(config.startup_timeout_secs.max(1));
    let info = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("agent-tui", env!("CARGO_PKG_VERSION")),
    );
    let mut group = None;
    let started = async {
        let client: Client = match &config.url {
            Some(url) => {
                let mut transport = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                // A broken stream is a failed call, not a reconnect loop.
                transport.retry_config =
                    Arc::new(rmcp::transport::common::client_side_sse::NeverRetry::default());
                info.serve(StreamableHttpClientTransport::from_config(transport))
                    .await
                    .map_err(|e| format!("cannot talk to {url}: {}", deepest(&e)))?
            }
            None => {
                let transport = spawn(config, cwd, secrets, tail, log)?;
                group = transport.id();
                info.serve(transport)
                    .await
                    .map_err(|e| format!("it ended before it answered ({})", deepest(&e)))?
            }
        };
        let tools = client
            .list_all_tools()
            .await
            .map_err(|e| format!("listing its tools failed: {e}"))?;
        Ok::<_, String>((client, tools))
    };
    let (client, tools) = match tokio::time::timeout(startup, started).await {
        Ok(Ok(done)) => done,
        Ok(Err(e)) => return Err(e),
        Err(_) => {
            return Err(format!(
                "it did not answer within {} s (startup_timeout_secs)",
                startup.as_secs()
            ));
        }
    };
    let listed = tools
        .into_iter()
        .map(|t| Listed {
            name: t.name.to_string(),
            description: t.description.map(|d| d.to_string()).unwrap_or_default(),
            schema: serde_json::Value::Object((*t.input_schema).clone()),
        })
        .collect();
    Ok((Connection { client, group }, listed))
}

/// The innermost cause of `e`: the part a user can act on (the outer
/// layers name rmcp's own types).
fn deepest(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    let text = cause.to_string();
    // "Send message error Transport [rmcp::…] error: X, when send …" -> "X"
    let text = match (text.find("Transport ["), text.find("] error: ")) {
        (Some(_), Some(end)) => text[end + "] error: ".len()..].to_string(),
        _ => text,
    };
    match text.rfind(", when ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// The child process: the configured command in the agent root, with our
/// environment minus API keys plus the configured `env`, in its own
/// process group; stderr drained into `tail` and the log.
fn spawn(
    config: &McpServerConfig,
    cwd: &Path,
    secrets: &[String],
    tail: &Tail,
    log: Option<PathBuf>,
) -> Result<TokioChildProcess, String> {
    let mut command = tokio::process::Command::new(&config.command);
    command.args(&config.args).current_dir(cwd).env_clear();
    for (key, value) in std::env::vars_os() {
        if !is_secret(&key.to_string_lossy(), secrets) {
            command.env(key, value);
        }
    }
    command.envs(&config.env);
    let mut wrap = process_wrap::tokio::CommandWrap::from(command);
    crate::platform::process::as_tree(&mut wrap);
    wrap.wrap(NoteExit(tail.clone()));
    let (transport, stderr) = TokioChildProcess::builder(wrap)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start `{}`: {e}", config.command))?;
    if let Some(stderr) = stderr {
        let tail = tail.clone();
        tokio::spawn(async move {
            let mut file = match log {
                Some(path) => tokio::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .await
                    .ok(),
                None => None,
            };
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(f) = &mut file {
                    use tokio::io::AsyncWriteExt;
                    let _ = f.write_all(format!("{line}\n").as_bytes()).await;
                }
                tail.push(line);
            }
        });
    }
    Ok(transport)
}

/// How a call failed.
pub enum CallError {
    /// The server answered with an error (unknown tool, bad arguments).
    Refused(String),
    /// The connection is gone or the server did not answer in time: it is
    /// restarted at the next call.
    Broken(String),
}

impl Connection {
    pub fn is_alive(&self) -> bool {
        !self.client.is_transport_closed()
    }

    pub async fn call(
        &self,
        tool: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        timeout: Duration,
    ) -> Result<CallToolResult, CallError> {
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        match tokio::time::timeout(timeout, self.client.call_tool(params)).await {
            Err(_) => Err(CallError::Broken(format!(
                "it did not answer within {} s (tool_timeout_secs)",
                timeout.as_secs()
            ))),
            Ok(Ok(result)) => Ok(result),
            Ok(Err(rmcp::ServiceError::McpError(e))) => {
                Err(CallError::Refused(e.message.to_string()))
            }
            Ok(Err(e)) => Err(CallError::Broken(e.to_string())),
        }
    }

    /// Ends the connection (the child's process group is killed).
    pub async fn close(mut self) {
        let _ = self
            .client
            .close_with_timeout(Duration::from_millis(500))
            .await;
    }
}
