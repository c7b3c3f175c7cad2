//! The code index over HTTP (SPEC 18): `GET …/index` says what a
//! workspace's index holds and whether it is fresh; `POST …/code/search`
//! is `code_search` (the index brought up to date first).

use axum::extract::State;
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::body::Body;
use super::error::ApiError;
use super::fs::{args, tool};
use super::query::Query;
use super::state::{AppState, User};

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct IndexQuery {
    workspace_id: String,
}

#[utoipa::path(get, path = "/api/v1/agent/index", tag = "index", params(IndexQuery), responses((status = 200, description = "{state: ready|building|none, files, symbols, fresh, changed, generation, bytes_on_disk, built_at, path}"), (status = 503, description = "the index is turned off, or there is no state home", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn index(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    Query(q): Query<IndexQuery>,
) -> Result<Json<Value>, ApiError> {
    let ws = app.workspace(&q.workspace_id, &user)?;
    let status = ws.engine.index_status().await?;
    Ok(Json(
        serde_json::to_value(status).map_err(|e| ApiError::unavailable(e.to_string()))?,
    ))
}

/// How `query` is read.
#[derive(Deserialize, Serialize, utoipa::ToSchema, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum CodeSearchMode {
    Auto,
    Text,
    Regex,
    Symbol,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct CodeSearch {
    workspace_id: String,
    /// Words, an identifier, a literal or a regex.
    #[schema(min_length = 1)]
    query: String,
    #[serde(default)]
    mode: Option<CodeSearchMode>,
    /// At most this many files (10 by default; the tool's cap applies).
    #[serde(default, deserialize_with = "super::query::count")]
    #[schema(minimum = 1)]
    limit: Option<u64>,
}

#[utoipa::path(post, path = "/api/v1/agent/code/search", tag = "index", request_body = CodeSearch, responses((status = 200, description = "as code_search: {results: [{path, score, why, snippets}], truncated, index: {fresh, files}}"), (status = 422, description = "a regex that does not compile", body = super::error::ErrorBody), (status = 503, description = "the index is turned off, or there is no state home", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn search(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let ask: CodeSearch = body.parse()?;
    let ws = app.workspace(&ask.workspace_id, &user)?;
    let mode = ask.mode.and_then(|m| serde_json::to_value(m).ok());
    let a = args(vec![
        ("query", Some(Value::from(ask.query))),
        ("mode", mode),
        ("limit", ask.limit.map(Value::from)),
    ]);
    tool(ws, "code_search", a).await
}
