//! Where every event passes: numbered in its job, applied to its session
//! (`SessionState::apply_event`, the one place), recorded with what it
//! changes in the store's summary rows, audited, and broadcast to the
//! subscribers. Conversation records take the same way (`commit`).

use std::sync::Arc;
use std::time::SystemTime;

use super::engine::{Core, Published};
use super::live::Asked;
use super::session_state::Record;
use crate::protocol::{Event, EventBody};
use crate::store::audit::AuditEntry;
use crate::store::{IndexUpdate, RecordRow};

/// A conversation record as the store keeps it.
fn record_row(record: &Record) -> RecordRow {
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
    Some(RecordRow {
        job_id: Some(event.job_id.clone()),
        kind: event.body.kind().to_string(),
        cursor: i64::try_from(event.cursor).ok(),
        ts: event.ts.clone(),
        body: serde_json::to_string(event).ok()?,
        index,
    })
}

impl Core {
    /// Numbers, applies, records and broadcasts one event of job `job_id`
    /// in session `key`.
    pub(super) fn publish(&mut self, key: &str, job_id: &str, body: EventBody) {
        super::event_log::log_event(job_id, &body);
        self.audit_event(key, job_id, &body);
        let session_id = self.session_id(key);
        if matches!(
            body,
            EventBody::ApplyCompleted { .. }
                | EventBody::RollbackCompleted { .. }
                | EventBody::VerifyCompleted(_)
        ) {
            let emit = super::emit::Emitter::new(job_id.to_string(), self.internal_tx.clone());
            let who = self.who(key);
            let files = self.event_files(key, job_id, &body);
            let observed = (&body, files);
            super::hook_calls::observe_event(
                &self.ctx,
                session_id.as_deref(),
                &who,
                &emit,
                observed,
            );
        }
        let Some(live) = self.sessions.get_mut(key) else {
            return;
        };
        match &body {
            EventBody::UsageUpdated { .. } => {
                live.answered.insert(job_id.to_string());
            }
            EventBody::ApprovalRequested { tool_call_id, .. } => {
                live.asked
                    .insert(job_id.to_string(), Asked::Approval(tool_call_id.clone()));
            }
            EventBody::ClarificationRequested { .. } => {
                live.asked.insert(job_id.to_string(), Asked::Clarification);
            }
            EventBody::ApprovalResolved { .. } | EventBody::ClarificationReceived { .. } => {
                live.asked.remove(job_id);
            }
            _ => {}
        }
        let terminal = body.is_terminal();
        let cursor = live.state.job(job_id).map_or(0, |j| j.last_cursor) + 1;
        let event = Event {
            cursor,
            body,
            ts: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            job_id: job_id.to_string(),
        };
        let index = live.state.apply_event(&event);
        if event.body.live_only()
            && let Some(state) = &self.ctx.state
            && state.store.kind() == crate::store::StoreKind::Postgres
            && let Ok(json) = serde_json::to_string(&event)
        {
            // Hosts sharing the store stream this job's text too.
            state.store.notify_live(json);
        }
        if terminal {
            live.running.remove(job_id);
            live.asked.remove(job_id);
            self.settle_conversation(key, job_id, &event.body);
            self.touch(key);
        }
        self.record(key, &event, index);
        self.out.send(Arc::new(Published {
            session_id,
            event: Arc::new(event),
        }));
        if terminal {
            self.start_queued(key);
        }
    }

    /// Applies `record` to session `key` and records it.
    pub(super) fn commit(&mut self, key: &str, record: Record) {
        let recorded = self.recorded(key);
        let Some(live) = self.sessions.get_mut(key) else {
            return;
        };
        live.state.apply_record(&record);
        if let (Some(writer), true) = (&self.writer, recorded) {
            writer.append(key, record_row(&record));
            live.seq += 1;
        }
    }

    /// Streamed text is not recorded (the completed message is, in the
    /// conversation); past `max_events_per_job`, neither are tool-call and
    /// usage events. Everything else always is.
    fn record(&mut self, key: &str, event: &Event, index: IndexUpdate) {
        if !self.recorded(key) {
            return;
        }
        let max = self.ctx.config.sessions.max_events_per_job;
        let (Some(writer), Some(live)) = (&self.writer, self.sessions.get_mut(key)) else {
            return;
        };
        let optional = matches!(
            event.body,
            EventBody::ToolCallRequested { .. }
                | EventBody::ToolCallCompleted { .. }
                | EventBody::UsageUpdated { .. }
        );
        let count = &mut live.state.job_mut(&event.job_id).events;
        if matches!(
            event.body,
            EventBody::LlmDelta { .. } | EventBody::LlmReasoning { .. }
        ) || (optional && *count >= max)
        {
            return;
        }
        *count += 1;
        if let Some(row) = event_row(event, index) {
            writer.append(key, row);
            live.seq += 1;
        }
    }

