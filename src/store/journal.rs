//! The write-ahead journal of applies and rollbacks: a row per operation
//! whose files are being written, committed with its checkpoint (before the
//! first project write) and deleted once every file is in place. A row
//! found at start is an interrupted operation; a per-root lock file keeps a
//! live operation of another process from looking like one.

use std::fs::File;
use std::path::{Path, PathBuf};

use sqlx::Row;

use super::error::StoreError;
use super::{RootStore, root_key};

/// An operation whose writes had started and not been seen to end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalEntry {
    pub checkpoint_id: String,
    /// `apply` or `rollback`.
    pub intent: String,
    pub started_at: String,
    /// The project files it writes, as JSON.
    pub files: Vec<String>,
}

/// Held while a root's files are written or an interrupted write is
/// repaired; released when dropped (or when the process dies). On
/// PostgreSQL it holds the root's advisory lock too, so two hosts sharing
/// the store never write one root at once.
#[derive(Debug)]
pub struct RootLock {
    _files: Vec<File>,
    _shared: Option<SharedLock>,
}

/// The advisory locks of a root and its writable scopes, held on a
/// connection of their own; closing it releases them.
struct SharedLock {
    conn: Option<sqlx::AnyConnection>,
    store: std::sync::Arc<super::db::Shared>,
}

impl std::fmt::Debug for SharedLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedLock")
    }
}

impl Drop for SharedLock {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            use sqlx::Connection;
            let _ = self.store.block(async move { conn.close().await });
        }
    }
}

/// The advisory lock namespace of root write locks (two-key form, apart
/// from the one-key locks of migrations and audit appends).
const ROOT_LOCKS: i32 = 7411;

impl RootStore {
    /// Takes the root's write lock, waiting for another process's apply or
    /// rollback to end. Without a state home on local disk there is nothing
    /// to lock (a no-op lock).
    pub fn lock(&self) -> Result<RootLock, StoreError> {
        self.lock_with(&[])
    }

    /// The root's write lock and those of `folders` (writable scopes beside
    /// it, which another agent root may write too, or be): each folder's
    /// lock file is its root key's, taken in key order so two processes
    /// never wait on each other.
    pub fn lock_with(&self, folders: &[&Path]) -> Result<RootLock, StoreError> {
        let mut keys: Vec<String> = folders.iter().map(|f| root_key(f)).collect();
        keys.push(self.key.clone());
        keys.sort();
        keys.dedup();
        let files = self.lock_files(&keys)?;
        let shared = match self.store.kind() {
            super::StoreKind::Sqlite => None,
            super::StoreKind::Postgres => Some(self.lock_shared(keys)?),
        };
        Ok(RootLock {
            _files: files,
            _shared: shared,
        })
    }

    /// The advisory locks of `keys` (in order), on a connection of their own.
    fn lock_shared(&self, keys: Vec<String>) -> Result<SharedLock, StoreError> {
        let shared = self.store.shared.clone();
        let pool = shared.pool.clone();
        let conn = shared.block(async move {
            let mut conn = pool.acquire().await?.detach();
            for key in keys {
                sqlx::query("SELECT 1 FROM (SELECT pg_advisory_lock($1, hashtext($2))) AS l")
                    .bind(ROOT_LOCKS)
                    .bind(key)
                    .execute(&mut conn)
                    .await?;
            }
            Ok(conn)
        })?;
        Ok(SharedLock {
            conn: Some(conn),
            store: shared,
        })
    }

    /// The local lock files of `keys` (in order), under the state home.
    fn lock_files(&self, keys: &[String]) -> Result<Vec<File>, StoreError> {
        let Some(dir) = &self.store.locks else {
            return Ok(Vec::new());
        };
        let failed = |e: std::io::Error| StoreError::Query {
            store: dir.display().to_string(),
            reason: format!("cannot take the root's write lock: {e}"),
        };
        std::fs::create_dir_all(dir).map_err(failed)?;
        let mut files = Vec::with_capacity(keys.len());
        for key in keys {
            let path: PathBuf = dir.join(format!("{key}.lock"));
            let file = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
                .map_err(failed)?;
            file.lock().map_err(failed)?;
            files.push(file);
        }
        Ok(files)
    }

