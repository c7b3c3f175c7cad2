//! The workspace's MCP servers through the engine's own hub (the one its
//! jobs use): `GET …/mcp/tools` starts them and lists their state and
//! tools; `POST …/mcp/call` calls one tool. A server that failed to start
//! is named with its error (and its stderr's tail), never "unknown tool".

use super::query::Query;
use axum::extract::State;
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{Value, json};

use super::body::Body;
use super::error::ApiError;
use super::state::{AppState, Place, User};
use crate::protocol::{Command, EngineError, Reply};

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ToolsQuery {
    workspace_id: String,
}

#[utoipa::path(get, path = "/api/v1/agent/mcp/tools", tag = "mcp", params(ToolsQuery), responses((status = 200, description = "{servers: [{name, state, tools}]}"), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
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

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Call {
    workspace_id: String,
    server: String,
    tool: String,
    #[serde(default)]
    #[schema(value_type = Object)]
    arguments: Value,
}

#[utoipa::path(post, path = "/api/v1/agent/mcp/call", tag = "mcp", request_body = Call, responses((status = 200, description = "{result}"), (status = 503, description = "the server is down: named with its error", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn call(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let ask: Call = body.parse()?;
    let ws = app.workspace(&ask.workspace_id, &user)?;
    ws.writable("its MCP tools are not called")?;
    ws.audit(
        Place::default(),
        "mcp.call",
        &format!("{}/{}", ask.server, ask.tool),
        &user,
    );
    let arguments = if ask.arguments.is_null() {
        json!({})
    } else {
        ask.arguments
    };
    let reply = ws
        .engine
        .command_as(
            &user.name,
            Command::McpCall {
                server: ask.server,
                tool: ask.tool,
                arguments,
            },
        )
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
