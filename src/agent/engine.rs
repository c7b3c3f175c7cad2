//! The engine task: the one owner of the session log, the audit log, the
//! session's conversation, the jobs and their reviews. Every event passes
//! through here to be numbered, recorded (flushed line by line) and
//! forwarded to the front end; every change to the conversation is recorded
//! too, so a resumed session sends what the model saw.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::SystemTime;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::emit::{Emitter, JobMsg};
use super::feedback::review_feedback;
use super::job::{self, JobKind, JobSpec, UserReply};
use super::session_state::{Record, SessionState};
use super::{EngineContext, SessionChoice};
use crate::checkpoint::{CheckpointStore, ExecTracker};
use crate::context::TokenCounter;
use crate::llm::Message;
use crate::mcp::McpHub;
use crate::protocol::{Event, EventBody, JobFailure, Mode, Op};
use crate::store::SessionWriter;
use crate::store::StateDirs;

/// How long a closing engine waits for cancelled jobs to report.
const DRAIN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

struct JobHandle {
    cancel: CancellationToken,
    answers: mpsc::UnboundedSender<UserReply>,
}

pub(super) struct Engine {
    pub ctx: Arc<EngineContext>,
    jobs: HashMap<String, JobHandle>,
    /// The session: its jobs with their reviews, the conversation the next
    /// job continues, what was learned of the provider.
    pub(super) state: SessionState,
    /// The conversation as each running job found it, to go back to if the
    /// job ends before the model ever answered it.
    started_from: HashMap<String, Vec<Message>>,
    /// Running jobs the model has answered at least once.
    answered: std::collections::HashSet<String>,
    /// The session recorded into, once it exists.
    pub(super) session: Option<String>,
    resume: Option<String>,
    pub checkpoints: Option<CheckpointStore>,
    /// The root's file index, for checkpoints of what commands change.
    tracker: Option<Arc<ExecTracker>>,
    /// The session's MCP servers (started by the first agent job).
    mcp: Option<Arc<McpHub>>,
    /// Sessions and the audit chain go to the store through this queue.
    pub(super) writer: Option<SessionWriter>,
    out: mpsc::UnboundedSender<Event>,
    pub(super) internal_tx: mpsc::UnboundedSender<(String, JobMsg)>,
    internal_rx: mpsc::UnboundedReceiver<(String, JobMsg)>,
    /// An apply or rollback is running off the task; review ops wait.
    pub(super) review_busy: bool,
    /// Review ops that came while one was running, in order.
    pub(super) deferred: std::collections::VecDeque<Op>,
}

/// Why the engine could not start.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("cannot read session {id}: {source}")]
    Session {
        id: String,
        source: crate::store::StoreError,
    },
}

impl Engine {
    pub fn new(
        ctx: Arc<EngineContext>,
        out: mpsc::UnboundedSender<Event>,
    ) -> Result<Engine, EngineError> {
        let (internal_tx, internal_rx) = mpsc::unbounded_channel();
        let mut engine = Engine {
            checkpoints: ctx.state.as_ref().map(CheckpointStore::new),
            tracker: ctx
                .state
                .as_ref()
                .map(|s| Arc::new(ExecTracker::new(s, &ctx.workspace))),
            mcp: (!ctx.config.mcp_servers.is_empty()).then(|| {
                let logs =
                    StateDirs::locate(&|k| std::env::var(k).ok()).map(|d| d.home.join("logs"));
                Arc::new(McpHub::new(
                    &ctx.config,
                    ctx.workspace.root().to_path_buf(),
                    logs,
                ))
            }),
            writer: ctx.state.as_ref().map(|s| s.writer()),
            ctx: ctx.clone(),
            jobs: HashMap::new(),
            state: SessionState::default(),
            started_from: HashMap::new(),
            answered: std::collections::HashSet::new(),
            session: None,
            resume: None,
            out,
            internal_tx,
            internal_rx,
            review_busy: false,
            deferred: std::collections::VecDeque::new(),
        };
        if let (Some(state), SessionChoice::Resume(id)) = (&ctx.state, &ctx.session) {
            engine.load_session(state, id)?;
        }
        Ok(engine)
    }

