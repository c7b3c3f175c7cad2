//! Sessions on disk: one JSON-lines file per session holding its header,
//! the events of its jobs (streamed text is not stored: the completed
//! message is) and records of the conversation as the model sees it, each
//! line written whole at once, so a crash loses at most the line being
//! written. Replaying the file rebuilds the state.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::config::SessionLimits;
use crate::context::ContextWindow;
use crate::llm::Message;
use crate::protocol::{Event, EventBody, JobStatus};
use crate::review::{DiffBundle, ProposedEdit, Reported, merge_fates, new_id, note_proposed};

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

/// First line of every session file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionHeader {
    #[serde(rename = "type")]
    pub kind: String,
    pub session_id: String,
    pub root: String,
    pub ts: String,
}

/// An open session file, appended to event by event.
pub struct SessionLog {
    pub id: String,
    file: File,
}

fn path_of(dir: &Path, id: &str) -> io::Result<PathBuf> {
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a session id: {id}"),
        ));
    }
    Ok(dir.join(format!("{id}.jsonl")))
}

fn now() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

impl SessionLog {
    /// Starts a new session for `root`.
    pub fn create(dir: &Path, root: &Path) -> io::Result<SessionLog> {
        std::fs::create_dir_all(dir)?;
        let id = new_id("s");
        let mut log = SessionLog {
            file: OpenOptions::new()
                .create_new(true)
                .append(true)
                .open(path_of(dir, &id)?)?,
            id: id.clone(),
        };
        let header = SessionHeader {
            kind: "session.created".into(),
            session_id: id,
            root: root.display().to_string(),
            ts: now(),
        };
        log.write_line(&serde_json::to_string(&header).map_err(io::Error::other)?)?;
        Ok(log)
    }

    /// Reopens an existing session for appending.
    pub fn open(dir: &Path, id: &str) -> io::Result<SessionLog> {
        let path = path_of(dir, id)?;
        let mut file = OpenOptions::new().append(true).open(&path)?;
        // A crash mid-line leaves no newline; start clean on a new line.
        if let Ok(bytes) = std::fs::read(&path)
            && bytes.last().is_some_and(|b| *b != b'\n')
        {
            file.write_all(b"\n")?;
        }
        Ok(SessionLog {
            id: id.to_string(),
            file,
        })
    }

    pub fn append(&mut self, event: &Event) -> io::Result<()> {
        self.write_line(&serde_json::to_string(event).map_err(io::Error::other)?)
    }

    pub fn append_record(&mut self, record: &Record) -> io::Result<()> {
        self.write_line(&serde_json::to_string(record).map_err(io::Error::other)?)
    }

