//! The review over HTTP: `POST …/apply` (decide and write: 409 with the
//! conflicts, or naming hunks applied already, and nothing written) and
//! `POST …/jobs/{id}/verify`. A read-only workspace refuses writes.
//! Checkpoints and rollback are `checkpoints.rs`'s.

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
use crate::protocol::{Command, DiffBundle, EngineError, EventBody, HunkState, Reply};

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Apply {
    #[schema(pattern = "^[A-Za-z0-9_]+$", max_length = 200)]
    session_id: String,
    #[schema(pattern = "^[A-Za-z0-9_]+$", max_length = 200)]
    job_id: String,
    accepted_hunk_ids: Vec<String>,
    #[serde(default)]
    rejected_hunk_ids: Vec<String>,
}

#[utoipa::path(post, path = "/api/v1/agent/apply", tag = "review", request_body = Apply, params(("Idempotency-Key" = Option<String>, Header, description = "a retry applies once", min_length = 1, max_length = 255)), responses((status = 200, description = "{status, checkpoint_id, applied_files}"), (status = 409, description = "the files changed, or the hunks are applied already: nothing written", body = super::error::ErrorBody), (status = 422, description = "a hunk both accepted and rejected, or none to apply: nothing recorded", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn apply(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let work = apply_once(&app, &user, &body);
    idem::once(&app, &user, &headers, "POST /apply", &body.0, work).await
}

async fn apply_once(app: &AppState, user: &User, body: &Body) -> Answer {
    let ask: Apply = body.parse()?;
    contradiction(&ask.accepted_hunk_ids, &ask.rejected_hunk_ids)?;
    let (ws, owner) = super::jobs::job(app, user, &ask.job_id).await?;
    if owner.session_id != ask.session_id {
        return Err(ApiError::not_found(format!(
            "no job {} in session {}",
            ask.job_id, ask.session_id
        ))
        .hint(format!(
            "GET /api/v1/agent/jobs/{} names its session",
            ask.job_id
        )));
    }
    ws.writable("nothing is written")?;
    if let Some(e) = applied_already(ws, &ask.job_id, &ask.accepted_hunk_ids, None).await? {
        return Err(e);
    }
    let here = Place {
        session: Some(&ask.session_id),
        job: Some(&ask.job_id),
    };
    ws.audit(
        here,
        "apply.request",
        &ask.accepted_hunk_ids.join(","),
        user,
    );
    let accepted = ask.accepted_hunk_ids.clone();
    let decided = decide(
        ws,
        user,
        &ask.job_id,
        ask.accepted_hunk_ids,
        ask.rejected_hunk_ids,
    )
    .await?;
    // Another apply may have written them meanwhile (it came first).
    if let Some(e) = applied_already(ws, &ask.job_id, &accepted, Some(&decided)).await? {
        return Err(e);
    }
    let apply = Command::Apply {
        job_id: ask.job_id.clone(),
    };
    let reply = match ws.engine.command_as(&user.name, apply).await {
        Ok(reply) => reply,
        Err(e @ EngineError::Invalid { .. }) => {
            let late = applied_already(ws, &ask.job_id, &accepted, None).await?;
            return Err(late.unwrap_or_else(|| ApiError::unprocessable(e.to_string())));
        }
        Err(e) => return Err(e.into()),
    };
    let Reply::Applied {
        checkpoint_id,
        hunk_ids,
        bundle,
        ..
    } = reply
    else {
        return Err(ApiError::unavailable("the engine did not apply"));
    };
    let files = applied_files(&bundle, &hunk_ids);
    Ok((
        StatusCode::OK,
        json!({"status": "applied", "checkpoint_id": checkpoint_id, "applied_files": files}),
    ))
}

/// Per file of `bundle`: the hunks this apply wrote and those rejected.
fn applied_files(bundle: &DiffBundle, hunk_ids: &[String]) -> Vec<Value> {
    bundle
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
                .filter(|h| h.state == HunkState::Rejected)
                .map(|h| h.hunk_id.as_str())
                .collect();
            json!({"file_path": f.file_path, "applied_hunks": applied, "rejected_hunks": rejected})
        })
        .filter(|f| {
            f["applied_hunks"].as_array().is_some_and(|a| !a.is_empty())
                || f["rejected_hunks"]
                    .as_array()
                    .is_some_and(|a| !a.is_empty())
        })
        .collect()
}

/// 422 when a hunk is both accepted and rejected (nothing is recorded).
fn contradiction(accepted: &[String], rejected: &[String]) -> Result<(), ApiError> {
    let mut both: Vec<&str> = accepted
        .iter()
        .filter(|id| rejected.contains(id))
        .map(String::as_str)
        .collect();
    both.dedup();
    if both.is_empty() {
        return Ok(());
    }
    let mut err = ApiError::unprocessable(format!(
        "{} both accepted and rejected: nothing is recorded",
        naming(&both)
    ))
    .hint("list each hunk in accepted_hunk_ids or in rejected_hunk_ids, not both");
    err.detail = Some(json!({ "hunk_ids": both }));
    Err(err)
}

