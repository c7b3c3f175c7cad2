//! What a session holds: its header, the events of its jobs (streamed text
//! is not stored: the completed message is) and records of the conversation
//! as the model sees it, one JSON document each, in order. Replaying them
//! rebuilds the state; the store keeps them, earlier releases kept one
//! JSON-lines file per session (read here for the upgrade).

use std::collections::BTreeMap;
use std::io;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::context::ContextWindow;
use crate::llm::Message;
use crate::protocol::{Event, EventBody, JobStatus};
use crate::review::{DiffBundle, ProposedEdit, Reported, merge_fates, note_proposed};

/// A line that is not an event: how the conversation the model sees
/// changed, and what the engine learned along the way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum Record {
    /// Messages added to the conversation.
    #[serde(rename = "conversation.append")]
    Append {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        job_id: Option<String>,
        messages: Vec<Message>,
    },
    /// The job's answer joins the conversation here; its text is the one
    /// `job.completed` carries (stored once).
    #[serde(rename = "conversation.answer")]
    Answer { job_id: String },
    /// The whole conversation after a compaction.
    #[serde(rename = "conversation.reset")]
    Reset {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        job_id: Option<String>,
        messages: Vec<Message>,
    },
    /// The provider's context window, as found or learned from an error.
    #[serde(rename = "context.window")]
    Window { window: ContextWindow },
    /// Provider tokens per counted token, as the session learned.
    #[serde(rename = "context.calibration")]
    Calibration { factor: f64 },
    /// Hunk fates the model has been told about.
    #[serde(rename = "review.reported")]
    Reported { fates: Reported },
}

impl Record {
    /// The job this record belongs to, if any.
    pub fn job_id(&self) -> Option<&str> {
        match self {
            Record::Append { job_id, .. } | Record::Reset { job_id, .. } => job_id.as_deref(),
            Record::Answer { job_id } => Some(job_id),
            Record::Window { .. } | Record::Calibration { .. } | Record::Reported { .. } => None,
        }
    }
}

/// First line of every session file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionHeader {
    #[serde(rename = "type")]
    pub kind: String,
    pub session_id: String,
    pub root: String,
    pub ts: String,
}

/// Refuses ids that are not `[A-Za-z0-9_]+` (they name rows, and once
/// files); `what` names the kind of id in the message.
pub fn check_id(what: &str, id: &str) -> io::Result<()> {
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a {what} id: {id}"),
        ));
    }
    Ok(())
}

/// The time now, as sessions record it (RFC 3339, milliseconds).
pub fn now() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

/// What one job looks like after replaying its events.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobRecord {
    pub job_id: String,
    pub prompt: String,
    pub status: Option<JobStatus>,
    pub answer: Option<String>,
    pub edits: Vec<ProposedEdit>,
    pub bundle: Option<DiffBundle>,
    pub last_cursor: u64,
    pub events: usize,
}

/// A session replayed from its file.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionState {
    pub header: SessionHeader,
    pub jobs: Vec<JobRecord>,
    /// The conversation as the next request would send it. Sessions from
    /// before the conversation was recorded give their prompts and answers.
    pub conversation: Vec<Message>,
    /// The context window the session learned, if any.
    pub window: Option<ContextWindow>,
    /// The token-count correction the session learned, if any.
    pub factor: Option<f64>,
    /// Hunk fates the model knows of.
    pub reported: Reported,
    /// Lines that could not be read (a torn last line after a crash).
    pub unreadable_lines: usize,
}

impl SessionState {
    pub fn job(&self, id: &str) -> Option<&JobRecord> {
        self.jobs.iter().find(|j| j.job_id == id)
    }

    /// The newest job whose bundle still has undecided or accepted hunks.
    pub fn pending_review(&self) -> Option<&JobRecord> {
        self.jobs
            .iter()
            .rev()
            .find(|j| j.bundle.as_ref().is_some_and(DiffBundle::is_pending))
    }
}

/// A session file of an earlier release (`<id>.jsonl`), given its text:
/// the replayed state and the record lines after the header.
pub fn from_file_text(id: &str, text: &str) -> io::Result<(SessionState, Vec<String>)> {
    let mut lines = text.lines();
    let header: SessionHeader = match lines.next() {
        Some(line) => serde_json::from_str(line).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("session {id} has no valid header: {e}"),
            )
        })?,
        None => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("session {id} is empty"),
            ));
        }
    };
    let records: Vec<String> = lines
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect();
    Ok((replay(header, &records), records))
}

