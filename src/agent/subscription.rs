//! Following the engine's events. Any number of subscribers each read a
//! bounded window of the live stream; one that falls behind it (or starts
//! from a cursor) reads what it missed from the store, then goes on live,
//! each event once: delivery is deduplicated by the job's cursor. Streamed
//! text (`llm.delta`, `llm.reasoning`) is never stored, so a subscriber that
//! fell behind misses some of it; the job's completed answer stands in.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use tokio::sync::broadcast::error::RecvError;

use super::door::Engine;
use super::engine::Published;
use crate::protocol::Event;

/// Which events a subscription follows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Filter {
    /// Every event of the engine, beginning with what happened as it
    /// started (recoveries).
    All,
    /// One job's, after cursor `after` (0: from its first), stored ones
    /// first.
    Job { job_id: String, after: u64 },
}

/// A stream of events (`next`).
pub struct Subscription {
    engine: Engine,
    rx: tokio::sync::broadcast::Receiver<Arc<Published>>,
    filter: Filter,
    backlog: VecDeque<(Option<String>, Arc<Event>)>,
    /// The last cursor delivered of each (session, job).
    seen: HashMap<(Option<String>, String), u64>,
    /// Sessions whose events were delivered (where a catch-up looks).
    sessions: HashSet<String>,
    /// The store must be read before the live stream goes on.
    behind: bool,
    /// How many times it fell behind the live stream.
    lagged: u64,
    /// Stored events are delivered only once they are in the store.
    committed: bool,
    /// The store's barrier the backlog waits on (kept here, so a caller
    /// that drops `next` midway does not release the backlog early).
    held: Option<tokio::sync::oneshot::Receiver<()>>,
    /// The text the job streamed before this subscription, delivered once
    /// the stored events before it are.
    so_far: Option<super::so_far::InSession>,
}

impl Subscription {
    pub(super) fn new(engine: Engine, filter: Filter) -> Subscription {
        // Subscribed before anything is read, so nothing falls between;
        // one that follows a job from its start gets the text it streamed
        // so far (after the stored events; a client resuming from a
        // cursor holds that text already).
        let from_start = match &filter {
            Filter::Job { job_id, after: 0 } => Some(job_id.as_str()),
            _ => None,
        };
        let (rx, so_far) = engine.inner.events.subscribe(from_start);
        let mut backlog = VecDeque::new();
        let mut seen = HashMap::new();
        let behind = match &filter {
            Filter::All => {
                backlog.extend(engine.inner.start.iter().map(|e| (None, e.clone())));
                false
            }
            Filter::Job { .. } => engine.records(),
        };
        if let Filter::Job { job_id, after } = &filter {
            // Cursors are the job's in whichever session it is found.
            seen.insert((None, job_id.clone()), *after);
        }
        Subscription {
            engine,
            rx,
            filter,
            backlog,
            seen,
            sessions: HashSet::new(),
            behind,
            lagged: 0,
            committed: false,
            held: None,
            so_far,
        }
    }

    /// Delivers every stored event only once the store holds it (streamed
    /// text at once): what a client reads it can read again from the store,
    /// on any host sharing it.
    pub fn committed(mut self) -> Subscription {
        self.committed = true;
        self
    }

    /// The next event; `None` once the engine has stopped.
    pub async fn next(&mut self) -> Option<Arc<Event>> {
        loop {
            if self.behind {
                self.behind = false;
                self.catch_up().await;
            }
            if let Some(held) = &mut self.held {
                let _ = held.await;
                self.held = None;
            }
            if let Some((session, event)) = self.backlog.pop_front() {
                if self.fresh(session.as_deref(), &event) {
                    return Some(event);
                }
                continue;
            }
            // The text so far, unless what was delivered already is past
            // it (its cursor is an older delta's): cursors only rise.
            if let Some((session, event)) = self.so_far.take() {
                if self.fresh(session.as_deref(), &event) {
                    return Some(event);
                }
                continue;
            }
            match self.rx.recv().await {
                Ok(p) => {
                    if !self.wants(&p.event) {
                        continue;
                    }
                    if self.committed && !p.event.body.live_only() {
                        self.hold(p);
                    } else if self.fresh(p.session_id.as_deref(), &p.event) {
                        return Some(p.event.clone());
                    }
                }
                Err(RecvError::Lagged(_)) => {
                    self.lagged += 1;
                    self.behind = true;
                }
                Err(RecvError::Closed) => return None,
            }
        }
    }

