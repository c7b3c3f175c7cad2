//! What the engine writes to the store besides conversation records:
//! events (streamed text and, past the per-job limit, routine events left
//! out) and audit entries, through the session writer's queue.

use super::engine::Engine;
use super::session_state::Record;
use crate::protocol::{Event, EventBody};
use crate::store::audit::AuditEntry;
use crate::store::{IndexUpdate, RecordRow};

/// A conversation record as the store keeps it.
pub(super) fn record_row(record: &Record) -> RecordRow {
    RecordRow {
        job_id: record.job_id().map(str::to_string),
        kind: record.kind().to_string(),
        cursor: None,
        ts: crate::store::session::now(),
        body: serde_json::to_string(record).unwrap_or_default(),
        index: IndexUpdate::None,
    }
}

/// An event as the store keeps it, with what it changes in the summary rows.
fn event_row(event: &Event, index: IndexUpdate) -> Option<RecordRow> {
    let body = serde_json::to_string(event).ok()?;
    Some(RecordRow {
        job_id: Some(event.job_id.clone()),
        kind: event.body.kind().to_string(),
        cursor: i64::try_from(event.cursor).ok(),
        ts: event.ts.clone(),
        body,
        index,
    })
}

impl Engine {
    /// Streamed text is not recorded (the completed message is, in the
    /// conversation); past `max_events_per_job`, neither are tool-call and
    /// usage events. Everything else always is.
    pub(super) fn record(&mut self, event: &Event, index: IndexUpdate) {
        let (Some(writer), Some(id)) = (&self.writer, &self.session) else {
            return;
        };
        let count = &mut self.state.job_mut(&event.job_id).events;
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
        if let Some(row) = event_row(event, index) {
            writer.append(id, row);
        }
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
