//! The engine's one door: a cloneable handle every front end holds. It
//! sends commands (each numbered, answered by a typed reply or error),
//! answers queries (queries.rs), and hands out event subscriptions
//! (subscription.rs). Front ends see the engine only through it and
//! `protocol`'s types.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::{mpsc, oneshot, watch};

use super::EngineContext;
use super::builder::{BuildError, Template};
use super::engine::{Core, LOOSE, Queued};
use super::session_state::SessionState;
use super::subscription::{Filter, Subscription};
use crate::config::Config;
use crate::protocol::{Command, EngineError, Event, EventBody, Recovery, Reply, RequestId};

/// Commands waiting for the engine task, at most.
const COMMANDS: usize = 64;
/// Events a subscriber may fall behind by before it catches up from the
/// store (live-only text it missed is not stored: the completed message
/// stands in for it).
pub(super) const EVENTS: usize = 1024;

/// What the builder found, for the front ends to show.
#[derive(Debug, Clone)]
pub(super) struct Facts {
    pub provider_label: String,
    /// Why there is no provider (when one was optional).
    pub provider_notice: Option<String>,
    pub recovered: Vec<Recovery>,
}

/// The reply to a command `submit`ted.
pub struct PendingReply(oneshot::Receiver<Result<Reply, EngineError>>);

impl PendingReply {
    pub async fn reply(self) -> Result<Reply, EngineError> {
        self.0
            .await
            .unwrap_or_else(|_| Err(EngineError::unavailable("the engine stopped")))
    }
}

/// A handle on a running engine; clones share it.
#[derive(Clone)]
pub struct Engine {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    pub ctx: Arc<EngineContext>,
    /// The providers' models lists (`/model`), kept a while.
    pub models: super::choice::Kept,
    commands: mpsc::Sender<Queued>,
    pub events: Arc<super::so_far::Outlet>,
    /// The recorded sessions the engine drives (`Core::driven`).
    pub driven: watch::Receiver<Vec<String>>,
    /// What happened as it started (recoveries): every subscriber to all
    /// events gets them first.
    pub start: Vec<Arc<Event>>,
    next: AtomicU64,
    pub facts: Facts,
    template: Template,
}

impl Engine {
    /// The config file this engine read, if it read one.
    pub(super) fn config_path(&self) -> Option<&std::path::Path> {
        self.inner.template.config.path.as_deref()
    }
}