    /// Holds stored event `first`, with whatever else is ready behind it,
    /// until the store has them all (one wait for the lot); they are
    /// delivered from the backlog, in order.
    fn hold(&mut self, first: Arc<Published>) {
        self.backlog
            .push_back((first.session_id.clone(), first.event.clone()));
        loop {
            match self.rx.try_recv() {
                Ok(p) => {
                    if self.wants(&p.event) {
                        // Told fresh or not as it leaves the backlog.
                        self.backlog
                            .push_back((p.session_id.clone(), p.event.clone()));
                    }
                }
                Err(tokio::sync::broadcast::error::TryRecvError::Lagged(_)) => {
                    self.lagged += 1;
                    self.behind = true;
                    break;
                }
                Err(_) => break,
            }
        }
        if let Some(root) = &self.engine.inner.ctx.state {
            self.held = Some(root.store.barrier());
        }
    }

    /// Whether another event may be ready at once (for a reader that
    /// batches its output until none is).
    pub fn pending(&self) -> bool {
        self.behind || !self.backlog.is_empty() || !self.rx.is_empty()
    }

    /// How many times it fell behind the live stream and caught up.
    pub fn lagged(&self) -> u64 {
        self.lagged
    }

    fn wants(&self, event: &Event) -> bool {
        match &self.filter {
            Filter::All => true,
            Filter::Job { job_id, .. } => &event.job_id == job_id,
        }
    }

    /// Whether `event` is new to this subscriber (and notes it).
    fn fresh(&mut self, session: Option<&str>, event: &Event) -> bool {
        if let Some(s) = session {
            self.sessions.insert(s.to_string());
        }
        let key = match &self.filter {
            // A job subscription follows one job wherever it is recorded.
            Filter::Job { .. } => (None, event.job_id.clone()),
            Filter::All => (session.map(str::to_string), event.job_id.clone()),
        };
        let last = self.seen.entry(key).or_insert(0);
        if event.cursor > *last {
            *last = event.cursor;
            true
        } else {
            false
        }
    }

    /// Reads from the store what the live stream no longer holds.
    async fn catch_up(&mut self) {
        let Some(root) = self.engine.inner.ctx.state.clone() else {
            return;
        };
        // Everything published so far is in the store first.
        root.store.settled().await;
        let filter = self.filter.clone();
        // The sessions it saw, and every one the engine drives (it may
        // have missed all of a session's events).
        let mut sessions = self.sessions.clone();
        sessions.extend(self.engine.inner.driven.borrow().iter().cloned());
        let after = match &filter {
            Filter::Job { job_id, .. } => self.seen.get(&(None, job_id.clone())).copied(),
            Filter::All => None,
        };
        let read = tokio::task::spawn_blocking(move || -> Vec<(Option<String>, String)> {
            match filter {
                Filter::Job { job_id, .. } => match root.job_events(&job_id, after.unwrap_or(0)) {
                    Ok(Some(found)) => found.events.into_iter().map(|e| (None, e)).collect(),
                    Ok(None) | Err(_) => Vec::new(),
                },
                Filter::All => sessions
                    .into_iter()
                    .flat_map(|s| {
                        let events = root.session_events(&s).unwrap_or_default();
                        events.into_iter().map(move |e| (Some(s.clone()), e))
                    })
                    .collect(),
            }
        })
        .await
        .unwrap_or_default();
        for (session, body) in read {
            if let Ok(event) = serde_json::from_str::<Event>(&body) {
                self.backlog.push_back((session, Arc::new(event)));
            }
        }
    }
}