/// Rebuilds a session from its records, in the order they were written.
pub fn replay<S: AsRef<str>>(
    header: SessionHeader,
    lines: impl IntoIterator<Item = S>,
) -> SessionState {
    let mut jobs: BTreeMap<String, usize> = BTreeMap::new();
    let mut state = SessionState {
        header,
        jobs: Vec::new(),
        conversation: Vec::new(),
        window: None,
        factor: None,
        reported: Reported::new(),
        unreadable_lines: 0,
    };
    // Jobs whose conversation is recorded (newer sessions); the others
    // contribute their prompt and answer.
    let mut recorded: std::collections::HashSet<String> = std::collections::HashSet::new();
    // Where an answer joins the conversation, for its job.completed to fill.
    let mut answer_at: BTreeMap<String, usize> = BTreeMap::new();
    for line in lines {
        let line = line.as_ref();
        if line.trim().is_empty() {
            continue;
        }
        // Records are written with their tag first; events with their cursor.
        if line.starts_with("{\"type\":") {
            match serde_json::from_str::<Record>(line) {
                Ok(Record::Answer { job_id }) => {
                    answer_at.insert(job_id, state.conversation.len());
                }
                Ok(record) => state.replay(record, &mut recorded),
                Err(_) => state.unreadable_lines += 1,
            }
            continue;
        }
        let Ok(event) = serde_json::from_str::<Event>(line) else {
            state.unreadable_lines += 1;
            continue;
        };
        let index = *jobs.entry(event.job_id.clone()).or_insert_with(|| {
            state.jobs.push(JobRecord {
                job_id: event.job_id.clone(),
                ..JobRecord::default()
            });
            state.jobs.len() - 1
        });
        let job = &mut state.jobs[index];
        job.last_cursor = job.last_cursor.max(event.cursor);
        job.events += 1;
        if let Some(status) = event.body.status() {
            job.status = Some(status);
        }
        match event.body {
            EventBody::JobStarted { prompt, .. } => job.prompt = prompt,
            EventBody::JobCompleted { answer, .. } => {
                if let Some(at) = answer_at.remove(&job.job_id) {
                    let message = Message::Assistant {
                        text: answer.clone(),
                        tool_calls: Vec::new(),
                    };
                    let at = at.min(state.conversation.len());
                    state.conversation.insert(at, message);
                } else if !recorded.contains(&job.job_id) {
                    state.conversation.push(Message::User(job.prompt.clone()));
                    state.conversation.push(Message::Assistant {
                        text: answer.clone(),
                        tool_calls: Vec::new(),
                    });
                }
                job.answer = Some(answer);
            }
            EventBody::EditsProposed { edits } => job.edits.extend(edits),
            EventBody::DiffGenerated { bundle } => {
                note_proposed(&mut state.reported, &bundle);
                job.bundle = Some(bundle);
            }
            EventBody::ReviewUpdated { bundle, .. } => job.bundle = Some(bundle),
            EventBody::ApplyCompleted { bundle, edits, .. } => {
                job.bundle = Some(bundle);
                if !edits.is_empty() {
                    job.edits = edits;
                }
            }
            EventBody::LlmDelta { .. }
            | EventBody::LlmReasoning { .. }
            | EventBody::ProviderFallback { .. }
            | EventBody::UsageUpdated { .. }
            | EventBody::ContextCompacted { .. }
            | EventBody::ToolCallRequested { .. }
            | EventBody::ToolCallCompleted { .. }
            | EventBody::ClarificationRequested { .. }
            | EventBody::ClarificationReceived { .. }
            | EventBody::ApprovalRequested { .. }
            | EventBody::ApprovalResolved { .. }
            | EventBody::ApplyStarted { .. }
            | EventBody::ApplyFailed { .. }
            | EventBody::CheckpointCreated { .. }
            | EventBody::McpServers { .. }
            | EventBody::RecoveryCompleted(_)
            | EventBody::RollbackStarted { .. }
            | EventBody::RollbackCompleted { .. }
            | EventBody::RollbackFailed { .. }
            | EventBody::JobFailed { .. }
            | EventBody::JobCancelled {} => {}
        }
    }
    state
}

impl SessionState {
    fn replay(&mut self, record: Record, recorded: &mut std::collections::HashSet<String>) {
        match record {
            Record::Append { job_id, messages } => {
                recorded.extend(job_id);
                self.conversation.extend(messages);
            }
            Record::Reset { job_id, messages } => {
                recorded.extend(job_id);
                self.conversation = messages;
            }
            Record::Window { window } => self.window = Some(window),
            Record::Calibration { factor } => self.factor = Some(factor),
            // Handled where the answer's event is replayed.
            Record::Answer { .. } => {}
            Record::Reported { fates } => merge_fates(&mut self.reported, fates),
        }
    }
}

/// One line of `sessions list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionSummary {
    pub session_id: String,
    pub created_at: String,
    pub updated_at: String,
    pub jobs: usize,
    pub pending_review: bool,
    pub last_prompt: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Mode, Usage};

    fn event(job: &str, cursor: u64, body: EventBody) -> String {
        serde_json::to_string(&Event {
            cursor,
            body,
            ts: now(),
            job_id: job.into(),
        })
        .unwrap()
    }

    #[test]
    fn replay_and_unreadable_lines() {
        let header = SessionHeader {
            kind: "session.created".into(),
            session_id: "s_1".into(),
            root: "/p".into(),
            ts: now(),
        };
        let started = EventBody::JobStarted {
            prompt: "hi".into(),
            mode: Mode::Ask,
            root: "/p".into(),
            provider: "x".into(),
            model: "m".into(),
        };
        let completed = EventBody::JobCompleted {
            answer: "yo".into(),
            usage: Usage::default(),
            status: JobStatus::Completed,
            budget_exhausted: false,
            provider: String::new(),
            fallback_reason: None,
        };
        let lines = [
            event("j1", 1, started),
            event("j1", 2, completed),
            "{\"cursor\": 3, \"ty".to_string(),
            event("j2", 1, EventBody::JobCancelled {}),
        ];
        let state = replay(header, lines);
        assert_eq!(state.jobs.len(), 2);
        assert_eq!(state.jobs[0].answer.as_deref(), Some("yo"));
        assert_eq!(state.jobs[0].last_cursor, 2);
        assert_eq!(state.unreadable_lines, 1);
        assert_eq!(state.conversation.len(), 2);
        assert!(check_id("session", "../x").is_err());
    }
}
