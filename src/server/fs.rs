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
pub(super) async fn tool(
    ws: &Workspace,
    name: &str,
    arguments: Value,
) -> Result<Json<Value>, ApiError> {
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
        let mut err = refusal(code, message);
        err.detail = Some(json!({ "tool_error": error }));
        return Err(err);
    }
    Ok(Json(result))
}

/// A tool's refusal (its `code`) as the client's error: what is not there
/// 404; what the sandbox forbids 403; what fits the request's schema but
/// cannot be served (a binary file, lines the file lacks, a regular
/// expression or glob that does not compile, a path no file can have)
/// 422; a failure of the machine's 500.
fn refusal(code: &str, message: String) -> ApiError {
    match code {
        "not_found" | "not_a_file" | "broken_symlink" | "unknown_scope" => {
            ApiError::not_found(message)
        }
        "outside_root" | "forbidden_path" | "read_only_scope" => ApiError::forbidden(message),
        "index_unavailable" => ApiError::unavailable(message),
        "io_error" | "internal_error" | "needs_job" => ApiError::new(
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            "unavailable",
            message,
        ),
        _ => ApiError::unprocessable(message),
    }
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
    let mut err = refusal(&reason, message);
    err.detail = detail.map(|d| json!({ "tool_error": d.get("error").cloned().unwrap_or(d) }));
    err
}

/// Only the arguments that were given.
pub(super) fn args(pairs: Vec<(&str, Option<Value>)>) -> Value {
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
    /// At most this many entries (the tool's cap applies).
    #[serde(default, deserialize_with = "super::query::count")]
    #[param(minimum = 1)]
    limit: Option<u64>,
    /// A folder (or a file) under the root, as `list_files`' prefix.
    #[param(min_length = 1, pattern = "^[^\\x00-\\x1f\\x7f-\\x9f]+$")]
    path: Option<String>,
    glob: Option<String>,
}

#[utoipa::path(get, path = "/api/v1/agent/fs/list", tag = "files", params(ListQuery), responses((status = 200, description = "as list_files"), (status = 422, description = "not servable as asked: a binary file, lines the file lacks, a pattern or glob that does not compile, a path no file can have", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
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
    #[param(min_length = 1, pattern = "^[^\\x00-\\x1f\\x7f-\\x9f]+$")]
    path: String,
    /// The first line to read (1-based).
    #[serde(default, deserialize_with = "super::query::count")]
    #[param(minimum = 1)]
    start_line: Option<u64>,
    /// The last line to read (inclusive).
    #[serde(default, deserialize_with = "super::query::count")]
    #[param(minimum = 1)]
    end_line: Option<u64>,
}

#[utoipa::path(get, path = "/api/v1/agent/fs/read", tag = "files", params(ReadQuery), responses((status = 200, description = "as read_file"), (status = 422, description = "not servable as asked: a binary file, lines the file lacks, a pattern or glob that does not compile, a path no file can have", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
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
    /// A literal, or with `regex` a regular expression (Rust's syntax).
    #[schema(min_length = 1)]
    query: String,
    #[serde(default)]
    glob: Option<String>,
    #[serde(default)]
    regex: Option<bool>,
    /// At most this many results (the tool's cap applies).
    #[serde(default, deserialize_with = "super::query::count")]
    #[schema(minimum = 1)]
    limit: Option<u64>,
}

#[utoipa::path(post, path = "/api/v1/agent/fs/search", tag = "files", request_body = Search, responses((status = 200, description = "as search_project"), (status = 422, description = "not servable as asked: a binary file, lines the file lacks, a pattern or glob that does not compile, a path no file can have", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
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
    /// Only this session's records.
    #[param(value_type = Option<String>, pattern = "^[A-Za-z0-9_]+$", max_length = 200)]
    session_id: Option<super::id::Id>,
    /// Only the records this server user's requests caused (`user` of a
    /// record; records of what was done on the host itself have none).
    user: Option<String>,
    /// The newest this many (200 by default, at most 10,000).
    #[serde(default, deserialize_with = "super::query::count")]
    #[param(minimum = 0)]
    limit: Option<usize>,
}

