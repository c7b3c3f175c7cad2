//! MCP tools in a job: the session's servers are started when the first
//! agent-mode job offers their tools (never at TUI start), their state is
//! reported (`mcp.servers`), and a call is checked, approved (`[approvals]
//! mcp`) and sent to its server.

use std::collections::BTreeMap;

use serde_json::Value;

use super::job::Job;
use super::tool_calls::error_value;
use crate::config::ApprovalPolicy;
use crate::llm::{ToolCall, ToolDef};
use crate::mcp::{McpHub, ServerState};
use crate::protocol::{EventBody, McpServerStatus, McpState, Mode};

impl Job<'_> {
    /// Starts the servers (agent mode, MCP not switched off) and returns
    /// their tools for the request.
    pub(super) async fn start_mcp(&mut self) -> Vec<ToolDef> {
        let Some(hub) = self.usable_hub() else {
            return Vec::new();
        };
        let states = hub.start_all().await;
        self.report_mcp(&states);
        self.mcp_tools = hub.tools().await;
        self.mcp_tools
            .iter()
            .map(|t| ToolDef {
                name: t.name.clone(),
                description: if t.description.is_empty() {
                    format!("Tool `{}` of MCP server `{}`.", t.tool, t.server)
                } else {
                    format!("[MCP server {}] {}", t.server, t.description)
                },
                parameters: t.schema.clone(),
            })
            .collect()
    }

    /// The session's servers, when this job may use them (agent mode,
    /// MCP not switched off).
    fn usable_hub(&self) -> Option<std::sync::Arc<McpHub>> {
        let usable =
            self.spec.mode == Mode::Agent && self.ctx.config.approvals.mcp != ApprovalPolicy::Never;
        self.spec.mcp.clone().filter(|_| usable)
    }

    /// A call of a configured server's tool that this job does not offer
    /// (the server failed to start, or died since): the server is started
    /// again while the job's restarts allow, and its tools offered from
    /// then on; else the call fails naming the server, how it failed and
    /// its stderr's tail (never "unknown tool": the model would guess, and
    /// the user could not tell a typo from a crashed server). Such a
    /// failed call counts against the job's budget like any other.
    pub(super) async fn revive_mcp(&mut self, call: &ToolCall) -> Result<(), Value> {
        let Some(hub) = self.usable_hub() else {
            return Ok(());
        };
        let revived = hub.revive(&call.name, &mut self.mcp_restarts).await;
        let Some(revived) = revived else {
            return Ok(());
        };
        self.mcp_tools = hub.tools().await;
        let states = hub.states().await;
        self.report_mcp(&states);
        if revived.is_err() && self.calls_made < self.spec.max_tool_calls {
            self.calls_made += 1;
        }
        revived
    }

    fn report_mcp(&mut self, states: &BTreeMap<String, ServerState>) {
        let servers = states
            .iter()
            .map(|(name, state)| {
                let (label, tools, error) = match state {
                    ServerState::Stopped => (McpState::Stopped, 0, None),
                    ServerState::Running { tools } => (McpState::Running, *tools, None),
                    ServerState::Failed { error } => (McpState::Failed, 0, Some(error.clone())),
                    ServerState::Disabled => (McpState::Disabled, 0, None),
                };
                McpServerStatus {
                    name: name.clone(),
                    state: label,
                    tools,
                    error,
                }
            })
            .collect();
        self.emit.emit(EventBody::McpServers { servers });
    }

    /// Whether `call` names one of this job's MCP tools.
    pub(super) fn is_mcp(&self, name: &str) -> bool {
        self.mcp_tools.iter().any(|t| t.name == name)
    }

    /// Checks the arguments against the server's schema; `Err` is what the
    /// model is told.
    pub(super) fn check_mcp(&self, call: &ToolCall) -> Result<(), Value> {
        let Some(tool) = self.mcp_tools.iter().find(|t| t.name == call.name) else {
            return Err(error_value(
                "unknown_tool",
                format!("`{}` is not offered", call.name),
            ));
        };
        let validator = match jsonschema::validator_for(&tool.schema) {
            Ok(v) => v,
            // A server's broken schema is its own problem: the server decides.
            Err(_) => return Ok(()),
        };
        match validator.iter_errors(&call.arguments).next() {
            Some(e) => Err(error_value(
                "invalid_arguments",
                format!(
                    "invalid arguments for `{}` at `{}`: {e}",
                    call.name,
                    e.instance_path()
                ),
            )),
            None => Ok(()),
        }
    }

    /// Sends an approved call to its server.
    pub(super) async fn call_mcp(&mut self, hub: &McpHub, call: &ToolCall) -> Result<Value, Value> {
        let restarts_before: u32 = self.mcp_restarts.values().sum();
        let outcome = hub
            .call(&call.name, call.arguments.clone(), &mut self.mcp_restarts)
            .await;
        // A server failed or came back: front ends show the new state.
        let restarted = self.mcp_restarts.values().sum::<u32>() != restarts_before;
        if restarted
            || outcome
                .as_ref()
                .is_err_and(|e| e["code"] == "mcp_server_failed")
        {
            let states = hub.states().await;
            self.report_mcp(&states);
        }
        outcome
    }
}

impl super::engine::Core {
    /// `McpTools`: the hub's servers started, with their tools.
    pub(super) fn mcp_tools(&mut self, q: super::engine::Queued) {
        let hub = self.mcp.clone();
        tokio::spawn(async move {
            let Some(hub) = hub else {
                return q.answer(Ok(crate::protocol::Reply::McpServers {
                    servers: Vec::new(),
                }));
            };
            let states = hub.start_all().await;
            let tools = hub.tools().await;
            let servers = states
                .iter()
                .map(|(name, state)| {
                    let listed: Vec<Value> = tools
                        .iter()
                        .filter(|t| &t.server == name)
                        .map(|t| {
                            serde_json::json!({"name": t.name, "tool": t.tool,
                                "description": t.description, "input_schema": t.schema})
                        })
                        .collect();
                    serde_json::json!({"name": name, "state": state, "label": state.label(), "tools": listed})
                })
                .collect();
            q.answer(Ok(crate::protocol::Reply::McpServers { servers }));
        });
    }

    /// `McpCall`: one call through the hub (a server down is started).
    pub(super) fn mcp_call(
        &mut self,
        server: String,
        tool: String,
        arguments: Value,
        q: super::engine::Queued,
    ) {
        let hub = self.mcp.clone();
        tokio::spawn(async move {
            let Some(hub) = hub else {
                return q.answer(Err(crate::protocol::EngineError::not_found(
                    "this root's configuration has no MCP servers ([mcp_servers.NAME])",
                )));
            };
            let name = crate::mcp::tool_name(&server, &tool);
            let mut restarts = BTreeMap::new();
            let answer = match hub.call(&name, arguments, &mut restarts).await {
                Ok(result) => Ok(crate::protocol::Reply::Tool { result }),
                Err(error) => {
                    let code = error["error"]["code"]
                        .as_str()
                        .or(error["code"].as_str())
                        .unwrap_or("mcp_error")
                        .to_string();
                    let message = error["error"]["message"]
                        .as_str()
                        .or(error["message"].as_str())
                        .unwrap_or("the MCP call failed")
                        .to_string();
                    Err(crate::protocol::EngineError::Failed {
                        message,
                        reason: Some(code),
                        detail: Some(error),
                    })
                }
            };
            q.answer(answer);
        });
    }
}
