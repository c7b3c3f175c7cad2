//! Jobs: `POST …/run` (202, the job queued on the session's engine),
//! `GET …/jobs/{id}` (its state, and its bundle when awaiting review),
//! `GET …/jobs/{id}/events?cursor=N`, and the answers a job waits for:
//! clarify, approvals (first answer wins: 409 for the others), cancel.

use super::query::Query;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{Value, json};

use super::body::Body;
use super::error::ApiError;
use super::idem::{self, Answer};
use super::state::{AppState, Place, User, Workspace};
use crate::protocol::{Command, EventBody, JobStatus, Mode, Owner, SessionRef};

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Run {
    #[schema(pattern = "^[A-Za-z0-9_]+$", max_length = 200)]
    session_id: String,
    /// What to do; something besides white space.
    #[schema(pattern = "\\S")]
    instruction: String,
    /// ask, plan or agent (default: [ui] default_mode)
    #[serde(default)]
    #[schema(value_type = Option<RunMode>)]
    mode: Option<Mode>,
    /// Accepted for clients of SPEC 13; the engine reads the files itself.
    #[serde(default)]
    #[allow(dead_code)]
    #[schema(value_type = Option<Object>)]
    context_rows: Option<Value>,
    #[serde(default)]
    tool_config: Option<ToolConfig>,
    /// A configured provider's name, for this job (default: the server's).
    #[serde(default)]
    #[schema(min_length = 1, max_length = 200)]
    provider: Option<String>,
    /// A model of that provider (default: the one its config names).
    #[serde(default)]
    #[schema(min_length = 1, max_length = 200)]
    model: Option<String>,
    /// Images that go with the instruction (PNG, JPEG, GIF or WebP, at
    /// most 5 MB each, 8 in all with `image_paths`).
    #[serde(default)]
    #[schema(max_items = 8)]
    images: Vec<RunImage>,
    /// Images in the workspace, by path.
    #[serde(default)]
    #[schema(max_items = 8)]
    image_paths: Vec<String>,
}

/// An image sent with a run.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct RunImage {
    /// What it is called (a file name).
    #[schema(max_length = 255)]
    name: String,
    /// Informative: the bytes decide.
    #[serde(default)]
    media_type: Option<String>,
    /// The image's bytes, in standard base64.
    data_base64: String,
}

impl Run {
    /// The images as the engine takes them.
    fn images(&self) -> Vec<crate::protocol::ImageInput> {
        use crate::protocol::ImageInput;
        let sent = self.images.iter().map(|i| ImageInput::Data {
            name: i.name.clone(),
            media_type: i.media_type.clone(),
            data_base64: i.data_base64.clone(),
        });
        let named = self
            .image_paths
            .iter()
            .map(|p| ImageInput::Path { path: p.clone() });
        sent.chain(named).collect()
    }
}

/// The modes of SPEC 4, as a run names them.
#[derive(utoipa::ToSchema)]
#[schema(as = RunMode)]
#[allow(dead_code)]
enum RunMode {
    #[schema(rename = "ask")]
    Ask,
    #[schema(rename = "plan")]
    Plan,
    #[schema(rename = "agent")]
    Agent,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct ToolConfig {
    #[serde(default, deserialize_with = "super::query::count")]
    max_tool_calls: Option<u32>,
}

#[utoipa::path(post, path = "/api/v1/agent/run", tag = "jobs", request_body = Run, params(("Idempotency-Key" = Option<String>, Header, description = "a retry with the same key gets the first answer", min_length = 1, max_length = 255)), responses((status = 202, description = "{job_id, session_id, status: queued}: the job runs here or waits in the queue for a free host"), (status = 429, description = "too many running, or past the monthly budget (reason budget_exceeded)", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn run(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    headers: HeaderMap,
    body: super::body::RunBody,
) -> Response {
    let body = body.0;
    let work = start(&app, &user, &body);
    idem::once(&app, &user, &headers, "POST /run", &body.0, work).await
}

