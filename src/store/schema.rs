//! The store's schema: embedded, versioned migrations applied in one
//! transaction on open; a store from a newer agent-tui is refused before
//! anything is written. The same SQL runs on SQLite and PostgreSQL.

use sqlx::Row;

use super::db::Shared;
use super::error::StoreError;

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = 10;

/// Migration `n` takes a store from version `n - 1` to `n`; `{bytes}` is
/// the kind's binary column type.
const MIGRATIONS: &[&str] = &[
    // 1: everything SPEC section 15 lists.
    "
    CREATE TABLE store_meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    CREATE TABLE roots (
        root_key TEXT PRIMARY KEY,
        path TEXT NOT NULL,
        created_at TEXT NOT NULL,
        imported_at TEXT
    );
    CREATE TABLE sessions (
        session_id TEXT PRIMARY KEY,
        root_key TEXT NOT NULL REFERENCES roots (root_key),
        root TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        jobs BIGINT NOT NULL DEFAULT 0,
        pending_review BIGINT NOT NULL DEFAULT 0,
        last_prompt TEXT
    );
    CREATE INDEX sessions_by_root ON sessions (root_key, updated_at, session_id);
    CREATE TABLE session_records (
        session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
        seq BIGINT NOT NULL,
        job_id TEXT,
        kind TEXT NOT NULL,
        cursor BIGINT,
        ts TEXT,
        body TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
    );
    CREATE TABLE jobs (
        session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
        job_id TEXT NOT NULL,
        prompt TEXT NOT NULL,
        status TEXT,
        started_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        idempotency_key TEXT,
        PRIMARY KEY (session_id, job_id)
    );
    CREATE TABLE reviews (
        session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
        job_id TEXT NOT NULL,
        pending BIGINT NOT NULL,
        bundle TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (session_id, job_id)
    );
    CREATE TABLE event_cursors (
        client_id TEXT NOT NULL,
        job_id TEXT NOT NULL,
        cursor BIGINT NOT NULL,
        PRIMARY KEY (client_id, job_id)
    );
    CREATE TABLE snapshots (
        hash TEXT PRIMARY KEY,
        size BIGINT NOT NULL,
        codec TEXT NOT NULL,
        data {bytes} NOT NULL
    );
    CREATE TABLE checkpoints (
        checkpoint_id TEXT PRIMARY KEY,
        root_key TEXT NOT NULL REFERENCES roots (root_key),
        session_id TEXT,
        job_id TEXT NOT NULL,
        created_at TEXT NOT NULL,
        kind TEXT NOT NULL,
        body TEXT NOT NULL
    );
    CREATE INDEX checkpoints_by_root ON checkpoints (root_key, created_at, checkpoint_id);
    CREATE TABLE checkpoint_snapshots (
        checkpoint_id TEXT NOT NULL REFERENCES checkpoints (checkpoint_id) ON DELETE CASCADE,
        hash TEXT NOT NULL REFERENCES snapshots (hash),
        PRIMARY KEY (checkpoint_id, hash)
    );
    CREATE TABLE audit (
        root_key TEXT NOT NULL REFERENCES roots (root_key),
        seq BIGINT NOT NULL,
        time TEXT NOT NULL,
        session_id TEXT,
        job_id TEXT,
        action TEXT NOT NULL,
        target TEXT NOT NULL,
        approved BIGINT,
        outcome TEXT NOT NULL,
        prev TEXT NOT NULL,
        hash TEXT NOT NULL,
        PRIMARY KEY (root_key, seq)
    );
    ",
    // 2: the stat cache of each root's files with their content's snapshot,
    // so a command's changes can be rolled back (checkpoint kind `exec`).
    "
    CREATE TABLE file_index (
        root_key TEXT NOT NULL REFERENCES roots (root_key),
        path TEXT NOT NULL,
        size BIGINT NOT NULL,
        mtime_ns BIGINT NOT NULL,
        ctime_ns BIGINT NOT NULL,
        ino BIGINT NOT NULL,
        mode BIGINT NOT NULL,
        hash TEXT NOT NULL REFERENCES snapshots (hash),
        PRIMARY KEY (root_key, path)
    );
    ",
    // 3: the write-ahead journal of applies and rollbacks (an entry per
    // operation whose project files are being written).
    "
    CREATE TABLE journal (
        checkpoint_id TEXT PRIMARY KEY REFERENCES checkpoints (checkpoint_id) ON DELETE CASCADE,
        root_key TEXT NOT NULL REFERENCES roots (root_key),
        intent TEXT NOT NULL,
        started_at TEXT NOT NULL,
        files TEXT NOT NULL
    );
    ",
    // 4: who drives a session (one process at a time: its owner, until its
    // lease runs out), and a job's events found by job and cursor.
    "
    ALTER TABLE sessions ADD COLUMN owner TEXT;
    ALTER TABLE sessions ADD COLUMN lease_until BIGINT;
    CREATE INDEX session_records_by_job ON session_records (job_id, cursor);
    CREATE INDEX jobs_by_job ON jobs (job_id);
    ",
    // 5: `agent-tui serve`: its tokens (only their sha256), who made each
    // session and job through it, and the answers kept for an
    // `Idempotency-Key`.
    "
    CREATE TABLE server_tokens (
        name TEXT PRIMARY KEY,
        token_sha256 TEXT NOT NULL UNIQUE,
        role TEXT NOT NULL,
        created_at TEXT NOT NULL,
        revoked_at TEXT
    );
    CREATE TABLE server_sessions (
        session_id TEXT PRIMARY KEY,
        user_name TEXT NOT NULL,
        workspace_id TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE TABLE server_jobs (
        job_id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        user_name TEXT NOT NULL,
        workspace_id TEXT NOT NULL,
        created_at TEXT NOT NULL,
        host TEXT,
        request TEXT,
        status TEXT,
        provider TEXT,
        input_tokens BIGINT NOT NULL DEFAULT 0,
        output_tokens BIGINT NOT NULL DEFAULT 0,
        cost_microusd BIGINT NOT NULL DEFAULT 0
    );
    CREATE INDEX server_jobs_by_user ON server_jobs (user_name, created_at);
    CREATE INDEX server_jobs_open ON server_jobs (status, host);
    CREATE TABLE server_hosts (
        host TEXT PRIMARY KEY,
        started_at TEXT NOT NULL,
        last_seen BIGINT NOT NULL
    );
    CREATE TABLE server_relay (
        relay_id TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        job_id TEXT NOT NULL,
        command TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        status BIGINT,
        answer TEXT
    );
    CREATE INDEX server_relay_by_host ON server_relay (host, status);
    CREATE TABLE server_rates (
        token_name TEXT PRIMARY KEY,
        window_start BIGINT NOT NULL,
        count BIGINT NOT NULL
    );
    CREATE TABLE server_idempotency (
        user_name TEXT NOT NULL,
        idem_key TEXT NOT NULL,
        request TEXT NOT NULL,
        status BIGINT,
        response TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (user_name, idem_key)
    );
    ",
    // 6: each root's audit head, written with every record: a chain whose
    // newest records were removed no longer ends where its head says.
    "
    CREATE TABLE audit_heads (
        root_key TEXT PRIMARY KEY REFERENCES roots (root_key),
        seq BIGINT NOT NULL,
        hash TEXT NOT NULL
    );
    INSERT INTO audit_heads (root_key, seq, hash)
        SELECT a.root_key, a.seq, a.hash FROM audit a
        WHERE a.seq = (SELECT MAX(b.seq) FROM audit b WHERE b.root_key = a.root_key);
    ",
    // 7: the server's user whose request caused a record (null: done on
    // this machine), a field an auditor filters on.
    "
    ALTER TABLE audit ADD COLUMN user_name TEXT;
    CREATE INDEX audit_by_user ON audit (root_key, user_name, seq);
    ",
    // 8: web pages web_fetch read, by URL, with their validators.
    "
    CREATE TABLE web_cache (
        url TEXT PRIMARY KEY,
        etag TEXT,
        last_modified TEXT,
        status BIGINT NOT NULL,
        content_type TEXT NOT NULL,
        body {bytes} NOT NULL,
        truncated BIGINT NOT NULL,
        fetched_at TEXT NOT NULL
    );
    ",
    // 9: images attached to instructions, by the sha256 of their bytes
    // (sessions name them; the same picture twice is kept once).
    "
    CREATE TABLE images (
        sha256 TEXT PRIMARY KEY,
        media_type TEXT NOT NULL,
        data {bytes} NOT NULL,
        created_at TEXT NOT NULL
    );
    ",
    // 10: project hooks a user trusted, as they were then (SPEC 21).
    "
    CREATE TABLE hook_trust (
        root_key TEXT NOT NULL,
        name TEXT NOT NULL,
        body TEXT NOT NULL,
        trusted_at TEXT NOT NULL,
        PRIMARY KEY (root_key, name)
    );
    ",
];

/// The store's schema version (0: empty), read on `conn`.
async fn version(
    conn: &mut sqlx::AnyConnection,
    kind: super::StoreKind,
) -> Result<i64, sqlx::Error> {
    // Asked without touching a missing table: PostgreSQL would abort the
    // transaction on the error.
    let exists = match kind {
        super::StoreKind::Sqlite => {
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'store_meta'"
        }
        super::StoreKind::Postgres => {
            "SELECT COUNT(*) FROM pg_catalog.pg_tables
             WHERE schemaname = current_schema() AND tablename = 'store_meta'"
        }
    };
    let count: i64 = sqlx::query(exists)
        .fetch_one(&mut *conn)
        .await?
        .try_get(0)?;
    if count == 0 {
        return Ok(0);
    }
    let row = sqlx::query("SELECT value FROM store_meta WHERE key = 'schema_version'")
        .fetch_optional(&mut *conn)
        .await?;
    match row {
        // An unreadable version is treated as newer: nothing is written.
        Some(row) => Ok(row
            .try_get::<String, _>(0)?
            .parse::<i64>()
            .unwrap_or(i64::MAX)),
        None => Ok(0),
    }
}

/// Brings the store to `SCHEMA_VERSION` in one transaction; refuses a
/// store from a newer version without writing.
pub(super) fn migrate(shared: &Shared) -> Result<i64, StoreError> {
    let pool = shared.pool.clone();
    let kind = shared.kind;
    let current = shared.block(async move {
        let mut conn = pool.acquire().await?;
        version(&mut conn, kind).await
    })?;
    if current > SCHEMA_VERSION {
        return Err(StoreError::Newer {
            store: shared.location.clone(),
            found: current,
            supported: SCHEMA_VERSION,
        });
    }
    if current == SCHEMA_VERSION {
        return Ok(current);
    }
    if shared.kind == super::StoreKind::Sqlite {
        let pool = shared.pool.clone();
        shared.block(async move {
            sqlx::query("PRAGMA journal_mode = WAL")
                .execute(&pool)
                .await?;
            Ok(())
        })?;
    }
    let pool = shared.pool.clone();
    let begin = shared.begin_write();
    let applied = shared.block(async move {
        let mut tx = pool.begin_with(begin).await?;
        if kind == super::StoreKind::Postgres {
            // One migrating process at a time; the others wait, then see it done.
            sqlx::query("SELECT 1 FROM (SELECT pg_advisory_xact_lock(7411021)) AS l")
                .execute(&mut *tx)
                .await?;
        }
        // Another process may have migrated while this one waited.
        let now = version(&mut tx, kind).await?;
        if now < SCHEMA_VERSION {
            let bytes = match kind {
                super::StoreKind::Sqlite => "BLOB",
                super::StoreKind::Postgres => "BYTEA",
            };
            for sql in &MIGRATIONS[now.max(0) as usize..] {
                let sql = sql.replace("{bytes}", bytes);
                sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
                    .execute(&mut *tx)
                    .await?;
            }
            sqlx::query(
                "INSERT INTO store_meta (key, value) VALUES ('schema_version', $1)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            )
            .bind(SCHEMA_VERSION.to_string())
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(now)
    })?;
    if applied > SCHEMA_VERSION {
        return Err(StoreError::Newer {
            store: shared.location.clone(),
            found: applied,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(SCHEMA_VERSION)
}
