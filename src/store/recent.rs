//! The agent roots opened lately (the TUI's `Ctrl+O` offers them), kept in
//! the store's `store_meta` table as one JSON list, most recent first.

use sqlx::Row;

use super::{Store, StoreError};

/// Roots kept, at most.
pub const MAX_RECENT_ROOTS: usize = 20;
const KEY: &str = "recent_roots";

impl Store {
    /// The roots opened lately, most recent first.
    pub fn recent_roots(&self) -> Result<Vec<String>, StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let text: Option<String> = shared.block(async move {
            let row = sqlx::query("SELECT value FROM store_meta WHERE key = $1")
                .bind(KEY)
                .fetch_optional(&pool)
                .await?;
            row.map(|r| r.try_get(0)).transpose()
        })?;
        // A list that cannot be read is as good as none: it is only a hint.
        Ok(text
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default())
    }

    /// Puts `root` (a canonical path) first in the recent roots.
    pub fn remember_root(&self, root: &str) -> Result<(), StoreError> {
        let mut roots = self.recent_roots()?;
        roots.retain(|r| r != root);
        roots.insert(0, root.to_string());
        roots.truncate(MAX_RECENT_ROOTS);
        let text = serde_json::to_string(&roots).map_err(|e| StoreError::Invalid(e.to_string()))?;
        let shared = self.shared();
        let pool = shared.pool.clone();
        shared.block(async move {
            sqlx::query(
                "INSERT INTO store_meta (key, value) VALUES ($1, $2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            )
            .bind(KEY)
            .bind(text)
            .execute(&pool)
            .await?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn most_recent_first_without_repeats() {
        let dir = tempfile::tempdir().unwrap();
        let store =
            Store::open_target(&super::super::Target::Sqlite(dir.path().join("s.db"))).unwrap();
        assert!(store.recent_roots().unwrap().is_empty());
        for r in ["/a", "/b", "/a", "/c"] {
            store.remember_root(r).unwrap();
        }
        assert_eq!(store.recent_roots().unwrap(), ["/c", "/a", "/b"]);
        for i in 0..30 {
            store.remember_root(&format!("/r{i}")).unwrap();
        }
        assert_eq!(store.recent_roots().unwrap().len(), MAX_RECENT_ROOTS);
    }
}
