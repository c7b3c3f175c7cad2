//! Project hooks a user trusted (SPEC 21), by root and name: the
//! definition and the bytes of each script it names as they were when
//! trusted (JSON the engine reads), so a changed file shows as changed and
//! the trusted copy keeps running until it is trusted again.

use sqlx::Row;

use super::{RootStore, StoreError};

impl RootStore {
    /// Every trusted hook of this root: (name, what was trusted, as JSON).
    pub fn trusted_hooks(&self) -> Result<Vec<(String, String)>, StoreError> {
        let shared = self.store.shared();
        let pool = shared.pool.clone();
        let key = self.key().to_string();
        shared.block(async move {
            let rows =
                sqlx::query("SELECT name, body FROM hook_trust WHERE root_key = $1 ORDER BY name")
                    .bind(key)
                    .fetch_all(&pool)
                    .await?;
            rows.iter()
                .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
                .collect::<Result<Vec<_>, sqlx::Error>>()
        })
    }

    /// Trusts hook `name` as `body` says (the one trusted before is replaced).
    pub fn trust_hook(&self, name: &str, body: &str, now: &str) -> Result<(), StoreError> {
        let shared = self.store.shared();
        let pool = shared.pool.clone();
        let (key, name, body, now) = (
            self.key().to_string(),
            name.to_string(),
            body.to_string(),
            now.to_string(),
        );
        shared.block(async move {
            sqlx::query(
                "INSERT INTO hook_trust (root_key, name, body, trusted_at)
                 VALUES ($1, $2, $3, $4)
                 ON CONFLICT (root_key, name) DO UPDATE SET body = excluded.body,
                   trusted_at = excluded.trusted_at",
            )
            .bind(key)
            .bind(name)
            .bind(body)
            .bind(now)
            .execute(&pool)
            .await
            .map(|_| ())
        })
    }
}
