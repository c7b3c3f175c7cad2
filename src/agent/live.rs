//! A session the engine drives: its state (`SessionState`), its running
//! jobs and the questions they wait on, and its lease. A session is driven
//! by one process at a time: the engine takes its lease in the store before
//! a job or a review change, renews it while the session is busy and lets
//! it go when it is idle, so another process (a terminal, a host) can go on
//! with it; state cached here is read again if another one did.

use std::collections::{HashMap, HashSet};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::job::UserReply;
use super::session_state::SessionState;
use crate::llm::Message;
use crate::protocol::EngineError;
use crate::store::{Lease, RootStore, now_ms};

/// How long a lease lasts without renewal.
pub(super) const LEASE_MS: i64 = 10_000;
/// A lease this close to its end is taken again before a command runs.
const LEASE_MARGIN_MS: i64 = 3_000;

/// A job as asked for: started at once, or waiting in its session's queue
/// for the running job to end.
#[derive(Debug, Clone)]
pub(super) struct NewJob {
    pub job_id: String,
    pub prompt: String,
    pub mode: crate::protocol::Mode,
    pub max_tool_calls: Option<u32>,
    /// Its own provider and model (`/model`), built when it starts.
    pub choice: crate::protocol::ModelChoice,
    /// Images that go with the prompt, read and checked.
    pub images: Vec<super::images::Attached>,
}

/// A running job's handles.
pub(super) struct Running {
    pub cancel: CancellationToken,
    pub answers: mpsc::UnboundedSender<UserReply>,
}

/// What a waiting job asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Asked {
    /// `approval.requested` of this call.
    Approval(String),
    /// `clarification.requested`.
    Clarification,
}

/// Where the session's lease stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Held {
    /// Not held: the next change takes it first (and reads the session
    /// again if another process changed it meanwhile).
    No,
    /// Held by this engine until then (ms since the epoch).
    Yes { until: i64 },
    /// Not recorded (no store, or events outside any session): nothing
    /// to hold.
    Unrecorded,
}

pub(super) struct Live {
    pub state: SessionState,
    pub held: Held,
    /// The store's records of the session as this engine knows them (its
    /// last `seq`): another count when the lease is taken again means
    /// another process changed it.
    pub seq: i64,
    pub running: HashMap<String, Running>,
    /// Jobs sent while one ran, in order: the next starts when it ends.
    pub queue: std::collections::VecDeque<NewJob>,
    /// The conversation as each running job found it, to go back to if
    /// the job ends before the model ever answered it.
    pub started_from: HashMap<String, Vec<Message>>,
    /// Running jobs the model has answered at least once.
    pub answered: HashSet<String>,
    /// Questions running jobs wait on, by job.
    pub asked: HashMap<String, Asked>,
    /// Review work (apply, rollback, edited hunk) under way off the task.
    pub reviewing: bool,
    /// Verifies running, by job: a generation (a newer verify of the job
    /// supersedes an older one) and what stops it.
    pub verifying: HashMap<String, (u64, tokio_util::sync::CancellationToken)>,
    /// Since when nothing of it has been under way (its lease goes soon after).
    pub idle_since: Option<std::time::Instant>,
    /// Whose work it is, as its hooks are told (the last job's asker).
    pub who: super::hook_calls::HookWho,
}

impl Live {
    pub fn new(state: SessionState, held: Held, seq: i64) -> Live {
        Live {
            state,
            held,
            seq,
            running: HashMap::new(),
            queue: std::collections::VecDeque::new(),
            started_from: HashMap::new(),
            answered: HashSet::new(),
            asked: HashMap::new(),
            reviewing: false,
            verifying: HashMap::new(),
            idle_since: Some(std::time::Instant::now()),
            who: super::hook_calls::HookWho::default(),
        }
    }

    /// Whether its lease is held, with time to spare for a command.
    pub fn ready(&self) -> bool {
        match self.held {
            Held::Unrecorded => true,
            Held::Yes { until } => until - now_ms() > LEASE_MARGIN_MS,
            Held::No => false,
        }
    }

