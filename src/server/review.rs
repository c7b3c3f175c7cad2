//! The review over HTTP: `POST …/apply` (decide and write, 409 with the
//! conflicts and nothing written), checkpoints with their three-way view,
//! and rollback (409 on conflict). A read-only workspace refuses writes.

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{Value, json};

use super::body::Body;
use super::error::ApiError;
use super::idem;
use super::state::{AppState, Place, User, Workspace};
use crate::protocol::{Checkpoint, Command, Reply, Role};

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Apply {
    session_id: String,
    job_id: String,
    accepted_hunk_ids: Vec<String>,
    #[serde(default)]
    rejected_hunk_ids: Vec<String>,
}

#[utoipa::path(post, path = "/api/v1/agent/apply", tag = "review", request_body = Apply, params(("Idempotency-Key" = Option<String>, Header, description = "a retry applies once")), responses((status = 200, description = "{status, checkpoint_id, applied_files}"), (status = 409, description = "the files changed: nothing written", body = super::error::ErrorBody), (status = 400, description = "invalid", body = super::error::ErrorBody), (status = 401, description = "no or a wrong token", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn apply(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let work = async {
        let ask: Apply = body.parse()?;
        let (ws, owner) = super::jobs::job(&app, &user, &ask.job_id).await?;
        if owner.session_id != ask.session_id {
            return Err(ApiError::not_found(format!(
                "no job {} in session {}",
                ask.job_id, ask.session_id
            )));
        }
        ws.writable("nothing is written")?;
        ws.audit(
            Place {
                session: Some(&ask.session_id),
                job: Some(&ask.job_id),
            },
            "apply.request",
            &ask.accepted_hunk_ids.join(","),
            &user,
        );
        decide(
            ws,
            &ask.job_id,
            ask.accepted_hunk_ids,
            ask.rejected_hunk_ids,
        )
        .await?;
        let reply = ws
            .engine
            .command(Command::Apply {
                job_id: ask.job_id.clone(),
            })
            .await?;
        let Reply::Applied {
            checkpoint_id,
            hunk_ids,
            bundle,
            ..
        } = reply
        else {
            return Err(ApiError::unavailable("the engine did not apply"));
        };
        let files: Vec<Value> = bundle
            .files
            .iter()
            .map(|f| {
                let applied: Vec<&str> = f
                    .hunks
                    .iter()
                    .filter(|h| hunk_ids.contains(&h.hunk_id))
                    .map(|h| h.hunk_id.as_str())
                    .collect();
                let rejected: Vec<&str> = f
                    .hunks
                    .iter()
                    .filter(|h| h.state == crate::protocol::HunkState::Rejected)
                    .map(|h| h.hunk_id.as_str())
                    .collect();
                json!({"file_path": f.file_path, "applied_hunks": applied, "rejected_hunks": rejected})
            })
            .filter(|f| {
                f["applied_hunks"].as_array().is_some_and(|a| !a.is_empty())
                    || f["rejected_hunks"].as_array().is_some_and(|a| !a.is_empty())
            })
            .collect();
        Ok((
            StatusCode::OK,
            json!({"status": "applied", "checkpoint_id": checkpoint_id, "applied_files": files}),
        ))
    };
    idem::once(&app, &user, &headers, "POST /apply", &body.0, work).await
}

/// Records a client's hunk decisions on job `job_id`'s review.
async fn decide(
    ws: &Workspace,
    job_id: &str,
    accept: Vec<String>,
    reject: Vec<String>,
) -> Result<(), ApiError> {
    let decide = Command::Decide {
        job_id: job_id.to_string(),
        accept,
        reject,
        accept_all: false,
    };
    ws.engine.command(decide).await?;
    Ok(())
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Verify {
    /// Decisions to record first (like `apply`'s).
    #[serde(default)]
    accepted_hunk_ids: Vec<String>,
    #[serde(default)]
    rejected_hunk_ids: Vec<String>,
    /// On a failure, send it to the model: a new job asked for a
    /// corrected proposal (`feedback_job_id` in the answer).
    #[serde(default)]
    feedback: bool,
}

#[utoipa::path(post, path = "/api/v1/agent/jobs/{id}/verify", tag = "review", request_body = Verify, params(("id" = String, Path, description = "job id")), responses((status = 200, description = "{verify: {passed, outcome, exit_code, duration_ms, output_tail, hunk_ids, baseline, ...}, feedback_job_id?}"), (status = 400, description = "invalid: no verify command, no accepted hunks", body = super::error::ErrorBody), (status = 401, description = "no or a wrong token", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn verify(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    Path(id): Path<String>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let ask: Verify = if body.0.is_empty() {
        Verify::default()
    } else {
        body.parse()?
    };
    let (ws, owner) = super::jobs::job(&app, &user, &id).await?;
    let here = Place {
        session: Some(&owner.session_id),
        job: Some(&id),
    };
    ws.audit(here, "verify.request", &id, &user);
    if !ask.accepted_hunk_ids.is_empty() || !ask.rejected_hunk_ids.is_empty() {
        ws.writable("no decisions are recorded")?;
        decide(ws, &id, ask.accepted_hunk_ids, ask.rejected_hunk_ids).await?;
    }
    let reply = ws
        .engine
        .command(Command::Verify { job_id: id.clone() })
        .await?;
    let Reply::Verified { result } = reply else {
        return Err(ApiError::unavailable("the engine did not verify"));
    };
    let mut out = json!({ "job_id": id, "verify": result });
    if ask.feedback && !result.passed {
        super::usage::admit(&app, &user).await?;
        let new_job_id = crate::agent::new_job_id();
        let feedback = Command::VerifyFeedback {
            job_id: id.clone(),
            new_job_id: new_job_id.clone(),
        };
        let job_owner = crate::protocol::Owner {
            user: user.name.clone(),
            workspace_id: ws.id.clone(),
            session_id: owner.session_id.clone(),
            created_at: super::sessions::now(),
        };
        // Known before the job's first event, so its stream can be followed.
        app.accounts
            .own_job(&new_job_id, job_owner, Some(&app.host), &feedback)
            .await?;
        ws.engine.command(feedback).await?;
        super::usage::watch(
            app.clone(),
            ws.engine.clone(),
            new_job_id.clone(),
            user.name.clone(),
        );
        out["feedback_job_id"] = json!(new_job_id);
    }
    Ok(Json(out))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct BySession {
    session_id: Option<String>,
}

