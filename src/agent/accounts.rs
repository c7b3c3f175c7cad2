//! What `agent-tui serve` keeps in the store beside the roots' sessions:
//! its tokens (made here from the system's random source; only their
//! sha256 is stored), who made each session and job, and the first answer
//! to each `Idempotency-Key`. Every call runs on the blocking pool.

use std::io::Read;

use sha2::{Digest, Sha256};

use super::builder::{BuildError, EngineBuilder};
use super::door::Engine;
use crate::protocol::{
    Command, EngineError, HostInfo, Idempotent, JobUsage, Owner, Role, TokenInfo, UsageRow,
};
pub use crate::store::Notice;
use crate::store::{Store, StoreError};

/// A command left for another host, with the server's user who asked
/// (their name goes into the audit records it causes there).
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Relayed {
    user: Option<String>,
    command: Command,
}

/// The server's records in the store; clones share it.
#[derive(Clone)]
pub struct Accounts {
    store: Store,
}

fn failed(e: StoreError) -> EngineError {
    match e {
        StoreError::Invalid(m) => EngineError::invalid(m),
        StoreError::NotFound(m) => EngineError::not_found(m),
        e => EngineError::unavailable(e.to_string()),
    }
}

/// The sha256 of `token`, hex: what the store keeps and looks up.
pub fn token_sha256(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A new token: `att_` and 43 characters of 256 random bits (the system's
/// random source, never a seeded generator).
pub fn new_token() -> Result<String, EngineError> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| EngineError::failed(format!("cannot read /dev/urandom: {e}")))?;
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::from("att_");
    let mut acc: u32 = 0;
    let mut bits = 0;
    for b in bytes {
        acc = (acc << 8) | u32::from(b);
        bits += 8;
        while bits >= 6 {
            bits -= 6;
            out.push(char::from(ALPHABET[((acc >> bits) & 63) as usize]));
        }
    }
    if bits > 0 {
        out.push(char::from(ALPHABET[((acc << (6 - bits)) & 63) as usize]));
    }
    Ok(out)
}

