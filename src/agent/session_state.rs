//! A session's state and the one place that changes it: the live engine
//! applies every event it publishes and every conversation record it
//! writes here, and a resumed session replays its stored records through
//! the same two functions. Each change says what it alters in the store's
//! summary rows (`IndexUpdate`), so the store never reads an event.

use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::context::ContextWindow;
use crate::llm::Message;
use crate::protocol::{DiffBundle, Event, EventBody, JobStatus, ProposedEdit};
use crate::review::{Reported, merge_fates, note_proposed};
use crate::store::{IndexUpdate, IndexedJob, IndexedLine, IndexedSession, SessionIndexer};

/// A record that is not an event: how the conversation the model sees
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

    /// Its `type`, as stored.
    pub fn kind(&self) -> &'static str {
        match self {
            Record::Append { .. } => "conversation.append",
            Record::Answer { .. } => "conversation.answer",
            Record::Reset { .. } => "conversation.reset",
            Record::Window { .. } => "context.window",
            Record::Calibration { .. } => "context.calibration",
            Record::Reported { .. } => "review.reported",
        }
    }
}

/// One job of a session as its events left it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobRecord {
    pub job_id: String,
    pub prompt: String,
    pub status: Option<JobStatus>,
    pub answer: Option<String>,
    pub edits: Vec<ProposedEdit>,
    pub bundle: Option<DiffBundle>,
    /// Its review's last verify.
    pub verify: Option<crate::protocol::VerifyResult>,
    /// Its applied hunks the user rolled back since.
    pub rolled_back: std::collections::BTreeSet<String>,
    /// The job's last cursor.
    pub last_cursor: u64,
    /// Its events that were recorded.
    pub events: usize,
    /// The mode it was queued in, while it waits (`job.queued`).
    pub queued_mode: Option<crate::protocol::Mode>,
    /// The provider and model it was queued with (`/model`).
    pub queued_choice: Option<crate::protocol::ModelChoice>,
    /// The images that went with its prompt (their bytes are in the store).
    pub images: Vec<crate::protocol::ImageMeta>,
    /// The provider and model it ran on (`job.started`; the remote's after
    /// a `hybrid_auto` fallback).
    pub provider: String,
    pub model: String,
}

/// A session: its jobs, the conversation the next request sends, and what
/// the engine learned of the provider.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SessionState {
    pub session_id: String,
    pub root: String,
    pub created_at: String,
    /// Oldest first.
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
    /// Records that could not be read (a torn last line after a crash).
    pub unreadable: usize,
    /// Jobs whose conversation is recorded (newer sessions); the others
    /// contribute their prompt and answer.
    recorded: HashSet<String>,
    /// Where an answer joins the conversation, for its `job.completed`.
    answer_at: BTreeMap<String, usize>,
    /// Which applied hunks rollbacks took back out.
    undone: super::undone::Undone,
}

impl SessionState {
    pub fn new(session_id: &str, root: &str, created_at: &str) -> SessionState {
        SessionState {
            session_id: session_id.to_string(),
            root: root.to_string(),
            created_at: created_at.to_string(),
            ..SessionState::default()
        }
    }

    /// The jobs still waiting their turn, oldest first, with their mode.
    pub fn queued(&self) -> Vec<(&JobRecord, crate::protocol::Mode)> {
        self.jobs
            .iter()
            .filter(|j| j.status == Some(JobStatus::Queued))
            .filter_map(|j| j.queued_mode.map(|m| (j, m)))
            .collect()
    }

    pub fn job(&self, id: &str) -> Option<&JobRecord> {
        self.jobs.iter().find(|j| j.job_id == id)
    }

    /// The job's record, made when its first event comes.
    pub fn job_mut(&mut self, id: &str) -> &mut JobRecord {
        let at = match self.jobs.iter().position(|j| j.job_id == id) {
            Some(at) => at,
            None => {
                self.jobs.push(JobRecord {
                    job_id: id.to_string(),
                    ..JobRecord::default()
                });
                self.jobs.len() - 1
            }
        };
        &mut self.jobs[at]
    }

    /// The newest job whose bundle still has undecided or accepted hunks.
    pub fn pending_review(&self) -> Option<&JobRecord> {
        self.jobs
            .iter()
            .rev()
            .find(|j| j.bundle.as_ref().is_some_and(DiffBundle::is_pending))
    }

    /// Rebuilds a session from its records, in the order they were written.
    pub fn replay<S: AsRef<str>>(
        session_id: &str,
        root: &str,
        created_at: &str,
        records: impl IntoIterator<Item = S>,
    ) -> SessionState {
        let mut state = SessionState::new(session_id, root, created_at);
        for line in records {
            state.replay_line(line.as_ref());
        }
        state
    }

