//! The engine task: the one owner of the sessions this engine drives, their
//! jobs and reviews. Commands come in with a reply channel (`Queued`) and
//! are answered with a typed reply or error; jobs and off-task work report
//! back (`Internal`); every event passes through `publish` (publish.rs) to
//! be numbered, applied to its session, recorded and broadcast.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot, watch};

use super::EngineContext;
use super::emit::JobMsg;
use super::live::{Held, Live};
use super::review_work::ReviewDone;
use super::session_state::SessionState;
use crate::checkpoint::{CheckpointStore, ExecTracker};
use crate::mcp::McpHub;
use crate::protocol::{Command, EngineError, Event, Reply, RequestId};
use crate::store::{SessionWriter, StateDirs};
use crate::tools::ExecRecord;

/// How long a closing engine waits for cancelled jobs to report.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(2);
/// How often held leases are renewed (busy sessions) or let go (idle ones).
const LEASE_TICK: Duration = Duration::from_secs(2);

/// Where a command's reply goes.
pub(super) type ReplyTx = oneshot::Sender<Result<Reply, EngineError>>;

/// A command, who asked (the server's user; `None`: this machine) and
/// where its reply goes.
pub(super) struct Queued {
    pub id: RequestId,
    pub actor: Option<String>,
    pub command: Command,
    pub reply: ReplyTx,
}

impl Queued {
    pub fn answer(self, result: Result<Reply, EngineError>) {
        super::event_log::log_reply(self.id, &result);
        let _ = self.reply.send(result);
    }
}

/// What reaches the engine task besides commands.
pub(super) enum Internal {
    /// A job's report.
    Job(String, JobMsg),
    /// Review work done off the task, and who waits for its reply.
    Review(Box<ReviewDone>, Option<ReplyTx>),
    /// A session read and leased off the task (or why not).
    Loaded(
        super::sessions::LoadKey,
        Result<super::sessions::Loaded, EngineError>,
    ),
    /// Leases renewed; these sessions were lost to another process.
    Lost(Vec<String>),
    /// A verify ended.
    Verified(Box<super::verify_ops::Verified>),
}

/// An event as subscribers get it, with its session.
#[derive(Debug)]
pub struct Published {
    pub session_id: Option<String>,
    pub event: Arc<Event>,
}

/// The key of events that belong to no session (not recorded).
pub(super) const LOOSE: &str = "";

pub(super) struct Core {
    pub ctx: Arc<EngineContext>,
    /// The sessions driven here, by id; `LOOSE` holds events outside any.
    pub sessions: HashMap<String, Live>,
    /// Which session each job belongs to.
    pub jobs: HashMap<String, String>,
    pub checkpoints: Option<CheckpointStore>,
    /// The root's file index, for checkpoints of what commands change.
    pub tracker: Option<Arc<ExecTracker>>,
    /// The root's MCP servers (started by the first agent job).
    pub mcp: Option<Arc<McpHub>>,
    /// Sessions and the audit chain go to the store through this queue.
    pub writer: Option<SessionWriter>,
    pub out: Arc<super::so_far::Outlet>,
    pub internal_tx: mpsc::UnboundedSender<Internal>,
    internal_rx: mpsc::UnboundedReceiver<Internal>,
    /// An apply, rollback or hunk edit is running off the task; review
    /// commands wait, in order (`deferred`).
    pub review_busy: bool,
    pub deferred: VecDeque<Queued>,
    /// Commands waiting for a session to be read and leased.
    pub waiting: Vec<(super::sessions::LoadKey, Queued)>,
    pub loading: Vec<super::sessions::LoadKey>,
    /// Who this engine is, as leases name it.
    pub owner: String,
    /// The recorded sessions driven here (a subscriber that fell behind
    /// reads their events from the store).
    pub driven: watch::Sender<Vec<String>>,
    /// Numbers verifies, so a newer one of a job supersedes an older.
    pub verify_generation: u64,
    /// Verify baselines by tree content.
    pub baselines: Arc<crate::tools::verify::Baselines>,
    /// The server's user the command under way is for (`None`: a local
    /// front end's): the `user` of the audit records it causes.
    pub actor: Option<String>,
    /// ... and of the apply, rollback or write running off the task.
    pub review_actor: Option<String>,
    /// The user who started each job over the server, until it ends: its
    /// own records (tool calls, its end) are theirs.
    pub job_users: HashMap<String, String>,
}

