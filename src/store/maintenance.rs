//! Keeping the store healthy: `store check` (the database's own integrity
//! check, every checkpoint and snapshot readable, every audit chain
//! intact), `store backup` (a consistent online copy of SQLite), and what
//! `doctor` shows (kind, location, schema version, size).

use std::path::Path;

use sqlx::Row;

use super::audit::{AuditRecord, Verification, verify_to_head};
use super::error::StoreError;
use super::snapshots::decode;
use super::{RootStore, Store, StoreKind};

/// What `doctor` shows of the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreInfo {
    pub kind: StoreKind,
    pub location: String,
    pub schema_version: i64,
    /// Bytes on disk (SQLite: the file and its WAL) or in the database.
    pub size: Option<u64>,
}

/// What `store check` found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Check {
    pub sessions: u64,
    pub checkpoints: u64,
    pub snapshots: u64,
    pub audit_records: u64,
    /// Problems in the order found; empty when the store is sound.
    pub problems: Vec<String>,
}

impl Store {
    pub fn info(&self) -> StoreInfo {
        let size = match (self.kind(), &self.shared().path) {
            (StoreKind::Sqlite, Some(path)) => {
                let len = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
                let wal = path.with_extension("db-wal");
                Some(len(path) + len(&wal))
            }
            _ => {
                let pool = self.shared().pool.clone();
                self.shared()
                    .block(async move {
                        let row = sqlx::query("SELECT pg_database_size(current_database())")
                            .fetch_one(&pool)
                            .await?;
                        row.try_get::<i64, _>(0)
                    })
                    .ok()
                    .and_then(|n| u64::try_from(n).ok())
            }
        };
        StoreInfo {
            kind: self.kind(),
            location: self.location().to_string(),
            schema_version: self.schema_version(),
            size,
        }
    }

