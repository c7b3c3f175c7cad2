//! The store handle: one connection pool (SQLite or PostgreSQL through
//! sqlx's `Any` driver) on a small runtime of its own, so callers on any
//! thread, inside an async task or not, use it through plain calls.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, ConnectOptions, Executor};

use super::error::{StoreError, classify};
use crate::config::{StorageConfig, check_url, redact_url};

thread_local! {
    /// Set while an async task that must never wait on the store is polled.
    static ON_ASYNC_TASK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// `fut`, polled as async-task code: a blocking store call made while it
/// runs is a bug (debug builds panic on one, so tests find it). Engine,
/// job and front-end tasks run this way; store work goes to the blocking
/// pool or awaits the store's own runtime.
pub fn no_blocking<F: Future>(fut: F) -> NoBlocking<F> {
    NoBlocking {
        inner: Box::pin(fut),
    }
}

/// A future whose polls refuse blocking store calls (`no_blocking`).
pub struct NoBlocking<F> {
    inner: std::pin::Pin<Box<F>>,
}

impl<F: Future> Future for NoBlocking<F> {
    type Output = F::Output;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<F::Output> {
        let before = ON_ASYNC_TASK.with(|f| f.replace(true));
        let polled = self.inner.as_mut().poll(cx);
        ON_ASYNC_TASK.with(|f| f.set(before));
        polled
    }
}

/// Which database holds the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    Sqlite,
    Postgres,
}

impl StoreKind {
    /// The statement that opens a write transaction: SQLite takes its write
    /// lock up front, so the busy timeout applies instead of a failure when
    /// two writers meet.
    pub(super) fn begin_write(self) -> &'static str {
        match self {
            StoreKind::Sqlite => "BEGIN IMMEDIATE",
            StoreKind::Postgres => "BEGIN",
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            StoreKind::Sqlite => "sqlite",
            StoreKind::Postgres => "postgresql",
        }
    }
}

/// Where the store is, as `open` found it (for messages and `doctor`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Sqlite(PathBuf),
    /// The URL without a password, and the password (from `password_env`).
    Postgres {
        url: String,
        password: Option<String>,
    },
}

impl Target {
    /// Where `[storage]` (or `AGENT_TUI_DATABASE_URL`) points, under `home`.
    pub fn resolve(
        home: &Path,
        config: &StorageConfig,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Target, StoreError> {
        let (url, origin) = match env("AGENT_TUI_DATABASE_URL").filter(|v| !v.trim().is_empty()) {
            Some(url) => (url, "$AGENT_TUI_DATABASE_URL"),
            None => (config.url.clone(), "storage.url"),
        };
        let url = url.trim().to_string();
        check_url(&url).map_err(|reason| StoreError::Open {
            store: redact_url(&url),
            reason: format!("{origin}: {reason}"),
        })?;
        if url == "sqlite" {
            return Ok(Target::Sqlite(home.join("state.db")));
        }
        if let Some(path) = url.strip_prefix("sqlite:") {
            let path = path.strip_prefix("//").unwrap_or(path);
            return Ok(Target::Sqlite(home.join(path)));
        }
        let password = match &config.password_env {
            // The name SPEC and README give it, when none is configured.
            None => env(DEFAULT_PASSWORD_ENV).filter(|v| !v.is_empty()),
            Some(var) => {
                Some(
                    env(var)
                        .filter(|v| !v.is_empty())
                        .ok_or_else(|| StoreError::Open {
                            store: url.clone(),
                            reason: format!("storage.password_env names ${var}, which is not set"),
                        })?,
                )
            }
        };
        Ok(Target::Postgres { url, password })
    }

    pub fn kind(&self) -> StoreKind {
        match self {
            Target::Sqlite(_) => StoreKind::Sqlite,
            Target::Postgres { .. } => StoreKind::Postgres,
        }
    }

    /// The store's location as messages show it: a path, or the URL
    /// (which never holds the password).
    pub fn location(&self) -> String {
        match self {
            Target::Sqlite(path) => path.display().to_string(),
            Target::Postgres { url, .. } => redact_url(url),
        }
    }
}

/// What the handle's clones share.
pub(super) struct Shared {
    pub pool: AnyPool,
    /// The session writer's queue (flushed before the pool closes).
    pub queue: super::writer::Queue,
    pub kind: StoreKind,
    pub location: String,
    pub path: Option<PathBuf>,
    /// PostgreSQL: the URL with its password, for a `LISTEN` connection of
    /// its own (never shown: `location` is what is shown).
    pub listen_url: Option<String>,
    /// PostgreSQL: the queue of live-only events to relay to other hosts
    /// (started with the first).
    pub live: std::sync::OnceLock<tokio::sync::mpsc::UnboundedSender<String>>,
    /// The calls that may hold a connection at once (PostgreSQL): the
    /// others wait their turn here, in order, rather than time out in the
    /// pool, which keeps its short timeout for a store that cannot be
    /// reached.
    turns: Option<Arc<tokio::sync::Semaphore>>,
    runtime: Mutex<Option<tokio::runtime::Runtime>>,
    handle: tokio::runtime::Handle,
}

/// PostgreSQL connections a host keeps: a busy host's readers, its session
/// writer, its queue, relay and heartbeat (each host holds its own; the
/// server's default allows 100).
const PG_CONNECTIONS: u32 = 16;
/// Of them, how many calls may hold at once: the rest stay for the
/// writer and the host's own work.
const PG_TURNS: usize = 12;
/// The longest a call waits for its turn before the store is called
/// unavailable.
const TURN_WAIT: Duration = Duration::from_secs(60);

impl Drop for Shared {
    fn drop(&mut self) {
        let _ = self.queue.flush(&self.location);
        let pool = self.pool.clone();
        // Close the connections cleanly (SQLite checkpoints its WAL), then
        // stop the runtime without blocking whoever drops the last handle.
        let _ = block_on(&self.handle, async move { pool.close().await });
        if let Ok(mut rt) = self.runtime.lock()
            && let Some(rt) = rt.take()
        {
            rt.shutdown_background();
        }
    }
}

/// Runs `fut` on `handle`'s runtime and waits for it from any thread.
fn block_on<T: Send + 'static>(
    handle: &tokio::runtime::Handle,
    fut: impl Future<Output = T> + Send + 'static,
) -> Option<T> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    handle.spawn(async move {
        let _ = tx.send(fut.await);
    });
    rx.recv().ok()
}

