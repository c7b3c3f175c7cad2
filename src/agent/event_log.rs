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

/// `-vv`: each command as it comes in, by name and request id (never its
/// text: prompts and answers stay out of the log).
pub(super) fn log_command(id: crate::protocol::RequestId, command: &crate::protocol::Command) {
    use crate::protocol::Command;
    let name = match command {
        Command::StartJob { .. } => "start_job",
        Command::CreateSession => "create_session",
        Command::Compact { .. } => "compact",
        Command::Answer { .. } => "answer",
        Command::Steer { .. } => "steer",
        Command::Approve { .. } => "approve",
        Command::Cancel { .. } => "cancel",
        Command::Decide { .. } => "decide",
        Command::EditHunk { .. } => "edit_hunk",
        Command::Apply { .. } => "apply",
        Command::Verify { .. } => "verify",
        Command::CancelVerify { .. } => "cancel_verify",
        Command::VerifyFeedback { .. } => "verify_feedback",
        Command::Rollback { .. } => "rollback",
        Command::DeleteSession { .. } => "delete_session",
        Command::CallTool { .. } => "call_tool",
        Command::WriteFiles { .. } => "write_files",
        Command::McpTools => "mcp_tools",
        Command::Audit { .. } => "audit",
        Command::EndLostJob { .. } => "end_lost_job",
        Command::McpCall { .. } => "mcp_call",
        Command::Shutdown => "shutdown",
    };
    tracing::debug!(request = id, command = name, "command");
}

/// `-vv`: how a command ended (its error's code when it failed).
pub(super) fn log_reply(
    id: crate::protocol::RequestId,
    result: &Result<crate::protocol::Reply, crate::protocol::EngineError>,
) {
    match result {
        Ok(_) => tracing::debug!(request = id, "command done"),
        Err(e) => tracing::debug!(request = id, code = e.code(), "command refused"),
    }
}