    /// Rebuilds conversation, cursors and reviews from a session's records.
    fn load_session(
        &mut self,
        root: &crate::store::RootStore,
        id: &str,
    ) -> Result<(), EngineError> {
        self.state = super::session_state::read_session(root, id).map_err(|source| {
            EngineError::Session {
                id: id.to_string(),
                source,
            }
        })?;
        self.resume = Some(id.to_string());
        self.session = Some(id.to_string());
        Ok(())
    }

    pub async fn run(mut self, mut ops: mpsc::UnboundedReceiver<Op>) {
        // Before anything else: what opening the root's state settled.
        for r in self.ctx.recovered.clone() {
            let job_id = r.job_id.clone();
            self.publish(&job_id, EventBody::RecoveryCompleted(r));
        }
        loop {
            tokio::select! {
                op = ops.recv() => match op {
                    Some(op) => self.handle(op),
                    None => break,
                },
                Some((job_id, msg)) = self.internal_rx.recv() => self.take_job_msg(&job_id, msg),
            }
        }
        // The front end is gone: stop its jobs and record how they ended.
        for job in self.jobs.values() {
            job.cancel.cancel();
        }
        // Jobs end, and an apply or rollback under way is finished and
        // reported before the engine stops.
        while !self.jobs.is_empty() || self.review_busy {
            match tokio::time::timeout(DRAIN_TIMEOUT, self.internal_rx.recv()).await {
                Ok(Some((job_id, msg))) => self.take_job_msg(&job_id, msg),
                Ok(None) | Err(_) => break,
            }
        }
        if let Some(hub) = &self.mcp {
            hub.shutdown().await;
        }
    }

    pub(super) fn handle(&mut self, op: Op) {
        let review_op = matches!(
            op,
            Op::Decide { .. } | Op::EditHunk { .. } | Op::Apply { .. } | Op::Rollback { .. }
        );
        if review_op && self.review_busy {
            self.deferred.push_back(op);
            return;
        }
        match op {
            Op::StartJob {
                job_id,
                prompt,
                mode,
                max_tool_calls,
            } => self.start_job(job_id, JobKind::Instruction, prompt, mode, max_tool_calls),
            Op::Compact { job_id } => self.start_job(
                job_id,
                JobKind::Compact,
                "/compact".into(),
                self.ctx.config.ui.default_mode,
                None,
            ),
            Op::Answer { job_id, text } => {
                if let Some(job) = self.jobs.get(&job_id) {
                    let _ = job.answers.send(UserReply::Answer(text));
                }
            }
            Op::Approve {
                job_id,
                tool_call_id,
                approved,
                reason,
            } => {
                if let Some(job) = self.jobs.get(&job_id) {
                    let _ = job.answers.send(UserReply::Approval {
                        tool_call_id,
                        approved,
                        reason,
                    });
                }
            }
            Op::Cancel { job_id } => {
                if let Some(job) = self.jobs.get(&job_id) {
                    job.cancel.cancel();
                }
            }
            Op::Decide {
                job_id,
                accept,
                reject,
                accept_all,
            } => self.decide(&job_id, &accept, &reject, accept_all),
            Op::EditHunk {
                job_id,
                hunk_id,
                new_text,
            } => self.edit_hunk(&job_id, &hunk_id, &new_text),
            Op::Apply { job_id } => self.apply(&job_id),
            Op::Rollback {
                checkpoint_id,
                hunks,
                files,
            } => self.rollback(&checkpoint_id, &hunks, &files),
        }
    }

