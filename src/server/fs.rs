//! The workspace's files as the model's read tools see them: `fs/list`
//! (`list_files`), `fs/read` (`read_file`) and `fs/search`
//! (`search_project`), through the engine, so every path is resolved in
//! the sandbox exactly as a tool call's is. And `GET …/audit`.

use super::query::Query;
use axum::extract::State;
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::body::Body;
use super::error::ApiError;
use super::state::{AppState, User, Workspace};
use crate::protocol::{Command, EngineError, Reply, Role};

/// Runs read tool `name` on `ws`: its JSON result, or its error as 400/404.
async fn tool(ws: &Workspace, name: &str, arguments: Value) -> Result<Json<Value>, ApiError> {
    let reply = ws
        .engine
        .command(Command::CallTool {
            name: name.into(),
            arguments,
        })
        .await
        .map_err(tool_error)?;
    let Reply::Tool { result } = reply else {
        return Err(ApiError::unavailable("the engine gave no result"));
    };
    if let Some(error) = result.get("error") {
        let code = error["code"].as_str().unwrap_or("invalid");
        let message = error["message"]
            .as_str()
            .unwrap_or("the request failed")
            .to_string();
        let mut err = match code {
            "not_found" => ApiError::not_found(message),
            _ => ApiError::invalid(message),
        };
        err.detail = Some(json!({ "tool_error": error }));
        return Err(err);
    }
    Ok(Json(result))
}

/// A tool's refusal as the client's error: what it could not find is 404,
/// what it refused (a path outside the root, a bad range, a binary file)
/// 400, a failure of the machine's 500; the tool's own error (`{code,
/// message}`, e.g. `outside_root`) goes along as `tool_error`.
fn tool_error(e: EngineError) -> ApiError {
    let EngineError::Failed {
        message,
        reason: Some(reason),
        detail,
    } = e
    else {
        return e.into();
    };
    let mut err = match reason.as_str() {
        "not_found" => ApiError::not_found(message),
        "io_error" | "internal_error" | "needs_job" => ApiError::new(
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            "unavailable",
            message,
        ),
        _ => ApiError::invalid(message),
    };
    err.detail = detail.map(|d| json!({ "tool_error": d.get("error").cloned().unwrap_or(d) }));
    err
}

/// Only the arguments that were given.
fn args(pairs: Vec<(&str, Option<Value>)>) -> Value {
    let map: Map<String, Value> = pairs
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k.to_string(), v)))
        .collect();
    Value::Object(map)
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    workspace_id: String,
    path: Option<String>,
    glob: Option<String>,
    limit: Option<u64>,
}

