//! Checkpoints over HTTP: the list, one checkpoint, its three-way view and
//! its rollback (409 on conflict, a file that is no longer one inside the
//! root included). A user sees those of their own sessions and those of
//! their own `fs/write`, `fs/patch` and `exec` (recorded here as they are
//! made, with the server's other owners); an admin sees every one.

use axum::extract::{Path, State};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{Value, json};

use super::body::Body;
use super::error::ApiError;
use super::query::Query;
use super::state::{AppState, Place, User, Workspace};
use crate::protocol::{Checkpoint, CheckpointView, Command, EngineError, Owner, Reply, Role};

/// Where the owner of a checkpoint made outside any session is kept: a
/// row of the server's owners under a key no session id can take.
fn owner_key(checkpoint_id: &str) -> String {
    format!("checkpoint:{checkpoint_id}")
}

/// Notes that `user` made checkpoint `checkpoint_id` in `ws` (their own
/// write or command), so they may see it and roll it back. Kept before the
/// answer naming it is sent.
pub async fn own(
    app: &AppState,
    ws: &Workspace,
    user: &User,
    checkpoint_id: &str,
) -> Result<(), ApiError> {
    let owner = Owner {
        user: user.name.clone(),
        workspace_id: ws.id.clone(),
        session_id: owner_key(checkpoint_id),
        created_at: super::sessions::now(),
    };
    app.accounts.own_session(owner).await?;
    Ok(())
}

/// Whether `user` may see checkpoint `c` of `ws` (an admin every one; a
/// user those of their own sessions, writes and commands).
async fn may_see(
    app: &AppState,
    user: &User,
    ws: &Workspace,
    c: &Checkpoint,
) -> Result<bool, ApiError> {
    if user.role == Role::Admin {
        return Ok(true);
    }
    if let Some(session) = &c.session_id {
        let owner = app.accounts.session_owner(session).await?;
        return Ok(owner.is_some_and(|o| user.may_see(&o)));
    }
    let owner = app
        .accounts
        .session_owner(&owner_key(&c.checkpoint_id))
        .await?;
    Ok(owner.is_some_and(|o| user.may_see(&o) && o.workspace_id == ws.id))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct BySession {
    #[param(value_type = Option<String>, pattern = "^[A-Za-z0-9_]+$", max_length = 200)]
    session_id: Option<super::id::Id>,
}

#[utoipa::path(get, path = "/api/v1/agent/checkpoints", tag = "review", params(BySession), responses((status = 200, description = "checkpoints"), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn list(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    Query(q): Query<BySession>,
) -> Result<Json<Value>, ApiError> {
    let mut out = Vec::new();
    for ws in app.workspaces.iter().filter(|w| w.admits(&user)) {
        for c in ws.engine.checkpoints().await? {
            if q.session_id.is_some() && c.session_id.as_deref() != q.session_id.as_deref() {
                continue;
            }
            if may_see(&app, &user, ws, &c).await? {
                let mut v = serde_json::to_value(&c).unwrap_or_default();
                v["workspace_id"] = json!(ws.id);
                out.push(v);
            }
        }
    }
    Ok(Json(json!({ "checkpoints": out })))
}

/// The checkpoint `id`, its view and its workspace, if `user` may see it.
/// Without `three_way` (show, rollback) a checkpoint whose files cannot be
/// read as they are now (one became a link out of the root) is still found,
/// with no three-way view.
async fn find<'a>(
    app: &'a AppState,
    user: &User,
    id: &str,
    three_way: bool,
) -> Result<(&'a Workspace, CheckpointView), ApiError> {
    for ws in app.workspaces.iter().filter(|w| w.admits(user)) {
        let view = match ws.engine.checkpoint(id).await {
            Ok(view) => Some(view),
            Err(EngineError::NotFound { .. }) => None,
            Err(EngineError::Failed { .. }) if !three_way => record(ws, id).await?,
            Err(e) => return Err(e.into()),
        };
        if let Some(view) = view
            && may_see(app, user, ws, &view.checkpoint).await?
        {
            return Ok((ws, view));
        }
    }
    Err(ApiError::not_found(format!("no checkpoint {id}"))
        .hint("GET /api/v1/agent/checkpoints lists yours"))
}