impl Core {
    pub fn new(
        ctx: Arc<EngineContext>,
        out: Arc<super::so_far::Outlet>,
        driven: watch::Sender<Vec<String>>,
        loose: SessionState,
    ) -> Core {
        let (internal_tx, internal_rx) = mpsc::unbounded_channel();
        let mut sessions = HashMap::new();
        sessions.insert(LOOSE.to_string(), Live::new(loose, Held::Unrecorded, 0));
        Core {
            checkpoints: ctx.state.as_ref().map(CheckpointStore::new),
            tracker: ctx.tracker.clone(),
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
            ctx,
            sessions,
            jobs: HashMap::new(),
            out,
            internal_tx,
            internal_rx,
            review_busy: false,
            deferred: VecDeque::new(),
            waiting: Vec::new(),
            loading: Vec::new(),
            owner: super::live::owner_id(),
            driven,
            verify_generation: 0,
            baselines: super::verify_ops::baselines(),
            actor: None,
            review_actor: None,
            job_users: HashMap::new(),
        }
    }

    /// Notes that session `id` is driven here (and recorded).
    pub fn note_driven(&self, id: &str) {
        self.driven.send_if_modified(|ids| {
            let new = !ids.iter().any(|i| i == id);
            if new {
                ids.push(id.to_string());
            }
            new
        });
    }

