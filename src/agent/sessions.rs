//! Which session a command needs and getting it ready: a new one is made
//! at once; one driven here runs at once while its lease holds; any other
//! (or one whose lease lapsed) is leased and read off the task first, the
//! command waiting meanwhile. Held leases are renewed while their session
//! is busy and let go soon after it is idle.

use std::time::{Duration, Instant};

use super::engine::{Core, Internal, LOOSE, Queued};
use super::live::{self, Held, LEASE_MS, Live};
use super::session_state::{SessionState, read_session};
use crate::protocol::{Command, EngineError, Reply, SessionRef};
use crate::store::{RootStore, now_ms};

/// How long an idle session keeps its lease (a review answered at once
/// needs no new one).
const IDLE_GRACE: Duration = Duration::from_secs(2);

/// What a command waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadKey {
    Session(String),
    /// The root's most recently updated session.
    Latest,
    /// The session of a job not driven here.
    Job(String),
}

/// A session read and leased off the task.
pub struct Loaded {
    pub id: String,
    /// `None`: the copy held here is current.
    pub state: Option<SessionState>,
    pub seq: i64,
}

/// Whether a command can run.
pub(super) enum Ready {
    Now(String),
    /// Once this is loaded; the copy held here, if any, had this `seq`.
    Wait(LoadKey, Option<i64>),
    Refused(EngineError),
}

impl Core {
    pub(super) fn ready(&mut self, command: &Command) -> Ready {
        match command {
            Command::StartJob { session, .. } | Command::Compact { session, .. } => {
                self.session_ready(session)
            }
            Command::CreateSession => self.session_ready(&SessionRef::New),
            Command::EndLostJob { session_id, .. } => {
                self.session_ready(&SessionRef::Id(session_id.clone()))
            }
            Command::Decide { job_id, .. }
            | Command::EditHunk { job_id, .. }
            | Command::Apply { job_id }
            | Command::Verify { job_id }
            | Command::VerifyFeedback { job_id, .. } => self.job_ready(job_id),
            Command::Answer { job_id, .. }
            | Command::Steer { job_id, .. }
            | Command::Approve { job_id, .. }
            | Command::Cancel { job_id }
            | Command::CancelVerify { job_id } => {
                Ready::Now(self.jobs.get(job_id).cloned().unwrap_or_default())
            }
            Command::Rollback { tell: Some(id), .. } => {
                self.session_ready(&SessionRef::Id(id.clone()))
            }
            Command::Rollback { tell: None, .. }
            | Command::DeleteSession { .. }
            | Command::CallTool { .. }
            | Command::WriteFiles { .. }
            | Command::McpTools
            | Command::McpCall { .. }
            | Command::Audit { .. }
            | Command::Shutdown => Ready::Now(LOOSE.to_string()),
        }
    }

    fn session_ready(&mut self, session: &SessionRef) -> Ready {
        let stored = self.ctx.state.is_some();
        match session {
            SessionRef::New => Ready::Now(self.create_session()),
            SessionRef::Latest if stored => Ready::Wait(LoadKey::Latest, None),
            SessionRef::Latest => Ready::Refused(EngineError::not_found(
                "there is no session to continue in this agent root",
            )),
            SessionRef::Id(id) => match self.sessions.get(id) {
                Some(live) if live.ready() => Ready::Now(id.clone()),
                Some(live) => Ready::Wait(LoadKey::Session(id.clone()), Some(live.seq)),
                None if stored => Ready::Wait(LoadKey::Session(id.clone()), None),
                None => Ready::Refused(EngineError::not_found(format!(
                    "no session {id} in this agent root (agent-tui sessions list shows them)"
                ))),
            },
        }
    }

    fn job_ready(&mut self, job_id: &str) -> Ready {
        match self.jobs.get(job_id) {
            Some(key) => match self.sessions.get(key) {
                Some(live) if live.ready() => Ready::Now(key.clone()),
                Some(live) => Ready::Wait(LoadKey::Session(key.clone()), Some(live.seq)),
                None => Ready::Wait(LoadKey::Session(key.clone()), None),
            },
            // Without a store, there is nothing to find: the review
            // command says there is no review.
            None if self.ctx.state.is_none() => Ready::Now(LOOSE.to_string()),
            None => Ready::Wait(LoadKey::Job(job_id.to_string()), None),
        }
    }