async fn start(app: &AppState, user: &User, body: &Body) -> Answer {
    let ask: Run = body.parse()?;
    if ask.instruction.trim().is_empty() {
        return Err(ApiError::invalid("instruction must not be empty"));
    }
    let owner = app.accounts.session_owner(&ask.session_id).await?;
    let (ws, _) = app.owned(owner, user, &format!("session {}", ask.session_id))?;
    // `/NAME` names a command there is none of: refused before anything is kept.
    let choice = crate::protocol::ModelChoice {
        provider: ask.provider.clone(),
        model: ask.model.clone(),
    };
    ws.engine.check_instruction(&ask.instruction, &choice)?;
    let images = ask.images();
    ws.engine.check_images(&images)?;
    super::usage::admit(app, user).await?;
    let job_id = crate::agent::new_job_id();
    let owner = Owner {
        user: user.name.clone(),
        workspace_id: ws.id.clone(),
        session_id: ask.session_id.clone(),
        created_at: super::sessions::now(),
    };
    let mode = ask.mode.unwrap_or(ws.engine.config().ui.default_mode);
    if ws.read_only && mode == crate::protocol::Mode::Agent {
        // Its proposals could never be applied here: a review nothing settles.
        return Err(ApiError::forbidden(format!(
            "workspace {} is read-only: agent mode proposes edits, which are never applied here",
            ws.id
        ))
        .hint("run it with \"mode\": \"ask\" or \"plan\""));
    }
    let start = Command::StartJob {
        session: SessionRef::Id(ask.session_id.clone()),
        job_id: job_id.clone(),
        prompt: ask.instruction,
        mode,
        max_tool_calls: ask.tool_config.and_then(|t| t.max_tool_calls),
        choice: (!choice.is_empty()).then_some(choice),
        images,
        workspace: Some(ws.id.clone()),
    };
    let here = Place {
        session: Some(&ask.session_id),
        job: Some(&job_id),
    };
    ws.audit(here, "job.run", &ask.session_id, user);
    // A free slot here: it starts now; else it waits in the store's queue
    // for whichever host frees one first.
    if app.is_draining() || app.running_total() >= app.config.max_jobs_per_host {
        app.accounts.own_job(&job_id, owner, None, &start).await?;
    } else {
        // Known before the job's first event, so its stream can be followed at once.
        app.accounts
            .own_job(&job_id, owner, Some(&app.host), &start)
            .await?;
        ws.engine.command_as(&user.name, start).await?;
        super::usage::watch(
            app.clone(),
            ws.engine.clone(),
            job_id.clone(),
            user.name.clone(),
        );
    }
    Ok((
        StatusCode::ACCEPTED,
        json!({ "job_id": job_id, "session_id": ask.session_id, "status": "queued" }),
    ))
}

/// Where job `id` of `owner` is, for the audit log.
fn place<'a>(owner: &'a Owner, id: &'a str) -> Place<'a> {
    Place {
        session: Some(&owner.session_id),
        job: Some(id),
    }
}

/// The job `id` and its workspace, if `user` may see it.
pub async fn job<'a>(
    app: &'a AppState,
    user: &User,
    id: &str,
) -> Result<(&'a Workspace, Owner), ApiError> {
    let owner = app.accounts.job_owner(id).await?;
    app.owned(owner, user, &format!("job {id}"))
}

#[utoipa::path(get, path = "/api/v1/agent/jobs/{id}", tag = "jobs", params(("id" = String, Path, description = "job id", pattern = "^[A-Za-z0-9_]+$", max_length = 200)), responses((status = 200, description = "the job's status; diff_bundle (and the last verify, if one ran) when awaiting review"), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn show(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let (ws, owner) = job(&app, &user, &id).await?;
    let page = match ws.engine.events(&id, 0).await {
        Ok(page) => Some(page),
        // Started a moment ago: nothing is recorded yet.
        Err(crate::protocol::EngineError::NotFound { .. }) => None,
        Err(e) => return Err(e.into()),
    };
    let status = page
        .as_ref()
        .and_then(|p| p.status)
        .unwrap_or(JobStatus::Queued);
    let host = app.accounts.job_host(&id).await?;
    let mut out = json!({
        "job_id": id,
        "host": host,
        "session_id": owner.session_id,
        "workspace_id": ws.id,
        "user": owner.user,
        "status": status,
        "next_cursor": page.as_ref().map_or(0, |p| p.next_cursor),
    });
    if status == JobStatus::AwaitingReview
        && let Some(review) = ws
            .engine
            .pending_review(SessionRef::Id(owner.session_id.clone()))
            .await?
            .filter(|r| r.job_id == id)
    {
        out["diff_bundle"] = serde_json::to_value(review.bundle).unwrap_or_default();
        if let Some(verify) = review.verify {
            out["verify"] = serde_json::to_value(verify).unwrap_or_default();
        }
    }
    Ok(Json(out))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct Cursor {
    /// The events after this one (0: all).
    #[serde(default, deserialize_with = "super::query::count")]
    cursor: Option<u64>,
}