    /// Serves commands until `Shutdown` (or until every handle is gone),
    /// then stops its jobs and lets its sessions go.
    pub async fn run(mut self, mut commands: mpsc::Receiver<Queued>) {
        let mut tick = tokio::time::interval(LEASE_TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let stop = loop {
            let holding = self.holding();
            tokio::select! {
                queued = commands.recv() => match queued {
                    Some(q) if matches!(q.command, crate::protocol::Command::Shutdown) => break Some(q),
                    Some(q) => self.dispatch(q),
                    None => break None,
                },
                Some(msg) = self.internal_rx.recv() => self.internal(msg),
                _ = tick.tick(), if holding => self.tend_leases(),
            }
        };
        // Commands sent meanwhile are refused, not left waiting.
        commands.close();
        while let Ok(q) = commands.try_recv() {
            q.answer(Err(EngineError::unavailable("the engine is shutting down")));
        }
        self.stop().await;
        if let Some(q) = stop {
            q.answer(Ok(Reply::Done));
        }
    }

    /// Ends every job, finishes review work under way, writes everything
    /// to the store and lets every lease go.
    async fn stop(&mut self) {
        for live in self.sessions.values() {
            for job in live.running.values() {
                job.cancel.cancel();
            }
            for (_, cancel) in live.verifying.values() {
                cancel.cancel();
            }
        }
        for (_, q) in std::mem::take(&mut self.waiting) {
            q.answer(Err(EngineError::unavailable("the engine is shutting down")));
        }
        while self
            .sessions
            .values()
            .any(|l| !l.running.is_empty() || !l.verifying.is_empty())
            || self.review_busy
        {
            match tokio::time::timeout(DRAIN_TIMEOUT, self.internal_rx.recv()).await {
                Ok(Some(msg)) => self.internal(msg),
                Ok(None) | Err(_) => break,
            }
        }
        self.await_observers().await;
        for q in std::mem::take(&mut self.deferred) {
            q.answer(Err(EngineError::unavailable("the engine is shutting down")));
        }
        if let Some(state) = &self.ctx.state {
            state.store.settled().await;
        }
        self.release_all().await;
        if let Some(hub) = &self.mcp {
            hub.shutdown().await;
        }
    }

    /// Observer hooks still running (an `apply.after` of a one-shot run)
    /// end before the engine does, within their timeouts; their events
    /// are kept.
    async fn await_observers(&mut self) {
        use std::sync::atomic::Ordering;
        let longest = self
            .ctx
            .hooks
            .get()
            .hooks
            .iter()
            .map(|h| h.def.timeout_secs)
            .max()
            .unwrap_or(0);
        let until = std::time::Instant::now() + std::time::Duration::from_secs(longest + 1);
        while self.ctx.observers.load(Ordering::SeqCst) > 0 && std::time::Instant::now() < until {
            let tick = std::time::Duration::from_millis(20);
            match tokio::time::timeout(tick, self.internal_rx.recv()).await {
                Ok(Some(msg)) => self.internal(msg),
                Ok(None) => break,
                Err(_) => {}
            }
        }
        while let Ok(msg) = self.internal_rx.try_recv() {
            self.internal(msg);
        }
    }

    fn internal(&mut self, msg: Internal) {
        match msg {
            Internal::Job(job_id, msg) => self.take_job_msg(&job_id, msg),
            Internal::Review(done, reply) => self.finish_review(*done, reply),
            Internal::Loaded(key, result) => self.loaded(key, result),
            Internal::Lost(ids) => self.lost(&ids),
            Internal::Verified(done) => self.finish_verify(*done),
        }
    }

    /// Runs `q` now, or once what it needs is read and leased.
    pub fn dispatch(&mut self, q: Queued) {
        super::event_log::log_command(q.id, &q.command);
        let review = matches!(
            q.command,
            Command::Decide { .. }
                | Command::EditHunk { .. }
                | Command::Apply { .. }
                | Command::Verify { .. }
                | Command::Rollback { .. }
                | Command::WriteFiles { .. }
        );
        if review && self.review_busy {
            self.deferred.push_back(q);
            return;
        }
        match self.ready(&q.command) {
            super::sessions::Ready::Now(key) => self.run_command(q, &key),
            super::sessions::Ready::Wait(load, cached) => {
                let start = !self.loading.contains(&load);
                self.waiting.push((load.clone(), q));
                if start {
                    self.start_load(load, cached);
                }
            }
            super::sessions::Ready::Refused(e) => q.answer(Err(e)),
        }
    }

    /// `q` with its reply held until what the command recorded (a session
    /// it made, a job it started, a decision, an apply's review) is
    /// written, for the commands whose effect is read back by id: what such
    /// a reply names or says is never answered before another process or
    /// host on the store can read it. The barrier is asked for once the
    /// reply is made, so after everything it follows. Answers, approvals
    /// and cancels go to a running job and are not held.
    fn answered_once_recorded(&self, q: Queued) -> Queued {
        let Some(writer) = self.writer.clone() else {
            return q;
        };
        let read_back = matches!(
            q.command,
            Command::StartJob { .. }
                | Command::CreateSession
                | Command::Compact { .. }
                | Command::Decide { .. }
                | Command::EditHunk { .. }
                | Command::Apply { .. }
                | Command::Verify { .. }
                | Command::VerifyFeedback { .. }
                | Command::Rollback { .. }
                | Command::DeleteSession { .. }
                | Command::WriteFiles { .. }
        );
        if !read_back {
            return q;
        }
        let (tx, rx) = oneshot::channel();
        let original = q.reply;
        tokio::spawn(async move {
            if let Ok(result) = rx.await {
                let _ = writer.barrier().await;
                let _ = original.send(result);
            }
        });
        Queued { reply: tx, ..q }
    }

    /// `q`, whose session `key` was just read and leased: now, or after
    /// the review work under way.
    pub fn run_loaded(&mut self, q: Queued, key: &str) {
        let review = matches!(
            q.command,
            Command::Decide { .. }
                | Command::EditHunk { .. }
                | Command::Apply { .. }
                | Command::Rollback { .. }
                | Command::WriteFiles { .. }
        );
        if review && self.review_busy {
            self.deferred.push_back(q);
        } else {
            self.run_command(q, key);
        }
    }

    /// `q`, with its session `key` ready, audited as its actor's.
    fn run_command(&mut self, q: Queued, key: &str) {
        self.actor = q.actor.clone();
        self.run_as_actor(q, key);
        self.actor = None;
    }

    /// A job a server user starts is theirs: its own records name them.
    fn note_job_user(&mut self, q: &Queued) {
        if let (
            Some(user),
            Command::StartJob { job_id, .. }
            | Command::Compact { job_id, .. }
            | Command::VerifyFeedback {
                new_job_id: job_id, ..
            },
        ) = (&q.actor, &q.command)
        {
            self.job_users.insert(job_id.clone(), user.clone());
        }
    }

    fn run_as_actor(&mut self, q: Queued, key: &str) {
        let q = self.answered_once_recorded(q);
        self.note_job_user(&q);
        match q.command.clone() {
            Command::StartJob { .. } | Command::Compact { .. } => {
                let started = self.start_asked(key, q.command.clone());
                q.answer(started);
            }
            Command::CreateSession => q.answer(Ok(Reply::SessionCreated {
                session_id: key.to_string(),
            })),
            Command::Answer { job_id, text } => q.answer(self.answer(&job_id, text)),
            Command::Steer { job_id, text } => q.answer(self.steer(&job_id, text)),
            Command::Approve {
                job_id,
                tool_call_id,
                approved,
                reason,
            } => {
                let done = self.approve(&job_id, tool_call_id, approved, reason);
                q.answer(done);
            }
            Command::Cancel { job_id } => q.answer(self.cancel(&job_id)),
            Command::Decide {
                job_id,
                accept,
                reject,
                accept_all,
            } => {
                let done = self.decide(key, &job_id, &accept, &reject, accept_all);
                q.answer(done);
            }
            Command::EditHunk {
                job_id,
                hunk_id,
                new_text,
            } => self.edit_hunk(key, &job_id, &hunk_id, &new_text, q.reply),
            Command::Apply { job_id } => self.apply(key, &job_id, q.reply),
            Command::Verify { job_id } => self.verify(key, &job_id, q.reply),
            Command::CancelVerify { job_id } => {
                let done = self.cancel_verify(key, &job_id);
                q.answer(done);
            }
            Command::VerifyFeedback { job_id, new_job_id } => {
                let done = self.verify_feedback(key, &job_id, new_job_id);
                q.answer(done);
            }
            Command::Rollback {
                checkpoint_id,
                hunks,
                files,
                ..
            } => self.rollback(key, &checkpoint_id, &hunks, &files, q.reply),
            Command::DeleteSession { session_id } => self.delete_session(session_id, q),
            Command::CallTool { name, arguments } => self.call_tool(name, arguments, q),
            Command::WriteFiles { .. }
            | Command::McpTools
            | Command::McpCall { .. }
            | Command::EndLostJob { .. }
            | Command::Audit { .. } => self.run_for_server(q, key),
            Command::Shutdown => q.answer(Ok(Reply::Done)),
        }
    }

    /// The commands a server sends besides a front end's: a person's own
    /// writes, MCP calls, ending a lost host's job, audit records.
    fn run_for_server(&mut self, q: Queued, key: &str) {
        match q.command.clone() {
            Command::WriteFiles { files, by } => self.write_files(files, by, q.reply),
            Command::McpTools => self.mcp_tools(q),
            Command::Audit {
                session_id,
                job_id,
                action,
                target,
                outcome,
            } => {
                let job = job_id.unwrap_or_default();
                self.audit_in(session_id, &job, &action, &target, None, &outcome);
                q.answer(Ok(Reply::Done));
            }
            Command::EndLostJob { job_id, .. } => {
                self.end_lost_job(key, &job_id);
                q.answer(Ok(Reply::Done));
            }
            Command::McpCall {
                server,
                tool,
                arguments,
            } => self.mcp_call(server, tool, arguments, q),
            _ => q.answer(Err(EngineError::invalid("not a server command"))),
        }
    }

    /// The session `key` (it exists: commands run only once it is ready).
    pub fn live(&mut self, key: &str) -> Option<&mut Live> {
        self.sessions.get_mut(key)
    }

    /// Runs `tool` off the task (`agent-tui tool`, the server's `fs/…`): a
    /// command's changes are a checkpoint and the call is audited, as a
    /// job's are; read tools leave no record.
    fn call_tool(&mut self, name: String, arguments: serde_json::Value, q: Queued) {
        let ctx = self.ctx.clone();
        let audited = ctx
            .registry
            .get(&name)
            .is_some_and(|spec| spec.tier != crate::protocol::Tier::Read);
        let writer = self.writer.clone().filter(|_| audited);
        let actor = self.actor.clone();
        tokio::spawn(async move {
            let job_id = format!("tool_{}", &super::new_job_id()[4..]);
            let job = job_id.clone();
            let tool = name.clone();
            let ran = tokio::task::spawn_blocking(move || {
                let mut tool_ctx = ctx.tool_context();
                tool_ctx.record = ctx.tracker.as_deref().map(|tracker| ExecRecord {
                    tracker,
                    session_id: None,
                    job_id: job,
                });
                ctx.registry.call(&name, arguments, &tool_ctx)
            })
            .await;
            if let Some(writer) = writer {
                let outcome = match &ran {
                    Ok(Ok(result)) => match result["checkpoint_id"].as_str() {
                        Some(id) => format!("ok, checkpoint {id}"),
                        None => "ok".to_string(),
                    },
                    Ok(Err(e)) => format!("error: {}", e.code()),
                    Err(_) => "error: internal".to_string(),
                };
                writer.audit(crate::store::audit::AuditEntry {
                    session: None,
                    job: Some(job_id),
                    user: actor,
                    action: "tool_call".to_string(),
                    target: format!("{tool} (called directly)"),
                    approved: Some(true),
                    outcome,
                });
                let _ = writer.barrier().await;
            }
            q.answer(match ran {
                Ok(Ok(result)) => Ok(Reply::Tool { result }),
                Ok(Err(e)) => Err(EngineError::Failed {
                    message: e.to_string(),
                    reason: Some(e.code().to_string()),
                    detail: Some(e.to_json()),
                }),
                Err(e) => Err(EngineError::failed(format!("the tool stopped: {e}"))),
            });
        });
    }
}
