//! A root's sessions in the store: listed and found from their summary
//! rows (never their records), replayed one at a time, deleted on request
//! or when older than `[sessions] max_age_days`.

use std::time::{Duration, SystemTime};

use sqlx::Row as _;

use super::error::StoreError;
use super::session::{StoredSession, check_id};
use super::{RootStore, StoreKind};
use crate::config::SessionLimits;
use crate::protocol::SessionSummary;

/// A summary row as the database's JSON gives it: id, created, updated,
/// jobs, pending review, last prompt.
type Row = (String, String, String, i64, i64, Option<String>);

/// A job's recorded events, as `job_events` finds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobEvents {
    pub session_id: String,
    pub status: Option<String>,
    /// As stored (JSON), in order.
    pub events: Vec<String>,
}

fn invalid(e: std::io::Error) -> StoreError {
    StoreError::Invalid(e.to_string())
}

impl RootStore {
    /// Every session of the root, most recently updated last. The rows
    /// come back as one JSON array built by the database: one value to
    /// fetch instead of ten thousand rows.
    pub fn sessions(&self) -> Result<Vec<SessionSummary>, StoreError> {
        let shared = self.store.shared();
        let pool = shared.pool.clone();
        let key = self.key.clone();
        let sql = match shared.kind {
            StoreKind::Sqlite => {
                "SELECT json_group_array(json_array(session_id, created_at, updated_at,
                 jobs, pending_review, last_prompt))
                 FROM (SELECT session_id, created_at, updated_at, jobs, pending_review,
                       last_prompt FROM sessions WHERE root_key = $1
                       ORDER BY updated_at, session_id)"
            }
            StoreKind::Postgres => {
                "SELECT COALESCE(json_agg(json_build_array(session_id, created_at, updated_at,
                 jobs, pending_review, last_prompt) ORDER BY updated_at, session_id),
                 '[]')::text FROM sessions WHERE root_key = $1"
            }
        };
        let json: String = shared.block(async move {
            sqlx::query(sql)
                .bind(key)
                .fetch_one(&pool)
                .await?
                .try_get(0)
        })?;
        let rows: Vec<Row> = serde_json::from_str(&json).map_err(|e| StoreError::Corrupt {
            store: shared.location.clone(),
            reason: format!("the session list cannot be read: {e}"),
        })?;
        Ok(rows
            .into_iter()
            .map(
                |(session_id, created_at, updated_at, jobs, pending, last_prompt)| SessionSummary {
                    session_id,
                    created_at,
                    updated_at,
                    jobs: usize::try_from(jobs).unwrap_or(0),
                    pending_review: pending > 0,
                    last_prompt,
                },
            )
            .collect())
    }

    /// The most recently updated session, from the index alone.
    pub fn latest_session(&self) -> Result<Option<String>, StoreError> {
        let shared = self.store.shared();
        let pool = shared.pool.clone();
        let key = self.key.clone();
        shared.block(async move {
            let row = sqlx::query(
                "SELECT session_id FROM sessions WHERE root_key = $1
                 ORDER BY updated_at DESC, session_id DESC LIMIT 1",
            )
            .bind(key)
            .fetch_optional(&pool)
            .await?;
            row.map(|r| r.try_get(0)).transpose()
        })
    }

    /// Whether session `id` belongs to this root.
    pub fn has_session(&self, id: &str) -> Result<bool, StoreError> {
        check_id("session", id).map_err(invalid)?;
        let shared = self.store.shared();
        let pool = shared.pool.clone();
        let (key, sid) = (self.key.clone(), id.to_string());
        shared.block(async move {
            let row = sqlx::query("SELECT 1 FROM sessions WHERE session_id = $1 AND root_key = $2")
                .bind(sid)
                .bind(key)
                .fetch_optional(&pool)
                .await?;
            Ok(row.is_some())
        })
    }

    /// Session `id` of this root with its records, in order.
    pub fn load_session(&self, id: &str) -> Result<StoredSession, StoreError> {
        check_id("session", id).map_err(invalid)?;
        let shared = self.store.shared();
        let pool = shared.pool.clone();
        let key = self.key.clone();
        let sid = id.to_string();
        let found = shared.block(async move {
            let head = sqlx::query(
                "SELECT root, created_at FROM sessions WHERE session_id = $1 AND root_key = $2",
            )
            .bind(&sid)
            .bind(&key)
            .fetch_optional(&pool)
            .await?;
            let Some(head) = head else { return Ok(None) };
            let root: String = head.try_get(0)?;
            let created: String = head.try_get(1)?;
            let bodies: Vec<String> =
                sqlx::query("SELECT body FROM session_records WHERE session_id = $1 ORDER BY seq")
                    .bind(&sid)
                    .fetch_all(&pool)
                    .await?
                    .iter()
                    .map(|r| r.try_get(0))
                    .collect::<Result<_, _>>()?;
            Ok(Some((root, created, bodies)))
        })?;
        let Some((root, created_at, records)) = found else {
            return Err(StoreError::NotFound(format!(
                "no session {id} in this agent root (agent-tui sessions list shows them)"
            )));
        };
        Ok(StoredSession {
            session_id: id.to_string(),
            root,
            created_at,
            records,
        })
    }

    /// The last `seq` of session `id`'s records (0: none yet).
    pub fn session_seq(&self, id: &str) -> Result<i64, StoreError> {
        check_id("session", id).map_err(invalid)?;
        let shared = self.store.shared();
        let pool = shared.pool.clone();
        let sid = id.to_string();
        shared.block(async move {
            sqlx::query("SELECT COALESCE(MAX(seq), 0) FROM session_records WHERE session_id = $1")
                .bind(sid)
                .fetch_one(&pool)
                .await?
                .try_get(0)
        })
    }

    /// The session of job `job_id` in this root, from its row.
    pub fn session_of_job(&self, job_id: &str) -> Result<Option<String>, StoreError> {
        check_id("job", job_id).map_err(invalid)?;
        let shared = self.store.shared();
        let pool = shared.pool.clone();
        let (key, job) = (self.key.clone(), job_id.to_string());
        shared.block(async move {
            let row = sqlx::query(
                "SELECT j.session_id FROM jobs j JOIN sessions s ON s.session_id = j.session_id
                 WHERE j.job_id = $1 AND s.root_key = $2 LIMIT 1",
            )
            .bind(job)
            .bind(key)
            .fetch_optional(&pool)
            .await?;
            row.map(|r| r.try_get(0)).transpose()
        })
    }

    /// Job `job_id`'s session, its status and its recorded events after
    /// cursor `after` (as stored, in order); `None` when this root has no
    /// such job.
    pub fn job_events(&self, job_id: &str, after: u64) -> Result<Option<JobEvents>, StoreError> {
        check_id("job", job_id).map_err(invalid)?;
        let shared = self.store.shared();
        let pool = shared.pool.clone();
        let (key, job) = (self.key.clone(), job_id.to_string());
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        shared.block(async move {
            let row = sqlx::query(
                "SELECT j.session_id, j.status FROM jobs j
                 JOIN sessions s ON s.session_id = j.session_id
                 WHERE j.job_id = $1 AND s.root_key = $2 LIMIT 1",
            )
            .bind(&job)
            .bind(&key)
            .fetch_optional(&pool)
            .await?;
            let Some(row) = row else { return Ok(None) };
            let session: String = row.try_get(0)?;
            let status: Option<String> = row.try_get(1)?;
            let bodies = sqlx::query(
                "SELECT body FROM session_records WHERE session_id = $1 AND job_id = $2
                 AND cursor > $3 ORDER BY seq",
            )
            .bind(&session)
            .bind(&job)
            .bind(after)
            .fetch_all(&pool)
            .await?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<Result<Vec<String>, _>>()?;
            Ok(Some(JobEvents {
                session_id: session,
                status,
                events: bodies,
            }))
        })
    }

    /// Every recorded event of session `id` (as stored, in order).
    pub fn session_events(&self, id: &str) -> Result<Vec<String>, StoreError> {
        check_id("session", id).map_err(invalid)?;
        let shared = self.store.shared();
        let pool = shared.pool.clone();
        let sid = id.to_string();
        shared.block(async move {
            sqlx::query(
                "SELECT body FROM session_records WHERE session_id = $1 AND cursor IS NOT NULL
                 ORDER BY seq",
            )
            .bind(sid)
            .fetch_all(&pool)
            .await?
            .iter()
            .map(|r| r.try_get(0))
            .collect()
        })
    }

    /// Deletes session `id` with its records, jobs and reviews.
    pub fn delete_session(&self, id: &str) -> Result<(), StoreError> {
        check_id("session", id).map_err(invalid)?;
        let shared = self.store.shared();
        let pool = shared.pool.clone();
        let key = self.key.clone();
        let sid = id.to_string();
        let begin = shared.begin_write();
        let deleted = shared.block(async move {
            let mut tx = pool.begin_with(begin).await?;
            let n = sqlx::query("DELETE FROM sessions WHERE session_id = $1 AND root_key = $2")
                .bind(sid)
                .bind(key)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            tx.commit().await?;
            Ok(n)
        })?;
        if deleted == 0 {
            return Err(StoreError::NotFound(format!(
                "no session {id} in this agent root (agent-tui sessions list shows them)"
            )));
        }
        Ok(())
    }

    /// Removes sessions idle longer than `max_age_days` (when set), never
    /// one with a pending review nor `keep`; nothing goes by count.
    pub fn collect_sessions(
        &self,
        limits: &SessionLimits,
        keep: Option<&str>,
    ) -> Result<Vec<String>, StoreError> {
        let Some(days) = limits.max_age_days else {
            return Ok(Vec::new());
        };
        let age = Duration::from_secs(days.saturating_mul(86_400));
        let Some(cutoff) = SystemTime::now().checked_sub(age) else {
            return Ok(Vec::new());
        };
        let cutoff = humantime::format_rfc3339_millis(cutoff).to_string();
        let shared = self.store.shared();
        let pool = shared.pool.clone();
        let key = self.key.clone();
        let begin = shared.begin_write();
        let keep = keep.unwrap_or_default().to_string();
        shared.block(async move {
            let mut tx = pool.begin_with(begin).await?;
            let ids: Vec<String> = sqlx::query(
                "SELECT session_id FROM sessions WHERE root_key = $1 AND updated_at < $2
                 AND pending_review = 0 AND session_id <> $3",
            )
            .bind(&key)
            .bind(&cutoff)
            .bind(&keep)
            .fetch_all(&mut *tx)
            .await?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<Result<_, _>>()?;
            for id in &ids {
                sqlx::query("DELETE FROM sessions WHERE session_id = $1")
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await?;
            Ok(ids)
        })
    }
}