#[utoipa::path(get, path = "/api/v1/agent/jobs/{id}/events", tag = "jobs", params(("id" = String, Path, description = "job id", pattern = "^[A-Za-z0-9_]+$", max_length = 200), Cursor), responses((status = 200, description = "{job_id, status, next_cursor, events} after the cursor"), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn events(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    Path(id): Path<String>,
    Query(q): Query<Cursor>,
) -> Result<Json<Value>, ApiError> {
    let (ws, _) = job(&app, &user, &id).await?;
    let cursor = q.cursor.unwrap_or(0);
    let page = match ws.engine.events(&id, cursor).await {
        Ok(page) => serde_json::to_value(page).unwrap_or_default(),
        Err(crate::protocol::EngineError::NotFound { .. }) => json!({
            "job_id": id, "status": JobStatus::Queued, "next_cursor": cursor, "events": []
        }),
        Err(e) => return Err(e.into()),
    };
    Ok(Json(page))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Clarify {
    /// The question answered: the `tool_call_id` of the job's
    /// `clarification.requested` (another id is refused, 409).
    question_id: String,
    answer: String,
}

#[utoipa::path(post, path = "/api/v1/agent/jobs/{id}/clarify", tag = "jobs", request_body = Clarify, params(("id" = String, Path, description = "job id", pattern = "^[A-Za-z0-9_]+$", max_length = 200), ("Idempotency-Key" = Option<String>, Header, description = "retries answer once", min_length = 1, max_length = 255)), responses((status = 200, description = "answered"), (status = 409, description = "answered already (the first answer wins)", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn clarify(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let work = async {
        let ask: Clarify = body.parse()?;
        let (ws, owner) = job(&app, &user, &id).await?;
        same_question(ws, &id, &ask.question_id).await?;
        let answer = Command::Answer {
            job_id: id.clone(),
            text: ask.answer,
        };
        ws.audit(place(&owner, &id), "clarify", &id, &user);
        super::relay::command(&app, ws, &user, &id, answer).await?;
        Ok((
            StatusCode::OK,
            json!({ "job_id": id, "status": "answered" }),
        ))
    };
    idem::once(
        &app,
        &user,
        &headers,
        &format!("POST /jobs/{id}/clarify"),
        &body.0,
        work,
    )
    .await
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Steer {
    /// Added to the running job's task; the model reads it at its next step
    /// (event `user.steer`).
    #[schema(min_length = 1, max_length = 100000)]
    text: String,
}

#[utoipa::path(post, path = "/api/v1/agent/jobs/{id}/steer", tag = "jobs", request_body = Steer, params(("id" = String, Path, description = "job id", pattern = "^[A-Za-z0-9_]+$", max_length = 200), ("Idempotency-Key" = Option<String>, Header, description = "retries steer once", min_length = 1, max_length = 255)), responses((status = 200, description = "given to the job: the model reads it at its next step"), (status = 400, description = "no text", body = super::error::ErrorBody), (status = 409, description = "the job has ended (start a run instead)", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn steer(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let work = async {
        let ask: Steer = body.parse()?;
        let (ws, owner) = job(&app, &user, &id).await?;
        let steer = Command::Steer {
            job_id: id.clone(),
            text: ask.text,
        };
        ws.audit(place(&owner, &id), "steer", &id, &user);
        super::relay::command(&app, ws, &user, &id, steer).await?;
        Ok((StatusCode::OK, json!({ "job_id": id, "status": "steered" })))
    };
    idem::once(
        &app,
        &user,
        &headers,
        &format!("POST /jobs/{id}/steer"),
        &body.0,
        work,
    )
    .await
}

