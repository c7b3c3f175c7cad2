//! What every request handler shares: the workspaces (one engine each,
//! all on one store), the server's records (tokens, owners, idempotency),
//! `[server]`, the fixed users and the per-token request counts.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::agent::{Accounts, Engine};
use crate::config::{ServerConfig, ServerUser};
use crate::protocol::{Owner, Role};

use super::error::ApiError;

pub type AppState = Arc<App>;

/// A folder the server serves, with its engine.
pub struct Workspace {
    pub id: String,
    pub name: String,
    pub engine: Engine,
    /// Users who may use it (`"*"`: everyone).
    pub users: Vec<String>,
    pub allowed_commands: Vec<String>,
    pub read_only: bool,
}

impl Workspace {
    /// Notes in the root's audit log what `user` had done here (the
    /// record's `user` is theirs).
    pub fn audit(&self, at: Place<'_>, action: &str, target: &str, user: &User) {
        let audit = crate::protocol::Command::Audit {
            session_id: at.session.map(str::to_string),
            job_id: at.job.map(str::to_string),
            action: action.to_string(),
            target: target.to_string(),
            outcome: "asked over HTTP".into(),
        };
        let _ = self.engine.submit_as(&user.name, audit);
    }

    /// 403 in a read-only workspace, where `what` (writes, commands,
    /// MCP calls) does not happen.
    pub fn writable(&self, what: &str) -> Result<(), ApiError> {
        if self.read_only {
            return Err(ApiError::forbidden(format!(
                "workspace {} is read-only: {what}",
                self.id
            ))
            .hint("an admin sets read_only = false on it in [[server.workspaces]], or use a writable workspace"));
        }
        Ok(())
    }

    pub fn admits(&self, user: &User) -> bool {
        user.role == Role::Admin || self.users.iter().any(|u| u == "*" || *u == user.name)
    }
}

/// Where an audited action happened: its session and job, when it has them.
#[derive(Clone, Copy, Default)]
pub struct Place<'a> {
    pub session: Option<&'a str>,
    pub job: Option<&'a str>,
}

/// Who sent a request (from its token).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub name: String,
    pub role: Role,
}

impl User {
    /// Whether this user may see what `owner` made.
    pub fn may_see(&self, owner: &Owner) -> bool {
        self.role == Role::Admin || owner.user == self.name
    }
}

/// A job running on this host.
pub struct LocalJob {
    pub user: String,
    pub engine: Engine,
    /// It waits for a person's answer.
    pub waiting: bool,
}

pub struct App {
    pub workspaces: Vec<Workspace>,
    pub accounts: Accounts,
    pub config: ServerConfig,
    /// `[[server.users]]`.
    pub users: Vec<ServerUser>,
    /// The sha256 of this run's own token (loopback without users).
    pub run_token: Option<String>,
    pub host: String,
    pub started_at: String,
    /// Requests per token in the current minute.
    pub counts: Mutex<HashMap<String, (Instant, u32)>>,
    /// The jobs running on this host, by id.
    pub jobs: Mutex<HashMap<String, LocalJob>>,
    /// Stopping: nothing more starts here (runs wait in the store's queue).
    pub draining: std::sync::atomic::AtomicBool,
    /// The live hosts sharing the store, as the last heartbeat found them.
    pub hosts: Mutex<Vec<crate::protocol::HostInfo>>,
    /// The store's notices (PostgreSQL's `NOTIFY`: commits, other hosts'
    /// streamed text), routed to each job's streams.
    pub notices: Option<Arc<super::notices::Notices>>,
    /// On SQLite: this process's lock on serving the store (one host).
    pub store_lock: Mutex<Option<std::fs::File>>,
    /// The tokens of open streams, looked at once a second for the host.
    pub revocations: super::revoked::Revocations,
}

