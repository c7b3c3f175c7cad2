//! The store (SPEC section 15): one database per state home (SQLite
//! `state.db` by default, or PostgreSQL) holding roots, sessions, jobs,
//! events, reviews, checkpoints with their snapshots and the audit chain.
//! Each entry point opens one `Store` and passes it down; nothing else
//! opens it and no front end sees its tables.

pub mod audit;
mod audit_write;
mod checkpoints;
mod db;
mod error;
pub mod file_index;
mod hook_trust;
mod images;
mod import;
mod journal;
mod leases;
mod maintenance;
mod paths;
mod recent;
mod schema;
mod server;
mod server_hosts;
pub mod session;
mod sessions;
pub mod snapshots;
pub mod web_cache;
mod writer;

pub use db::{NoBlocking, StoreKind, Target, no_blocking};
pub use error::StoreError;
pub use import::{IndexedJob, IndexedLine, IndexedSession, SessionIndexer};
pub use journal::{JournalEntry, RootLock};
pub use leases::{Lease, now_ms};
pub use maintenance::{Check, StoreInfo};
pub use paths::{StateDirs, root_key};
pub use schema::SCHEMA_VERSION;
pub use server_hosts::Notice;
pub use session::{IndexUpdate, RecordRow, StoredSession};
pub use sessions::JobEvents;
pub use writer::SessionWriter;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::StorageConfig;

/// The open store. Clones share one pool; the session writer's queue is
/// flushed when the last clone goes (or by `close`, which reports errors).
#[derive(Clone)]
pub struct Store {
    shared: Arc<db::Shared>,
    schema: i64,
    /// Where the roots' write-lock files live (the state home's `locks/`).
    locks: Option<PathBuf>,
}

impl Store {
    /// Opens the store `[storage]` names for the state home `home`: creates
    /// or migrates its schema, and imports an earlier release's files once.
    pub fn open(
        home: &Path,
        config: &StorageConfig,
        env: &dyn Fn(&str) -> Option<String>,
        indexer: &dyn SessionIndexer,
    ) -> Result<Store, StoreError> {
        let target = Target::resolve(home, config, env)?;
        let mut store = Store::open_target(&target)?;
        store.locks = Some(home.join("locks"));
        import::legacy_home(&store, home, indexer)?;
        Ok(store)
    }

    /// Opens `target` (no upgrade import).
    pub fn open_target(target: &Target) -> Result<Store, StoreError> {
        let shared = db::connect(target)?;
        let schema = schema::migrate(&shared)?;
        let locks = match target {
            Target::Sqlite(path) => path.parent().map(|p| p.join("locks")),
            Target::Postgres { .. } => None,
        };
        Ok(Store {
            shared,
            schema,
            locks,
        })
    }

    pub fn kind(&self) -> StoreKind {
        self.shared.kind
    }

    /// Where the store is: its file, or its URL without a password.
    pub fn location(&self) -> &str {
        &self.shared.location
    }

    pub fn schema_version(&self) -> i64 {
        self.schema
    }

    /// The part of the store that belongs to the agent root `root` (its
    /// canonical path).
    pub fn root(&self, root: &Path) -> RootStore {
        RootStore {
            store: self.clone(),
            key: root_key(root),
            path: root.display().to_string(),
        }
    }

    /// Writes everything queued so far; the first write error since the
    /// last flush, if any.
    pub fn flush(&self) -> Result<(), StoreError> {
        self.shared.queue.flush(&self.shared.location)
    }

    /// `flush` for an async task.
    pub async fn flushed(&self) -> Result<(), StoreError> {
        self.shared.queue.flushed(&self.shared.location).await
    }

    /// Waits (without blocking a thread) until everything queued so far is
    /// written or failed, leaving a failure for `flush` to report.
    pub async fn settled(&self) {
        let _ = self.shared.queue.barrier().await;
    }

    /// `settled` as a receiver to keep: it resolves once everything queued
    /// before this call is written or failed.
    pub fn barrier(&self) -> tokio::sync::oneshot::Receiver<()> {
        self.shared.queue.barrier()
    }

    fn shared(&self) -> &db::Shared {
        &self.shared
    }
}

/// One agent root's sessions, checkpoints and audit chain.
#[derive(Clone)]
pub struct RootStore {
    pub store: Store,
    key: String,
    path: String,
}

impl RootStore {
    /// The root's key: a hash of its canonical path.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The root's canonical path, as recorded.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// A writer for this root's sessions and audit chain (queued, ordered).
    pub fn writer(&self) -> SessionWriter {
        SessionWriter::new(self.store.shared.queue.clone(), &self.key, &self.path)
    }
}