    /// Appends to the audit log (when the engine keeps state).
    pub(super) fn audit(
        &mut self,
        key: &str,
        job_id: &str,
        action: &str,
        target: &str,
        approved: Option<bool>,
        outcome: &str,
    ) {
        let session = self.session_id(key).filter(|_| self.recorded(key));
        self.audit_in(session, job_id, action, target, approved, outcome);
    }

    /// Appends to the audit log under `session` (a front end's record),
    /// as the command under way's user's, else as the user's who started
    /// the job (`None`: done on this machine).
    pub(super) fn audit_in(
        &mut self,
        session: Option<String>,
        job_id: &str,
        action: &str,
        target: &str,
        approved: Option<bool>,
        outcome: &str,
    ) {
        let user = self
            .actor
            .clone()
            .or_else(|| self.job_users.get(job_id).cloned());
        self.audit_as(user, session, job_id, action, target, approved, outcome);
    }

    /// `audit_in` with the user given.
    #[allow(clippy::too_many_arguments)]
    fn audit_as(
        &mut self,
        user: Option<String>,
        session: Option<String>,
        job_id: &str,
        action: &str,
        target: &str,
        approved: Option<bool>,
        outcome: &str,
    ) {
        if let Some(writer) = &self.writer {
            writer.audit(AuditEntry {
                session,
                job: Some(job_id.to_string()),
                user,
                action: action.to_string(),
                target: target.to_string(),
                approved,
                outcome: outcome.to_string(),
            });
        }
    }

    /// What an event puts in the audit log.
    fn audit_event(&mut self, key: &str, job_id: &str, body: &EventBody) {
        match body {
            EventBody::ProviderFallback {
                from, to, reason, ..
            } => {
                let target = format!("{from} -> {to}");
                self.audit(
                    key,
                    job_id,
                    "provider.fallback",
                    &target,
                    None,
                    reason.as_str(),
                );
            }
            EventBody::JobCompleted {
                provider,
                fallback_reason,
                ..
            } => {
                let outcome = match fallback_reason {
                    Some(reason) => format!(
                        "answered by {provider} after a fallback ({})",
                        reason.as_str()
                    ),
                    None => format!("answered by {provider}"),
                };
                self.audit(key, job_id, "job.completed", provider, None, &outcome);
            }
            EventBody::ApprovalResolved {
                tool_call_id,
                approved,
                by,
                user,
            } => {
                let outcome = format!("by {by}");
                let user = user.clone().or_else(|| self.job_users.get(job_id).cloned());
                let session = self.session_id(key).filter(|_| self.recorded(key));
                self.audit_as(
                    user,
                    session,
                    job_id,
                    "approval",
                    tool_call_id,
                    Some(*approved),
                    &outcome,
                );
            }
            EventBody::HookCompleted(run) => {
                let target = format!("{} ({})", run.name, run.event);
                self.audit(key, job_id, "hook", &target, None, &hook_outcome(run));
            }
            EventBody::ToolCallCompleted {
                name,
                ok,
                error,
                tool_call_id,
                result,
                ..
            } => {
                let outcome = tool_outcome(name, *ok, error.as_ref(), result.as_ref());
                let target = format!("{name} ({tool_call_id})");
                self.audit(key, job_id, "tool_call", &target, Some(true), &outcome);
            }
            _ => {}
        }
        if body.is_terminal() {
            self.job_users.remove(job_id);
        }
    }
}

/// A tool call's audit outcome: ok (a fetch says what came in), or its
/// error's code.
fn tool_outcome(
    name: &str,
    ok: bool,
    error: Option<&serde_json::Value>,
    result: Option<&serde_json::Value>,
) -> String {
    match (ok, error) {
        (true, _) if name == crate::tools::WEB_FETCH => fetched(result),
        (true, _) => "ok".to_string(),
        (false, Some(e)) => format!("error: {}", e["code"].as_str().unwrap_or("error")),
        (false, None) => "error".to_string(),
    }
}

/// A `web_fetch`'s audit outcome: its URL, status, size and digest.
fn fetched(result: Option<&serde_json::Value>) -> String {
    let Some(r) = result else {
        return "ok".to_string();
    };
    format!(
        "ok: {} status {} bytes {} sha256 {}",
        r["url"].as_str().unwrap_or_default(),
        r["status"],
        r["bytes"],
        r["sha256"].as_str().unwrap_or_default()
    )
}

/// A hook run's audit outcome (SPEC 21).
fn hook_outcome(run: &crate::protocol::HookOutcome) -> String {
    serde_json::json!({
        "decision": run.decision.as_str(),
        "def_sha256": run.def_sha256,
        "exit_code": run.exit_code,
        "duration_ms": run.duration_ms,
        "timed_out": run.timed_out,
        "confined": run.confined,
        "error": run.error,
        "changed_files": run.changed_files,
    })
    .to_string()
}