    /// One stored record: an event or a conversation record.
    fn replay_line(&mut self, line: &str) {
        if line.trim().is_empty() {
            return;
        }
        // Records are written with their tag first; events with their cursor.
        if line.starts_with("{\"type\":") {
            match serde_json::from_str::<Record>(line) {
                Ok(record) => self.apply_record(&record),
                Err(_) => self.unreadable += 1,
            }
            return;
        }
        match serde_json::from_str::<Event>(line) {
            Ok(event) => {
                self.apply_event(&event);
                self.job_mut(&event.job_id).events += 1;
            }
            Err(_) => self.unreadable += 1,
        }
    }

    /// How `record` changes the session.
    pub fn apply_record(&mut self, record: &Record) {
        match record {
            Record::Append { job_id, messages } => {
                self.recorded.extend(job_id.clone());
                self.conversation.extend(messages.iter().cloned());
            }
            Record::Reset { job_id, messages } => {
                self.recorded.extend(job_id.clone());
                self.conversation.clone_from(messages);
            }
            Record::Answer { job_id } => {
                self.answer_at
                    .insert(job_id.clone(), self.conversation.len());
            }
            Record::Window { window } => self.window = Some(window.clone()),
            Record::Calibration { factor } => self.factor = Some(*factor),
            Record::Reported { fates } => merge_fates(&mut self.reported, fates.clone()),
        }
    }

