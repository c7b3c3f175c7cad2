//! Workspaces and sessions: `GET …/workspaces`, `POST …/sessions`, `GET
//! …/sessions` (a user's own; an admin's, everyone's) and `GET
//! …/sessions/{id}` (its chat, jobs and pending review).

use super::query::Query;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{Value, json};

use super::body::Body;
use super::error::ApiError;
use super::state::{AppState, Place, User};
use crate::protocol::{Command, Owner, Reply, Role, SessionRef};

#[utoipa::path(get, path = "/api/v1/agent/workspaces", tag = "workspaces", responses((status = 200, description = "the workspaces this user may use")), security(("bearer" = [])))]
pub async fn workspaces(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
) -> Json<Value> {
    let list: Vec<Value> = app
        .workspaces
        .iter()
        .filter(|w| w.admits(&user))
        .map(|w| {
            json!({
                "id": w.id,
                "name": w.name,
                "root": w.engine.root().display().to_string(),
                "read_only": w.read_only,
                "allowed_commands": w.allowed_commands,
                "provider": w.engine.provider_label(),
            })
        })
        .collect();
    Json(json!({ "workspaces": list }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct NewSession {
    /// One of `GET …/workspaces`.
    workspace_id: String,
    #[serde(default)]
    #[allow(dead_code)]
    title: Option<String>,
}

#[utoipa::path(post, path = "/api/v1/agent/sessions", tag = "sessions", request_body = NewSession, responses((status = 201, description = "the new session {session_id, workspace_id, status, created_at}"), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn create(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    body: Body,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let ask: NewSession = body.parse()?;
    let ws = app.workspace(&ask.workspace_id, &user)?;
    let Reply::SessionCreated { session_id } = ws
        .engine
        .command_as(&user.name, Command::CreateSession)
        .await?
    else {
        return Err(ApiError::unavailable("the engine gave no session"));
    };
    let owner = Owner {
        user: user.name.clone(),
        workspace_id: ws.id.clone(),
        session_id: session_id.clone(),
        created_at: now(),
    };
    app.accounts.own_session(owner.clone()).await?;
    let here = Place {
        session: Some(&session_id),
        job: None,
    };
    ws.audit(here, "session.create", &session_id, &user);
    Ok((
        StatusCode::CREATED,
        Json(json!({
            "session_id": session_id,
            "workspace_id": ws.id,
            "status": "idle",
            "created_at": owner.created_at,
        })),
    ))
}

pub fn now() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    workspace_id: Option<String>,
}

#[utoipa::path(get, path = "/api/v1/agent/sessions", tag = "sessions", params(ListQuery), responses((status = 200, description = "the sessions this user may see"), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn list(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    Query(q): Query<ListQuery>,
) -> Result<Json<Value>, ApiError> {
    let mut out = Vec::new();
    for ws in app.workspaces.iter().filter(|w| w.admits(&user)) {
        if q.workspace_id.as_ref().is_some_and(|id| *id != ws.id) {
            continue;
        }
        let only = (user.role != Role::Admin).then_some(user.name.as_str());
        let owned = app.accounts.sessions(&ws.id, only).await?;
        let summaries = ws.engine.sessions().await?;
        for o in owned {
            let Some(s) = summaries.iter().find(|s| s.session_id == o.session_id) else {
                continue;
            };
            out.push(json!({
                "session_id": s.session_id,
                "workspace_id": ws.id,
                "user": o.user,
                "created_at": s.created_at,
                "updated_at": s.updated_at,
                "jobs": s.jobs,
                "pending_review": s.pending_review,
                "last_prompt": s.last_prompt,
            }));
        }
    }
    Ok(Json(json!({ "sessions": out })))
}

#[utoipa::path(get, path = "/api/v1/agent/sessions/{id}", tag = "sessions", params(("id" = String, Path, description = "session id", pattern = "^[A-Za-z0-9_]+$", max_length = 200)), responses((status = 200, description = "the session: its chat, jobs and pending review"), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn show(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let owner = app.accounts.session_owner(&id).await?;
    let (ws, owner) = app.owned(owner, &user, &format!("session {id}"))?;
    let transcript = ws.engine.transcript(&id).await?;
    let review = ws.engine.pending_review(SessionRef::Id(id.clone())).await?;
    Ok(Json(json!({
        "session_id": id,
        "workspace_id": ws.id,
        "user": owner.user,
        "created_at": transcript.created_at,
        "chat": chat(&transcript.jobs),
        "jobs": transcript.jobs,
        "pending_review": review,
    })))
}

/// The session's chat in order: each job's instruction and its answer.
fn chat(jobs: &[crate::protocol::JobSummary]) -> Vec<Value> {
    let mut out = Vec::new();
    for job in jobs {
        let mut said = json!({"role": "user", "text": job.prompt, "job_id": job.job_id});
        if !job.images.is_empty() {
            said["images"] = json!(job.images);
        }
        out.push(said);
        if let Some(answer) = &job.answer {
            out.push(json!({"role": "assistant", "text": answer, "job_id": job.job_id}));
        }
    }
    out
}
