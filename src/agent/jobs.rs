//! Jobs in the engine task: starting one in its session, what it reports
//! (events, conversation changes, what it learned), the answers and
//! approvals it waits for (the first answer wins), and cancelling it.

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::emit::{Emitter, JobMsg};
use super::engine::{Core, Internal, LOOSE};
use super::feedback::review_feedback;
use super::job::{self, JobKind, JobSpec, UserReply};
use super::live::{Asked, Held, NewJob, Running};
use super::session_state::Record;
use crate::context::TokenCounter;
use crate::llm::Message;
use crate::protocol::{
    Command, EngineError, EventBody, ImageRule, JobFailure, JobStatus, Mode, ModelChoice, Reply,
};

/// Room a lost host's streamed text may have taken in its job's cursors.
const LIVE_CURSORS: u64 = 1_000_000;

impl Core {
    /// Starts a job in session `key`.
    pub(super) fn start_job(
        &mut self,
        key: &str,
        kind: JobKind,
        job: NewJob,
    ) -> Result<Reply, EngineError> {
        let job_id = job.job_id.clone();
        if self.jobs.contains_key(&job_id) {
            return Err(EngineError::invalid(format!(
                "job id {job_id} is in use already"
            )));
        }
        // A provider or model that cannot be had is refused before anything is kept.
        let chosen = super::choice::provider_for(&self.ctx, &job.choice)?;
        let session_id = self.session_id(key);
        let reply = Reply::Started {
            job_id: job_id.clone(),
            session_id,
        };
        self.jobs.insert(job_id.clone(), key.to_string());
        let limit = self.ctx.config.sessions.max_jobs_per_session;
        let Some(live) = self.live(key) else {
            return Err(EngineError::failed("the session is gone"));
        };
        let jobs = live.state.jobs.len();
        if jobs >= limit {
            let error = format!(
                "this session already holds {jobs} jobs (sessions.max_jobs_per_session); \
                 start a new session"
            );
            let failed = EventBody::JobFailed {
                error,
                code: JobFailure::SessionFull,
            };
            self.publish(key, &job_id, failed);
            return Ok(reply);
        }
        if kind == JobKind::Instruction && !live.running.is_empty() {
            // One job at a time in a session: this one waits its turn.
            let queued = EventBody::JobQueued {
                prompt: job.prompt.clone(),
                mode: job.mode,
                choice: (!job.choice.is_empty()).then(|| job.choice.clone()),
                images: metas(&job.images),
            };
            live.queue.push_back(job);
            self.publish(key, &job_id, queued);
            return Ok(reply);
        }
        if kind == JobKind::Instruction {
            self.tell_review_outcomes(key, &job_id);
        }
        self.spawn_job(key, kind, job, chosen);
        self.touch(key);
        Ok(reply)
    }

    /// A `StartJob` (a `/NAME` in it expanded) or a `Compact`, started in
    /// session `key` or queued there.
    pub(super) fn start_asked(
        &mut self,
        key: &str,
        command: Command,
    ) -> Result<Reply, EngineError> {
        let (kind, job) = match command {
            Command::StartJob {
                job_id,
                prompt,
                mode,
                max_tool_calls,
                choice,
                images,
                workspace,
                ..
            } => {
                // Whose work it is, as hooks are told (the server's user).
                let user = self.actor.clone();
                if let Some(live) = self.live(key) {
                    live.who = super::hook_calls::HookWho {
                        user,
                        workspace_id: workspace,
                    };
                }
                let asked = self.custom_command(prompt, mode, choice.unwrap_or_default())?;
                let images = super::images::read(&self.ctx, &images)?;
                super::images::keep(&self.ctx, &images);
                let job = NewJob {
                    job_id,
                    prompt: asked.prompt,
                    mode: asked.mode,
                    max_tool_calls,
                    choice: asked.choice,
                    images,
                };
                (JobKind::Instruction, job)
            }
            Command::Compact { job_id, .. } => {
                let job = NewJob {
                    job_id,
                    prompt: "/compact".into(),
                    mode: self.ctx.config.ui.default_mode,
                    max_tool_calls: None,
                    choice: ModelChoice::default(),
                    images: Vec::new(),
                };
                (JobKind::Compact, job)
            }
            _ => return Err(EngineError::invalid("not a command that starts a job")),
        };
        self.start_job(key, kind, job)
    }

