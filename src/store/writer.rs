//! The session writer: the engine queues events, conversation records and
//! audit entries without waiting; one task on the store's runtime writes
//! them in order, each burst in one transaction (SQLite takes its write
//! lock up front and waits out other writers; PostgreSQL serializes audit
//! appends per root with an advisory lock), retrying when the database is
//! busy or briefly gone. `flush` waits for everything queued so far.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use sqlx::{AnyConnection, AnyPool};
use tokio::sync::mpsc;

use super::audit::{AuditEntry, AuditRecord};
use super::audit_write::{append_audit, insert_audit};
use super::db::StoreKind;
use super::error::{StoreError, classify};
use super::session::{IndexUpdate, RecordRow, now};

enum Msg {
    Create {
        root_key: String,
        root_path: String,
        session_id: String,
        ts: String,
        /// Its driver and lease (ms since the epoch), when one holds it.
        lease: Option<(String, i64)>,
    },
    Append {
        session_id: String,
        row: RecordRow,
    },
    Audit {
        root_key: String,
        root_path: String,
        entry: AuditEntry,
        time: String,
    },
    Flush(Done),
}

/// Who waits for a flush: a blocking caller or an async one.
enum Done {
    Blocking(std::sync::mpsc::SyncSender<()>),
    Async(tokio::sync::oneshot::Sender<()>),
}

impl Done {
    fn send(self) {
        match self {
            Done::Blocking(tx) => {
                let _ = tx.send(());
            }
            Done::Async(tx) => {
                let _ = tx.send(());
            }
        }
    }
}

/// The queue to the writer task, shared by a store's clones.
#[derive(Clone)]
pub(super) struct Queue {
    tx: mpsc::UnboundedSender<Msg>,
    /// The first write that failed since the last flush.
    failed: Arc<Mutex<Option<String>>>,
}

impl Queue {
    /// Starts the writer task on the store's runtime.
    pub fn start(
        runtime: &tokio::runtime::Handle,
        pool: AnyPool,
        kind: StoreKind,
        location: String,
    ) -> Queue {
        let (tx, rx) = mpsc::unbounded_channel();
        let failed = Arc::new(Mutex::new(None));
        let task = Task {
            pool,
            kind,
            location,
            failed: failed.clone(),
            down: false,
        };
        runtime.spawn(task.run(rx));
        Queue { tx, failed }
    }

    fn send(&self, msg: Msg) {
        if self.tx.send(msg).is_err()
            && let Ok(mut f) = self.failed.lock()
        {
            f.get_or_insert_with(|| "its writer has stopped".into());
        }
    }

    /// Resolves once everything queued before it is written (or failed):
    /// for what must survive a crash before the job goes on.
    pub fn barrier(&self) -> tokio::sync::oneshot::Receiver<()> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.send(Msg::Flush(Done::Async(tx)));
        rx
    }

    pub fn flush(&self, location: &str) -> Result<(), StoreError> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.send(Msg::Flush(Done::Blocking(tx)));
        let _ = rx.recv();
        self.take_failure(location)
    }

    /// `flush` for an async task: waits without blocking its thread.
    pub async fn flushed(&self, location: &str) -> Result<(), StoreError> {
        let _ = self.barrier().await;
        self.take_failure(location)
    }

    /// The first write that failed since the last flush, as an error.
    fn take_failure(&self, location: &str) -> Result<(), StoreError> {
        let failed = self.failed.lock().ok().and_then(|mut f| f.take());
        match failed {
            None => Ok(()),
            Some(reason) => Err(StoreError::Query {
                store: location.to_string(),
                reason: format!("some of this session was not stored: {reason}"),
            }),
        }
    }
}

/// A root's handle on the queue: what the engine records through.
#[derive(Clone)]
pub struct SessionWriter {
    queue: Queue,
    root_key: String,
    root_path: String,
}

impl SessionWriter {
    pub(super) fn new(queue: Queue, root_key: &str, root_path: &str) -> SessionWriter {
        SessionWriter {
            queue,
            root_key: root_key.to_string(),
            root_path: root_path.to_string(),
        }
    }