    fn start_job(
        &mut self,
        job_id: String,
        kind: JobKind,
        prompt: String,
        mode: Mode,
        max_tool_calls: Option<u32>,
    ) {
        if self.jobs.contains_key(&job_id) || self.state.job(&job_id).is_some() {
            return;
        }
        let limits = &self.ctx.config.sessions;
        if self.state.jobs.len() >= limits.max_jobs_per_session {
            let error = format!(
                "this session already holds {} jobs (sessions.max_jobs_per_session); start a new session",
                self.state.jobs.len()
            );
            self.publish(
                &job_id,
                EventBody::JobFailed {
                    error,
                    code: JobFailure::SessionFull,
                },
            );
            return;
        }
        self.ensure_session();
        if kind == JobKind::Instruction {
            self.tell_review_outcomes(&job_id);
        }
        self.state.job_mut(&job_id);
        let cancel = CancellationToken::new();
        let (answer_tx, answer_rx) = mpsc::unbounded_channel();
        let spec = JobSpec {
            kind,
            prompt,
            mode,
            max_tool_calls: max_tool_calls.unwrap_or(self.ctx.config.agent.max_tool_calls_per_job),
            history: self.state.conversation.clone(),
            window: self.state.window.clone(),
            factor: self.state.factor,
            session_id: self.session_id(),
            tracker: self.tracker.clone(),
            mcp: self.mcp.clone(),
        };
        self.started_from
            .insert(job_id.clone(), self.state.conversation.clone());
        let emitter = Emitter::new(job_id.clone(), self.internal_tx.clone());
        let running = tokio::spawn(job::run(
            self.ctx.clone(),
            spec,
            emitter,
            cancel.clone(),
            answer_rx,
        ));
        // A bug in a job must still end it: the front end waits for that.
        let (id, tx) = (job_id.clone(), self.internal_tx.clone());
        tokio::spawn(async move {
            if let Err(e) = running.await
                && e.is_panic()
            {
                let error = "agent-tui hit an internal error while running this job (a bug; \
                             please report it). The session is kept; you can continue it."
                    .to_string();
                let body = EventBody::JobFailed {
                    error,
                    code: JobFailure::InternalError,
                };
                let _ = tx.send((id, JobMsg::Event(body)));
            }
        });
        self.jobs.insert(
            job_id,
            JobHandle {
                cancel,
                answers: answer_tx,
            },
        );
        self.collect_garbage();
    }

    /// Before a new instruction: tells the model what became of the hunks
    /// it proposed since it last heard (applied, rejected, rewritten).
    fn tell_review_outcomes(&mut self, job_id: &str) {
        let counter = TokenCounter::estimating();
        let reviews = self
            .state
            .jobs
            .iter()
            .filter_map(|j| Some((j.job_id.as_str(), j.bundle.as_ref()?)));
        let Some((text, fates)) = review_feedback(reviews, &self.state.reported, &counter) else {
            return;
        };
        self.note(Some(job_id), text);
        self.commit(Record::Reported { fates });
    }

    /// Adds a note from agent-tui to the conversation (and the session).
    pub(super) fn note(&mut self, job_id: Option<&str>, text: String) {
        self.commit(Record::Append {
            job_id: job_id.map(str::to_string),
            messages: vec![Message::User(text)],
        });
    }

    /// What a job reports: events are published, conversation changes and
    /// the window are kept and recorded.
    fn take_job_msg(&mut self, job_id: &str, msg: JobMsg) {
        match msg {
            JobMsg::Event(body) => self.publish(job_id, body),
            JobMsg::Append(messages) => self.commit(Record::Append {
                job_id: Some(job_id.to_string()),
                messages,
            }),
            JobMsg::Answer => self.commit(Record::Answer {
                job_id: job_id.to_string(),
            }),
            JobMsg::Reset(messages) => self.commit(Record::Reset {
                job_id: Some(job_id.to_string()),
                messages,
            }),
            JobMsg::Window(window) => self.commit(Record::Window { window }),
            JobMsg::Review(done) => self.finish_review(*done),
            JobMsg::Calibrated(factor) => self.commit(Record::Calibration { factor }),
            JobMsg::Durable(done) => match &self.writer {
                Some(writer) => {
                    let written = writer.barrier();
                    tokio::spawn(async move {
                        let _ = written.await;
                        let _ = done.send(());
                    });
                }
                None => {
                    let _ = done.send(());
                }
            },
        }
    }