/// Checkpoint `id`'s record alone, from the list of `ws`'s root.
async fn record(ws: &Workspace, id: &str) -> Result<Option<CheckpointView>, ApiError> {
    let found = ws
        .engine
        .checkpoints()
        .await?
        .into_iter()
        .find(|c| c.checkpoint_id == id);
    Ok(found.map(|checkpoint| CheckpointView {
        checkpoint,
        three_way: Vec::new(),
    }))
}

#[utoipa::path(get, path = "/api/v1/agent/checkpoints/{id}", tag = "review", params(("id" = String, Path, description = "checkpoint id", pattern = "^[A-Za-z0-9_]+$", max_length = 200)), responses((status = 200, description = "the checkpoint"), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn show(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let (ws, view) = find(&app, &user, &id, false).await?;
    let mut v = serde_json::to_value(&view.checkpoint).unwrap_or_default();
    v["workspace_id"] = json!(ws.id);
    Ok(Json(v))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct FileQuery {
    #[param(min_length = 1, pattern = "^[^\\x00-\\x1f\\x7f-\\x9f]+$")]
    file_path: String,
}

#[utoipa::path(get, path = "/api/v1/agent/checkpoints/{id}/diff3", tag = "review", params(("id" = String, Path, description = "checkpoint id", pattern = "^[A-Za-z0-9_]+$", max_length = 200), FileQuery), responses((status = 200, description = "{current, base, proposed}"), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn diff3(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    Path(id): Path<String>,
    Query(q): Query<FileQuery>,
) -> Result<Json<Value>, ApiError> {
    let (_, view) = find(&app, &user, &id, true).await?;
    let three = view
        .three_way
        .into_iter()
        .find(|t| t.file_path == q.file_path)
        .ok_or_else(|| {
            ApiError::not_found(format!("checkpoint {id} did not change {}", q.file_path)).hint(
                format!("GET /api/v1/agent/checkpoints/{id} lists its files"),
            )
        })?;
    Ok(Json(json!({
        "file_path": three.file_path,
        "current": three.current,
        "base": three.base,
        "proposed": three.proposed,
    })))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Rollback {
    mode: RollbackMode,
    #[serde(default)]
    hunk_ids: Vec<String>,
}

#[derive(Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
enum RollbackMode {
    HardAll,
    ScopedSelected,
}

#[utoipa::path(post, path = "/api/v1/agent/checkpoints/{id}/rollback", tag = "review", request_body = Rollback, params(("id" = String, Path, description = "checkpoint id", pattern = "^[A-Za-z0-9_]+$", max_length = 200)), responses((status = 200, description = "rolled back"), (status = 409, description = "a region changed since, or a file is no longer one inside the root: nothing written", body = super::error::ErrorBody), (status = 422, description = "scoped_selected without hunk_ids", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn rollback(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    Path(id): Path<String>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let ask: Rollback = body.parse()?;
    let (ws, view) = find(&app, &user, &id, false).await?;
    ws.writable("nothing is written")?;
    if ask.mode == RollbackMode::ScopedSelected && ask.hunk_ids.is_empty() {
        return Err(ApiError::unprocessable("scoped_selected needs hunk_ids"));
    }
    let here = Place {
        session: view.checkpoint.session_id.as_deref(),
        job: None,
    };
    ws.audit(here, "rollback.request", &id, &user);
    let hunks = match ask.mode {
        RollbackMode::HardAll => Vec::new(),
        RollbackMode::ScopedSelected => ask.hunk_ids,
    };
    let asked = ws
        .engine
        .command_as(
            &user.name,
            Command::Rollback {
                checkpoint_id: id.clone(),
                hunks,
                files: Vec::new(),
                tell: view.checkpoint.session_id.clone(),
            },
        )
        .await;
    let reply = match asked {
        Ok(reply) => reply,
        Err(e) => return Err(e.into()),
    };
    let Reply::RolledBack {
        rollback_checkpoint_id,
        files,
        ..
    } = reply
    else {
        return Err(ApiError::unavailable("the engine did not roll back"));
    };
    if view.checkpoint.session_id.is_none() {
        // Undoing one's own write is one's own write too.
        own(&app, ws, &user, &rollback_checkpoint_id).await?;
    }
    Ok(Json(json!({
        "status": "rolled_back",
        "checkpoint_id": id,
        "rollback_checkpoint_id": rollback_checkpoint_id,
        "files": files,
    })))
}