    /// Resolves once everything recorded so far is written.
    pub fn barrier(&self) -> tokio::sync::oneshot::Receiver<()> {
        self.queue.barrier()
    }

    /// Starts session `session_id` (its id made by the caller), driven by
    /// `lease`'s owner until its time (ms since the epoch), if given.
    pub fn create_session(&self, session_id: &str, lease: Option<(String, i64)>) {
        self.queue.send(Msg::Create {
            root_key: self.root_key.clone(),
            root_path: self.root_path.clone(),
            session_id: session_id.to_string(),
            ts: now(),
            lease,
        });
    }

    /// Appends one record to session `session_id`.
    pub fn append(&self, session_id: &str, row: RecordRow) {
        self.queue.send(Msg::Append {
            session_id: session_id.to_string(),
            row,
        });
    }

    /// Appends to the root's audit chain.
    pub fn audit(&self, entry: AuditEntry) {
        self.queue.send(Msg::Audit {
            root_key: self.root_key.clone(),
            root_path: self.root_path.clone(),
            entry,
            time: now(),
        });
    }
}

struct Task {
    pool: AnyPool,
    kind: StoreKind,
    location: String,
    failed: Arc<Mutex<Option<String>>>,
    /// The database could not be reached by the last burst: the next ones
    /// try once, until one gets through.
    down: bool,
}

/// Writes of one burst at most (one transaction).
const BATCH: usize = 256;
/// How long a burst is retried (a busy database, a server restarting)
/// before it counts as failed.
const RETRY_FOR: Duration = Duration::from_secs(8);