    /// A `/NAME ARGS` instruction expanded from its command file, in the
    /// command's mode if it sets one (SPEC 19); other text as it is.
    pub(super) fn custom_command(
        &self,
        prompt: String,
        mode: Mode,
        choice: crate::protocol::ModelChoice,
    ) -> Result<super::commands::Instruction, EngineError> {
        super::commands::instruction(&self.ctx.workspace, prompt, mode, choice)
    }

    /// The session's next queued job, once nothing runs in it. A review
    /// the job before it left stays open beside it: nothing is written
    /// unreviewed, and the later apply checks the files again.
    pub(super) fn start_queued(&mut self, key: &str) {
        let Some(live) = self.sessions.get_mut(key) else {
            return;
        };
        if !live.running.is_empty() {
            return;
        }
        let Some(next) = live.queue.pop_front() else {
            return;
        };
        self.tell_review_outcomes(key, &next.job_id);
        // Built now: a key unset since it was queued fails this job only.
        match super::choice::provider_for(&self.ctx, &next.choice) {
            Ok(chosen) => self.spawn_job(key, JobKind::Instruction, next, chosen),
            Err(e) => {
                let failed = EventBody::JobFailed {
                    error: e.to_string(),
                    code: JobFailure::NoProvider,
                };
                self.publish(key, &next.job_id, failed);
                return self.start_queued(key);
            }
        }
        self.touch(key);
    }

    /// Takes a queued job out of its queue (`job.cancelled`); false if it
    /// is not queued.
    fn unqueue(&mut self, job_id: &str) -> bool {
        let key = self.jobs.get(job_id).cloned().unwrap_or_default();
        let Some(live) = self.sessions.get_mut(&key) else {
            return false;
        };
        let Some(at) = live.queue.iter().position(|q| q.job_id == job_id) else {
            return false;
        };
        live.queue.remove(at);
        self.publish(&key, job_id, EventBody::JobCancelled {});
        true
    }

    /// Whether job `job_id` waits in its session's queue.
    fn queued(&self, job_id: &str) -> bool {
        let key = self
            .jobs
            .get(job_id)
            .map(String::as_str)
            .unwrap_or_default();
        self.sessions
            .get(key)
            .is_some_and(|l| l.queue.iter().any(|q| q.job_id == job_id))
    }

    /// The job's task (and the watch that ends it with `job.failed` if it
    /// panics), in session `key`.
    fn spawn_job(
        &mut self,
        key: &str,
        kind: JobKind,
        job: NewJob,
        chosen: Option<std::sync::Arc<dyn crate::llm::Provider>>,
    ) {
        let NewJob {
            job_id,
            prompt,
            mode,
            max_tool_calls,
            images,
            ..
        } = job;
        let cancel = CancellationToken::new();
        let (answer_tx, answer_rx) = mpsc::unbounded_channel();
        let (tracker, mcp, recorded) =
            (self.tracker.clone(), self.mcp.clone(), self.session_id(key));
        let ctx = self.ctx.clone();
        let Some(live) = self.live(key) else {
            return;
        };
        live.state.job_mut(&job_id);
        let spec = JobSpec {
            kind,
            prompt,
            mode,
            max_tool_calls: max_tool_calls.unwrap_or(ctx.config.agent.max_tool_calls_per_job),
            history: live.state.conversation.clone(),
            // What the session learned is of the engine's provider.
            window: live.state.window.clone().filter(|_| chosen.is_none()),
            factor: live.state.factor.filter(|_| chosen.is_none()),
            session_id: recorded,
            tracker,
            mcp,
            chosen,
            images,
            who: live.who.clone(),
        };
        live.started_from
            .insert(job_id.clone(), live.state.conversation.clone());
        live.running.insert(
            job_id.clone(),
            Running {
                cancel: cancel.clone(),
                answers: answer_tx,
            },
        );
        // The job's first event is published here, so the store has the
        // job before its id is answered (see `answered_once_recorded`).
        let on = spec.chosen.as_deref().or(ctx.provider.as_deref());
        let (provider, model) = on.map_or_else(Default::default, |p| {
            (p.name().to_string(), p.model().to_string())
        });
        let started = EventBody::JobStarted {
            prompt: spec.prompt.clone(),
            mode: spec.mode,
            root: ctx.workspace.root().display().to_string(),
            provider,
            model,
            images: spec
                .images
                .iter()
                .map(|a| {
                    a.meta
                        .counted(on.map_or(ImageRule::Estimate, |p| p.images_counted()))
                })
                .collect(),
        };
        self.publish(key, &job_id, started);
        let emitter = Emitter::new(job_id.clone(), self.internal_tx.clone());
        let running = tokio::spawn(crate::store::no_blocking(job::run(
            ctx, spec, emitter, cancel, answer_rx,
        )));
        watch_for_panic(running, job_id, self.internal_tx.clone());
    }

