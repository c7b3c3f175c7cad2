//! What `agent-tui serve` keeps in the store, so that every host sharing it
//! knows the same: tokens by their sha256 (never the token), who made each
//! session and job, and the first answer to each `Idempotency-Key`.

use sqlx::Row;

use super::{Store, StoreError};
use crate::protocol::{Idempotent, JobUsage, Owner, Role, TokenInfo, UsageRow};

/// Kept answers older than this are forgotten (a retry comes within
/// minutes, not days).
const IDEMPOTENCY_DAYS: i64 = 1;

fn token_of(row: &sqlx::any::AnyRow) -> Result<TokenInfo, sqlx::Error> {
    let role: String = row.try_get("role")?;
    Ok(TokenInfo {
        name: row.try_get("name")?,
        role: Role::parse(&role).unwrap_or_default(),
        created_at: row.try_get("created_at")?,
        revoked_at: row.try_get("revoked_at")?,
    })
}

pub(super) fn owner_of(row: &sqlx::any::AnyRow) -> Result<Owner, sqlx::Error> {
    Ok(Owner {
        user: row.try_get("user_name")?,
        workspace_id: row.try_get("workspace_id")?,
        session_id: row.try_get("session_id")?,
        created_at: row.try_get("created_at")?,
    })
}

impl Store {
    /// Stores a token's sha256 under `name`; refused when a live token has
    /// that name (a revoked one is replaced).
    pub fn add_token(&self, name: &str, sha256: &str, role: Role) -> Result<(), StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let begin = shared.begin_write();
        let (owned, sha, now) = (name.to_string(), sha256.to_string(), super::session::now());
        let taken = shared.block(async move {
            let name = owned;
            let mut tx = pool.begin_with(begin).await?;
            let live = sqlx::query(
                "SELECT COUNT(*) FROM server_tokens WHERE name = $1 AND revoked_at IS NULL",
            )
            .bind(&name)
            .fetch_one(&mut *tx)
            .await?
            .try_get::<i64, _>(0)?;
            if live > 0 {
                return Ok(true);
            }
            sqlx::query("DELETE FROM server_tokens WHERE name = $1")
                .bind(&name)
                .execute(&mut *tx)
                .await?;
            sqlx::query(
                "INSERT INTO server_tokens (name, token_sha256, role, created_at)
                 VALUES ($1, $2, $3, $4)",
            )
            .bind(&name)
            .bind(sha)
            .bind(role.as_str())
            .bind(now)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
            Ok(false)
        })?;
        if taken {
            return Err(StoreError::Invalid(format!(
                "a token named {name} exists already: revoke it first (agent-tui serve token revoke {name})"
            )));
        }
        Ok(())
    }

    /// Every token, by name.
    pub fn tokens(&self) -> Result<Vec<TokenInfo>, StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        shared.block(async move {
            sqlx::query(
                "SELECT name, role, created_at, revoked_at FROM server_tokens ORDER BY name",
            )
            .fetch_all(&pool)
            .await?
            .iter()
            .map(token_of)
            .collect()
        })
    }

    /// Revokes the token `name`; false when there is no live one.
    pub fn revoke_token(&self, name: &str) -> Result<bool, StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let (name, now) = (name.to_string(), super::session::now());
        shared.block(async move {
            let done = sqlx::query(
                "UPDATE server_tokens SET revoked_at = $1 WHERE name = $2 AND revoked_at IS NULL",
            )
            .bind(now)
            .bind(name)
            .execute(&pool)
            .await?;
            Ok(done.rows_affected() > 0)
        })
    }

    /// The live token whose sha256 is `sha256`.
    pub fn token_by_hash(&self, sha256: &str) -> Result<Option<TokenInfo>, StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let sha = sha256.to_string();
        shared.block(async move {
            sqlx::query(
                "SELECT name, role, created_at, revoked_at FROM server_tokens
                 WHERE token_sha256 = $1 AND revoked_at IS NULL",
            )
            .bind(sha)
            .fetch_optional(&pool)
            .await?
            .as_ref()
            .map(token_of)
            .transpose()
        })
    }

    /// Notes who made session `owner.session_id` (kept if known already).
    pub fn own_session(&self, owner: &Owner) -> Result<(), StoreError> {
        self.own("server_sessions", owner)
    }

    /// Notes who started `job_id`, in which session, and either the host
    /// running it or (`host` `None`) that it waits in the queue with its
    /// `request` for a host with a free slot.
    pub fn own_job(
        &self,
        job_id: &str,
        owner: &Owner,
        host: Option<&str>,
        request: &str,
    ) -> Result<(), StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let (o, job, request) = (owner.clone(), job_id.to_string(), request.to_string());
        let host = host.map(str::to_string);
        let status = if host.is_none() { Some("queued") } else { None };
        shared.block(async move {
            sqlx::query(
                "INSERT INTO server_jobs
                   (job_id, session_id, user_name, workspace_id, created_at, host, request, status)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (job_id) DO NOTHING",
            )
            .bind(job)
            .bind(o.session_id)
            .bind(o.user)
            .bind(o.workspace_id)
            .bind(o.created_at)
            .bind(host)
            .bind(request)
            .bind(status)
            .execute(&pool)
            .await?;
            Ok(())
        })
    }

    fn own(&self, table: &str, owner: &Owner) -> Result<(), StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let sql = format!(
            "INSERT INTO {table} (session_id, user_name, workspace_id, created_at)
             VALUES ($1, $2, $3, $4) ON CONFLICT (session_id) DO NOTHING"
        );
        let o = owner.clone();
        shared.block(async move {
            sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(o.session_id)
                .bind(o.user)
                .bind(o.workspace_id)
                .bind(o.created_at)
                .execute(&pool)
                .await?;
            Ok(())
        })
    }

    /// Who made `session_id` through the server.
    pub fn session_owner(&self, session_id: &str) -> Result<Option<Owner>, StoreError> {
        self.owner_in("server_sessions", "session_id", session_id)
    }

    /// Who started `job_id` through the server.
    pub fn job_owner(&self, job_id: &str) -> Result<Option<Owner>, StoreError> {
        self.owner_in("server_jobs", "job_id", job_id)
    }

    fn owner_in(&self, table: &str, key: &str, id: &str) -> Result<Option<Owner>, StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let sql = format!(
            "SELECT session_id, user_name, workspace_id, created_at FROM {table} WHERE {key} = $1"
        );
        let id = id.to_string();
        shared.block(async move {
            sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(id)
                .fetch_optional(&pool)
                .await?
                .as_ref()
                .map(owner_of)
                .transpose()
        })
    }

    /// The sessions made through the server in `workspace_id` (by `user`
    /// only, when given), newest first.
    pub fn owned_sessions(
        &self,
        workspace_id: &str,
        user: Option<&str>,
    ) -> Result<Vec<Owner>, StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let (ws, user) = (workspace_id.to_string(), user.map(str::to_string));
        shared.block(async move {
            sqlx::query(
                "SELECT session_id, user_name, workspace_id, created_at FROM server_sessions
                 WHERE workspace_id = $1 AND ($2 IS NULL OR user_name = $2)
                 ORDER BY created_at DESC, session_id DESC",
            )
            .bind(ws)
            .bind(user)
            .fetch_all(&pool)
            .await?
            .iter()
            .map(owner_of)
            .collect()
        })
    }

    /// Keeps what job `job_id` used once it has ended.
    pub fn finish_job(&self, job_id: &str, usage: &JobUsage) -> Result<(), StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let (job, u) = (job_id.to_string(), usage.clone());
        let micro = (u.cost_usd * 1e6).round() as i64;
        shared.block(async move {
            sqlx::query(
                "UPDATE server_jobs SET status = $1, provider = $2, input_tokens = $3,
                 output_tokens = $4, cost_microusd = $5 WHERE job_id = $6",
            )
            .bind(u.status)
            .bind(u.provider)
            .bind(i64::try_from(u.input_tokens).unwrap_or(i64::MAX))
            .bind(i64::try_from(u.output_tokens).unwrap_or(i64::MAX))
            .bind(micro)
            .bind(job)
            .execute(&pool)
            .await?;
            Ok(())
        })
    }

    /// Tokens and cost per user and workspace of the jobs started since
    /// `since` (RFC 3339), of `user` and in `workspace_id` when given.
    pub fn usage(
        &self,
        since: &str,
        user: Option<&str>,
        workspace_id: Option<&str>,
    ) -> Result<Vec<UsageRow>, StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let (since, user, ws) = (
            since.to_string(),
            user.map(str::to_string),
            workspace_id.map(str::to_string),
        );
        shared.block(async move {
            let rows = sqlx::query(
                "SELECT user_name, workspace_id, CAST(COUNT(*) AS BIGINT) AS jobs,
                        CAST(SUM(input_tokens) AS BIGINT) AS input,
                        CAST(SUM(output_tokens) AS BIGINT) AS output,
                        CAST(SUM(cost_microusd) AS BIGINT) AS micro
                 FROM server_jobs
                 WHERE created_at >= $1 AND ($2 IS NULL OR user_name = $2)
                   AND ($3 IS NULL OR workspace_id = $3)
                 GROUP BY user_name, workspace_id ORDER BY user_name, workspace_id",
            )
            .bind(since)
            .bind(user)
            .bind(ws)
            .fetch_all(&pool)
            .await?;
            rows.iter()
                .map(|r| {
                    let n = |name: &str| -> Result<u64, sqlx::Error> {
                        Ok(u64::try_from(r.try_get::<i64, _>(name)?).unwrap_or(0))
                    };
                    Ok(UsageRow {
                        user: r.try_get("user_name")?,
                        workspace_id: r.try_get("workspace_id")?,
                        jobs: n("jobs")?,
                        input_tokens: n("input")?,
                        output_tokens: n("output")?,
                        cost_usd: n("micro")? as f64 / 1e6,
                    })
                })
                .collect()
        })
    }

    /// Claims `key` of `user` for a request (`request`: what identifies
    /// it, its method, path and body's hash).
    pub fn begin_idempotent(
        &self,
        user: &str,
        key: &str,
        request: &str,
    ) -> Result<Idempotent, StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let begin = shared.begin_write();
        let (user, key, request) = (user.to_string(), key.to_string(), request.to_string());
        let now = super::session::now();
        let horizon = humantime::format_rfc3339_millis(
            std::time::SystemTime::now()
                - std::time::Duration::from_secs(IDEMPOTENCY_DAYS as u64 * 86_400),
        )
        .to_string();
        shared.block(async move {
            let mut tx = pool.begin_with(begin).await?;
            sqlx::query("DELETE FROM server_idempotency WHERE created_at < $1")
                .bind(horizon)
                .execute(&mut *tx)
                .await?;
            // Two hosts at once: one insert wins, the other sees its row.
            let inserted = sqlx::query(
                "INSERT INTO server_idempotency (user_name, idem_key, request, created_at)
                 VALUES ($1, $2, $3, $4) ON CONFLICT (user_name, idem_key) DO NOTHING",
            )
            .bind(&user)
            .bind(&key)
            .bind(&request)
            .bind(now)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            let found = if inserted == 1 {
                Idempotent::New
            } else {
                let row = sqlx::query(
                    "SELECT request, status, response FROM server_idempotency
                     WHERE user_name = $1 AND idem_key = $2",
                )
                .bind(&user)
                .bind(&key)
                .fetch_one(&mut *tx)
                .await?;
                let kept: String = row.try_get("request")?;
                let status: Option<i64> = row.try_get("status")?;
                let body: Option<String> = row.try_get("response")?;
                match (kept == request, status, body) {
                    (false, ..) => Idempotent::Mismatch,
                    (true, Some(status), Some(body)) => Idempotent::Answered {
                        status: u16::try_from(status).unwrap_or(500),
                        body,
                    },
                    (true, ..) => Idempotent::InFlight,
                }
            };
            tx.commit().await?;
            Ok(found)
        })
    }

    /// Keeps the answer to `key` (or forgets the key when `answer` is
    /// `None`: the request did nothing, so a retry may run it).
    pub fn end_idempotent(
        &self,
        user: &str,
        key: &str,
        answer: Option<(u16, String)>,
    ) -> Result<(), StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let (user, key) = (user.to_string(), key.to_string());
        shared.block(async move {
            match answer {
                Some((status, body)) => {
                    sqlx::query(
                        "UPDATE server_idempotency SET status = $1, response = $2
                         WHERE user_name = $3 AND idem_key = $4",
                    )
                    .bind(i64::from(status))
                    .bind(body)
                    .bind(user)
                    .bind(key)
                    .execute(&pool)
                    .await?
                }
                None => {
                    sqlx::query(
                        "DELETE FROM server_idempotency WHERE user_name = $1 AND idem_key = $2",
                    )
                    .bind(user)
                    .bind(key)
                    .execute(&pool)
                    .await?
                }
            };
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store =
            Store::open_target(&super::super::Target::Sqlite(dir.path().join("s.db"))).unwrap();
        (dir, store)
    }

    #[test]
    fn tokens_are_found_by_hash_until_revoked() {
        let (_d, store) = store();
        store.add_token("alice", "aa11", Role::Admin).unwrap();
        assert!(store.add_token("alice", "bb22", Role::User).is_err());
        assert_eq!(
            store.token_by_hash("aa11").unwrap().map(|t| t.role),
            Some(Role::Admin)
        );
        assert!(store.token_by_hash("bb22").unwrap().is_none());
        assert!(store.revoke_token("alice").unwrap());
        assert!(!store.revoke_token("alice").unwrap());
        assert!(store.token_by_hash("aa11").unwrap().is_none());
        assert!(store.tokens().unwrap()[0].revoked_at.is_some());
        // A revoked name may be given again.
        store.add_token("alice", "cc33", Role::User).unwrap();
        assert_eq!(store.tokens().unwrap().len(), 1);
    }

    #[test]
    fn an_idempotency_key_answers_once_and_then_replays() {
        let (_d, store) = store();
        assert_eq!(
            store.begin_idempotent("u", "k", "POST /run h1").unwrap(),
            Idempotent::New
        );
        assert_eq!(
            store.begin_idempotent("u", "k", "POST /run h1").unwrap(),
            Idempotent::InFlight
        );
        assert_eq!(
            store.begin_idempotent("u", "k", "POST /run h2").unwrap(),
            Idempotent::Mismatch
        );
        // Keys are the user's own.
        assert_eq!(
            store.begin_idempotent("v", "k", "POST /run h2").unwrap(),
            Idempotent::New
        );
        store
            .end_idempotent("u", "k", Some((202, "{}".into())))
            .unwrap();
        assert_eq!(
            store.begin_idempotent("u", "k", "POST /run h1").unwrap(),
            Idempotent::Answered {
                status: 202,
                body: "{}".into()
            }
        );
        store.end_idempotent("v", "k", None).unwrap();
        assert_eq!(
            store.begin_idempotent("v", "k", "POST /run h3").unwrap(),
            Idempotent::New
        );
    }
}
