//! Appending to a root's audit chain inside the caller's transaction:
//! the next record after the chain's head, and the head moved with it.

use sqlx::{AnyConnection, Row};

use super::audit::{AuditEntry, AuditRecord};
use super::db::StoreKind;

/// Appends one record to `root_key`'s chain, after its current head; the
/// caller's transaction makes the read and the insert one step.
pub(super) async fn append_audit(
    conn: &mut AnyConnection,
    kind: StoreKind,
    root_key: &str,
    entry: AuditEntry,
    time: String,
) -> Result<AuditRecord, sqlx::Error> {
    if kind == StoreKind::Postgres {
        sqlx::query("SELECT 1 FROM (SELECT pg_advisory_xact_lock(hashtext($1))) AS l")
            .bind(root_key)
            .execute(&mut *conn)
            .await?;
    }
    let head =
        sqlx::query("SELECT seq, hash FROM audit WHERE root_key = $1 ORDER BY seq DESC LIMIT 1")
            .bind(root_key)
            .fetch_optional(&mut *conn)
            .await?;
    let head = match head {
        Some(row) => Some((row.try_get::<i64, _>(0)?, row.try_get::<String, _>(1)?)),
        None => None,
    };
    let prev = head
        .as_ref()
        .map(|(s, h)| (u64::try_from(*s).unwrap_or(0), h.as_str()));
    let record = AuditRecord::next(prev, entry, time);
    insert_audit(conn, root_key, &record, false).await?;
    Ok(record)
}

/// Inserts `record` as it is (appends; the upgrade import skips a seq
/// that is already there, an append fails on it), and moves the root's
/// head to it when it is the newest.
pub(super) async fn insert_audit(
    conn: &mut AnyConnection,
    root_key: &str,
    record: &AuditRecord,
    imported: bool,
) -> Result<(), sqlx::Error> {
    let sql = if imported {
        "INSERT INTO audit (root_key, seq, time, session_id, job_id, action, target, approved,
         outcome, prev, hash, user_name) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
         ON CONFLICT (root_key, seq) DO NOTHING"
    } else {
        "INSERT INTO audit (root_key, seq, time, session_id, job_id, action, target, approved,
         outcome, prev, hash, user_name) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
    };
    sqlx::query(sql)
        .bind(root_key)
        .bind(i64::try_from(record.seq).unwrap_or(i64::MAX))
        .bind(&record.time)
        .bind(record.session.as_deref())
        .bind(record.job.as_deref())
        .bind(&record.action)
        .bind(&record.target)
        .bind(record.approved.map(i64::from))
        .bind(&record.outcome)
        .bind(&record.prev)
        .bind(&record.hash)
        .bind(record.user.as_deref())
        .execute(&mut *conn)
        .await?;
    sqlx::query(
        "INSERT INTO audit_heads (root_key, seq, hash) VALUES ($1, $2, $3)
         ON CONFLICT (root_key) DO UPDATE SET seq = excluded.seq, hash = excluded.hash
         WHERE excluded.seq > audit_heads.seq",
    )
    .bind(root_key)
    .bind(i64::try_from(record.seq).unwrap_or(i64::MAX))
    .bind(&record.hash)
    .execute(&mut *conn)
    .await?;
    Ok(())
}
