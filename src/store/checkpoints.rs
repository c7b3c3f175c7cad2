//! A root's checkpoints in the store: the record (as JSON) with its
//! snapshots, written in one transaction; listed from their index.

use sqlx::Row;

use super::RootStore;
use super::error::StoreError;
use super::session::check_id;
use super::snapshots::Encoded;
use super::writer::ensure_root;
use crate::protocol::checkpoint::{Checkpoint, CheckpointKind};

fn parse(body: &str, store: &str) -> Result<Checkpoint, StoreError> {
    serde_json::from_str(body).map_err(|e| StoreError::Corrupt {
        store: store.to_string(),
        reason: format!("a checkpoint record cannot be read: {e}"),
    })
}

impl RootStore {
    /// Stores `snapshots` (each once) and `checkpoint`, all or nothing;
    /// with `journal`, also opens its write-ahead journal entry (an apply or
    /// a rollback about to write the files).
    pub(crate) fn insert_checkpoint(
        &self,
        checkpoint: &Checkpoint,
        snapshots: Vec<Encoded>,
        journal: bool,
    ) -> Result<(), StoreError> {
        let body =
            serde_json::to_string(checkpoint).map_err(|e| StoreError::Invalid(e.to_string()))?;
        let shared = self.store.shared();
        let pool = shared.pool.clone();
        let begin = shared.begin_write();
        let (key, path) = (self.key.clone(), self.path.clone());
        let cp = checkpoint.clone();
        shared.block(async move {
            let mut tx = pool.begin_with(begin).await?;
            let written = async {
                ensure_root(&mut tx, &key, &path).await?;
                insert(&mut tx, &key, &cp, &body, &snapshots).await?;
                if journal {
                    let files: Vec<String> = cp
                        .affected_files
                        .iter()
                        .map(|f| f.file_path.clone())
                        .collect();
                    let intent = kind_name(cp.kind);
                    super::journal::insert(
                        &mut tx,
                        &key,
                        &cp.checkpoint_id,
                        intent,
                        &cp.created_at,
                        &files,
                    )
                    .await?;
                }
                Ok::<(), sqlx::Error>(())
            }
            .await;
            super::db::settle(tx, written).await
        })
    }

    pub fn checkpoint(&self, id: &str) -> Result<Option<Checkpoint>, StoreError> {
        check_id("checkpoint", id).map_err(|e| StoreError::Invalid(e.to_string()))?;
        let shared = self.store.shared();
        let pool = shared.pool.clone();
        let (key, id) = (self.key.clone(), id.to_string());
        let body: Option<String> = shared.block(async move {
            let row = sqlx::query(
                "SELECT body FROM checkpoints WHERE checkpoint_id = $1 AND root_key = $2",
            )
            .bind(id)
            .bind(key)
            .fetch_optional(&pool)
            .await?;
            row.map(|r| r.try_get(0)).transpose()
        })?;
        body.map(|b| parse(&b, &shared.location)).transpose()
    }

    /// Every checkpoint of the root, oldest first.
    pub fn checkpoints(&self) -> Result<Vec<Checkpoint>, StoreError> {
        self.checkpoint_bodies("ORDER BY created_at, checkpoint_id")
    }

    pub fn latest_checkpoint(&self) -> Result<Option<Checkpoint>, StoreError> {
        Ok(self
            .checkpoint_bodies("ORDER BY created_at DESC, checkpoint_id DESC LIMIT 1")?
            .pop())
    }

    fn checkpoint_bodies(&self, tail: &'static str) -> Result<Vec<Checkpoint>, StoreError> {
        let shared = self.store.shared();
        let sql = format!("SELECT body FROM checkpoints WHERE root_key = $1 {tail}");
        let bodies = shared.column(sql, vec![self.key.clone()])?;
        bodies.iter().map(|b| parse(b, &shared.location)).collect()
    }
}

fn kind_name(kind: CheckpointKind) -> &'static str {
    match kind {
        CheckpointKind::Apply => "apply",
        CheckpointKind::Rollback => "rollback",
        CheckpointKind::Exec => "exec",
    }
}

/// Stores each snapshot once, inside the caller's transaction.
pub(super) async fn insert_snapshots(
    conn: &mut sqlx::AnyConnection,
    snapshots: &[Encoded],
) -> Result<(), sqlx::Error> {
    for s in snapshots {
        sqlx::query(
            "INSERT INTO snapshots (hash, size, codec, data) VALUES ($1, $2, $3, $4)
             ON CONFLICT (hash) DO NOTHING",
        )
        .bind(&s.hash)
        .bind(s.size)
        .bind(s.codec)
        .bind(&s.data)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// Inserts a checkpoint and its snapshots inside the caller's transaction
/// (also the upgrade import's).
pub(super) async fn insert(
    conn: &mut sqlx::AnyConnection,
    root_key: &str,
    cp: &Checkpoint,
    body: &str,
    snapshots: &[Encoded],
) -> Result<(), sqlx::Error> {
    insert_snapshots(conn, snapshots).await?;
    let kind = kind_name(cp.kind);
    sqlx::query(
        "INSERT INTO checkpoints (checkpoint_id, root_key, session_id, job_id, created_at, kind, body)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (checkpoint_id) DO NOTHING",
    )
    .bind(&cp.checkpoint_id)
    .bind(root_key)
    .bind(cp.session_id.as_deref())
    .bind(&cp.job_id)
    .bind(&cp.created_at)
    .bind(kind)
    .bind(body)
    .execute(&mut *conn)
    .await?;
    let mut hashes: Vec<&str> = cp
        .affected_files
        .iter()
        .flat_map(|f| {
            [
                f.base_snapshot_hash.as_deref(),
                f.after_snapshot_hash.as_deref(),
            ]
        })
        .flatten()
        .filter(|h| snapshots.iter().any(|s| s.hash == *h))
        .collect();
    hashes.sort_unstable();
    hashes.dedup();
    for h in hashes {
        sqlx::query(
            "INSERT INTO checkpoint_snapshots (checkpoint_id, hash) VALUES ($1, $2)
             ON CONFLICT (checkpoint_id, hash) DO NOTHING",
        )
        .bind(&cp.checkpoint_id)
        .bind(h)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}