    /// A new session, driven here (recorded when there is a store).
    fn create_session(&mut self) -> String {
        let id = crate::review::new_id("s");
        let root = self.ctx.workspace.root().display().to_string();
        let state = SessionState::new(&id, &root, &crate::store::session::now());
        let held = match &self.writer {
            Some(writer) => {
                let until = now_ms() + LEASE_MS;
                writer.create_session(&id, Some((self.owner.clone(), until)));
                Held::Yes { until }
            }
            None => Held::Unrecorded,
        };
        self.sessions.insert(id.clone(), Live::new(state, held, 0));
        if self.writer.is_some() {
            self.note_driven(&id);
        }
        self.collect_garbage(&id);
        id
    }

    /// Sessions older than `[sessions] max_age_days` go (off the task).
    fn collect_garbage(&self, keep: &str) {
        if let Some(state) = self.ctx.state.clone() {
            let (limits, keep) = (self.ctx.config.sessions.clone(), keep.to_string());
            tokio::task::spawn_blocking(move || {
                let _ = state.collect_sessions(&limits, Some(&keep));
            });
        }
    }

    /// Leases and reads what `key` names off the task; `cached`: the `seq`
    /// of the copy held here.
    pub(super) fn start_load(&mut self, key: LoadKey, cached: Option<i64>) {
        let Some(root) = self.ctx.state.clone() else {
            return;
        };
        self.loading.push(key.clone());
        let (tx, owner) = (self.internal_tx.clone(), self.owner.clone());
        tokio::spawn(async move {
            // What this engine recorded is in the store before it is read.
            root.store.settled().await;
            let job = key.clone();
            let loaded = tokio::task::spawn_blocking(move || load(&root, &job, &owner, cached))
                .await
                .unwrap_or_else(|e| Err(EngineError::failed(format!("loading stopped: {e}"))));
            let _ = tx.send(Internal::Loaded(key, loaded));
        });
    }

    /// A load is done: the session joins (or is refreshed), and the
    /// commands that waited for it run; or they hear why not.
    pub(super) fn loaded(&mut self, key: LoadKey, result: Result<Loaded, EngineError>) {
        self.loading.retain(|k| k != &key);
        let waited: Vec<(LoadKey, Queued)> = std::mem::take(&mut self.waiting);
        let (mine, others): (Vec<_>, Vec<_>) = waited.into_iter().partition(|(k, _)| k == &key);
        self.waiting = others;
        match result {
            Ok(loaded) => {
                let id = loaded.id.clone();
                self.install(loaded);
                // What was queued before goes first.
                self.start_queued(&id);
                // They run in the session found (`Latest` is this one now).
                for (_, q) in mine {
                    self.run_loaded(q, &id);
                }
            }
            Err(e) => {
                for (_, q) in mine {
                    q.answer(Err(e.clone()));
                }
            }
        }
    }

    fn install(&mut self, loaded: Loaded) {
        let held = Held::Yes {
            until: now_ms() + LEASE_MS,
        };
        let live = self
            .sessions
            .entry(loaded.id.clone())
            .or_insert_with(|| Live::new(SessionState::default(), held, loaded.seq));
        if let Some(state) = loaded.state
            && !live.busy()
        {
            live.state = state;
        }
        live.held = held;
        live.seq = loaded.seq;
        for job in &live.state.jobs {
            self.jobs.insert(job.job_id.clone(), loaded.id.clone());
        }
        if live.queue.is_empty() {
            // Queued before this process (a crash, another terminal): kept,
            // in order; they start once nothing runs.
            live.queue = live
                .state
                .queued()
                .into_iter()
                .map(|(job, mode)| super::live::NewJob {
                    job_id: job.job_id.clone(),
                    prompt: job.prompt.clone(),
                    mode,
                    max_tool_calls: None,
                    choice: job.queued_choice.clone().unwrap_or_default(),
                    images: super::images::Attached::named(&job.images),
                })
                .collect();
        }
        self.note_driven(&loaded.id);
    }

    /// Whether any lease is held (the tick runs only then).
    pub(super) fn holding(&self) -> bool {
        self.sessions
            .values()
            .any(|l| matches!(l.held, Held::Yes { .. }))
    }

    /// Renews the leases of busy sessions; lets idle ones go.
    pub(super) fn tend_leases(&mut self) {
        let Some(root) = self.ctx.state.clone() else {
            return;
        };
        let (mut renew, mut release) = (Vec::new(), Vec::new());
        let until = now_ms() + LEASE_MS;
        // One host keeps an idle session a moment (its next command needs
        // no new lease); hosts sharing a store let it go at once.
        let grace = if self.shared() {
            Duration::ZERO
        } else {
            IDLE_GRACE
        };
        for (id, live) in &mut self.sessions {
            let Held::Yes { .. } = live.held else {
                continue;
            };
            if live.busy() {
                live.held = Held::Yes { until };
                renew.push(id.clone());
            } else if live.idle_since.is_none_or(|t| t.elapsed() >= grace) {
                live.held = Held::No;
                release.push(id.clone());
            }
        }
        let (tx, owner) = (self.internal_tx.clone(), self.owner.clone());
        tokio::spawn(async move {
            // A session made since is in the store before its lease is renewed.
            root.store.settled().await;
            let lost = tokio::task::spawn_blocking(move || {
                if !release.is_empty() {
                    let _ = root.store.release_leases(&owner, &release);
                }
                if renew.is_empty() {
                    return Vec::new();
                }
                root.store
                    .renew_leases(&owner, &renew, LEASE_MS)
                    .unwrap_or_default()
            })
            .await
            .unwrap_or_default();
            if !lost.is_empty() {
                let _ = tx.send(Internal::Lost(lost));
            }
        });
    }