/// Where the store's password is read when `[storage] password_env` names
/// no other variable.
pub const DEFAULT_PASSWORD_ENV: &str = "AGENT_TUI_DB_PASSWORD";

/// Opens the pool for `target` and applies the store's connection settings.
pub(super) fn connect(target: &Target) -> Result<Arc<Shared>, StoreError> {
    sqlx::any::install_default_drivers();
    let location = target.location();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("agent-tui-store")
        .enable_all()
        .build()
        .map_err(|e| StoreError::Open {
            store: location.clone(),
            reason: format!("cannot start its runtime: {e}"),
        })?;
    let handle = runtime.handle().clone();
    let (options, path) = match target {
        Target::Sqlite(path) => (sqlite_options(path, &location)?, Some(path.clone())),
        Target::Postgres { url, password } => (postgres_options(url, password.as_deref())?, None),
    };
    let listen_url = match target {
        Target::Postgres { url, password } => url::Url::parse(url).ok().map(|mut u| {
            if password.is_some() {
                let _ = u.set_password(password.as_deref());
            }
            u.to_string()
        }),
        Target::Sqlite(_) => None,
    };
    let kind = target.kind();
    let pool_options = pool_options(kind);
    // One connection first, on its own: what keeps the store from opening
    // (a damaged file, a refused connection, a wrong password) is said at
    // once, in its own words, not as a pool that timed out after retrying.
    let connected = block_on(&handle, async move {
        use sqlx::{Connection, Executor};
        let mut probe = sqlx::AnyConnection::connect_with(&options).await?;
        if kind == StoreKind::Sqlite {
            probe
                .execute("PRAGMA foreign_keys = ON; SELECT COUNT(*) FROM sqlite_master;")
                .await?;
        }
        probe.close().await?;
        pool_options.connect_with(options).await
    });
    let pool = match connected {
        Some(Ok(pool)) => pool,
        Some(Err(e)) => return Err(open_error(&location, &e)),
        None => {
            return Err(StoreError::Open {
                store: location,
                reason: "its runtime stopped".into(),
            });
        }
    };
    let queue = super::writer::Queue::start(&handle, pool.clone(), kind, location.clone());
    Ok(Arc::new(Shared {
        pool,
        queue,
        kind,
        location,
        path,
        listen_url,
        live: std::sync::OnceLock::new(),
        turns: (kind == StoreKind::Postgres)
            .then(|| Arc::new(tokio::sync::Semaphore::new(PG_TURNS))),
        runtime: Mutex::new(Some(runtime)),
        handle,
    }))
}