/// The question job `job_id` waits on: the last one asked and not answered
/// (from its events, as stored or committed before any client saw them).
async fn pending_question(ws: &Workspace, job_id: &str) -> Result<Option<String>, ApiError> {
    let events = match ws.engine.events(job_id, 0).await {
        Ok(page) => page.events,
        Err(crate::protocol::EngineError::NotFound { .. }) => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    let mut pending = None;
    for event in events {
        if let EventBody::ClarificationRequested { tool_call_id, .. } = event.body {
            pending = Some(tool_call_id);
        } else if let EventBody::ClarificationReceived { tool_call_id, .. } = &event.body
            && pending.as_ref() == Some(tool_call_id)
        {
            pending = None;
        }
    }
    Ok(pending)
}

/// 409 unless `question` is the one job `job_id` waits on (nothing is
/// answered); with no question pending, the engine says why it takes none.
async fn same_question(ws: &Workspace, job_id: &str, question: &str) -> Result<(), ApiError> {
    match pending_question(ws, job_id).await? {
        Some(pending) if pending != question => {
            let mut err = ApiError::conflict(format!(
                "job {job_id} is not waiting for an answer to {question}: nothing is answered"
            ))
            .hint(format!(
                "the question it waits on is {pending} (its clarification.requested event's \
                 tool_call_id): send that as question_id"
            ));
            err.detail = Some(json!({ "pending_question_id": pending }));
            Err(err)
        }
        Some(_) | None => Ok(()),
    }
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Decision {
    decision: Allow,
}

#[derive(Deserialize, Clone, Copy, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
enum Allow {
    Allow,
    Deny,
}

#[utoipa::path(post, path = "/api/v1/agent/jobs/{id}/approvals/{approval_id}", tag = "jobs", request_body = Decision, params(("id" = String, Path, description = "job id", pattern = "^[A-Za-z0-9_]+$", max_length = 200), ("approval_id" = String, Path, description = "the tool call asked about"), ("Idempotency-Key" = Option<String>, Header, description = "retries decide once", min_length = 1, max_length = 255)), responses((status = 200, description = "decided"), (status = 409, description = "decided already (the first answer wins)", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn approve(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    Path((id, approval)): Path<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let work = async {
        let ask: Decision = body.parse()?;
        let (ws, owner) = job(&app, &user, &id).await?;
        let approved = ask.decision == Allow::Allow;
        let decide = Command::Approve {
            job_id: id.clone(),
            tool_call_id: approval.clone(),
            approved,
            reason: Some(format!("decided by {} over HTTP", user.name)),
        };
        let action = if approved {
            "approval.allow"
        } else {
            "approval.deny"
        };
        ws.audit(place(&owner, &id), action, &approval, &user);
        super::relay::command(&app, ws, &user, &id, decide).await?;
        Ok((
            StatusCode::OK,
            json!({
                "job_id": id,
                "approval_id": approval,
                "decision": if approved { "allow" } else { "deny" },
                "decided_by": user.name,
            }),
        ))
    };
    let path = format!("POST /jobs/{id}/approvals/{approval}");
    idem::once(&app, &user, &headers, &path, &body.0, work).await
}

#[utoipa::path(post, path = "/api/v1/agent/jobs/{id}/cancel", tag = "jobs", params(("id" = String, Path, description = "job id", pattern = "^[A-Za-z0-9_]+$", max_length = 200)), responses((status = 200, description = "cancelling"), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn cancel(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    Path(id): Path<String>,
    // Nothing is read from it: taken for its checks (JSON, its size).
    _body: Body,
) -> Result<Json<Value>, ApiError> {
    let (ws, owner) = job(&app, &user, &id).await?;
    let cancel = Command::Cancel { job_id: id.clone() };
    ws.audit(place(&owner, &id), "cancel", &id, &user);
    super::relay::command(&app, ws, &user, &id, cancel).await?;
    Ok(Json(json!({ "job_id": id, "status": "cancelling" })))
}
