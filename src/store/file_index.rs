//! A root's file index in the store: each file's stat and the snapshot of
//! its content, like git's index, so what a command changes can be undone
//! from the bytes it had before.

use std::collections::HashMap;

use sqlx::Row;

use super::RootStore;
use super::checkpoints::insert_snapshots;
use super::error::StoreError;
use super::snapshots::Encoded;
use super::writer::ensure_root;
use crate::workspace::Stat;

/// One indexed file: its stat when it was read, and its content's hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Indexed {
    pub stat: Stat,
    pub hash: String,
}

/// What changes in the index, with the snapshots it needs.
#[derive(Default)]
pub struct IndexUpdate {
    pub set: Vec<(String, Indexed)>,
    pub removed: Vec<String>,
    pub snapshots: Vec<Encoded>,
}

impl IndexUpdate {
    pub fn is_empty(&self) -> bool {
        self.set.is_empty() && self.removed.is_empty()
    }
}

impl RootStore {
    /// The root's whole file index.
    pub fn file_index(&self) -> Result<HashMap<String, Indexed>, StoreError> {
        let shared = self.store.shared();
        let pool = shared.pool.clone();
        let key = self.key.clone();
        let rows = shared.block(async move {
            sqlx::query(
                "SELECT path, size, mtime_ns, ctime_ns, ino, mode, hash FROM file_index
                 WHERE root_key = $1",
            )
            .bind(key)
            .fetch_all(&pool)
            .await
        })?;
        let mut out = HashMap::with_capacity(rows.len());
        for row in rows {
            let get = |i: usize| row.try_get::<i64, _>(i);
            let read = || -> Result<(String, Indexed), sqlx::Error> {
                Ok((
                    row.try_get(0)?,
                    Indexed {
                        stat: Stat {
                            len: get(1)?.cast_unsigned(),
                            mtime_ns: i128::from(get(2)?),
                            ctime_ns: i128::from(get(3)?),
                            ino: get(4)?.cast_unsigned(),
                            mode: u32::try_from(get(5)?).unwrap_or_default(),
                        },
                        hash: row.try_get(6)?,
                    },
                ))
            };
            let (path, indexed) = read().map_err(|e| StoreError::Corrupt {
                store: shared.location.clone(),
                reason: format!("a file index row cannot be read: {e}"),
            })?;
            out.insert(path, indexed);
        }
        Ok(out)
    }

    /// Applies `update` (snapshots first) in one transaction.
    pub fn update_file_index(&self, update: IndexUpdate) -> Result<(), StoreError> {
        if update.is_empty() {
            return Ok(());
        }
        let shared = self.store.shared();
        let pool = shared.pool.clone();
        let begin = shared.begin_write();
        let (key, path) = (self.key.clone(), self.path.clone());
        shared.block(async move {
            let mut tx = pool.begin_with(begin).await?;
            let written = async {
            ensure_root(&mut tx, &key, &path).await?;
            insert_snapshots(&mut tx, &update.snapshots).await?;
            for gone in &update.removed {
                sqlx::query("DELETE FROM file_index WHERE root_key = $1 AND path = $2")
                    .bind(&key)
                    .bind(gone)
                    .execute(&mut *tx)
                    .await?;
            }
            for (file, ix) in &update.set {
                let ns = |v: i128| i64::try_from(v).unwrap_or(i64::MAX);
                sqlx::query(
                    "INSERT INTO file_index (root_key, path, size, mtime_ns, ctime_ns, ino, mode, hash)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                     ON CONFLICT (root_key, path) DO UPDATE SET size = excluded.size,
                       mtime_ns = excluded.mtime_ns, ctime_ns = excluded.ctime_ns,
                       ino = excluded.ino, mode = excluded.mode, hash = excluded.hash",
                )
                .bind(&key)
                .bind(file)
                .bind(ix.stat.len.cast_signed())
                .bind(ns(ix.stat.mtime_ns))
                .bind(ns(ix.stat.ctime_ns))
                .bind(ix.stat.ino.cast_signed())
                .bind(i64::from(ix.stat.mode))
                .bind(&ix.hash)
                .execute(&mut *tx)
                .await?;
            }
            Ok::<(), sqlx::Error>(())
            }
            .await;
            super::db::settle(tx, written).await
        })
    }
}