fn open_error(location: &str, e: &sqlx::Error) -> StoreError {
    match classify(location, e) {
        StoreError::Query { store, reason } => StoreError::Open { store, reason },
        other => other,
    }
}

fn sqlite_options(path: &Path, location: &str) -> Result<AnyConnectOptions, StoreError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::Open {
            store: location.to_string(),
            reason: format!("cannot create {}: {e}", dir.display()),
        })?;
    }
    check_sqlite_header(path, location)?;
    // The store holds prompts and code: readable by its owner only (SQLite
    // gives its -wal and -shm files the same mode).
    if !path.exists() {
        let _ = crate::platform::fs::owner_only(&mut std::fs::OpenOptions::new())
            .write(true)
            .create_new(true)
            .open(path);
    }
    let url = match crate::platform::paths::sqlite_url(path) {
        Some(text) => url::Url::parse(&text).map_err(|e| StoreError::Open {
            store: location.to_string(),
            reason: e.to_string(),
        })?,
        None => sqlx::sqlite::SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .to_url_lossy(),
    };
    AnyConnectOptions::from_url(&url).map_err(|e| StoreError::Open {
        store: location.to_string(),
        reason: e.to_string(),
    })
}

/// A file that exists but is not SQLite is refused before anything opens
/// it (SQLite would otherwise report it only at the first query).
fn check_sqlite_header(path: &Path, location: &str) -> Result<(), StoreError> {
    use std::io::Read;
    let mut head = [0u8; 16];
    let read = match std::fs::File::open(path) {
        Ok(mut f) => f.read(&mut head),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(StoreError::Open {
                store: location.to_string(),
                reason: e.to_string(),
            });
        }
    };
    match read {
        Ok(0) => Ok(()),
        Ok(n) if n == 16 && &head == b"SQLite format 3\0" => Ok(()),
        Ok(_) => Err(StoreError::Corrupt {
            store: location.to_string(),
            reason: "the file is not an SQLite database".into(),
        }),
        Err(e) => Err(StoreError::Open {
            store: location.to_string(),
            reason: e.to_string(),
        }),
    }
}

fn postgres_options(url: &str, password: Option<&str>) -> Result<AnyConnectOptions, StoreError> {
    let mut parsed = url::Url::parse(url).map_err(|e| StoreError::Open {
        store: redact_url(url),
        reason: format!("not a URL: {e}"),
    })?;
    if let Some(password) = password {
        parsed
            .set_password(Some(password))
            .map_err(|()| StoreError::Open {
                store: redact_url(url),
                reason: "the URL cannot hold a password (no user name?)".into(),
            })?;
    }
    AnyConnectOptions::from_url(&parsed).map_err(|e| StoreError::Open {
        store: redact_url(url),
        reason: e.to_string(),
    })
}

impl Shared {
    /// Runs `fut` on the store's runtime in the background.
    pub fn spawn(&self, fut: impl Future<Output = ()> + Send + 'static) {
        self.handle.spawn(fut);
    }

    /// Runs `fut` on the store's runtime and waits for its result.
    pub fn block<T: Send + 'static>(
        &self,
        fut: impl Future<Output = Result<T, sqlx::Error>> + Send + 'static,
    ) -> Result<T, StoreError> {
        debug_assert!(
            !ON_ASYNC_TASK.with(std::cell::Cell::get),
            "a blocking store call on an async task: run it on the blocking pool"
        );
        let turns = self.turns.clone();
        let fut = async move {
            // Held for the call: a host busier than its connections queues.
            let _turn = match &turns {
                Some(turns) => match tokio::time::timeout(TURN_WAIT, turns.acquire()).await {
                    Ok(Ok(turn)) => Some(turn),
                    Ok(Err(_)) | Err(_) => return Err(sqlx::Error::PoolTimedOut),
                },
                None => None,
            };
            fut.await
        };
        match block_on(&self.handle, fut) {
            Some(Ok(v)) => Ok(v),
            Some(Err(e)) => Err(classify(&self.location, &e)),
            None => Err(StoreError::Query {
                store: self.location.clone(),
                reason: "its runtime stopped".into(),
            }),
        }
    }

    /// The first column (text) of every row `sql` returns with `binds` as
    /// its `$1, $2, ...`. `sql` is ours, never built from input.
    pub fn column(&self, sql: String, binds: Vec<String>) -> Result<Vec<String>, StoreError> {
        let pool = self.pool.clone();
        self.block(async move {
            let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
            for b in binds {
                query = query.bind(b);
            }
            query
                .fetch_all(&pool)
                .await?
                .iter()
                .map(|r| sqlx::Row::try_get(r, 0))
                .collect()
        })
    }

    /// The statement that opens a write transaction on this store.
    pub fn begin_write(&self) -> &'static str {
        self.kind.begin_write()
    }
}