    /// Whether anything of it is under way (its lease is renewed).
    pub fn busy(&self) -> bool {
        !self.running.is_empty() || self.reviewing || !self.verifying.is_empty()
    }
}

/// Who this engine is, as leases name it: `host:pid:nonce`.
pub(super) fn owner_id() -> String {
    let host = crate::platform::process::hostname();
    format!("{host}:{}:{:08x}", std::process::id(), fastrand::u32(..))
}

/// Whether `owner` is a process of this host that no longer runs, so its
/// lease may be taken over at once.
fn gone(owner: &str) -> bool {
    let mut parts = owner.rsplitn(3, ':');
    let (_, pid, host) = (parts.next(), parts.next(), parts.next());
    let here = Some(crate::platform::process::hostname());
    let Some(pid) = pid.and_then(|p| p.parse::<i32>().ok()) else {
        return false;
    };
    if host.is_none()
        || host != here.as_deref()
        || pid == i32::try_from(std::process::id()).unwrap_or(0)
    {
        return false;
    }
    crate::platform::process::ended(pid).unwrap_or(false)
}

/// The message of a session driven elsewhere.
fn busy(id: &str, owner: &str, until: i64) -> EngineError {
    let mut parts = owner.rsplitn(3, ':');
    let (_, pid, host) = (parts.next(), parts.next(), parts.next());
    let who = match (pid, host) {
        (Some(pid), Some(host)) => format!("another agent-tui (pid {pid} on {host})"),
        _ => "another agent-tui".to_string(),
    };
    let secs = ((until - now_ms()).max(0) + 999) / 1000;
    EngineError::Busy {
        message: format!(
            "session {id} is in use by {who}; it is free once that one is idle or gone \
             (at most {secs} s if it stopped): try again then, or start a new session"
        ),
    }
}

/// Takes session `id`'s lease for `owner` (off the engine task): held, or
/// a clear refusal naming who holds it.
pub(super) fn take(root: &RootStore, id: &str, owner: &str) -> Result<(), EngineError> {
    // Hosts sharing a store let an idle session go as its job ends; a
    // request that comes to another host in that moment waits for it.
    let shared = root.store.kind() == crate::store::StoreKind::Postgres;
    let deadline = std::time::Instant::now() + HANDOFF;
    loop {
        match take_once(root, id, owner) {
            Err(EngineError::Busy { .. }) if shared && std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            taken => return taken,
        }
    }
}

/// How long a host waits for another to let a session go.
const HANDOFF: std::time::Duration = std::time::Duration::from_millis(1500);

fn take_once(root: &RootStore, id: &str, owner: &str) -> Result<(), EngineError> {
    let store = |e: crate::store::StoreError| EngineError::unavailable(e.to_string());
    match root.take_lease(id, owner, LEASE_MS, None).map_err(store)? {
        Lease::Held => Ok(()),
        Lease::Missing => Err(EngineError::not_found(format!(
            "no session {id} in this agent root (agent-tui sessions list shows them)"
        ))),
        Lease::Taken { owner: other, .. } if gone(&other) => {
            match root
                .take_lease(id, owner, LEASE_MS, Some(&other))
                .map_err(store)?
            {
                Lease::Held => Ok(()),
                Lease::Missing => Err(EngineError::not_found(format!("no session {id}"))),
                Lease::Taken { owner, until } => Err(busy(id, &owner, until)),
            }
        }
        Lease::Taken { owner, until } => Err(busy(id, &owner, until)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(unix)]
    fn a_live_process_is_not_gone_and_a_dead_one_is() {
        let me = owner_id();
        assert!(!gone(&me), "this process");
        let host = me.split(':').next().unwrap().to_string();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(gone(&format!("{host}:{pid}:0000abcd")));
        assert!(!gone(&format!("elsewhere:{pid}:0000abcd")), "another host");
        assert!(!gone("not an owner"));
    }

    #[test]
    fn busy_names_the_holder() {
        let e = busy("s_1", "box:42:deadbeef", now_ms() + 5_000);
        let text = e.to_string();
        assert!(
            text.contains("pid 42 on box") && text.contains("s_1"),
            "{text}"
        );
        assert_eq!(e.code(), "busy");
    }
}