impl Engine {
    /// Starts the engine task for `ctx` on the current runtime.
    pub(super) fn start(
        ctx: Arc<EngineContext>,
        facts: Facts,
        template: Template,
    ) -> Result<Engine, BuildError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            BuildError::Failed("internal error: an engine needs a tokio runtime".into())
        })?;
        let events = Arc::new(super::so_far::Outlet::new(EVENTS));
        let mut loose = SessionState::new(LOOSE, "", "");
        let start: Vec<Arc<Event>> = facts
            .recovered
            .iter()
            .map(|r| {
                let cursor = loose.job(&r.job_id).map_or(0, |j| j.last_cursor) + 1;
                let event = Event {
                    cursor,
                    body: EventBody::RecoveryCompleted(r.clone()),
                    ts: crate::store::session::now(),
                    job_id: r.job_id.clone(),
                };
                loose.apply_event(&event);
                Arc::new(event)
            })
            .collect();
        let (commands, rx) = mpsc::channel(COMMANDS);
        let (driven_tx, driven) = watch::channel(Vec::new());
        let mut core = Core::new(ctx.clone(), events.clone(), driven_tx, loose);
        // What recovery wrote or undid is in the audit log, like the apply
        // or rollback it settled.
        for r in &facts.recovered {
            let action = format!("{}.recovered", r.operation);
            let outcome = r.summary();
            core.audit_in(
                None,
                &r.job_id,
                &action,
                &r.checkpoint_id,
                Some(true),
                &outcome,
            );
        }
        runtime.spawn(crate::store::no_blocking(core.run(rx)));
        Ok(Engine {
            inner: Arc::new(Inner {
                ctx,
                models: Default::default(),
                commands,
                events,
                driven,
                start,
                next: AtomicU64::new(1),
                facts,
                template,
            }),
        })
    }

    /// Sends `command` and waits for its reply.
    pub async fn command(&self, command: Command) -> Result<Reply, EngineError> {
        let id = self.inner.next.fetch_add(1, Ordering::Relaxed);
        self.request(id, command).await
    }

    /// `command` for the server's user `user`: what it causes is in the
    /// audit log with their name (a job's own records too, when it starts
    /// one), where a local front end's commands leave none.
    pub async fn command_as(&self, user: &str, command: Command) -> Result<Reply, EngineError> {
        let id = self.inner.next.fetch_add(1, Ordering::Relaxed);
        self.send(id, Some(user.to_string()), command).await
    }

    /// `command` with the caller's own request id.
    pub async fn request(&self, id: RequestId, command: Command) -> Result<Reply, EngineError> {
        self.send(id, None, command).await
    }

    async fn send(
        &self,
        id: RequestId,
        actor: Option<String>,
        command: Command,
    ) -> Result<Reply, EngineError> {
        let (reply, answer) = oneshot::channel();
        let queued = Queued {
            id,
            actor,
            command,
            reply,
        };
        if self.inner.commands.send(queued).await.is_err() {
            return Err(EngineError::unavailable("the engine has stopped"));
        }
        answer
            .await
            .unwrap_or_else(|_| Err(EngineError::unavailable("the engine stopped")))
    }

    /// Queues `command` at once, in the order of calls (the engine runs
    /// commands in the order they are queued); its reply comes later.
    /// Refused when the engine has stopped, or when it has `COMMANDS`
    /// commands waiting already.
    pub fn submit(&self, command: Command) -> Result<PendingReply, EngineError> {
        self.queue(None, command)
    }

    /// `submit` for the server's user `user` (see `command_as`).
    pub fn submit_as(&self, user: &str, command: Command) -> Result<PendingReply, EngineError> {
        self.queue(Some(user.to_string()), command)
    }

    fn queue(&self, actor: Option<String>, command: Command) -> Result<PendingReply, EngineError> {
        let id = self.inner.next.fetch_add(1, Ordering::Relaxed);
        let (reply, answer) = oneshot::channel();
        let queued = Queued {
            id,
            actor,
            command,
            reply,
        };
        match self.inner.commands.try_send(queued) {
            Ok(()) => Ok(PendingReply(answer)),
            Err(mpsc::error::TrySendError::Full(_)) => Err(EngineError::unavailable(
                "the engine has too many commands waiting; try again",
            )),
            Err(mpsc::error::TrySendError::Closed(_)) => {
                Err(EngineError::unavailable("the engine has stopped"))
            }
        }
    }

    /// Follows events: all of them (beginning with what happened at
    /// start), or one job's from a cursor.
    pub fn subscribe(&self, filter: Filter) -> Subscription {
        Subscription::new(self.clone(), filter)
    }

    /// Stops the engine: running jobs end (`job.cancelled`), review work
    /// under way finishes, sessions are let go; then everything recorded
    /// is in the store (an error says what could not be stored).
    pub async fn shutdown(&self) -> Result<(), EngineError> {
        match self.command(Command::Shutdown).await {
            Ok(_) | Err(EngineError::Unavailable { .. }) => {}
            Err(e) => return Err(e),
        }
        match &self.inner.ctx.state {
            Some(state) => state
                .store
                .flushed()
                .await
                .map_err(|e| EngineError::unavailable(e.to_string())),
            None => Ok(()),
        }
    }

    /// An engine for another agent root, built the way this one was and
    /// sharing its store (blocking: run it off an async task).
    pub fn open_root(&self, root: &Path) -> Result<Engine, BuildError> {
        self.inner.template.builder(root).build()
    }

    /// `open_root` for a root nothing may change on the engine's own
    /// account (`EngineBuilder::read_only`).
    pub fn open_root_read_only(&self, root: &Path) -> Result<Engine, BuildError> {
        self.inner.template.builder(root).read_only().build()
    }

    /// The agent root (canonical).
    pub fn root(&self) -> &Path {
        self.inner.ctx.workspace.root()
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.inner.ctx.config
    }

    /// The provider as a status bar names it (`no provider`).
    pub fn provider_label(&self) -> &str {
        &self.inner.facts.provider_label
    }

    /// The name of the provider jobs start on (`hybrid_auto`: the local
    /// one), if one is set up.
    pub fn provider_name(&self) -> Option<&str> {
        self.inner.ctx.provider.as_deref().map(|p| p.name())
    }

    /// Whether a provider is set up.
    pub fn has_provider(&self) -> bool {
        self.inner.ctx.provider.is_some()
    }

    /// Why there is no provider, when one was optional.
    pub fn provider_notice(&self) -> Option<&str> {
        self.inner.facts.provider_notice.as_deref()
    }

    /// What starting settled: applies or rollbacks an earlier process left
    /// half-written.
    pub fn recovered(&self) -> &[Recovery] {
        &self.inner.facts.recovered
    }

    /// Whether sessions are recorded (a store is open).
    pub fn records(&self) -> bool {
        self.inner.ctx.state.is_some()
    }
}