    /// The root's open journal entries, oldest first.
    pub fn open_journal(&self) -> Result<Vec<JournalEntry>, StoreError> {
        let shared = self.store.shared();
        let pool = shared.pool.clone();
        let key = self.key.clone();
        let rows: Vec<(String, String, String, String)> = shared.block(async move {
            let rows = sqlx::query(
                "SELECT checkpoint_id, intent, started_at, files FROM journal
                 WHERE root_key = $1 ORDER BY started_at, checkpoint_id",
            )
            .bind(key)
            .fetch_all(&pool)
            .await?;
            rows.iter()
                .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?, r.try_get(3)?)))
                .collect()
        })?;
        rows.into_iter()
            .map(|(checkpoint_id, intent, started_at, files)| {
                let files = serde_json::from_str(&files).map_err(|e| StoreError::Corrupt {
                    store: shared.location.clone(),
                    reason: format!("journal entry {checkpoint_id} cannot be read: {e}"),
                })?;
                Ok(JournalEntry {
                    checkpoint_id,
                    intent,
                    started_at,
                    files,
                })
            })
            .collect()
    }

    /// Every file of the operation is in place: its entry goes.
    pub fn close_journal(&self, checkpoint_id: &str) -> Result<(), StoreError> {
        self.journal_delete(checkpoint_id, false)
    }

    /// The operation was undone: its entry and its checkpoint go together
    /// (the files hold what they held before it, so nothing is lost).
    pub fn discard_journaled(&self, checkpoint_id: &str) -> Result<(), StoreError> {
        self.journal_delete(checkpoint_id, true)
    }

    fn journal_delete(&self, checkpoint_id: &str, with_checkpoint: bool) -> Result<(), StoreError> {
        let shared = self.store.shared();
        let pool = shared.pool.clone();
        let begin = shared.begin_write();
        let (key, id) = (self.key.clone(), checkpoint_id.to_string());
        shared.block(async move {
            let mut tx = pool.begin_with(begin).await?;
            sqlx::query("DELETE FROM journal WHERE checkpoint_id = $1 AND root_key = $2")
                .bind(&id)
                .bind(&key)
                .execute(&mut *tx)
                .await?;
            if with_checkpoint {
                sqlx::query("DELETE FROM checkpoints WHERE checkpoint_id = $1 AND root_key = $2")
                    .bind(&id)
                    .bind(&key)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await
        })
    }
}

/// Opens the journal entry of `checkpoint_id` inside the caller's
/// transaction (the one that stores the checkpoint).
pub(super) async fn insert(
    conn: &mut sqlx::AnyConnection,
    root_key: &str,
    checkpoint_id: &str,
    intent: &str,
    started_at: &str,
    files: &[String],
) -> Result<(), sqlx::Error> {
    let files = serde_json::to_string(files).unwrap_or_else(|_| "[]".into());
    sqlx::query(
        "INSERT INTO journal (checkpoint_id, root_key, intent, started_at, files)
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(checkpoint_id)
    .bind(root_key)
    .bind(intent)
    .bind(started_at)
    .bind(files)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{Store, Target};
    use std::path::Path;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn a_writable_scope_is_locked_with_the_root_so_its_own_root_waits() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_target(&Target::Sqlite(dir.path().join("s.db"))).unwrap();
        let (service, lib) = (Path::new("/work/service"), Path::new("/work/lib"));
        // An apply in `service` that writes `@lib` holds both locks.
        let held = store.root(service).lock_with(&[lib]).unwrap();
        let (tx, rx) = mpsc::channel();
        let other = store.clone();
        let waiter = std::thread::spawn(move || {
            // `lib` opened as an agent root of its own.
            let _lock = other.root(Path::new("/work/lib")).lock().unwrap();
            tx.send(()).unwrap();
        });
        assert!(
            rx.recv_timeout(Duration::from_millis(300)).is_err(),
            "the other root's apply waits"
        );
        drop(held);
        rx.recv_timeout(Duration::from_secs(5)).unwrap();
        waiter.join().unwrap();
    }
}
