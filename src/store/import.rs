//! The upgrade from an earlier release's files: on the first open of a
//! state home that has `roots/<key>/` folders, each root's sessions,
//! checkpoints, snapshots and audit log are copied into the store (ids,
//! timestamps, order and audit hashes kept), one transaction per root with
//! its marker, so a root is imported whole, once. The files stay as they were.

use std::collections::HashSet;
use std::path::Path;

use sqlx::Row;

use super::audit::read_legacy;
use super::audit_write::insert_audit;
use super::checkpoints::insert;
use super::error::StoreError;
use super::session::now;
use super::snapshots::{Encoded, encode};
use super::writer::ensure_root;
use super::{StateDirs, Store};
use crate::protocol::checkpoint::Checkpoint;
use crate::workspace::sha256_hex;

/// Reads a session file of an earlier release for the store, which does
/// not read records itself: what each line is and what the summary rows
/// hold. The engine supplies it.
pub trait SessionIndexer: Send + Sync {
    /// `None`: the file cannot be read at all (no header); it is left behind.
    fn index(&self, session_id: &str, text: &str) -> Option<IndexedSession>;
}

/// A legacy session as its rows will hold it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedSession {
    pub root: String,
    pub created_at: String,
    pub lines: Vec<IndexedLine>,
    pub jobs: Vec<IndexedJob>,
    pub pending_review: bool,
    pub last_prompt: Option<String>,
}

/// One record line, with what its row indexes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedLine {
    pub body: String,
    pub kind: String,
    pub job_id: Option<String>,
    pub cursor: Option<i64>,
    pub ts: Option<String>,
}

/// One job's summary row, and its review's (pending, bundle JSON).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedJob {
    pub job_id: String,
    pub prompt: String,
    pub status: Option<&'static str>,
    pub review: Option<(bool, String)>,
}

/// One legacy root folder, read whole before the transaction starts.
struct Legacy {
    key: String,
    path: String,
    /// Each session's id, last update and rows.
    sessions: Vec<(String, String, IndexedSession)>,
    checkpoints: Vec<(Checkpoint, String, Vec<Encoded>)>,
    audit: Vec<super::audit::AuditRecord>,
}

/// Imports every root folder of `home` not imported yet.
pub(super) fn legacy_home(
    store: &Store,
    home: &Path,
    indexer: &dyn SessionIndexer,
) -> Result<(), StoreError> {
    let roots = StateDirs::legacy_roots(home);
    let Ok(entries) = std::fs::read_dir(&roots) else {
        return Ok(());
    };
    let keys: Vec<String> = entries
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|k| !k.is_empty() && k.chars().all(|c| c.is_ascii_hexdigit()))
        .collect();
    if keys.is_empty() {
        return Ok(());
    }
    let shared = store.shared();
    let done: HashSet<String> = shared
        .column(
            "SELECT root_key FROM roots WHERE imported_at IS NOT NULL".into(),
            Vec::new(),
        )?
        .into_iter()
        .collect();
    for key in keys.into_iter().filter(|k| !done.contains(k)) {
        let legacy = read(&roots.join(&key), key, indexer).map_err(|e| StoreError::Query {
            store: shared.location.clone(),
            reason: format!("cannot import {}: {e}", roots.display()),
        })?;
        write(store, legacy)?;
    }
    Ok(())
}

fn read(dir: &Path, key: String, indexer: &dyn SessionIndexer) -> std::io::Result<Legacy> {
    let mut legacy = Legacy {
        key,
        path: String::new(),
        sessions: Vec::new(),
        checkpoints: Vec::new(),
        audit: read_legacy(&dir.join("audit.jsonl"))?,
    };
    let sessions = dir.join("sessions");
    for entry in std::fs::read_dir(&sessions).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let Some(id) = name.strip_suffix(".jsonl") else {
            continue;
        };
        let text = std::fs::read_to_string(entry.path())?;
        // A session that cannot be read at all (no header) is left behind.
        let Some(indexed) = indexer.index(id, &text) else {
            continue;
        };
        // Last updated: its newest event (file times do not survive copies).
        let updated = indexed
            .lines
            .iter()
            .filter_map(|l| l.ts.clone())
            .max()
            .unwrap_or_else(|| indexed.created_at.clone());
        if legacy.path.is_empty() {
            legacy.path.clone_from(&indexed.root);
        }
        legacy.sessions.push((id.to_string(), updated, indexed));
    }
    let blobs = dir.join("blobs");
    for entry in std::fs::read_dir(dir.join("checkpoints"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let body = std::fs::read_to_string(entry.path())?;
        let Ok(cp) = serde_json::from_str::<Checkpoint>(&body) else {
            continue;
        };
        let mut snapshots = Vec::new();
        for f in &cp.affected_files {
            for h in [&f.base_snapshot_hash, &f.after_snapshot_hash]
                .into_iter()
                .flatten()
            {
                let Some(hex) = h.strip_prefix("sha256:").filter(|x| x.len() == 64) else {
                    continue;
                };
                // Whole-file hashes of hunk applies have no blob: skipped.
                if let Ok(bytes) = std::fs::read(blobs.join(&hex[..2]).join(&hex[2..]))
                    && sha256_hex(&bytes) == *h
                {
                    snapshots.push(encode(&bytes));
                }
            }
        }
        legacy.checkpoints.push((cp, body, snapshots));
    }
    if legacy.path.is_empty() {
        legacy.path = dir.display().to_string();
    }
    Ok(legacy)
}