impl Task {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Msg>) {
        while let Some(first) = rx.recv().await {
            let mut batch = vec![first];
            while batch.len() < BATCH {
                match rx.try_recv() {
                    Ok(m) => batch.push(m),
                    Err(_) => break,
                }
            }
            let mut flushes = Vec::new();
            let mut writes = Vec::new();
            for m in batch {
                match m {
                    Msg::Flush(tx) => flushes.push(tx),
                    other => writes.push(other),
                }
            }
            if !writes.is_empty() {
                self.write_all(&writes).await;
            }
            for done in flushes {
                done.send();
            }
        }
    }

    async fn write_all(&mut self, writes: &[Msg]) {
        let mut delay = Duration::from_millis(25);
        let window = if self.down { Duration::ZERO } else { RETRY_FOR };
        let deadline = tokio::time::Instant::now() + window;
        let mut last = loop {
            match self.transaction(writes).await {
                Ok(()) => {
                    self.down = false;
                    return;
                }
                Err(e) if tokio::time::Instant::now() + delay > deadline => break e,
                Err(_) => {}
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_secs(1));
        };
        let unreachable = matches!(classify(&self.location, &last), StoreError::Open { .. });
        self.down = unreachable;
        // One bad write must not cost the others: each alone, once (unless
        // the database cannot be reached at all).
        if writes.len() > 1 && !unreachable {
            let mut lost = 0;
            for w in writes {
                if let Err(e) = self.transaction(std::slice::from_ref(w)).await {
                    lost += 1;
                    last = e;
                }
            }
            if lost == 0 {
                return;
            }
        }
        if let Ok(mut failed) = self.failed.lock() {
            failed.get_or_insert_with(|| classify(&self.location, &last).to_string());
        }
    }

    async fn transaction(&self, writes: &[Msg]) -> Result<(), sqlx::Error> {
        let mut tx = self.pool.begin_with(self.kind.begin_write()).await?;
        let written = self.fill(&mut tx, writes).await;
        super::db::settle(tx, written).await
    }

    /// The writes of one transaction.
    async fn fill(&self, tx: &mut AnyConnection, writes: &[Msg]) -> Result<(), sqlx::Error> {
        let mut touched: Vec<(&str, &str)> = Vec::new();
        let mut known = Known::default();
        for w in writes {
            self.apply(tx, w, &mut known).await?;
            if let Msg::Append { session_id, row } = w {
                let ts = row.ts.as_str();
                match touched.iter_mut().find(|(s, _)| s == session_id) {
                    Some(t) => t.1 = ts,
                    None => touched.push((session_id, ts)),
                }
            }
        }
        for (session_id, ts) in touched {
            sqlx::query("UPDATE sessions SET updated_at = $2 WHERE session_id = $1")
                .bind(session_id)
                .bind(ts)
                .execute(&mut *tx)
                .await?;
        }
        if self.kind == super::StoreKind::Postgres {
            // Hosts following these jobs get them as soon as they commit.
            for payload in committed_notices(writes) {
                sqlx::query("SELECT pg_notify('agent_tui_events', $1)")
                    .bind(payload)
                    .execute(&mut *tx)
                    .await?;
            }
        }
        Ok(())
    }

    async fn apply(
        &self,
        conn: &mut AnyConnection,
        w: &Msg,
        known: &mut Known,
    ) -> Result<(), sqlx::Error> {
        match w {
            Msg::Create {
                root_key,
                root_path,
                session_id,
                ts,
                lease,
            } => {
                known.ensure_root(conn, root_key, root_path).await?;
                let (owner, until) = match lease {
                    Some((owner, until)) => (Some(owner.as_str()), Some(*until)),
                    None => (None, None),
                };
                sqlx::query(
                    "INSERT INTO sessions (session_id, root_key, root, created_at, updated_at,
                     owner, lease_until) VALUES ($1, $2, $3, $4, $4, $5, $6)
                     ON CONFLICT (session_id) DO NOTHING",
                )
                .bind(session_id)
                .bind(root_key)
                .bind(root_path)
                .bind(ts)
                .bind(owner)
                .bind(until)
                .execute(&mut *conn)
                .await?;
            }
            Msg::Append { session_id, row } => {
                sqlx::query(
                    "INSERT INTO session_records (session_id, seq, job_id, kind, cursor, ts, body)
                     SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3, $4, $5, $6
                     FROM session_records WHERE session_id = $1",
                )
                .bind(session_id)
                .bind(row.job_id.as_deref())
                .bind(&row.kind)
                .bind(row.cursor)
                .bind(&row.ts)
                .bind(&row.body)
                .execute(&mut *conn)
                .await?;
                let job = row.job_id.as_deref().unwrap_or_default();
                apply_index(conn, session_id, job, &row.ts, &row.index).await?;
            }
            Msg::Audit {
                root_key,
                root_path,
                entry,
                time,
            } => {
                known.ensure_root(conn, root_key, root_path).await?;
                // The chain's head, once read under the root's lock, is
                // known for the rest of the transaction: one insert each.
                let record = match known.heads.get(root_key) {
                    Some((seq, hash)) => {
                        let record =
                            AuditRecord::next(Some((*seq, hash)), entry.clone(), time.clone());
                        insert_audit(conn, root_key, &record, false).await?;
                        record
                    }
                    None => {
                        append_audit(conn, self.kind, root_key, entry.clone(), time.clone()).await?
                    }
                };
                known
                    .heads
                    .insert(root_key.clone(), (record.seq, record.hash));
            }
            Msg::Flush(_) => {}
        }
        Ok(())
    }
}

/// What one transaction has done already: roots it made sure of, and
/// the head of each audit chain it appended to (under that root's lock).
#[derive(Default)]
struct Known {
    roots: std::collections::HashSet<String>,
    heads: std::collections::HashMap<String, (u64, String)>,
}

impl Known {
    async fn ensure_root(
        &mut self,
        conn: &mut AnyConnection,
        root_key: &str,
        root_path: &str,
    ) -> Result<(), sqlx::Error> {
        if self.roots.insert(root_key.to_string()) {
            ensure_root(conn, root_key, root_path).await?;
        }
        Ok(())
    }
}

pub(super) async fn ensure_root(
    conn: &mut AnyConnection,
    root_key: &str,
    root_path: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO roots (root_key, path, created_at) VALUES ($1, $2, $3)
         ON CONFLICT (root_key) DO NOTHING",
    )
    .bind(root_key)
    .bind(root_path)
    .bind(now())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// A job row's status.
