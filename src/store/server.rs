//! What `agent-tui serve` keeps in the store, so that every host sharing it
//! knows the same: tokens by their sha256 (never the token), who made each
//! session and job, and the first answer to each `Idempotency-Key`.

use sqlx::Row;

use super::{Store, StoreError};
use crate::protocol::{HostInfo, Idempotent, JobUsage, Owner, Role, TokenInfo, UsageRow};

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

fn owner_of(row: &sqlx::any::AnyRow) -> Result<Owner, sqlx::Error> {
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

    /// Takes up to `limit` queued jobs, oldest first, for `host`; two hosts
    /// never take one job (PostgreSQL: `FOR UPDATE SKIP LOCKED`; SQLite has
    /// one writer). (job, owner, request) each.
    pub fn claim_queued(
        &self,
        host: &str,
        limit: usize,
    ) -> Result<Vec<(String, Owner, String)>, StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let lock = match shared.kind {
            super::StoreKind::Postgres => "FOR UPDATE SKIP LOCKED",
            super::StoreKind::Sqlite => "",
        };
        let sql = format!(
            "UPDATE server_jobs SET host = $1, status = NULL WHERE job_id IN (
               SELECT job_id FROM server_jobs WHERE status = 'queued'
               ORDER BY created_at, job_id LIMIT $2 {lock})
             RETURNING job_id, session_id, user_name, workspace_id, created_at, request"
        );
        let (host, limit) = (host.to_string(), i64::try_from(limit).unwrap_or(0));
        shared.block(async move {
            sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(host)
                .bind(limit)
                .fetch_all(&pool)
                .await?
                .iter()
                .map(|r| {
                    let request: Option<String> = r.try_get("request")?;
                    Ok((
                        r.try_get("job_id")?,
                        owner_of(r)?,
                        request.unwrap_or_default(),
                    ))
                })
                .collect()
        })
    }

    /// Puts a taken job back in the queue (its session was busy).
    pub fn requeue(&self, job_id: &str) -> Result<(), StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let job = job_id.to_string();
        shared.block(async move {
            sqlx::query("UPDATE server_jobs SET host = NULL, status = 'queued' WHERE job_id = $1")
                .bind(job)
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

    /// Jobs not ended whose host has not been heard of since `since_ms`
    /// (killed, frozen, cut off): (job, its owner).
    pub fn lost_jobs(&self, since_ms: u64) -> Result<Vec<(String, Owner)>, StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let since = i64::try_from(since_ms).unwrap_or(i64::MAX);
        shared.block(async move {
            sqlx::query(
                "SELECT j.job_id, j.session_id, j.user_name, j.workspace_id, j.created_at
                 FROM server_jobs j LEFT JOIN server_hosts h ON h.host = j.host
                 WHERE j.status IS NULL AND j.host IS NOT NULL
                   AND (h.host IS NULL OR h.last_seen < $1)
                 ORDER BY j.created_at",
            )
            .bind(since)
            .fetch_all(&pool)
            .await?
            .iter()
            .map(|r| Ok((r.try_get("job_id")?, owner_of(r)?)))
            .collect()
        })
    }

    /// Takes the ending of lost job `job_id` (one host of several wins):
    /// `claimed` true marks it, false gives it back (to try again).
    pub fn claim_lost(&self, job_id: &str, claimed: bool) -> Result<bool, StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let job = job_id.to_string();
        let sql = if claimed {
            "UPDATE server_jobs SET status = 'host_lost' WHERE job_id = $1 AND status IS NULL"
        } else {
            "UPDATE server_jobs SET status = NULL WHERE job_id = $1 AND status = 'host_lost'"
        };
        shared.block(async move {
            let done = sqlx::query(sql).bind(job).execute(&pool).await?;
            Ok(done.rows_affected() == 1)
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

    /// Notes that `host` is alive now (`now_ms`); the hosts seen within
    /// `live_ms` before it, by name.
    pub fn heartbeat(
        &self,
        host: &str,
        started_at: &str,
        now_ms: u64,
        live_ms: u64,
    ) -> Result<Vec<HostInfo>, StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let (host, started) = (host.to_string(), started_at.to_string());
        let now = i64::try_from(now_ms).unwrap_or(i64::MAX);
        let since = now - i64::try_from(live_ms).unwrap_or(0);
        shared.block(async move {
            sqlx::query(
                "INSERT INTO server_hosts (host, started_at, last_seen) VALUES ($1, $2, $3)
                 ON CONFLICT (host) DO UPDATE SET started_at = excluded.started_at,
                 last_seen = excluded.last_seen",
            )
            .bind(host)
            .bind(started)
            .bind(now)
            .execute(&pool)
            .await?;
            sqlx::query(
                "SELECT host, started_at, last_seen FROM server_hosts
                 WHERE last_seen >= $1 ORDER BY host",
            )
            .bind(since)
            .fetch_all(&pool)
            .await?
            .iter()
            .map(|r| {
                Ok(HostInfo {
                    host: r.try_get("host")?,
                    started_at: r.try_get("started_at")?,
                    last_seen: u64::try_from(r.try_get::<i64, _>("last_seen")?).unwrap_or(0),
                })
            })
            .collect()
        })
    }

    /// A host leaving: it is no longer listed.
    pub fn host_gone(&self, host: &str) -> Result<(), StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let host = host.to_string();
        shared.block(async move {
            sqlx::query("DELETE FROM server_hosts WHERE host = $1")
                .bind(host)
                .execute(&pool)
                .await?;
            Ok(())
        })
    }

    /// Counts one request of `token_name` in the minute starting at
    /// `window_start` (ms): the count so far in that minute, and the
    /// minute's start (a new minute starts the count again).
    pub fn count_request(&self, token_name: &str, now_ms: u64) -> Result<(u64, u64), StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let begin = shared.begin_write();
        let name = token_name.to_string();
        let now = i64::try_from(now_ms).unwrap_or(i64::MAX);
        shared.block(async move {
            let mut tx = pool.begin_with(begin).await?;
            // A new row, a new minute, or one more in this minute.
            sqlx::query(
                "INSERT INTO server_rates (token_name, window_start, count) VALUES ($1, $2, 1)
                 ON CONFLICT (token_name) DO UPDATE SET
                   count = CASE WHEN server_rates.window_start <= $2 - 60000 THEN 1
                                ELSE server_rates.count + 1 END,
                   window_start = CASE WHEN server_rates.window_start <= $2 - 60000 THEN $2
                                       ELSE server_rates.window_start END",
            )
            .bind(&name)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            let row =
                sqlx::query("SELECT window_start, count FROM server_rates WHERE token_name = $1")
                    .bind(&name)
                    .fetch_one(&mut *tx)
                    .await?;
            tx.commit().await?;
            let start: i64 = row.try_get("window_start")?;
            let count: i64 = row.try_get("count")?;
            Ok((
                u64::try_from(count).unwrap_or(0),
                u64::try_from(start).unwrap_or(0),
            ))
        })
    }

    /// The host running `job_id` (as noted when it started).
    pub fn job_host(&self, job_id: &str) -> Result<Option<String>, StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let job = job_id.to_string();
        shared.block(async move {
            let row = sqlx::query("SELECT host FROM server_jobs WHERE job_id = $1")
                .bind(job)
                .fetch_optional(&pool)
                .await?;
            Ok(row.and_then(|r| r.try_get::<Option<String>, _>(0).ok().flatten()))
        })
    }

    /// Leaves `command` (JSON) for the host running `job_id`.
    pub fn relay_put(
        &self,
        relay_id: &str,
        host: &str,
        job_id: &str,
        command: &str,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let (id, host, job, command) = (
            relay_id.to_string(),
            host.to_string(),
            job_id.to_string(),
            command.to_string(),
        );
        let now = i64::try_from(now_ms).unwrap_or(i64::MAX);
        shared.block(async move {
            // Answers nobody fetched within an hour go.
            sqlx::query("DELETE FROM server_relay WHERE created_at < $1")
                .bind(now - 3_600_000)
                .execute(&pool)
                .await?;
            sqlx::query(
                "INSERT INTO server_relay (relay_id, host, job_id, command, created_at)
                 VALUES ($1, $2, $3, $4, $5)",
            )
            .bind(id)
            .bind(host)
            .bind(job)
            .bind(command)
            .bind(now)
            .execute(&pool)
            .await?;
            Ok(())
        })
    }

    /// Takes the commands left for `host` (each once): (relay id, job, command).
    pub fn relay_take(&self, host: &str) -> Result<Vec<(String, String, String)>, StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let host = host.to_string();
        shared.block(async move {
            sqlx::query(
                "UPDATE server_relay SET status = 0 WHERE host = $1 AND status IS NULL
                 RETURNING relay_id, job_id, command",
            )
            .bind(host)
            .fetch_all(&pool)
            .await?
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
            .collect()
        })
    }

    /// The answer to relayed command `relay_id`.
    pub fn relay_answer(
        &self,
        relay_id: &str,
        status: u16,
        answer: &str,
    ) -> Result<(), StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let (id, answer) = (relay_id.to_string(), answer.to_string());
        shared.block(async move {
            sqlx::query("UPDATE server_relay SET status = $1, answer = $2 WHERE relay_id = $3")
                .bind(i64::from(status))
                .bind(answer)
                .bind(id)
                .execute(&pool)
                .await?;
            Ok(())
        })
    }

    /// The answer to `relay_id`, once there is one (then the row goes).
    pub fn relay_result(&self, relay_id: &str) -> Result<Option<(u16, String)>, StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let id = relay_id.to_string();
        shared.block(async move {
            let row = sqlx::query(
                "SELECT status, answer FROM server_relay WHERE relay_id = $1 AND answer IS NOT NULL",
            )
            .bind(&id)
            .fetch_optional(&pool)
            .await?;
            let Some(row) = row else { return Ok(None) };
            let status: i64 = row.try_get(0)?;
            let answer: String = row.try_get(1)?;
            sqlx::query("DELETE FROM server_relay WHERE relay_id = $1")
                .bind(id)
                .execute(&pool)
                .await?;
            Ok(Some((u16::try_from(status).unwrap_or(500), answer)))
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