/// Whether `user` may see checkpoint `c` (an admin every one; a user
/// those of their own sessions).
async fn may_see(app: &AppState, user: &User, c: &Checkpoint) -> Result<bool, ApiError> {
    if user.role == Role::Admin {
        return Ok(true);
    }
    let Some(session) = &c.session_id else {
        return Ok(false);
    };
    let owner = app.accounts.session_owner(session).await?;
    Ok(owner.is_some_and(|o| user.may_see(&o)))
}

#[utoipa::path(get, path = "/api/v1/agent/checkpoints", tag = "review", params(BySession), responses((status = 200, description = "checkpoints"), (status = 400, description = "invalid", body = super::error::ErrorBody), (status = 401, description = "no or a wrong token", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn list(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    Query(q): Query<BySession>,
) -> Result<Json<Value>, ApiError> {
    let mut out = Vec::new();
    for ws in app.workspaces.iter().filter(|w| w.admits(&user)) {
        for c in ws.engine.checkpoints().await? {
            if q.session_id.is_some() && c.session_id != q.session_id {
                continue;
            }
            if may_see(&app, &user, &c).await? {
                let mut v = serde_json::to_value(&c).unwrap_or_default();
                v["workspace_id"] = json!(ws.id);
                out.push(v);
            }
        }
    }
    Ok(Json(json!({ "checkpoints": out })))
}

/// The checkpoint `id`, its view and its workspace, if `user` may see it.
async fn find<'a>(
    app: &'a AppState,
    user: &User,
    id: &str,
) -> Result<(&'a Workspace, crate::protocol::CheckpointView), ApiError> {
    for ws in app.workspaces.iter().filter(|w| w.admits(user)) {
        match ws.engine.checkpoint(id).await {
            Ok(view) if may_see(app, user, &view.checkpoint).await? => return Ok((ws, view)),
            Ok(_) | Err(crate::protocol::EngineError::NotFound { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Err(ApiError::not_found(format!("no checkpoint {id}")))
}

#[utoipa::path(get, path = "/api/v1/agent/checkpoints/{id}", tag = "review", params(("id" = String, Path, description = "checkpoint id")), responses((status = 200, description = "the checkpoint"), (status = 400, description = "invalid", body = super::error::ErrorBody), (status = 401, description = "no or a wrong token", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn show(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let (ws, view) = find(&app, &user, &id).await?;
    let mut v = serde_json::to_value(&view.checkpoint).unwrap_or_default();
    v["workspace_id"] = json!(ws.id);
    Ok(Json(v))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct FileQuery {
    file_path: String,
}

#[utoipa::path(get, path = "/api/v1/agent/checkpoints/{id}/diff3", tag = "review", params(("id" = String, Path, description = "checkpoint id"), FileQuery), responses((status = 200, description = "{current, base, proposed}"), (status = 400, description = "invalid", body = super::error::ErrorBody), (status = 401, description = "no or a wrong token", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn diff3(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    Path(id): Path<String>,
    Query(q): Query<FileQuery>,
) -> Result<Json<Value>, ApiError> {
    let (_, view) = find(&app, &user, &id).await?;
    let three = view
        .three_way
        .into_iter()
        .find(|t| t.file_path == q.file_path)
        .ok_or_else(|| {
            ApiError::not_found(format!("checkpoint {id} did not change {}", q.file_path))
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

#[utoipa::path(post, path = "/api/v1/agent/checkpoints/{id}/rollback", tag = "review", request_body = Rollback, params(("id" = String, Path, description = "checkpoint id")), responses((status = 200, description = "rolled back"), (status = 409, description = "a region changed since: nothing written", body = super::error::ErrorBody), (status = 400, description = "invalid", body = super::error::ErrorBody), (status = 401, description = "no or a wrong token", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn rollback(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    Path(id): Path<String>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let ask: Rollback = body.parse()?;
    let (ws, view) = find(&app, &user, &id).await?;
    ws.writable("nothing is written")?;
    if ask.mode == RollbackMode::ScopedSelected && ask.hunk_ids.is_empty() {
        return Err(ApiError::invalid("scoped_selected needs hunk_ids"));
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
    let reply = ws
        .engine
        .command(Command::Rollback {
            checkpoint_id: id.clone(),
            hunks,
            files: Vec::new(),
            tell: view.checkpoint.session_id.clone(),
        })
        .await?;
    let Reply::RolledBack {
        rollback_checkpoint_id,
        files,
        ..
    } = reply
    else {
        return Err(ApiError::unavailable("the engine did not roll back"));
    };
    Ok(Json(json!({
        "status": "rolled_back",
        "checkpoint_id": id,
        "rollback_checkpoint_id": rollback_checkpoint_id,
        "files": files,
    })))
}