/// "hunk h_1 is" or "hunks h_1, h_2 are".
fn naming(ids: &[&str]) -> String {
    match ids {
        [one] => format!("hunk {one} is"),
        _ => format!("hunks {} are", ids.join(", ")),
    }
}

/// A 409 when every hunk of `accepted` is applied already in job
/// `job_id`'s review (`bundle`, or the last one its events carry), so the
/// apply would write nothing, naming the checkpoint of that apply when the
/// events tell it.
async fn applied_already(
    ws: &Workspace,
    job_id: &str,
    accepted: &[String],
    bundle: Option<&DiffBundle>,
) -> Result<Option<ApiError>, ApiError> {
    if accepted.is_empty() {
        return Ok(None);
    }
    let events = match ws.engine.events(job_id, 0).await {
        Ok(page) => page.events,
        Err(EngineError::NotFound { .. }) => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    let mut last = None;
    let mut checkpoint = None;
    for event in &events {
        if let EventBody::DiffGenerated { bundle } | EventBody::ReviewUpdated { bundle, .. } =
            &event.body
        {
            last = Some(bundle);
        }
        if let EventBody::ApplyCompleted {
            bundle,
            checkpoint_id,
            hunk_ids,
            ..
        } = &event.body
        {
            last = Some(bundle);
            if hunk_ids.iter().any(|h| accepted.contains(h)) {
                checkpoint = Some(checkpoint_id.as_str());
            }
        }
    }
    let Some(bundle) = bundle.or(last) else {
        return Ok(None);
    };
    let applied: Vec<&str> = bundle
        .hunks()
        .filter(|h| h.state.is_applied() && accepted.contains(&h.hunk_id))
        .map(|h| h.hunk_id.as_str())
        .collect();
    // Some still to write: the applied ones are no-ops (a page sends the
    // whole review's accepted hunks again after a partial apply).
    if !accepted.iter().all(|id| applied.contains(&id.as_str())) {
        return Ok(None);
    }
    let mut message = format!("{} applied already", naming(&applied));
    if let Some(cp) = checkpoint {
        message.push_str(&format!(" (checkpoint {cp})"));
    }
    message.push_str(": nothing is written");
    let hint = match checkpoint {
        Some(cp) => {
            format!("GET /api/v1/agent/checkpoints/{cp} shows that apply; its rollback undoes it")
        }
        None => "GET /api/v1/agent/checkpoints lists the applies".to_string(),
    };
    let mut err = ApiError::conflict(message).hint(hint);
    err.detail = Some(json!({ "applied": applied, "checkpoint_id": checkpoint }));
    Ok(Some(err))
}

/// Records a client's hunk decisions on job `job_id`'s review.
async fn decide(
    ws: &Workspace,
    user: &User,
    job_id: &str,
    accept: Vec<String>,
    reject: Vec<String>,
) -> Result<DiffBundle, ApiError> {
    let decide = Command::Decide {
        job_id: job_id.to_string(),
        accept,
        reject,
        accept_all: false,
    };
    let decided = ws
        .engine
        .command_as(&user.name, decide)
        .await
        .map_err(|e| match e {
            // Hunks the review does not have (any more): it is not what
            // the client read.
            EngineError::Invalid { ref unknown, .. } if !unknown.is_empty() => {
                let mut err = ApiError::conflict(e.to_string())
                    .hint("GET /api/v1/agent/jobs/{id} gives the review as it is now");
                err.detail = Some(json!({ "unknown": unknown }));
                err
            }
            EngineError::Invalid { .. } => ApiError::unprocessable(e.to_string()),
            e => e.into(),
        })?;
    let Reply::Review { bundle } = decided else {
        return Err(ApiError::unavailable("the engine recorded no decision"));
    };
    Ok(bundle)
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

#[utoipa::path(post, path = "/api/v1/agent/jobs/{id}/verify", tag = "review", request_body = Verify, params(("id" = String, Path, description = "job id", pattern = "^[A-Za-z0-9_]+$", max_length = 200)), responses((status = 200, description = "{verify: {passed, outcome, exit_code, duration_ms, output_tail, hunk_ids, baseline, ...}, feedback_job_id?}"), (status = 409, description = "the review changed: hunks it does not have (any more)", body = super::error::ErrorBody), (status = 422, description = "no verify command, no accepted hunks, or a hunk both accepted and rejected", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
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
        contradiction(&ask.accepted_hunk_ids, &ask.rejected_hunk_ids)?;
        ws.writable("no decisions are recorded")?;
        decide(ws, &user, &id, ask.accepted_hunk_ids, ask.rejected_hunk_ids).await?;
    }
    let reply = ws
        .engine
        .command_as(&user.name, Command::Verify { job_id: id.clone() })
        .await
        .map_err(|e| match e {
            // Nothing to check, or no command to check it with.
            EngineError::Invalid { .. } => ApiError::unprocessable(e.to_string()),
            e => e.into(),
        })?;
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
        ws.engine.command_as(&user.name, feedback).await?;
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