fn write(store: &Store, legacy: Legacy) -> Result<(), StoreError> {
    let shared = store.shared();
    let pool = shared.pool.clone();
    let begin = shared.begin_write();
    shared.block(async move {
        let mut tx = pool.begin_with(begin).await?;
        // Another process may have imported this root while we read it.
        let marked = sqlx::query("SELECT imported_at FROM roots WHERE root_key = $1")
            .bind(&legacy.key)
            .fetch_optional(&mut *tx)
            .await?
            .map(|r| r.try_get::<Option<String>, _>(0))
            .transpose()?
            .flatten();
        if marked.is_some() {
            return tx.commit().await;
        }
        ensure_root(&mut tx, &legacy.key, &legacy.path).await?;
        for (id, updated, session) in &legacy.sessions {
            session_rows(&mut tx, &legacy.key, id, updated, session).await?;
        }
        for (cp, body, snapshots) in &legacy.checkpoints {
            insert(&mut tx, &legacy.key, cp, body, snapshots).await?;
        }
        for record in &legacy.audit {
            insert_audit(&mut tx, &legacy.key, record, true).await?;
        }
        sqlx::query("UPDATE roots SET imported_at = $2 WHERE root_key = $1")
            .bind(&legacy.key)
            .bind(now())
            .execute(&mut *tx)
            .await?;
        tx.commit().await
    })
}

async fn session_rows(
    conn: &mut sqlx::AnyConnection,
    key: &str,
    id: &str,
    updated: &str,
    session: &IndexedSession,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO sessions (session_id, root_key, root, created_at, updated_at, jobs,
         pending_review, last_prompt) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (session_id) DO NOTHING",
    )
    .bind(id)
    .bind(key)
    .bind(&session.root)
    .bind(&session.created_at)
    .bind(updated)
    .bind(i64::try_from(session.jobs.len()).unwrap_or(0))
    .bind(i64::from(session.pending_review))
    .bind(session.last_prompt.as_deref())
    .execute(&mut *conn)
    .await?;
    for (i, line) in session.lines.iter().enumerate() {
        sqlx::query(
            "INSERT INTO session_records (session_id, seq, job_id, kind, cursor, ts, body)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(id)
        .bind(i64::try_from(i + 1).unwrap_or(i64::MAX))
        .bind(line.job_id.as_deref())
        .bind(&line.kind)
        .bind(line.cursor)
        .bind(line.ts.as_deref())
        .bind(&line.body)
        .execute(&mut *conn)
        .await?;
    }
    for job in &session.jobs {
        sqlx::query(
            "INSERT INTO jobs (session_id, job_id, prompt, status, started_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT (session_id, job_id) DO NOTHING",
        )
        .bind(id)
        .bind(&job.job_id)
        .bind(&job.prompt)
        .bind(job.status)
        .bind(&session.created_at)
        .execute(&mut *conn)
        .await?;
        if let Some((pending, bundle)) = &job.review {
            sqlx::query(
                "INSERT INTO reviews (session_id, job_id, pending, bundle, updated_at)
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT (session_id, job_id) DO NOTHING",
            )
            .bind(id)
            .bind(&job.job_id)
            .bind(i64::from(*pending))
            .bind(bundle)
            .bind(updated)
            .execute(&mut *conn)
            .await?;
        }
    }
    Ok(())
}