async fn set_job_status(
    conn: &mut AnyConnection,
    session_id: &str,
    job_id: &str,
    status: &str,
    ts: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE jobs SET status = $3, updated_at = $4 WHERE session_id = $1 AND job_id = $2",
    )
    .bind(session_id)
    .bind(job_id)
    .bind(status)
    .bind(ts)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

async fn apply_index(
    conn: &mut AnyConnection,
    session_id: &str,
    job_id: &str,
    ts: &str,
    index: &IndexUpdate,
) -> Result<(), sqlx::Error> {
    match index {
        IndexUpdate::None => {}
        IndexUpdate::JobQueued { prompt } => {
            sqlx::query(
                "INSERT INTO jobs (session_id, job_id, prompt, status, started_at, updated_at)
                 VALUES ($1, $2, $3, 'queued', $4, $4) ON CONFLICT (session_id, job_id) DO NOTHING",
            )
            .bind(session_id)
            .bind(job_id)
            .bind(prompt)
            .bind(ts)
            .execute(&mut *conn)
            .await?;
        }
        IndexUpdate::JobStarted { prompt } => {
            // A queued job's row is there already: it runs now.
            sqlx::query(
                "INSERT INTO jobs (session_id, job_id, prompt, status, started_at, updated_at)
                 VALUES ($1, $2, $3, 'running', $4, $4) ON CONFLICT (session_id, job_id)
                 DO UPDATE SET status = 'running', started_at = excluded.started_at,
                 updated_at = excluded.updated_at WHERE jobs.status = 'queued'",
            )
            .bind(session_id)
            .bind(job_id)
            .bind(prompt)
            .bind(ts)
            .execute(&mut *conn)
            .await?;
            sqlx::query(
                "UPDATE sessions SET last_prompt = $2,
                 jobs = (SELECT COUNT(*) FROM jobs WHERE session_id = $1) WHERE session_id = $1",
            )
            .bind(session_id)
            .bind(prompt)
            .execute(&mut *conn)
            .await?;
        }
        IndexUpdate::JobStatus(status) => {
            set_job_status(conn, session_id, job_id, status, ts).await?
        }
        IndexUpdate::Review {
            pending,
            bundle,
            status,
        } => {
            if let Some(status) = status {
                set_job_status(conn, session_id, job_id, status, ts).await?;
            }
            sqlx::query(
                "INSERT INTO reviews (session_id, job_id, pending, bundle, updated_at)
                 VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (session_id, job_id) DO UPDATE
                 SET pending = excluded.pending, bundle = excluded.bundle,
                     updated_at = excluded.updated_at",
            )
            .bind(session_id)
            .bind(job_id)
            .bind(i64::from(*pending))
            .bind(bundle)
            .bind(ts)
            .execute(&mut *conn)
            .await?;
            sqlx::query(
                "UPDATE sessions SET pending_review =
                 (SELECT COUNT(*) FROM reviews WHERE session_id = $1 AND pending = 1)
                 WHERE session_id = $1",
            )
            .bind(session_id)
            .execute(&mut *conn)
            .await?;
        }
    }
    Ok(())
}

/// The notices of a commit, one per job with rows in it: the job's id,
/// then (on the next line) its events as a JSON array when they fit in a
/// notice, so a host following the job need not read them back.
fn committed_notices(writes: &[Msg]) -> Vec<String> {
    let mut jobs: Vec<(&str, Vec<&str>)> = Vec::new();
    for w in writes {
        let Msg::Append { row, .. } = w else { continue };
        let Some(job) = row.job_id.as_deref() else {
            continue;
        };
        let at = match jobs.iter().position(|(j, _)| *j == job) {
            Some(at) => at,
            None => {
                jobs.push((job, Vec::new()));
                jobs.len() - 1
            }
        };
        if row.cursor.is_some() {
            jobs[at].1.push(row.body.as_str());
        }
    }
    jobs.into_iter()
        .map(|(job, events)| {
            let size = job.len() + events.iter().map(|e| e.len() + 1).sum::<usize>() + 3;
            if events.is_empty() || size >= super::server_hosts::MAX_PAYLOAD {
                job.to_string()
            } else {
                format!("{job}\n[{}]", events.join(","))
            }
        })
        .collect()
}
