//! The workspace's MCP servers through the engine's own hub (the one its
//! jobs use): `GET …/mcp/tools` starts them and lists their state and
//! tools; `POST …/mcp/call` calls one tool. A server that failed to start
//! is named with its error (and its stderr's tail), never "unknown tool".

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{Value, json};

use super::body::Body;
use super::error::ApiError;
use super::state::{AppState, User};
use crate::protocol::{Command, EngineError, Reply};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolsQuery {
    workspace_id: String,
}

pub async fn tools(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    Query(q): Query<ToolsQuery>,
) -> Result<Json<Value>, ApiError> {
    let ws = app.workspace(&q.workspace_id, &user)?;
    let Reply::McpServers { servers } = ws.engine.command(Command::McpTools).await? else {
        return Err(ApiError::unavailable("the engine listed no servers"));
    };
    Ok(Json(json!({ "servers": servers })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Call {
    workspace_id: String,
    server: String,
    tool: String,
    #[serde(default)]
    arguments: Value,
}

pub async fn call(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let ask: Call = body.parse()?;
    let ws = app.workspace(&ask.workspace_id, &user)?;
    if ws.read_only {
        return Err(ApiError::forbidden(format!(
            "workspace {} is read-only: its MCP tools are not called",
            ws.id
        )));
    }
    let arguments = if ask.arguments.is_null() {
        json!({})
    } else {
        ask.arguments
    };
    let reply = ws
        .engine
        .command(Command::McpCall {
            server: ask.server,
            tool: ask.tool,
            arguments,
        })
        .await
        .map_err(mcp_error)?;
    let Reply::Tool { result } = reply else {
        return Err(ApiError::unavailable("the engine gave no result"));
    };
    Ok(Json(json!({ "result": result })))
}

/// A refused call: what names nothing is 404, a server that is down 503
/// (its name and error in the message), a bad argument 400.
fn mcp_error(e: EngineError) -> ApiError {
    let EngineError::Failed {
        message,
        reason: Some(reason),
        detail,
    } = e
    else {
        return e.into();
    };
    let mut err = match reason.as_str() {
        "unknown_tool" => ApiError::not_found(message),
        "mcp_server_failed" | "mcp_timeout" => ApiError::unavailable(message),
        "invalid_arguments" => ApiError::invalid(message),
        _ => ApiError::new(StatusCode::BAD_GATEWAY, "unavailable", message),
    };
    err.detail = detail.map(|d| json!({ "mcp_error": d }));
    err
}
