//! What the `serve` hosts sharing the store coordinate through it (SPEC
//! 16): their heartbeats, the jobs of hosts gone silent, the job queue,
//! answers relayed to a job's host, and per-token request counts.

use sqlx::Row;

use super::server::owner_of;
use super::{Store, StoreError};
use crate::protocol::{HostInfo, Owner};

/// Jobs asked about in one query (placeholders in one statement).
const CURSOR_BATCH: usize = 200;

impl Store {
    /// The cursor of the last stored event of each of `jobs` that has one
    /// (one query per 200 jobs, on the index of events by job).
    pub fn last_cursors(&self, jobs: &[String]) -> Result<Vec<(String, u64)>, StoreError> {
        let shared = self.shared();
        let mut out = Vec::with_capacity(jobs.len());
        for batch in jobs.chunks(CURSOR_BATCH) {
            let pool = shared.pool.clone();
            let marks: Vec<String> = (1..=batch.len()).map(|i| format!("${i}")).collect();
            let sql = format!(
                "SELECT job_id, MAX(cursor) FROM session_records WHERE job_id IN ({})
                 GROUP BY job_id",
                marks.join(", ")
            );
            let batch = batch.to_vec();
            let rows = shared.block(async move {
                let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
                for job in batch {
                    query = query.bind(job);
                }
                query
                    .fetch_all(&pool)
                    .await?
                    .iter()
                    .map(|r| {
                        let cursor: Option<i64> = r.try_get(1)?;
                        Ok((r.try_get(0)?, cursor.unwrap_or(0)))
                    })
                    .collect::<Result<Vec<(String, i64)>, sqlx::Error>>()
            })?;
            out.extend(
                rows.into_iter()
                    .map(|(job, c)| (job, u64::try_from(c).unwrap_or(0))),
            );
        }
        Ok(out)
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

    /// Jobs not ended whose host has not been heard of since `since_ms`
    /// (killed, frozen, cut off): (job, its owner).
    pub fn lost_jobs(
        &self,
        since_ms: u64,
        (me, started_at): (&str, &str),
    ) -> Result<Vec<(String, Owner)>, StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let since = i64::try_from(since_ms).unwrap_or(i64::MAX);
        let (me, started_at) = (me.to_string(), started_at.to_string());
        shared.block(async move {
            sqlx::query(
                "SELECT j.job_id, j.session_id, j.user_name, j.workspace_id, j.created_at
                 FROM server_jobs j LEFT JOIN server_hosts h ON h.host = j.host
                 WHERE j.status IS NULL AND j.host IS NOT NULL
                   AND (h.host IS NULL OR h.last_seen < $1
                        OR (j.host = $2 AND j.created_at < $3))
                 ORDER BY j.created_at",
            )
            .bind(since)
            .bind(me)
            .bind(started_at)
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

    /// Notes that `host` is alive now (`now_ms`); the hosts seen within
    /// `live_ms` before it, by name.
    /// The first beat (`first`) is refused when a live host already has
    /// the name.
    pub fn heartbeat(
        &self,
        host: &str,
        started_at: &str,
        now_ms: u64,
        live_ms: u64,
        first: bool,
    ) -> Result<Vec<HostInfo>, StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let (host, started) = (host.to_string(), started_at.to_string());
        let now = i64::try_from(now_ms).unwrap_or(i64::MAX);
        let since = now - i64::try_from(live_ms).unwrap_or(0);
        let name = host.clone();
        let taken = shared.block(async move {
            let row = sqlx::query(
                "SELECT started_at FROM server_hosts WHERE host = $1 AND last_seen >= $2",
            )
            .bind(name)
            .bind(since)
            .fetch_optional(&pool)
            .await?;
            Ok(row.is_some())
        })?;
        if first && taken {
            return Err(StoreError::Invalid(format!(
                "another live host is named {host} (it beat in the last {}s): give this one \
                 another [server] host_name",
                live_ms / 1000
            )));
        }
        let pool = shared.pool.clone();
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
            let rows = sqlx::query(
                "SELECT host, started_at, last_seen FROM server_hosts
                 WHERE last_seen >= $1 ORDER BY host",
            )
            .bind(since)
            .fetch_all(&pool)
            .await?;
            let open = sqlx::query(
                "SELECT host, job_id FROM server_jobs WHERE status IS NULL AND host IS NOT NULL
                 ORDER BY created_at",
            )
            .fetch_all(&pool)
            .await?;
            let mut hosts = Vec::new();
            for r in &rows {
                let host: String = r.try_get("host")?;
                let mut running_jobs = Vec::new();
                for o in &open {
                    if o.try_get::<String, _>(0)? == host {
                        running_jobs.push(o.try_get::<String, _>(1)?);
                    }
                }
                hosts.push(HostInfo {
                    host,
                    started_at: r.try_get("started_at")?,
                    last_seen: rfc3339_from_millis(r.try_get::<i64, _>("last_seen")?),
                    running_jobs,
                });
            }
            Ok(hosts)
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

    /// The host running `job_id` and whether it beat at `since_ms` or
    /// later (one read: the store, not a host's last look at it, decides).
    pub fn job_host_live(
        &self,
        job_id: &str,
        since_ms: u64,
    ) -> Result<Option<(String, bool)>, StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let job = job_id.to_string();
        let since = i64::try_from(since_ms).unwrap_or(i64::MAX);
        shared.block(async move {
            let row = sqlx::query(
                "SELECT j.host, h.last_seen FROM server_jobs j
                 LEFT JOIN server_hosts h ON h.host = j.host WHERE j.job_id = $1",
            )
            .bind(job)
            .fetch_optional(&pool)
            .await?;
            let Some(row) = row else {
                return Ok(None);
            };
            let host: Option<String> = row.try_get(0)?;
            let seen: Option<i64> = row.try_get(1)?;
            Ok(host.map(|h| (h, seen.is_some_and(|t| t >= since))))
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
}

/// The channel that carries the ids of jobs whose events were committed.
const EVENTS_CHANNEL: &str = "agent_tui_events";
/// The channel that carries live-only events (streamed text) as JSON.
const LIVE_CHANNEL: &str = "agent_tui_live";
/// PostgreSQL refuses a notice payload of 8,000 bytes or more.
pub(super) const MAX_PAYLOAD: usize = 7_900;

/// What the store's notices say.
#[derive(Debug, Clone)]
pub enum Notice {
    /// Events of job `job` were committed: `events`, a JSON array of
    /// them, when they fitted in the notice.
    Committed { job: String, events: Option<String> },
    /// Live-only events (a JSON array of them), as they were sent.
    Live(String),
}

impl Store {
    /// PostgreSQL: sends a live-only event (its JSON) to every host, in
    /// the background (never waits), in order: one task sends them, as
    /// many in one notice (a JSON array) as fit; an event larger than a
    /// notice holds is not sent (the completed answer stands in for it).
    /// Nothing on SQLite.
    pub fn notify_live(&self, event_json: String) {
        let shared = self.shared();
        if shared.listen_url.is_none() || event_json.len() + 2 >= MAX_PAYLOAD {
            return;
        }
        let tx = shared.live.get_or_init(|| {
            let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
            shared.spawn(relay_live(shared.pool.clone(), rx));
            tx
        });
        let _ = tx.send(event_json);
    }

    /// PostgreSQL: follows the store's notices (`LISTEN`) on a connection
    /// of its own and sends each to `tx`; reconnects when the connection
    /// drops. `false` (nothing started) on SQLite.
    pub fn listen_jobs(&self, tx: tokio::sync::broadcast::Sender<Notice>) -> bool {
        let shared = self.shared();
        let Some(url) = shared.listen_url.clone() else {
            return false;
        };
        shared.spawn(async move {
            loop {
                if let Ok(mut listener) = sqlx::postgres::PgListener::connect(&url).await
                    && listener
                        .listen_all([EVENTS_CHANNEL, LIVE_CHANNEL])
                        .await
                        .is_ok()
                {
                    while let Ok(n) = listener.recv().await {
                        let payload = n.payload().to_string();
                        let notice = if n.channel() == LIVE_CHANNEL {
                            Notice::Live(payload)
                        } else {
                            match payload.split_once('\n') {
                                Some((job, events)) => Notice::Committed {
                                    job: job.to_string(),
                                    events: Some(events.to_string()),
                                },
                                None => Notice::Committed {
                                    job: payload,
                                    events: None,
                                },
                            }
                        };
                        let _ = tx.send(notice);
                    }
                }
                tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            }
        });
        true
    }
}

/// Sends the live-only events queued in `rx` as notices, in order: what
/// is ready at once goes in one notice, up to a notice's size.
async fn relay_live(pool: sqlx::AnyPool, mut rx: tokio::sync::mpsc::UnboundedReceiver<String>) {
    let mut held: Option<String> = None;
    loop {
        let first = match held.take() {
            Some(event) => event,
            None => match rx.recv().await {
                Some(event) => event,
                None => return,
            },
        };
        let mut payload = format!("[{first}");
        while let Ok(next) = rx.try_recv() {
            if payload.len() + next.len() + 2 >= MAX_PAYLOAD {
                held = Some(next);
                break;
            }
            payload.push(',');
            payload.push_str(&next);
        }
        payload.push(']');
        let _ = sqlx::query("SELECT pg_notify('agent_tui_live', $1)")
            .bind(payload)
            .execute(&pool)
            .await;
    }
}

/// A heartbeat's time (milliseconds since the epoch in the store) as the
/// RFC 3339 text every other time in the API uses.
fn rfc3339_from_millis(ms: i64) -> String {
    let at =
        std::time::UNIX_EPOCH + std::time::Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    humantime::format_rfc3339_millis(at).to_string()
}
