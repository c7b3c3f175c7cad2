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
    command: String,
    #[serde(default)]
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

#[utoipa::path(post, path = "/api/v1/agent/exec", tag = "exec", request_body = Exec, responses((status = 200, description = "text/event-stream: stdout, stderr, then exit"), (status = 403, description = "not an allowed command", body = super::error::ErrorBody), (status = 400, description = "invalid", body = super::error::ErrorBody), (status = 401, description = "no or a wrong token", body = super::error::ErrorBody), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn exec(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    headers: axum::http::HeaderMap,
    body: Body,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    let ask: Exec = body.parse()?;
    let ws = app.workspace(&ask.workspace_id, &user)?;
    ws.writable("it runs no commands")?;
    if !command_allowed(&ask.command, &ws.allowed_commands)? {
        return Err(ApiError::forbidden(format!(
            "`{}` is not one of workspace {}'s allowed_commands",
            ask.command, ws.id
        ))
        .hint("an admin lists it in [[server.workspaces]] allowed_commands"));
    }
    ws.audit(Place::default(), "exec", &ask.command, &user);
    let stream: ExecStream = ws.engine.exec(&ask.command, ask.timeout_secs);
    let events = futures_util::stream::unfold(stream, |mut s| async move {
        let chunk = s.next().await?;
        Some((Ok(frame(&chunk)), s))
    });
    // A token revoked meanwhile ends it, and so the command.
    let events = events.take_until(Box::pin(super::guard::revoked(app.clone(), headers)));
    Ok(Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}