#[utoipa::path(get, path = "/api/v1/agent/fs/list", tag = "files", params(ListQuery), responses((status = 200, description = "as list_files"), (status = 400, description = "invalid", body = super::error::ErrorBody), (status = 401, description = "no or a wrong token", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn list(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    Query(q): Query<ListQuery>,
) -> Result<Json<Value>, ApiError> {
    let ws = app.workspace(&q.workspace_id, &user)?;
    let a = args(vec![
        ("prefix", q.path.map(Value::from)),
        ("glob", q.glob.map(Value::from)),
        ("limit", q.limit.map(Value::from)),
    ]);
    tool(ws, "list_files", a).await
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ReadQuery {
    workspace_id: String,
    path: String,
    start_line: Option<u64>,
    end_line: Option<u64>,
}

#[utoipa::path(get, path = "/api/v1/agent/fs/read", tag = "files", params(ReadQuery), responses((status = 200, description = "as read_file"), (status = 400, description = "invalid", body = super::error::ErrorBody), (status = 401, description = "no or a wrong token", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn read(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    Query(q): Query<ReadQuery>,
) -> Result<Json<Value>, ApiError> {
    let ws = app.workspace(&q.workspace_id, &user)?;
    let a = args(vec![
        ("file_path", Some(Value::from(q.path))),
        ("start_line", q.start_line.map(Value::from)),
        ("end_line", q.end_line.map(Value::from)),
    ]);
    tool(ws, "read_file", a).await
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Search {
    workspace_id: String,
    query: String,
    #[serde(default)]
    glob: Option<String>,
    #[serde(default)]
    regex: Option<bool>,
    #[serde(default)]
    limit: Option<u64>,
}

#[utoipa::path(post, path = "/api/v1/agent/fs/search", tag = "files", request_body = Search, responses((status = 200, description = "as search_project"), (status = 400, description = "invalid", body = super::error::ErrorBody), (status = 401, description = "no or a wrong token", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn search(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let ask: Search = body.parse()?;
    let ws = app.workspace(&ask.workspace_id, &user)?;
    let a = args(vec![
        ("query", Some(Value::from(ask.query))),
        ("glob", ask.glob.map(Value::from)),
        ("regex", ask.regex.map(Value::from)),
        ("limit", ask.limit.map(Value::from)),
    ]);
    tool(ws, "search_project", a).await
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct AuditQuery {
    session_id: Option<String>,
    limit: Option<usize>,
}

/// Audit records: a user's own sessions' (a session is required), an
/// admin's any.
#[utoipa::path(get, path = "/api/v1/agent/audit", tag = "audit", params(AuditQuery), responses((status = 200, description = "audit records"), (status = 400, description = "invalid", body = super::error::ErrorBody), (status = 401, description = "no or a wrong token", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn audit(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    Query(q): Query<AuditQuery>,
) -> Result<Json<Value>, ApiError> {
    let mut out = Vec::new();
    let limit = q.limit.unwrap_or(200).min(10_000);
    if let Some(session) = &q.session_id {
        let owner = app.accounts.session_owner(session).await?;
        let (ws, _) = app.owned(owner, &user, &format!("session {session}"))?;
        out = ws.engine.audit(Some(session.clone()), Some(limit)).await?;
    } else if user.role == Role::Admin {
        for ws in &app.workspaces {
            out.extend(ws.engine.audit(None, Some(limit)).await?);
        }
    } else {
        return Err(ApiError::invalid(
            "give session_id (only an admin reads the whole log)",
        ));
    }
    Ok(Json(json!({ "records": out })))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Write {
    workspace_id: String,
    path: String,
    content: String,
    /// Required: the hash the file was read with, or `null` to create it.
    expected_hash: Option<String>,
}

/// `POST …/fs/write`: the user's own write of one whole file: 409 unless
/// it still hashes to `expected_hash` (`null`: create only); atomic,
/// checkpointed (rollback undoes it), audited with the user.
#[utoipa::path(post, path = "/api/v1/agent/fs/write", tag = "files", request_body = Write, responses((status = 200, description = "{status, checkpoint_id, files}"), (status = 409, description = "the file is not as it was read: nothing written", body = super::error::ErrorBody), (status = 400, description = "invalid", body = super::error::ErrorBody), (status = 401, description = "no or a wrong token", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn write(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let raw: Value = body.parse()?;
    if raw.get("expected_hash").is_none() {
        return Err(ApiError::invalid(
            "expected_hash is required: the file's hash as fs/read gave it, or null to create it",
        ));
    }
    let ask: Write = body.parse()?;
    let ws = app.workspace(&ask.workspace_id, &user)?;
    let file = crate::protocol::UserWrite {
        file_path: ask.path,
        expected_hash: ask.expected_hash,
        content: ask.content,
    };
    write_files(&app, ws, vec![file], &user).await
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Patch {
    workspace_id: String,
    patch: String,
}

/// `POST …/fs/patch`: a unified diff as the user's own write: 409 (nothing
/// written) when a hunk's lines are no longer in the file; checkpointed.
#[utoipa::path(post, path = "/api/v1/agent/fs/patch", tag = "files", request_body = Patch, responses((status = 200, description = "{status, checkpoint_id, files}"), (status = 409, description = "a hunk no longer fits: nothing written", body = super::error::ErrorBody), (status = 400, description = "invalid", body = super::error::ErrorBody), (status = 401, description = "no or a wrong token", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn patch(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let ask: Patch = body.parse()?;
    let ws = app.workspace(&ask.workspace_id, &user)?;
    ws.writable("nothing is written")?;
    let files = ws.engine.patch_writes(&ask.patch).await?;
    write_files(&app, ws, files, &user).await
}

/// The person's own write of `files` through the engine (hash-checked,
/// checkpointed, audited): what `fs/write` and `fs/patch` answer. The
/// checkpoint is noted as the user's before the answer names it.
async fn write_files(
    app: &AppState,
    ws: &Workspace,
    files: Vec<crate::protocol::UserWrite>,
    user: &User,
) -> Result<Json<Value>, ApiError> {
    ws.writable("nothing is written")?;
    let reply = ws
        .engine
        .command(Command::WriteFiles {
            files,
            by: user.name.clone(),
        })
        .await?;
    let Reply::Written {
        checkpoint_id,
        files,
    } = reply
    else {
        return Err(ApiError::unavailable("the engine wrote nothing"));
    };
    super::checkpoints::own(app, ws, user, &checkpoint_id).await?;
    Ok(Json(
        json!({"status": "written", "checkpoint_id": checkpoint_id, "files": files}),
    ))
}