/// The pool a store of `kind` keeps its connections in.
fn pool_options(kind: StoreKind) -> AnyPoolOptions {
    match kind {
        StoreKind::Sqlite => AnyPoolOptions::new()
            .max_connections(4)
            .acquire_timeout(Duration::from_secs(60))
            .after_connect(|conn, _| {
                Box::pin(async move {
                    conn.execute(
                        "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; \
                         PRAGMA busy_timeout = 60000;",
                    )
                    .await?;
                    Ok(())
                })
            }),
        StoreKind::Postgres => AnyPoolOptions::new()
            .max_connections(PG_CONNECTIONS)
            .acquire_timeout(Duration::from_secs(2)),
    }
    .after_release(|conn, _| Box::pin(still_usable(conn)))
}

/// Ends a write transaction: committed when `written` is Ok, else rolled
/// back at once (a full disk), which frees the write lock for the next
/// writer instead of leaving the rollback to the transaction's drop.
pub(super) async fn settle(
    tx: sqlx::Transaction<'_, sqlx::Any>,
    written: Result<(), sqlx::Error>,
) -> Result<(), sqlx::Error> {
    match written {
        Ok(()) => tx.commit().await,
        Err(e) => {
            let _ = tx.rollback().await;
            Err(e)
        }
    }
}

/// Whether a connection given back to the pool may serve again: not when
/// it still counts an open transaction once what was queued on it (the
/// rollback of a dropped transaction) has run. SQLite ends a transaction
/// itself on some failures (a full disk during COMMIT); sqlx's rollback
/// then fails and the connection kept counting it, so its next BEGIN
/// failed with "non-zero transaction depth" instead of doing the write.
async fn still_usable(conn: &mut sqlx::AnyConnection) -> Result<bool, sqlx::Error> {
    use sqlx::Connection;
    conn.ping().await?;
    Ok(!conn.is_in_transaction())
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;

    /// A full disk ends a write transaction; the connection it ran on
    /// still serves the writes after it (it used to fail each with "non-zero
    /// transaction depth"). Needs root for a tiny tmpfs.
    #[test]
    fn a_write_after_a_full_disk_is_not_refused_by_the_connection() {
        if !rustix::process::geteuid().is_root() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=200k", "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            return;
        }
        sqlx::any::install_default_drivers();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("s.db").display());
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let lost = runtime.block_on(async {
            let options: AnyConnectOptions = url.parse().unwrap();
            let pool = pool_options(StoreKind::Sqlite)
                .max_connections(1)
                .connect_with(options)
                .await
                .unwrap();
            sqlx::query("CREATE TABLE t (b BLOB)")
                .execute(&pool)
                .await
                .unwrap();
            // Far more than the disk holds, in one transaction left to its drop.
            let full = async {
                let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
                for _ in 0..8 {
                    sqlx::query("INSERT INTO t VALUES ($1)")
                        .bind(vec![7u8; 100_000])
                        .execute(&mut *tx)
                        .await?;
                }
                tx.commit().await
            };
            assert!(full.await.is_err(), "the disk should be full");
            let mut lost = Vec::new();
            for n in 0..4 {
                let small = async {
                    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
                    sqlx::query("INSERT INTO t VALUES ($1)")
                        .bind(vec![n; 10])
                        .execute(&mut *tx)
                        .await?;
                    tx.commit().await
                };
                if let Err(e) = small.await {
                    lost.push(e.to_string());
                }
            }
            pool.close().await;
            lost
        });
        let _ = std::process::Command::new("umount")
            .arg(dir.path())
            .status();
        assert!(lost.is_empty(), "{lost:?}");
    }
}