impl App {
    /// The workspace `id`, if `user` may use it (else 404: a user does not
    /// learn that others exist).
    pub fn workspace(&self, id: &str, user: &User) -> Result<&Workspace, ApiError> {
        self.workspaces
            .iter()
            .find(|w| w.id == id && w.admits(user))
            .ok_or_else(|| {
                ApiError::not_found(format!("no workspace {id:?}"))
                    .hint("GET /api/v1/agent/workspaces lists yours")
            })
    }

    /// The workspace of something `owner` made (`what`: "job …" or
    /// "session …"), if `user` may see it.
    pub fn owned(
        &self,
        owner: Option<Owner>,
        user: &User,
        what: &str,
    ) -> Result<(&Workspace, Owner), ApiError> {
        let hint = if what.starts_with("job") {
            "GET /api/v1/agent/sessions lists your sessions, GET /api/v1/agent/sessions/{id} their jobs"
        } else {
            "GET /api/v1/agent/sessions lists yours"
        };
        let owner = owner
            .filter(|o| user.may_see(o))
            .ok_or_else(|| ApiError::not_found(format!("no {what}")).hint(hint))?;
        let ws = self.workspace(&owner.workspace_id, user)?;
        Ok((ws, owner))
    }

    /// Jobs running on this host.
    pub fn running_total(&self) -> usize {
        self.local_jobs().len()
    }

    /// Jobs `user` has running on this host.
    pub fn running(&self, user: &str) -> usize {
        self.local_jobs()
            .values()
            .filter(|j| j.user == user)
            .count()
    }

    pub fn started(&self, job_id: &str, user: &str, engine: &Engine) {
        self.local_jobs().insert(
            job_id.to_string(),
            LocalJob {
                user: user.to_string(),
                engine: engine.clone(),
                waiting: false,
            },
        );
    }

    /// Job `job_id` waits for a person (a question or an approval), or
    /// goes on.
    pub fn waiting(&self, job_id: &str, waiting: bool) {
        if let Some(job) = self.local_jobs().get_mut(job_id) {
            job.waiting = waiting;
        }
    }

    pub fn ended(&self, job_id: &str) {
        self.local_jobs().remove(job_id);
    }

    /// The jobs here that wait for a person, with their engines.
    pub fn waiting_jobs(&self) -> Vec<(String, Engine)> {
        self.local_jobs()
            .iter()
            .filter(|(_, j)| j.waiting)
            .map(|(id, j)| (id.clone(), j.engine.clone()))
            .collect()
    }

    /// Whether this host is stopping.
    pub fn is_draining(&self) -> bool {
        self.draining.load(std::sync::atomic::Ordering::Acquire)
    }

    fn local_jobs(&self) -> std::sync::MutexGuard<'_, HashMap<String, LocalJob>> {
        self.jobs.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Counts a request of `token_name` (in the store when hosts share
    /// it, so the limit holds across them); the seconds to wait when over
    /// `rate_limit_per_minute`.
    pub async fn over_limit(&self, token_name: &str) -> Result<Option<u64>, ApiError> {
        if !self.accounts.shared() {
            return Ok(self.over_limit_here(token_name));
        }
        let (count, start) = self.accounts.count_request(token_name).await?;
        if count <= u64::from(self.config.rate_limit_per_minute) {
            return Ok(None);
        }
        let now = u64::try_from(crate::agent::now_ms()).unwrap_or(0);
        Ok(Some(
            (60_000u64.saturating_sub(now.saturating_sub(start)) / 1000).max(1),
        ))
    }

    fn over_limit_here(&self, token_name: &str) -> Option<u64> {
        let limit = self.config.rate_limit_per_minute;
        let now = Instant::now();
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let entry = counts.entry(token_name.to_string()).or_insert((now, 0));
        if now.duration_since(entry.0) >= Duration::from_secs(60) {
            *entry = (now, 0);
        }
        entry.1 += 1;
        if entry.1 > limit {
            let left = Duration::from_secs(60).saturating_sub(now.duration_since(entry.0));
            Some(left.as_secs().max(1))
        } else {
            None
        }
    }
}