/// Audit records: a user's own sessions' (with `session_id`) or their own
/// requests' (with `user` their own name), an admin's any.
#[utoipa::path(get, path = "/api/v1/agent/audit", tag = "audit", params(AuditQuery), responses((status = 200, description = "audit records"), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn audit(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    Query(q): Query<AuditQuery>,
) -> Result<Json<Value>, ApiError> {
    let mut out = Vec::new();
    let limit = q.limit.unwrap_or(200).min(10_000);
    let admin = user.role == Role::Admin;
    if let Some(session) = &q.session_id {
        let owner = app.accounts.session_owner(session).await?;
        let (ws, _) = app.owned(owner, &user, &format!("session {session}"))?;
        out = ws
            .engine
            .audit(Some(session.to_string()), q.user.clone(), Some(limit))
            .await?;
    } else if admin || q.user.as_deref() == Some(user.name.as_str()) {
        for ws in app.workspaces.iter().filter(|w| admin || w.admits(&user)) {
            out.extend(ws.engine.audit(None, q.user.clone(), Some(limit)).await?);
        }
    } else {
        return Err(ApiError::forbidden(
            "only an admin reads the whole log: give session_id, or user with your own name",
        ));
    }
    Ok(Json(json!({ "records": out })))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Write {
    workspace_id: String,
    #[schema(min_length = 1, pattern = "^[^\\x00-\\x1f\\x7f-\\x9f]+$")]
    path: String,
    content: String,
    /// Required: the hash the file was read with (`sha256:<hex>` as
    /// `fs/read` gives it, or the bare hex), or `null` to create it.
    #[schema(required = true, pattern = "^(sha256:)?[0-9a-fA-F]{64}$")]
    expected_hash: Option<String>,
}

/// `POST …/fs/write`: the user's own write of one whole file: 409 unless
/// it still hashes to `expected_hash` (`null`: create only); atomic,
/// checkpointed (rollback undoes it), audited with the user.
#[utoipa::path(post, path = "/api/v1/agent/fs/write", tag = "files", request_body = Write, responses((status = 200, description = "{status, checkpoint_id, files}"), (status = 409, description = "the file is not as it was read: nothing written", body = super::error::ErrorBody), (status = 422, description = "a path no file under the root can have, or text that is not UTF-8: nothing written", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
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
    /// A unified diff (`---`, `+++`, `@@` lines) of files under the root.
    #[schema(min_length = 1)]
    patch: String,
}

/// `POST …/fs/patch`: a unified diff as the user's own write: 409 (nothing
/// written) when a hunk's lines are no longer in the file; checkpointed.
#[utoipa::path(post, path = "/api/v1/agent/fs/patch", tag = "files", request_body = Patch, responses((status = 200, description = "{status, checkpoint_id, files}"), (status = 409, description = "a hunk no longer fits: nothing written", body = super::error::ErrorBody), (status = 422, description = "not a unified diff, or a path no file under the root can have: nothing written", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn patch(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let ask: Patch = body.parse()?;
    let ws = app.workspace(&ask.workspace_id, &user)?;
    ws.writable("nothing is written")?;
    let files = ws
        .engine
        .patch_writes(&ask.patch)
        .await
        .map_err(unwritable)?;
    write_files(&app, ws, files, &user).await
}

/// A write the engine refused for what it says (a path no file under the
/// root can have, a patch that is not a unified diff, text that is not
/// UTF-8): 422; the rest as the engine's errors go.
fn unwritable(e: EngineError) -> ApiError {
    match e {
        EngineError::Invalid { .. } => ApiError::unprocessable(e.to_string()),
        e => e.into(),
    }
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
        .command_as(
            &user.name,
            Command::WriteFiles {
                files,
                by: user.name.clone(),
            },
        )
        .await
        .map_err(unwritable)?;
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