impl Accounts {
    async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, EngineError> {
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || f(&store).map_err(failed))
            .await
            .unwrap_or_else(|e| Err(EngineError::failed(format!("the store call stopped: {e}"))))
    }

    /// Makes a token named `name`: the token itself (shown once, never
    /// stored).
    pub async fn add_token(&self, name: &str, role: Role) -> Result<String, EngineError> {
        let valid = !name.is_empty()
            && name.len() <= 64
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '@'));
        if !valid {
            return Err(EngineError::invalid(format!(
                "a token name is 1-64 letters, digits, '-', '_', '.' or '@' (not {name:?})"
            )));
        }
        let token = new_token()?;
        let (name, sha) = (name.to_string(), token_sha256(&token));
        self.run(move |s| s.add_token(&name, &sha, role)).await?;
        Ok(token)
    }

    /// The cursor of the last stored event of each of `jobs` (those with
    /// any): how a host finds, for all its open streams in one query, the
    /// ones that missed a notice.
    pub async fn last_cursors(&self, jobs: Vec<String>) -> Result<Vec<(String, u64)>, EngineError> {
        self.run(move |s| s.last_cursors(&jobs)).await
    }

    pub async fn tokens(&self) -> Result<Vec<TokenInfo>, EngineError> {
        self.run(|s| s.tokens()).await
    }

    /// False when there is no live token of that name.
    pub async fn revoke_token(&self, name: &str) -> Result<bool, EngineError> {
        let name = name.to_string();
        self.run(move |s| s.revoke_token(&name)).await
    }

    /// The live token `token` is, if any.
    pub async fn token(&self, token: &str) -> Result<Option<TokenInfo>, EngineError> {
        let sha = token_sha256(token);
        self.run(move |s| s.token_by_hash(&sha)).await
    }

    pub async fn own_session(&self, owner: Owner) -> Result<(), EngineError> {
        self.run(move |s| s.own_session(&owner)).await
    }

    /// Notes who started `job_id`: running on `host`, or (`None`) queued
    /// with its `StartJob` for any host with a free slot.
    pub async fn own_job(
        &self,
        job_id: &str,
        owner: Owner,
        host: Option<&str>,
        start: &Command,
    ) -> Result<(), EngineError> {
        let request = serde_json::to_string(start)
            .map_err(|e| EngineError::failed(format!("cannot keep the job's request: {e}")))?;
        let (job, host) = (job_id.to_string(), host.map(str::to_string));
        self.run(move |s| s.own_job(&job, &owner, host.as_deref(), &request))
            .await
    }

    /// Takes up to `limit` queued jobs for `host`: (job, owner, its StartJob).
    pub async fn claim_queued(
        &self,
        host: &str,
        limit: usize,
    ) -> Result<Vec<(String, Owner, Command)>, EngineError> {
        let host = host.to_string();
        let rows = self.run(move |s| s.claim_queued(&host, limit)).await?;
        Ok(rows
            .into_iter()
            .filter_map(|(job, owner, text)| Some((job, owner, serde_json::from_str(&text).ok()?)))
            .collect())
    }

    /// Puts a taken job back in the queue.
    pub async fn requeue(&self, job_id: &str) -> Result<(), EngineError> {
        let job = job_id.to_string();
        self.run(move |s| s.requeue(&job)).await
    }

    /// Jobs not ended whose host has not been heard of since `since_ms`.
    /// And host `me`'s own open jobs made before it started at
    /// `started_at`: an earlier run of it that did not stop cleanly left them.
    pub async fn lost_jobs(
        &self,
        since_ms: u64,
        me: &str,
        started_at: &str,
    ) -> Result<Vec<(String, Owner)>, EngineError> {
        let (me, started) = (me.to_string(), started_at.to_string());
        self.run(move |s| s.lost_jobs(since_ms, (&me, &started)))
            .await
    }

    /// Takes (or gives back) the ending of a lost job; true when taken.
    pub async fn claim_lost(&self, job_id: &str, claimed: bool) -> Result<bool, EngineError> {
        let job = job_id.to_string();
        self.run(move |s| s.claim_lost(&job, claimed)).await
    }

    pub async fn session_owner(&self, session_id: &str) -> Result<Option<Owner>, EngineError> {
        let id = session_id.to_string();
        self.run(move |s| s.session_owner(&id)).await
    }

    pub async fn job_owner(&self, job_id: &str) -> Result<Option<Owner>, EngineError> {
        let id = job_id.to_string();
        self.run(move |s| s.job_owner(&id)).await
    }

    /// Sessions made through the server in a workspace (one user's only,
    /// when given), newest first.
    pub async fn sessions(
        &self,
        workspace_id: &str,
        user: Option<&str>,
    ) -> Result<Vec<Owner>, EngineError> {
        let (ws, user) = (workspace_id.to_string(), user.map(str::to_string));
        self.run(move |s| s.owned_sessions(&ws, user.as_deref()))
            .await
    }

    /// Whether several hosts may share this store (PostgreSQL): then
    /// request counts are kept in it too.
    pub fn shared(&self) -> bool {
        self.store.kind() == crate::store::StoreKind::Postgres
    }

    /// PostgreSQL: sends to `tx` the store's notices (`LISTEN`): the id of
    /// each job whose events were just committed, and the streamed text of
    /// jobs on any host; false on SQLite.
    pub fn listen_jobs(&self, tx: tokio::sync::broadcast::Sender<Notice>) -> bool {
        self.store.listen_jobs(tx)
    }

    /// `host` is alive; the hosts alive within the last `live_ms`.
    /// The first beat (`first`) is refused when a live host has the name.
    pub async fn heartbeat(
        &self,
        host: &str,
        started_at: &str,
        live_ms: u64,
        first: bool,
    ) -> Result<Vec<HostInfo>, EngineError> {
        let (host, started) = (host.to_string(), started_at.to_string());
        let now = u64::try_from(crate::store::now_ms()).unwrap_or(0);
        self.run(move |s| s.heartbeat(&host, &started, now, live_ms, first))
            .await
    }

    /// `host` stops: it leaves the list at once.
    pub async fn host_gone(&self, host: &str) -> Result<(), EngineError> {
        let host = host.to_string();
        self.run(move |s| s.host_gone(&host)).await
    }

    /// One more request of `token_name` this minute, counted in the store
    /// (every host sees it): the count and the minute's start (ms).
    pub async fn count_request(&self, token_name: &str) -> Result<(u64, u64), EngineError> {
        let name = token_name.to_string();
        let now = u64::try_from(crate::store::now_ms()).unwrap_or(0);
        self.run(move |s| s.count_request(&name, now)).await
    }

    /// The host running `job_id`.
    pub async fn job_host(&self, job_id: &str) -> Result<Option<String>, EngineError> {
        let job = job_id.to_string();
        self.run(move |s| s.job_host(&job)).await
    }

    /// The host running `job_id`, and whether it beat within the last
    /// `live_ms`, as the store has it now.
    pub async fn job_host_live(
        &self,
        job_id: &str,
        live_ms: u64,
    ) -> Result<Option<(String, bool)>, EngineError> {
        let job = job_id.to_string();
        let now = u64::try_from(crate::store::now_ms()).unwrap_or(0);
        let since = now.saturating_sub(live_ms);
        self.run(move |s| s.job_host_live(&job, since)).await
    }

    /// Leaves `command`, asked for by the server's user `user`, for
    /// `host` (running `job_id`); its relay id.
    pub async fn relay_put(
        &self,
        host: &str,
        user: &str,
        job_id: &str,
        command: &Command,
    ) -> Result<String, EngineError> {
        let id = format!("r_{}", &new_token()?[4..]);
        let relayed = Relayed {
            user: Some(user.to_string()),
            command: command.clone(),
        };
        let text = serde_json::to_string(&relayed)
            .map_err(|e| EngineError::failed(format!("cannot relay the command: {e}")))?;
        let (rid, host, job) = (id.clone(), host.to_string(), job_id.to_string());
        let now = u64::try_from(crate::store::now_ms()).unwrap_or(0);
        self.run(move |s| s.relay_put(&rid, &host, &job, &text, now))
            .await?;
        Ok(id)
    }

    /// The commands left for `host`: (relay id, job, the user who asked,
    /// command). A host of an earlier release left the bare command.
    pub async fn relay_take(
        &self,
        host: &str,
    ) -> Result<Vec<(String, String, Option<String>, Command)>, EngineError> {
        let host = host.to_string();
        let rows = self.run(move |s| s.relay_take(&host)).await?;
        Ok(rows
            .into_iter()
            .filter_map(|(id, job, text)| {
                let relayed = serde_json::from_str::<Relayed>(&text).or_else(|_| {
                    serde_json::from_str::<Command>(&text).map(|command| Relayed {
                        user: None,
                        command,
                    })
                });
                let Relayed { user, command } = relayed.ok()?;
                Some((id, job, user, command))
            })
            .collect())
    }

    pub async fn relay_answer(
        &self,
        relay_id: &str,
        status: u16,
        answer: String,
    ) -> Result<(), EngineError> {
        let id = relay_id.to_string();
        self.run(move |s| s.relay_answer(&id, status, &answer))
            .await
    }

    pub async fn relay_result(&self, relay_id: &str) -> Result<Option<(u16, String)>, EngineError> {
        let id = relay_id.to_string();
        self.run(move |s| s.relay_result(&id)).await
    }

    /// Keeps what a job used once it ended.
    pub async fn finish_job(&self, job_id: &str, usage: JobUsage) -> Result<(), EngineError> {
        let job = job_id.to_string();
        self.run(move |s| s.finish_job(&job, &usage)).await
    }

    /// Tokens and cost per user and workspace since `since` (RFC 3339).
    pub async fn usage(
        &self,
        since: &str,
        user: Option<&str>,
        workspace_id: Option<&str>,
    ) -> Result<Vec<UsageRow>, EngineError> {
        let (since, user, ws) = (
            since.to_string(),
            user.map(str::to_string),
            workspace_id.map(str::to_string),
        );
        self.run(move |s| s.usage(&since, user.as_deref(), ws.as_deref()))
            .await
    }

    /// Claims an `Idempotency-Key` of `user` for `request` (method, path
    /// and the body's hash).
    pub async fn begin_idempotent(
        &self,
        user: &str,
        key: &str,
        request: &str,
    ) -> Result<Idempotent, EngineError> {
        let (user, key, request) = (user.to_string(), key.to_string(), request.to_string());
        self.run(move |s| s.begin_idempotent(&user, &key, &request))
            .await
    }

    /// Keeps the answer to a key (`None`: forgets it, nothing was done).
    pub async fn end_idempotent(
        &self,
        user: &str,
        key: &str,
        answer: Option<(u16, String)>,
    ) -> Result<(), EngineError> {
        let (user, key) = (user.to_string(), key.to_string());
        self.run(move |s| s.end_idempotent(&user, &key, answer))
            .await
    }
}

impl EngineBuilder {
    /// The server's records in the state home's store (`serve token`),
    /// without an engine. Blocking.
    pub fn accounts(self) -> Result<Accounts, BuildError> {
        let loaded = self.load_config()?;
        let store = super::builder::open_home(&loaded.config)?;
        Ok(Accounts { store })
    }
}

impl Engine {
    /// The server's records in this engine's store; `None` when it
    /// records nothing.
    pub fn accounts(&self) -> Option<Accounts> {
        let state = self.inner.ctx.state.as_ref()?;
        Some(Accounts {
            store: state.store.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_random_and_hashed() {
        let a = new_token().unwrap();
        let b = new_token().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.len(), 4 + 43, "{a}");
        assert!(a.starts_with("att_"));
        assert_eq!(token_sha256("abc").len(), 64);
        assert_eq!(
            token_sha256("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