    /// How `event` changes the session, and what it changes in the
    /// store's summary rows.
    pub fn apply_event(&mut self, event: &Event) -> IndexUpdate {
        if let Some(change) = self.undone.follow(&event.job_id, &event.body) {
            let rolled = &mut self.job_mut(&change.0).rolled_back;
            super::undone::record(rolled, &change);
        }
        let job = self.job_mut(&event.job_id);
        job.last_cursor = job.last_cursor.max(event.cursor);
        let status = event.body.status();
        if let Some(status) = status {
            job.status = Some(status);
        }
        match &event.body {
            EventBody::JobQueued { .. } => return queued(job, &event.body),
            EventBody::JobStarted { .. } => return started(job, &event.body),
            EventBody::JobCompleted { answer, .. } => {
                job.answer = Some(answer.clone());
                let (job_id, prompt) = (job.job_id.clone(), job.prompt.clone());
                self.answered(&job_id, prompt, answer);
            }
            EventBody::EditsProposed { edits } => job.edits.extend(edits.iter().cloned()),
            EventBody::DiffGenerated { bundle } => {
                job.bundle = Some(bundle.clone());
                note_proposed(&mut self.reported, bundle);
                return review_index(bundle);
            }
            EventBody::ReviewUpdated { bundle, .. } => return review_updated(job, bundle),
            // A verify stopped (or kept from starting) leaves the last
            // verdict standing: "applying after a failed verify asks".
            EventBody::VerifyCompleted(result) => {
                if result.ran() || job.verify.as_ref().is_none_or(|v| !v.ran()) {
                    job.verify = Some(result.clone());
                }
            }
            EventBody::ApplyCompleted { bundle, edits, .. } => {
                job.bundle = Some(bundle.clone());
                if !edits.is_empty() {
                    job.edits.clone_from(edits);
                }
                return review_index(bundle);
            }
            EventBody::ProviderFallback { to, model, .. } => {
                job.provider.clone_from(to);
                job.model.clone_from(model);
            }
            EventBody::LlmDelta { .. }
            | EventBody::UserSteer { .. }
            | EventBody::HookStarted { .. }
            | EventBody::HookCompleted(_)
            | EventBody::LlmReasoning { .. }
            | EventBody::ToolsInPrompt { .. }
            | EventBody::RepeatStopped { .. }
            | EventBody::UsageUpdated { .. }
            | EventBody::ContextCompacted { .. }
            | EventBody::ToolCallRequested { .. }
            | EventBody::ToolCallCompleted { .. }
            | EventBody::ClarificationRequested { .. }
            | EventBody::ClarificationReceived { .. }
            | EventBody::ApprovalRequested { .. }
            | EventBody::ApprovalResolved { .. }
            | EventBody::ApplyStarted { .. }
            | EventBody::VerifyStarted { .. }
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
        status.map_or(IndexUpdate::None, |s| IndexUpdate::JobStatus(s.as_str()))
    }

    /// A job's answer joins the conversation where its record said, or
    /// (sessions from before the conversation was recorded) after its prompt.
    fn answered(&mut self, job_id: &str, prompt: String, answer: &str) {
        let message = Message::Assistant {
            text: answer.to_string(),
            tool_calls: Vec::new(),
        };
        if let Some(at) = self.answer_at.remove(job_id) {
            let at = at.min(self.conversation.len());
            self.conversation.insert(at, message);
        } else if !self.recorded.contains(job_id) {
            self.conversation.push(Message::User(prompt));
            self.conversation.push(message);
        }
    }
}

/// Session `id` of `root`, replayed from the store.
pub fn read_session(
    root: &crate::store::RootStore,
    id: &str,
) -> Result<SessionState, crate::store::StoreError> {
    let stored = root.load_session(id)?;
    Ok(SessionState::replay(
        &stored.session_id,
        &stored.root,
        &stored.created_at,
        &stored.records,
    ))
}

/// A job started: what it was asked, with which images, on which provider
/// and model.
fn started(job: &mut JobRecord, body: &EventBody) -> IndexUpdate {
    let EventBody::JobStarted {
        prompt,
        images,
        provider,
        model,
        ..
    } = body
    else {
        return IndexUpdate::None;
    };
    job.prompt.clone_from(prompt);
    job.images.clone_from(images);
    job.provider.clone_from(provider);
    job.model.clone_from(model);
    IndexUpdate::JobStarted {
        prompt: prompt.clone(),
    }
}

/// A `job.queued`: the job's text, and how it runs when its turn comes.
fn queued(job: &mut JobRecord, body: &EventBody) -> IndexUpdate {
    let EventBody::JobQueued {
        prompt,
        mode,
        choice,
        images,
    } = body
    else {
        return IndexUpdate::None;
    };
    job.prompt.clone_from(prompt);
    job.queued_mode = Some(*mode);
    job.queued_choice.clone_from(choice);
    job.images.clone_from(images);
    IndexUpdate::JobQueued {
        prompt: prompt.clone(),
    }
}

/// A job's review changed: its bundle kept, its status settled (a review
/// rejected whole completes it), the rows to change.
fn review_updated(job: &mut JobRecord, bundle: &DiffBundle) -> IndexUpdate {
    job.bundle = Some(bundle.clone());
    let was = job.status;
    job.status = was.map(|s| bundle.settles(s));
    let mut update = review_index(bundle);
    if let IndexUpdate::Review { status, .. } = &mut update
        && job.status != was
    {
        *status = job.status.map(JobStatus::as_str);
    }
    update
}

fn review_index(bundle: &DiffBundle) -> IndexUpdate {
    IndexUpdate::Review {
        pending: bundle.is_pending(),
        bundle: serde_json::to_string(bundle).unwrap_or_default(),
        status: None,
    }
}

/// The first line of a session file of an earlier release.
#[derive(Deserialize)]
struct LegacyHeader {
    session_id: String,
    root: String,
    ts: String,
}

/// Reads the session files of an earlier release for the store's upgrade
/// import: replayed here, rows for the store.
pub struct LegacySessions;

impl SessionIndexer for LegacySessions {
    fn index(&self, session_id: &str, text: &str) -> Option<IndexedSession> {
        let mut lines = text.lines();
        let header: LegacyHeader = serde_json::from_str(lines.next()?).ok()?;
        let records: Vec<&str> = lines.filter(|l| !l.trim().is_empty()).collect();
        let id = if header.session_id.is_empty() {
            session_id
        } else {
            &header.session_id
        };
        let state = SessionState::replay(id, &header.root, &header.ts, &records);
        let lines = records
            .iter()
            .map(|text| {
                let v: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
                IndexedLine {
                    body: (*text).to_string(),
                    kind: v["type"].as_str().unwrap_or_default().to_string(),
                    job_id: v["job_id"].as_str().map(str::to_string),
                    cursor: v["cursor"].as_i64(),
                    ts: v["ts"].as_str().map(str::to_string),
                }
            })
            .collect();
        let jobs = state
            .jobs
            .iter()
            .map(|j| IndexedJob {
                job_id: j.job_id.clone(),
                prompt: j.prompt.clone(),
                status: j.status.map(JobStatus::as_str),
                review: j
                    .bundle
                    .as_ref()
                    .map(|b| (b.is_pending(), serde_json::to_string(b).unwrap_or_default())),
            })
            .collect();
        Some(IndexedSession {
            root: header.root,
            created_at: header.ts,
            lines,
            jobs,
            pending_review: state.pending_review().is_some(),
            last_prompt: state.jobs.last().map(|j| j.prompt.clone()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Mode, Usage};

    fn event(job: &str, cursor: u64, body: EventBody) -> String {
        serde_json::to_string(&Event {
            cursor,
            body,
            ts: crate::store::session::now(),
            job_id: job.into(),
        })
        .unwrap()
    }

    fn started(prompt: &str) -> EventBody {
        EventBody::JobStarted {
            prompt: prompt.into(),
            mode: Mode::Ask,
            root: "/p".into(),
            provider: "x".into(),
            model: "m".into(),
            images: Vec::new(),
        }
    }

    fn completed(answer: &str) -> EventBody {
        EventBody::JobCompleted {
            answer: answer.into(),
            usage: Usage::default(),
            status: JobStatus::Completed,
            budget_exhausted: false,
            provider: String::new(),
            fallback_reason: None,
        }
    }

    #[test]
    fn replay_and_unreadable_lines() {
        let lines = [
            event("j1", 1, started("hi")),
            event("j1", 2, completed("yo")),
            "{\"cursor\": 3, \"ty".to_string(),
            event("j2", 1, EventBody::JobCancelled {}),
        ];
        let state = SessionState::replay("s_1", "/p", "t", lines);
        assert_eq!(state.jobs.len(), 2);
        assert_eq!(state.jobs[0].answer.as_deref(), Some("yo"));
        assert_eq!(state.jobs[0].last_cursor, 2);
        assert_eq!(state.jobs[0].events, 2);
        assert_eq!(state.unreadable, 1);
        assert_eq!(state.conversation.len(), 2);
    }

    #[test]
    fn a_job_names_the_provider_and_model_that_answered() {
        let fallback = EventBody::ProviderFallback {
            from: "x".into(),
            to: "remote".into(),
            reason: crate::protocol::FallbackReason::ContextOverflow,
            model: "big".into(),
        };
        let lines = [
            event("j1", 1, started("hi")),
            event("j2", 1, started("more")),
            event("j2", 2, fallback),
        ];
        let state = SessionState::replay("s_1", "/p", "t", lines);
        let on: Vec<(&str, &str)> = state
            .jobs
            .iter()
            .map(|j| (j.provider.as_str(), j.model.as_str()))
            .collect();
        assert_eq!(on, [("x", "m"), ("remote", "big")]);
    }

    #[test]
    fn an_answer_joins_the_conversation_where_its_record_says() {
        let mut state = SessionState::new("s", "/p", "t");
        let append = Record::Append {
            job_id: Some("j".into()),
            messages: vec![Message::User("q".into())],
        };
        state.apply_record(&append);
        state.apply_record(&Record::Answer { job_id: "j".into() });
        // A note added after the answer's place, before job.completed.
        state.apply_record(&Record::Append {
            job_id: None,
            messages: vec![Message::User("note".into())],
        });
        let index =
            state.apply_event(&serde_json::from_str(&event("j", 2, completed("a"))).unwrap());
        assert_eq!(index, IndexUpdate::JobStatus("completed"));
        let texts: Vec<String> = state
            .conversation
            .iter()
            .map(|m| match m {
                Message::User(t) => t.clone(),
                Message::Assistant { text, .. } => text.clone(),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(texts, ["q", "a", "note"]);
    }

    #[test]
    fn started_jobs_and_reviews_are_indexed() {
        let mut state = SessionState::new("s", "/p", "t");
        let e: Event = serde_json::from_str(&event("j", 1, started("do it"))).unwrap();
        assert_eq!(
            state.apply_event(&e),
            IndexUpdate::JobStarted {
                prompt: "do it".into()
            }
        );
        let bundle = DiffBundle {
            job_id: "j".into(),
            files: Vec::new(),
        };
        let e: Event =
            serde_json::from_str(&event("j", 2, EventBody::DiffGenerated { bundle })).unwrap();
        assert!(matches!(
            state.apply_event(&e),
            IndexUpdate::Review { pending: false, .. }
        ));
    }

    #[test]
    fn legacy_files_are_indexed_from_their_replay() {
        let text = format!(
            "{}\n{}\n{}\n",
            r#"{"type":"session.created","session_id":"s_9","root":"/p","ts":"2026-01-01T00:00:00.000Z"}"#,
            event("j1", 1, started("hello")),
            event("j1", 2, completed("there")),
        );
        let indexed = LegacySessions.index("s_9", &text).unwrap();
        assert_eq!(indexed.root, "/p");
        assert_eq!(indexed.lines.len(), 2);
        assert_eq!(indexed.lines[0].kind, "job.started");
        assert_eq!(indexed.jobs[0].status, Some("completed"));
        assert_eq!(indexed.last_prompt.as_deref(), Some("hello"));
        assert!(LegacySessions.index("s_9", "not json\n").is_none());
    }
}