    fn write_line(&mut self, line: &str) -> io::Result<()> {
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        self.file.write_all(&bytes)?;
        self.file.flush()
    }
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

/// Replays the session file `id`.
pub fn load(dir: &Path, id: &str) -> io::Result<SessionState> {
    let file = File::open(path_of(dir, id)?)?;
    let mut lines = BufReader::new(file).lines();
    let header: SessionHeader = match lines.next() {
        Some(line) => serde_json::from_str(&line?).map_err(|e| {
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
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        // Records are written with their tag first; events with their cursor.
        if line.starts_with("{\"type\":") {
            match serde_json::from_str::<Record>(&line) {
                Ok(Record::Answer { job_id }) => {
                    answer_at.insert(job_id, state.conversation.len());
                }
                Ok(record) => state.replay(record, &mut recorded),
                Err(_) => state.unreadable_lines += 1,
            }
            continue;
        }
        let Ok(event) = serde_json::from_str::<Event>(&line) else {
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
            EventBody::ReviewUpdated { bundle, .. } | EventBody::ApplyCompleted { bundle, .. } => {
                job.bundle = Some(bundle)
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
            | EventBody::RollbackStarted { .. }
            | EventBody::RollbackCompleted { .. }
            | EventBody::RollbackFailed { .. }
            | EventBody::JobFailed { .. }
            | EventBody::JobCancelled {} => {}
        }
    }
    Ok(state)
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

/// Every session of the root, most recently updated last.
pub fn list(dir: &Path) -> io::Result<Vec<SessionSummary>> {
    let mut out = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().to_string();
        let Some(id) = name.strip_suffix(".jsonl") else {
            continue;
        };
        let Ok(state) = load(dir, id) else { continue };
        let updated = entry
            .metadata()
            .and_then(|m| m.modified())
            .map(|t| humantime::format_rfc3339_millis(t).to_string())
            .unwrap_or_default();
        out.push(SessionSummary {
            session_id: id.to_string(),
            created_at: state.header.ts.clone(),
            updated_at: updated,
            jobs: state.jobs.len(),
            pending_review: state.pending_review().is_some(),
            last_prompt: state.jobs.last().map(|j| j.prompt.clone()),
        });
    }
    out.sort_by(|a, b| {
        a.updated_at
            .cmp(&b.updated_at)
            .then(a.session_id.cmp(&b.session_id))
    });
    Ok(out)
}

/// The most recently updated session.
pub fn latest(dir: &Path) -> io::Result<Option<String>> {
    Ok(list(dir)?.pop().map(|s| s.session_id))
}

/// Removes sessions idle longer than `max_age_days` (when set), never one
/// with a pending review nor `keep`; nothing goes by count. Returns the
/// removed ids.
pub fn gc(dir: &Path, limits: &SessionLimits, keep: Option<&str>) -> io::Result<Vec<String>> {
    let Some(days) = limits.max_age_days else {
        return Ok(Vec::new());
    };
    let age = Duration::from_secs(days.saturating_mul(86_400));
    let Some(cutoff) = SystemTime::now().checked_sub(age) else {
        return Ok(Vec::new());
    };
    let mut removed = Vec::new();
    for s in list(dir)? {
        if s.pending_review || Some(s.session_id.as_str()) == keep {
            continue;
        }
        if humantime::parse_rfc3339(&s.updated_at).is_ok_and(|updated| updated < cutoff) {
            std::fs::remove_file(path_of(dir, &s.session_id)?)?;
            removed.push(s.session_id);
        }
    }
    Ok(removed)
}

/// Deletes one session (`agent-tui sessions delete ID`).
pub fn delete(dir: &Path, id: &str) -> io::Result<()> {
    let path = path_of(dir, id)?;
    if !path.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("no session {id} in this agent root (agent-tui sessions list shows them)"),
        ));
    }
    std::fs::remove_file(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Mode, Usage};

    fn event(job: &str, cursor: u64, body: EventBody) -> Event {
        Event {
            cursor,
            body,
            ts: now(),
            job_id: job.into(),
        }
    }

    #[test]
    fn append_load_and_torn_lines() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = SessionLog::create(dir.path(), Path::new("/p")).unwrap();
        let started = EventBody::JobStarted {
            prompt: "hi".into(),
            mode: Mode::Ask,
            root: "/p".into(),
            provider: "x".into(),
            model: "m".into(),
        };
        log.append(&event("j1", 1, started)).unwrap();
        log.append(&event(
            "j1",
            2,
            EventBody::JobCompleted {
                answer: "yo".into(),
                usage: Usage::default(),
                status: JobStatus::Completed,
                budget_exhausted: false,
                provider: String::new(),
                fallback_reason: None,
            },
        ))
        .unwrap();
        let path = path_of(dir.path(), &log.id).unwrap();
        // Simulate a crash in the middle of writing a line.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"cursor\": 3, \"ty").unwrap();
        let state = load(dir.path(), &log.id).unwrap();
        assert_eq!(state.jobs.len(), 1);
        assert_eq!(state.jobs[0].answer.as_deref(), Some("yo"));
        assert_eq!(state.jobs[0].last_cursor, 2);
        assert_eq!(state.unreadable_lines, 1);
        let mut again = SessionLog::open(dir.path(), &log.id).unwrap();
        again
            .append(&event("j2", 1, EventBody::JobCancelled {}))
            .unwrap();
        let state = load(dir.path(), &log.id).unwrap();
        assert_eq!(state.jobs.len(), 2, "appending after a torn line works");
        assert_eq!(
            latest(dir.path()).unwrap().as_deref(),
            Some(log.id.as_str())
        );
        assert!(SessionLog::open(dir.path(), "../x").is_err());
    }

    #[test]
    fn only_age_removes_sessions_and_only_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let ids: Vec<String> = (0..60)
            .map(|_| SessionLog::create(dir.path(), Path::new("/p")).unwrap().id)
            .collect();
        // No count limit: sixty sessions stay.
        assert!(
            gc(dir.path(), &SessionLimits::default(), None)
                .unwrap()
                .is_empty()
        );
        assert_eq!(list(dir.path()).unwrap().len(), 60);
        // An old session goes once max_age_days is set; the kept one stays.
        let old = path_of(dir.path(), &ids[0]).unwrap();
        let sixty_days_ago = SystemTime::now() - Duration::from_secs(60 * 86_400);
        std::fs::File::options()
            .write(true)
            .open(&old)
            .unwrap()
            .set_modified(sixty_days_ago)
            .unwrap();
        let limits = SessionLimits {
            max_age_days: Some(30),
            ..SessionLimits::default()
        };
        assert!(gc(dir.path(), &limits, Some(&ids[0])).unwrap().is_empty());
        assert_eq!(gc(dir.path(), &limits, None).unwrap(), [ids[0].clone()]);
        delete(dir.path(), &ids[1]).unwrap();
        assert_eq!(list(dir.path()).unwrap().len(), 58);
        assert!(
            delete(dir.path(), &ids[1])
                .unwrap_err()
                .to_string()
                .contains("no session")
        );
        assert!(delete(dir.path(), "../x").is_err());
    }
}