    /// The id session `key` is known by outside (`None`: events outside
    /// any session).
    pub(super) fn session_id(&self, key: &str) -> Option<String> {
        (key != LOOSE).then(|| key.to_string())
    }

    /// Before a new instruction: tells the model what became of the hunks
    /// it proposed since it last heard (applied, rejected, rewritten).
    fn tell_review_outcomes(&mut self, key: &str, job_id: &str) {
        let counter = TokenCounter::estimating();
        let Some(live) = self.sessions.get(key) else {
            return;
        };
        let reviews =
            live.state.jobs.iter().filter_map(|j| {
                Some((j.job_id.as_str(), j.bundle.as_ref()?, Some(&j.rolled_back)))
            });
        let Some((text, fates)) = review_feedback(reviews, &live.state.reported, &counter) else {
            return;
        };
        self.note(key, Some(job_id), text);
        self.commit(key, Record::Reported { fates });
    }

    /// Adds a note from agent-tui to session `key`'s conversation.
    pub(super) fn note(&mut self, key: &str, job_id: Option<&str>, text: String) {
        self.commit(
            key,
            Record::Append {
                job_id: job_id.map(str::to_string),
                messages: vec![Message::User(text)],
            },
        );
    }

    /// What a job reports: events are published, conversation changes and
    /// what it learned are kept and recorded in its session.
    pub(super) fn take_job_msg(&mut self, job_id: &str, msg: JobMsg) {
        let key = self.jobs.get(job_id).cloned().unwrap_or_default();
        match msg {
            JobMsg::Event(body) => self.publish(&key, job_id, body),
            JobMsg::Append(messages) => self.commit(
                &key,
                Record::Append {
                    job_id: Some(job_id.to_string()),
                    messages,
                },
            ),
            JobMsg::Answer => self.commit(
                &key,
                Record::Answer {
                    job_id: job_id.to_string(),
                },
            ),
            JobMsg::Reset(messages) => self.commit(
                &key,
                Record::Reset {
                    job_id: Some(job_id.to_string()),
                    messages,
                },
            ),
            JobMsg::Window(window) => self.commit(&key, Record::Window { window }),
            JobMsg::Calibrated(factor) => self.commit(&key, Record::Calibration { factor }),
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
    pub(super) fn settle_conversation(&mut self, key: &str, job_id: &str, end: &EventBody) {
        let Some(live) = self.sessions.get_mut(key) else {
            return;
        };
        let Some(before) = live.started_from.remove(job_id) else {
            return;
        };
        let answered = live.answered.remove(job_id);
        let unanswered = matches!(
            end,
            EventBody::JobFailed { .. } | EventBody::JobCancelled {}
        );
        if unanswered && !answered && live.state.conversation != before {
            self.commit(
                key,
                Record::Reset {
                    job_id: None,
                    messages: before,
                },
            );
        }
    }

    /// The answer to a job's `clarification.requested`; the first wins.
    pub(super) fn answer(&mut self, job_id: &str, text: String) -> Result<Reply, EngineError> {
        let live = self.waiting_job(job_id)?;
        match live.asked.get(job_id) {
            Some(Asked::Clarification) => {
                live.asked.remove(job_id);
            }
            Some(Asked::Approval(_)) | None => {
                return Err(conflict(format!(
                    "job {job_id} is not waiting for an answer (it was answered already, or \
                     asked nothing)"
                )));
            }
        }
        if let Some(job) = live.running.get(job_id) {
            let _ = job.answers.send(UserReply::Answer(text));
        }
        Ok(Reply::Done)
    }

    /// Words for a running job's model, given at its next step boundary.
    pub(super) fn steer(&mut self, job_id: &str, text: String) -> Result<Reply, EngineError> {
        if text.trim().is_empty() {
            return Err(EngineError::invalid("a steer needs some text"));
        }
        if self.queued(job_id) {
            return Err(conflict(format!(
                "job {job_id} is queued and has not started: cancel it and send it again \
                 with the words added"
            )));
        }
        let live = match self.waiting_job(job_id) {
            Ok(live) => live,
            Err(EngineError::Conflict { .. }) => {
                return Err(conflict(format!(
                    "job {job_id} has ended: send this as a new instruction instead"
                )));
            }
            Err(e) => return Err(e),
        };
        if let Some(job) = live.running.get(job_id) {
            let _ = job.answers.send(UserReply::Steer(text));
        }
        Ok(Reply::Done)
    }

    /// Allows or denies the call a job asked about; the first answer wins.
    pub(super) fn approve(
        &mut self,
        job_id: &str,
        tool_call_id: String,
        approved: bool,
        reason: Option<String>,
    ) -> Result<Reply, EngineError> {
        let user = self.actor.clone();
        let live = self.waiting_job(job_id)?;
        match live.asked.get(job_id) {
            Some(Asked::Approval(asked)) if *asked == tool_call_id => {
                live.asked.remove(job_id);
            }
            Some(Asked::Approval(_)) | Some(Asked::Clarification) | None => {
                return Err(conflict(format!(
                    "job {job_id} is not waiting for a decision on {tool_call_id} (it was \
                     decided already, or never asked)"
                )));
            }
        }
        if let Some(job) = live.running.get(job_id) {
            let _ = job.answers.send(UserReply::Approval {
                tool_call_id,
                approved,
                reason,
                user,
            });
        }
        Ok(Reply::Done)
    }

    /// Stops a running job.
    pub(super) fn cancel(&mut self, job_id: &str) -> Result<Reply, EngineError> {
        if self.unqueue(job_id) {
            return Ok(Reply::Done);
        }
        let live = self.waiting_job(job_id)?;
        if let Some(job) = live.running.get(job_id) {
            job.cancel.cancel();
        }
        Ok(Reply::Done)
    }

    /// `job.failed {code: host_lost}` for a job of session `key` that
    /// neither ended nor runs here (its host stopped answering).
    pub(super) fn end_lost_job(&mut self, key: &str, job_id: &str) {
        let Some(live) = self.sessions.get(key) else {
            return;
        };
        let ended = live.state.job(job_id).is_some_and(|j| {
            matches!(
                j.status,
                Some(
                    JobStatus::Completed
                        | JobStatus::Failed
                        | JobStatus::Cancelled
                        | JobStatus::AwaitingReview
                )
            )
        });
        if ended || live.running.contains_key(job_id) {
            return;
        }
        self.jobs.insert(job_id.to_string(), key.to_string());
        // Its host streamed text past the last stored cursor (live-only
        // events are never stored): the end comes after any of them. The
        // text between two stored events is one model response
        // (`usage.updated` is stored after each), far below this many.
        if let Some(live) = self.sessions.get_mut(key) {
            let job = live.state.job_mut(job_id);
            job.last_cursor = job.last_cursor.saturating_add(LIVE_CURSORS);
        }
        let body = EventBody::JobFailed {
            error: "the host running this job stopped answering; the session goes on here".into(),
            code: JobFailure::HostLost,
        };
        self.publish(key, job_id, body);
    }

    /// The session of a running job.
    fn waiting_job(&mut self, job_id: &str) -> Result<&mut super::live::Live, EngineError> {
        let key = self.jobs.get(job_id).cloned().unwrap_or_default();
        match self.sessions.get_mut(&key) {
            Some(live) if live.running.contains_key(job_id) => Ok(live),
            // It ran here and ended: whatever it asked was answered.
            Some(live) if live.state.job(job_id).is_some() => Err(EngineError::Conflict {
                message: format!("job {job_id} has ended: there is nothing left to answer"),
                conflicts: Vec::new(),
            }),
            Some(_) | None => Err(EngineError::not_found(format!(
                "job {job_id} is not running"
            ))),
        }
    }

    /// Whether records of session `key` go to the store.
    pub(super) fn recorded(&self, key: &str) -> bool {
        self.sessions
            .get(key)
            .is_some_and(|l| !matches!(l.held, Held::Unrecorded))
            && self.writer.is_some()
    }
}

fn conflict(message: String) -> EngineError {
    EngineError::Conflict {
        message,
        conflicts: Vec::new(),
    }
}

/// A bug in a job must still end it (`job.failed`): the front end waits
/// for its end.
fn watch_for_panic(
    running: tokio::task::JoinHandle<()>,
    id: String,
    tx: mpsc::UnboundedSender<Internal>,
) {
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
            let _ = tx.send(Internal::Job(id, JobMsg::Event(body)));
        }
    });
}

/// What events show of a job's images.
fn metas(images: &[super::images::Attached]) -> Vec<crate::protocol::ImageMeta> {
    images.iter().map(|a| a.meta.clone()).collect()
}
