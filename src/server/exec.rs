//! `POST …/exec`: a command of the workspace's `allowed_commands` (any
//! other: 403), run confined in its root as `run_command` runs, streamed as
//! SSE: `stdout` and `stderr` pieces, then `exit {exit_code, duration_ms,
//! truncated}` (or `error`). A client that goes away stops the command.

use std::convert::Infallible;
use std::time::Duration;

use axum::Extension;
use axum::extract::State;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures_util::{Stream, StreamExt};
use serde::Deserialize;
use serde_json::json;

use super::body::Body;
use super::error::ApiError;
use super::state::{AppState, Place, User};
use crate::agent::{ExecStream, command_allowed};
use crate::protocol::ExecChunk;

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Exec {
    workspace_id: String,
    /// One of the workspace's `allowed_commands` (with its arguments).
    #[schema(pattern = "\\S")]
    command: String,
    /// At least 1; at most `[exec] timeout_secs` is used.
    #[serde(default, deserialize_with = "super::query::count")]
    #[schema(minimum = 1)]
    timeout_secs: Option<u64>,
}

fn frame(chunk: &ExecChunk) -> SseEvent {
    let (name, data) = match chunk {
        ExecChunk::Stdout { text } => ("stdout", json!({ "text": text })),
        ExecChunk::Stderr { text } => ("stderr", json!({ "text": text })),
        ExecChunk::Exit {
            exit_code,
            duration_ms,
            truncated,
            timed_out,
            confined,
            changed_files,
            changed_files_total,
            checkpoint_id,
            checkpoint_error,
        } => (
            "exit",
            json!({"exit_code": exit_code, "duration_ms": duration_ms, "truncated": truncated,
                   "timed_out": timed_out, "confined": confined,
                   "changed_files": changed_files, "changed_files_total": changed_files_total,
                   "checkpoint_id": checkpoint_id, "checkpoint_error": checkpoint_error}),
        ),
        ExecChunk::Error { message } => ("error", json!({ "message": message })),
    };
    SseEvent::default().event(name).data(data.to_string())
}

#[utoipa::path(post, path = "/api/v1/agent/exec", tag = "exec", request_body = Exec, responses((status = 200, description = "text/event-stream: stdout, stderr, then exit"), (status = 403, description = "not an allowed command", body = super::error::ErrorBody), (status = 422, description = "not a command line (an open quote)", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn exec(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    headers: axum::http::HeaderMap,
    body: Body,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    let ask: Exec = body.parse()?;
    if ask.timeout_secs == Some(0) {
        return Err(ApiError::invalid("timeout_secs must be at least 1")
            .hint("give a number of seconds of 1 or more, or leave it out for [exec]'s limit"));
    }
    let ws = app.workspace(&ask.workspace_id, &user)?;
    ws.writable("it runs no commands")?;
    // A line that is no command at all (an open quote) is no allowed one.
    let allowed = command_allowed(&ask.command, &ws.allowed_commands)
        .map_err(|e| ApiError::unprocessable(e.to_string()))?;
    if !allowed {
        return Err(ApiError::forbidden(format!(
            "`{}` is not one of workspace {}'s allowed_commands",
            ask.command, ws.id
        ))
        .hint("an admin lists it in [[server.workspaces]] allowed_commands"));
    }
    ws.audit(Place::default(), "exec", &ask.command, &user);
    let stream: ExecStream = ws.engine.exec(&ask.command, ask.timeout_secs);
    let owner = (app.clone(), ws.id.clone(), user.clone());
    let events = futures_util::stream::unfold((stream, owner), |(mut s, owner)| async move {
        let chunk = s.next().await?;
        if let ExecChunk::Exit {
            checkpoint_id: Some(id),
            ..
        } = &chunk
        {
            own(&owner, id).await;
        }
        Some((Ok(frame(&chunk)), (s, owner)))
    });
    // A token revoked meanwhile ends it, and so the command.
    let events = events.take_until(Box::pin(super::guard::revoked(app.clone(), headers)));
    Ok(Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}

/// Notes that the user who ran the command made its checkpoint `id`, before
/// the `exit` event names it (so they may see it and roll it back).
async fn own((app, workspace_id, user): &(AppState, String, User), id: &str) {
    let Some(ws) = app.workspaces.iter().find(|w| w.id == *workspace_id) else {
        return;
    };
    if let Err(e) = super::checkpoints::own(app, ws, user, id).await {
        tracing::warn!(
            "checkpoint {id} of an exec is not noted as {}'s: {}",
            user.name,
            e.message
        );
    }
}
