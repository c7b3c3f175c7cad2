//! What `-v` logs of the engine's events (see `cli/logging.rs`): names,
//! codes and counts, never text.

use crate::protocol::EventBody;

/// `-v` logging of the engine's events: job ends, applies and rollbacks at
/// info; every other event (but streamed text) at debug; by type and job,
/// never with their text.
pub(super) fn log_event(job_id: &str, body: &EventBody) {
    match body {
        EventBody::JobStarted { .. } => tracing::info!(job = job_id, "job started"),
        EventBody::JobCompleted { status, usage, .. } => tracing::info!(
            job = job_id,
            status = ?status,
            input_tokens = usage.input_tokens,
            output_tokens = usage.output_tokens,
            requests = usage.requests,
            "job completed"
        ),
        EventBody::JobFailed { code, .. } => {
            tracing::warn!(job = job_id, code = ?code, "job failed")
        }
        EventBody::ApplyCompleted {
            checkpoint_id,
            files,
            ..
        } => {
            tracing::info!(job = job_id, checkpoint = %checkpoint_id, files = files.len(), "applied")
        }
        EventBody::ApplyFailed { code, .. } => {
            tracing::warn!(job = job_id, code = ?code, "apply failed")
        }
        EventBody::RollbackCompleted {
            checkpoint_id,
            files,
            ..
        } => tracing::info!(
            job = job_id,
            checkpoint = %checkpoint_id,
            files = files.len(),
            "rolled back"
        ),
        EventBody::RollbackFailed { code, .. } => {
            tracing::warn!(job = job_id, code = ?code, "rollback failed")
        }
        EventBody::LlmDelta { .. } | EventBody::LlmReasoning { .. } => {
            tracing::trace!(job = job_id, "stream delta")
        }
        other if tracing::enabled!(tracing::Level::DEBUG) => {
            let kind = serde_json::to_value(other)
                .ok()
                .and_then(|v| v["type"].as_str().map(str::to_string))
                .unwrap_or_default();
            tracing::debug!(job = job_id, event = %kind, "event");
        }
        _ => {}
    }
}
