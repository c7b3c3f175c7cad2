//! Who drives a session: one process at a time, its `owner`, until its
//! lease runs out (renewed while it drives, released when it lets go). A
//! process that dies leaves its lease to run out; one that finds a lease
//! of a process it can tell is gone takes it over (`take_over`).

use std::time::{SystemTime, UNIX_EPOCH};

use sqlx::Row;

use super::error::StoreError;
use super::session::check_id;
use super::{RootStore, Store};

/// Milliseconds since the epoch, as leases count time.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// What asking for a session's lease found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lease {
    /// Held by the asker now, until `until`.
    Held,
    /// Another owner holds it until `until` (ms since the epoch).
    Taken { owner: String, until: i64 },
    /// No such session in this root.
    Missing,
}

impl RootStore {
    /// Takes session `id`'s lease for `owner` for `for_ms`: free, expired,
    /// already `owner`'s, or held by `take_over` (an owner known to be
    /// gone) all count.
    pub fn take_lease(
        &self,
        id: &str,
        owner: &str,
        for_ms: i64,
        take_over: Option<&str>,
    ) -> Result<Lease, StoreError> {
        check_id("session", id).map_err(|e| StoreError::Invalid(e.to_string()))?;
        let shared = self.store.shared();
        let pool = shared.pool.clone();
        let begin = shared.begin_write();
        let (key, sid) = (self.key.clone(), id.to_string());
        let (owner, gone) = (owner.to_string(), take_over.unwrap_or_default().to_string());
        shared.block(async move {
            let now = now_ms();
            let mut tx = pool.begin_with(begin).await?;
            let taken = sqlx::query(
                "UPDATE sessions SET owner = $3, lease_until = $4
                 WHERE session_id = $1 AND root_key = $2
                 AND (owner IS NULL OR owner = $3 OR owner = $5 OR lease_until IS NULL
                      OR lease_until < $6)",
            )
            .bind(&sid)
            .bind(&key)
            .bind(&owner)
            .bind(now.saturating_add(for_ms))
            .bind(&gone)
            .bind(now)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            let lease = if taken == 1 {
                Lease::Held
            } else {
                let row = sqlx::query(
                    "SELECT owner, lease_until FROM sessions WHERE session_id = $1 AND root_key = $2",
                )
                .bind(&sid)
                .bind(&key)
                .fetch_optional(&mut *tx)
                .await?;
                match row {
                    None => Lease::Missing,
                    Some(row) => Lease::Taken {
                        owner: row.try_get::<Option<String>, _>(0)?.unwrap_or_default(),
                        until: row.try_get::<Option<i64>, _>(1)?.unwrap_or_default(),
                    },
                }
            };
            tx.commit().await?;
            Ok(lease)
        })
    }
}

impl Store {
    /// Extends `owner`'s leases of `sessions` by `for_ms`; returns the
    /// sessions it no longer holds (taken over after it stalled).
    pub fn renew_leases(
        &self,
        owner: &str,
        sessions: &[String],
        for_ms: i64,
    ) -> Result<Vec<String>, StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let begin = shared.begin_write();
        let (owner, sessions) = (owner.to_string(), sessions.to_vec());
        shared.block(async move {
            let until = now_ms().saturating_add(for_ms);
            let mut tx = pool.begin_with(begin).await?;
            let mut lost = Vec::new();
            for id in sessions {
                let n = sqlx::query(
                    "UPDATE sessions SET lease_until = $3 WHERE session_id = $1 AND owner = $2",
                )
                .bind(&id)
                .bind(&owner)
                .bind(until)
                .execute(&mut *tx)
                .await?
                .rows_affected();
                if n == 0 {
                    lost.push(id);
                }
            }
            tx.commit().await?;
            Ok(lost)
        })
    }

    /// Lets go of `owner`'s leases of `sessions`.
    pub fn release_leases(&self, owner: &str, sessions: &[String]) -> Result<(), StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let begin = shared.begin_write();
        let (owner, sessions) = (owner.to_string(), sessions.to_vec());
        shared.block(async move {
            let mut tx = pool.begin_with(begin).await?;
            for id in sessions {
                sqlx::query(
                    "UPDATE sessions SET owner = NULL, lease_until = NULL
                     WHERE session_id = $1 AND owner = $2",
                )
                .bind(&id)
                .bind(&owner)
                .execute(&mut *tx)
                .await?;
            }
            tx.commit().await
        })
    }
}
