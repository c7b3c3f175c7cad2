//! What the engine writes to the store besides conversation records:
//! events (streamed text and, past the per-job limit, routine events left
//! out) and audit entries, through the session writer's queue.

use super::engine::Engine;
use crate::protocol::{Event, EventBody};
use crate::store::audit::AuditEntry;

impl Engine {
    /// Streamed text is not recorded (the completed message is, in the
    /// conversation); past `max_events_per_job`, neither are tool-call and
    /// usage events. Everything else always is.
    pub(super) fn record(&mut self, event: &Event) {
        let (Some(writer), Some(id)) = (&self.writer, &self.session) else {
            return;
        };
        let count = self.recorded.entry(event.job_id.clone()).or_insert(0);
        let optional = matches!(
            event.body,
            EventBody::ToolCallRequested { .. }
                | EventBody::ToolCallCompleted { .. }
                | EventBody::UsageUpdated { .. }
        );
        if matches!(
            event.body,
            EventBody::LlmDelta { .. } | EventBody::LlmReasoning { .. }
        ) || (optional && *count >= self.ctx.config.sessions.max_events_per_job)
        {
            return;
        }
        *count += 1;
        writer.event(id, event);
    }

    /// Appends to the audit log (if the engine keeps state).
    pub fn audit(
        &mut self,
        job_id: &str,
        action: &str,
        target: &str,
        approved: Option<bool>,
        outcome: &str,
    ) {
        let session = self.session_id();
        if let Some(writer) = &self.writer {
            writer.audit(AuditEntry {
                session,
                job: Some(job_id.to_string()),
                action: action.to_string(),
                target: target.to_string(),
                approved,
                outcome: outcome.to_string(),
            });
        }
    }
}