    /// A job that ended before the model answered anything leaves the
    /// conversation as it found it: its instruction was never seen, and
    /// sending it again with every later one would only pile up.
    fn settle_conversation(&mut self, job_id: &str, end: &EventBody) {
        let Some(before) = self.started_from.remove(job_id) else {
            return;
        };
        let unanswered = matches!(
            end,
            EventBody::JobFailed { .. } | EventBody::JobCancelled {}
        );
        if unanswered && !self.answered.contains(job_id) && self.state.conversation != before {
            self.commit(Record::Reset {
                job_id: None,
                messages: before,
            });
        }
        self.answered.remove(job_id);
    }

    /// Applies `record` to the session and records it.
    fn commit(&mut self, record: Record) {
        self.state.apply_record(&record);
        if let (Some(writer), Some(id)) = (&self.writer, &self.session) {
            writer.append(id, super::recording::record_row(&record));
        }
    }

    fn ensure_session(&mut self) {
        if self.session.is_some() {
            return;
        }
        let Some(writer) = &self.writer else { return };
        self.session = match (&self.ctx.session, &self.resume) {
            (SessionChoice::None, _) => None,
            (SessionChoice::Resume(_), Some(id)) => Some(id.clone()),
            (SessionChoice::New | SessionChoice::Resume(_), _) => {
                let id = crate::review::new_id("s");
                writer.create_session(&id);
                Some(id)
            }
        };
    }

    fn collect_garbage(&self) {
        if let (Some(state), Some(id)) = (&self.ctx.state, &self.session) {
            let _ = state.collect_sessions(&self.ctx.config.sessions, Some(id));
        }
    }

    /// The current session id, if any.
    pub fn session_id(&self) -> Option<String> {
        self.session.clone().or_else(|| self.resume.clone())
    }

    /// Numbers, records and forwards one event; the session's state
    /// follows it.
    pub fn publish(&mut self, job_id: &str, body: EventBody) {
        super::event_log::log_event(job_id, &body);
        self.audit_event(job_id, &body);
        if let EventBody::UsageUpdated { .. } = &body {
            self.answered.insert(job_id.to_string());
        }
        let terminal = body.is_terminal();
        let cursor = self.state.job(job_id).map_or(0, |j| j.last_cursor) + 1;
        let event = Event {
            cursor,
            body,
            ts: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            job_id: job_id.to_string(),
        };
        let index = self.state.apply_event(&event);
        if terminal {
            self.jobs.remove(job_id);
            self.settle_conversation(job_id, &event.body);
        }
        self.record(&event, index);
        let _ = self.out.send(event);
    }

    /// What an event puts in the audit log.
    fn audit_event(&mut self, job_id: &str, body: &EventBody) {
        match body {
            EventBody::ProviderFallback { from, to, reason } => {
                let target = format!("{from} -> {to}");
                self.audit(job_id, "provider.fallback", &target, None, reason.as_str());
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
                self.audit(job_id, "job.completed", provider, None, &outcome);
            }
            EventBody::ApprovalResolved {
                tool_call_id,
                approved,
                by,
            } => {
                self.audit(
                    job_id,
                    "approval",
                    tool_call_id,
                    Some(*approved),
                    &format!("by {by}"),
                );
            }
            EventBody::ToolCallCompleted {
                name,
                ok,
                error,
                tool_call_id,
                ..
            } => {
                let outcome = match (ok, error) {
                    (true, _) => "ok".to_string(),
                    (false, Some(e)) => format!("error: {}", e["code"].as_str().unwrap_or("error")),
                    (false, None) => "error".to_string(),
                };
                self.audit(
                    job_id,
                    "tool_call",
                    &format!("{name} ({tool_call_id})"),
                    Some(true),
                    &outcome,
                );
            }
            _ => {}
        }
    }
}