    /// Another process took these sessions over (this one stalled past
    /// its lease): they are read again before the next command.
    pub(super) fn lost(&mut self, ids: &[String]) {
        for id in ids {
            tracing::warn!(session = %id, "the session's lease was taken over");
            if let Some(live) = self.sessions.get_mut(id) {
                live.held = Held::No;
            }
        }
    }

    /// Lets every lease go (shutting down).
    pub(super) async fn release_all(&mut self) {
        let Some(root) = self.ctx.state.clone() else {
            return;
        };
        let ids: Vec<String> = self
            .sessions
            .iter_mut()
            .filter(|(_, l)| matches!(l.held, Held::Yes { .. }))
            .map(|(id, l)| {
                l.held = Held::No;
                id.clone()
            })
            .collect();
        if ids.is_empty() {
            return;
        }
        let owner = self.owner.clone();
        let _ = tokio::task::spawn_blocking(move || root.store.release_leases(&owner, &ids)).await;
    }

    /// Deletes a session nobody drives (off the task).
    pub(super) fn delete_session(&mut self, id: String, q: Queued) {
        // A malformed id is the caller's mistake, as for every query.
        if let Err(e) = crate::store::session::check_id("session", &id) {
            q.answer(Err(EngineError::invalid(e.to_string())));
            return;
        }
        let Some(root) = self.ctx.state.clone() else {
            q.answer(Err(EngineError::unavailable("nothing is recorded here")));
            return;
        };
        if self.sessions.get(&id).is_some_and(Live::busy) {
            q.answer(Err(EngineError::Busy {
                message: format!("session {id} has a job or a review under way here"),
            }));
            return;
        }
        if self.sessions.remove(&id).is_some() {
            self.jobs.retain(|_, s| s != &id);
        }
        let owner = self.owner.clone();
        tokio::task::spawn_blocking(move || {
            let deleted = live::take(&root, &id, &owner).and_then(|()| {
                root.delete_session(&id)
                    .map_err(|e| EngineError::not_found(e.to_string()))
            });
            q.answer(deleted.map(|()| Reply::Done));
        });
    }

    /// Marks the session idle or busy as its work starts and ends. On a
    /// store several hosts share, an idle session is let go at once: the
    /// client's next request may come to another host.
    pub(super) fn touch(&mut self, key: &str) {
        let Some(live) = self.sessions.get_mut(key) else {
            return;
        };
        live.idle_since = (!live.busy()).then(Instant::now);
        if live.idle_since.is_some() && matches!(live.held, Held::Yes { .. }) && self.shared() {
            self.tend_leases();
        }
    }

    /// Whether the store is one several hosts share (PostgreSQL).
    fn shared(&self) -> bool {
        self.ctx
            .state
            .as_ref()
            .is_some_and(|root| root.store.kind() == crate::store::StoreKind::Postgres)
    }
}

/// Finds, leases and reads a session (on the blocking pool).
fn load(
    root: &RootStore,
    key: &LoadKey,
    owner: &str,
    cached: Option<i64>,
) -> Result<Loaded, EngineError> {
    let store = |e: crate::store::StoreError| EngineError::unavailable(e.to_string());
    let id = match key {
        LoadKey::Session(id) => id.clone(),
        LoadKey::Latest => root.latest_session().map_err(store)?.ok_or_else(|| {
            EngineError::not_found("there is no session to continue in this agent root")
        })?,
        LoadKey::Job(job) => root
            .session_of_job(job)
            .map_err(|e| EngineError::invalid(e.to_string()))?
            .ok_or_else(|| EngineError::not_found(format!("job {job} has no diff to review")))?,
    };
    live::take(root, &id, owner)?;
    let seq = root.session_seq(&id).map_err(store)?;
    let state = if cached == Some(seq) {
        None
    } else {
        Some(read_session(root, &id).map_err(store)?)
    };
    Ok(Loaded { id, state, seq })
}