    /// Checks everything the store holds; `problems` lists what is wrong.
    pub fn check(&self) -> Result<Check, StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let kind = shared.kind;
        let mut check = Check::default();
        if kind == StoreKind::Sqlite {
            let found: Vec<String> = shared.block(async move {
                let mut out: Vec<String> = sqlx::query("PRAGMA integrity_check")
                    .fetch_all(&pool)
                    .await?
                    .iter()
                    .map(|r| r.try_get(0))
                    .collect::<Result<_, _>>()?;
                out.retain(|s| s != "ok");
                let fk = sqlx::query("PRAGMA foreign_key_check")
                    .fetch_all(&pool)
                    .await?;
                for row in fk {
                    let table: String = row.try_get(0)?;
                    out.push(format!("a row of {table} points at a missing parent"));
                }
                Ok(out)
            })?;
            check
                .problems
                .extend(found.into_iter().map(|p| format!("database: {p}")));
        }
        let pool = shared.pool.clone();
        let counts = shared.block(async move {
            let mut out = Vec::new();
            for sql in [
                "SELECT COUNT(*) FROM sessions",
                "SELECT COUNT(*) FROM checkpoints",
                "SELECT COUNT(*) FROM snapshots",
            ] {
                out.push(
                    sqlx::query(sql)
                        .fetch_one(&pool)
                        .await?
                        .try_get::<i64, _>(0)?,
                );
            }
            Ok(out)
        })?;
        let n = |i: usize| {
            counts
                .get(i)
                .and_then(|v| u64::try_from(*v).ok())
                .unwrap_or(0)
        };
        (check.sessions, check.checkpoints, check.snapshots) = (n(0), n(1), n(2));
        self.check_snapshots(&mut check)?;
        self.check_checkpoints(&mut check)?;
        for key in self.root_keys()? {
            let root = RootStore {
                store: self.clone(),
                key: key.clone(),
                path: String::new(),
            };
            match root.verify_audit()? {
                Verification::Intact { records } => check.audit_records += records,
                Verification::Broken { line, seq, reason } => {
                    check.problems.push(format!(
                        "audit chain of root {key}: record {line} (seq {}): {reason}",
                        seq.map_or("?".into(), |s| s.to_string())
                    ));
                }
            }
        }
        Ok(check)
    }

    fn root_keys(&self) -> Result<Vec<String>, StoreError> {
        self.shared().column(
            "SELECT root_key FROM roots ORDER BY root_key".into(),
            Vec::new(),
        )
    }

    fn check_snapshots(&self, check: &mut Check) -> Result<(), StoreError> {
        let pool = self.shared().pool.clone();
        let bad: Vec<String> = self.shared().block(async move {
            let rows = sqlx::query("SELECT hash, size, codec, data FROM snapshots ORDER BY hash")
                .fetch_all(&pool)
                .await?;
            let mut bad = Vec::new();
            for r in rows {
                let hash: String = r.try_get(0)?;
                if let Err(e) = decode(
                    &hash,
                    r.try_get(1)?,
                    &r.try_get::<String, _>(2)?,
                    r.try_get(3)?,
                ) {
                    bad.push(e);
                }
            }
            Ok(bad)
        })?;
        check.problems.extend(bad);
        Ok(())
    }

    fn check_checkpoints(&self, check: &mut Check) -> Result<(), StoreError> {
        let pool = self.shared().pool.clone();
        let bodies: Vec<(String, String)> = self.shared().block(async move {
            sqlx::query("SELECT checkpoint_id, body FROM checkpoints ORDER BY checkpoint_id")
                .fetch_all(&pool)
                .await?
                .iter()
                .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
                .collect()
        })?;
        let pool = self.shared().pool.clone();
        let held: std::collections::HashSet<String> = self.shared().block(async move {
            sqlx::query("SELECT hash FROM snapshots")
                .fetch_all(&pool)
                .await?
                .iter()
                .map(|r| r.try_get(0))
                .collect()
        })?;
        for (id, body) in bodies {
            match serde_json::from_str::<crate::protocol::checkpoint::Checkpoint>(&body) {
                Err(e) => check
                    .problems
                    .push(format!("checkpoint {id} cannot be read: {e}")),
                // Its files' prior bytes: without them it cannot roll back.
                Ok(cp) => {
                    let missing: Vec<&str> = cp
                        .affected_files
                        .iter()
                        .filter(|f| {
                            f.base_snapshot_hash
                                .as_ref()
                                .is_some_and(|h| !held.contains(h))
                        })
                        .map(|f| f.file_path.as_str())
                        .collect();
                    if !missing.is_empty() {
                        check.problems.push(format!(
                            "checkpoint {id} lacks the stored bytes of {} (it cannot be rolled back \
                             for them; restore a backup of the store)",
                            missing.join(", ")
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Writes a consistent copy of a SQLite store to `target` while others
    /// may be using it; PostgreSQL stores are backed up with `pg_dump`.
    pub fn backup(&self, target: &Path) -> Result<u64, StoreError> {
        if self.kind() != StoreKind::Sqlite {
            return Err(StoreError::Invalid(format!(
                "store {} is PostgreSQL: back it up with pg_dump (agent-tui store backup copies \
                 SQLite stores)",
                self.location()
            )));
        }
        if target.exists() {
            return Err(StoreError::Invalid(format!(
                "{} already exists; name a new file",
                target.display()
            )));
        }
        // Written in a private folder beside the target and made readable by
        // its owner only before it gets its name, as the store itself is.
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let io = |e: std::io::Error| {
            StoreError::Invalid(format!("cannot write {}: {e}", target.display()))
        };
        let private = tempfile::Builder::new()
            .prefix(".agent-tui-backup")
            .tempdir_in(parent)
            .map_err(io)?;
        let copy = private.path().join("state.db");
        let pool = self.shared().pool.clone();
        let path = copy.display().to_string();
        self.shared().block(async move {
            sqlx::query("VACUUM INTO $1")
                .bind(path)
                .execute(&pool)
                .await?;
            Ok(())
        })?;
        crate::platform::fs::set_mode(&copy, 0o600).map_err(io)?;
        std::fs::hard_link(&copy, target).map_err(io)?;
        Ok(std::fs::metadata(target).map(|m| m.len()).unwrap_or(0))
    }
}

impl RootStore {
    /// Verifies this root's audit chain, oldest record first.
    pub fn verify_audit(&self) -> Result<Verification, StoreError> {
        let head = self.audit_head()?;
        Ok(verify_to_head(self.audit_records(None, None, None)?, head))
    }

    /// The seq and hash of this root's newest audit record, as the store
    /// keeps them beside the chain.
    fn audit_head(&self) -> Result<Option<(u64, String)>, StoreError> {
        let pool = self.store.shared().pool.clone();
        let key = self.key.clone();
        self.store.shared().block(async move {
            let row = sqlx::query("SELECT seq, hash FROM audit_heads WHERE root_key = $1")
                .bind(key)
                .fetch_optional(&pool)
                .await?;
            row.map(|r| {
                Ok((
                    u64::try_from(r.try_get::<i64, _>(0)?).unwrap_or(0),
                    r.try_get::<String, _>(1)?,
                ))
            })
            .transpose()
        })
    }

    /// This root's audit records, oldest first: those of `session` only
    /// (when given) and of `user` only (when given), the newest `limit` of
    /// them (when given).
    pub fn audit_records(
        &self,
        session: Option<&str>,
        user: Option<&str>,
        limit: Option<usize>,
    ) -> Result<Vec<AuditRecord>, StoreError> {
        let pool = self.store.shared().pool.clone();
        let key = self.key.clone();
        let session = session.map(str::to_string);
        let user = user.map(str::to_string);
        let limit = limit.map_or(i64::MAX, |l| i64::try_from(l).unwrap_or(i64::MAX));
        let mut records = self.store.shared().block(async move {
            let rows = sqlx::query(
                "SELECT seq, time, session_id, job_id, action, target, approved, outcome, prev,
                 hash, user_name FROM audit WHERE root_key = $1 AND ($2 IS NULL OR session_id = $2)
                 AND ($3 IS NULL OR user_name = $3) ORDER BY seq DESC LIMIT $4",
            )
            .bind(key)
            .bind(session)
            .bind(user)
            .bind(limit)
            .fetch_all(&pool)
            .await?;
            rows.iter()
                .map(|r| {
                    Ok(AuditRecord {
                        seq: u64::try_from(r.try_get::<i64, _>(0)?).unwrap_or(0),
                        time: r.try_get(1)?,
                        session: r.try_get(2)?,
                        job: r.try_get(3)?,
                        user: r.try_get(10)?,
                        action: r.try_get(4)?,
                        target: r.try_get(5)?,
                        approved: r.try_get::<Option<i64>, _>(6)?.map(|a| a != 0),
                        outcome: r.try_get(7)?,
                        prev: r.try_get(8)?,
                        hash: r.try_get(9)?,
                    })
                })
                .collect::<Result<Vec<_>, sqlx::Error>>()
        })?;
        records.reverse();
        Ok(records)
    }
}
