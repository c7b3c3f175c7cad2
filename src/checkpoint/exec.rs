//! What a command changed, as a checkpoint (`kind: "exec"`) that rolls
//! back like an apply. Before the command the root's file index (stat and
//! content snapshot of every file, kept in the store like git's index) is
//! brought up to date, reading only files whose stat changed since; after
//! it, the files whose stat changed are the command's changes, with their
//! prior bytes already in the store. The stats themselves come from a
//! `LiveTree`: after the first scan, only paths the kernel reports changed
//! are looked at again.

use std::collections::HashMap;
use std::io;
use std::path::PathBuf;
use std::sync::Mutex;

use super::{Checkpoint, CheckpointKind, CheckpointStore, FileChange};
use crate::store::RootStore;
use crate::store::file_index::{IndexUpdate, Indexed};
use crate::store::snapshots::encode;
use crate::workspace::{ChangeKind, Changed, LiveTree, TreeStat, Workspace, sha256_hex};

/// Files above this size are not indexed: a command's change to one is
/// listed but cannot be rolled back.
pub const MAX_INDEXED_BYTES: u64 = 16 * 1024 * 1024;

/// A root's file index, loaded once per process and kept current.
pub struct ExecTracker {
    store: RootStore,
    checkpoints: CheckpointStore,
    root: PathBuf,
    /// The root's handle: files are read beneath it.
    ws: Workspace,
    index: Mutex<Option<HashMap<String, Indexed>>>,
    /// The tree's stats, kept current by the kernel's change events.
    live: Mutex<Option<LiveTree>>,
}

/// What a command changed, and the checkpoint that can undo it.
pub struct Recorded {
    pub changed: Vec<Changed>,
    pub checkpoint: Option<Checkpoint>,
    /// Changed files whose prior bytes were not kept (too large, unreadable).
    pub not_recorded: Vec<String>,
}

impl ExecTracker {
    pub fn new(store: &RootStore, ws: &Workspace) -> ExecTracker {
        ExecTracker {
            store: store.clone(),
            checkpoints: CheckpointStore::new(store),
            root: ws.root().to_path_buf(),
            ws: ws.clone(),
            index: Mutex::new(None),
            live: Mutex::new(None),
        }
    }

    /// The tree's stats now (the first look scans it and starts watching).
    fn look(&self) -> io::Result<TreeStat> {
        let mut live = self
            .live
            .lock()
            .map_err(|_| io::Error::other("the tree watch lock is poisoned"))?;
        Ok(live
            .get_or_insert_with(|| LiveTree::new(&self.root))
            .refresh_exact()
            .clone())
    }

    /// The tree as the command will find it, with every file's bytes in
    /// the store.
    pub fn before(&self) -> io::Result<TreeStat> {
        let tree = self.look()?;
        let mut guard = self
            .index
            .lock()
            .map_err(|_| io::Error::other("the file index lock is poisoned"))?;
        if guard.is_none() {
            *guard = Some(self.store.file_index()?);
        }
        let index = guard.get_or_insert_with(HashMap::new);
        let mut update = IndexUpdate::default();
        for (path, stat) in tree.iter() {
            if index.get(path).is_some_and(|ix| ix.stat == *stat) {
                continue;
            }
            if stat.len > MAX_INDEXED_BYTES {
                continue;
            }
            let Ok(Some(bytes)) = self.ws.read_abs(&self.root.join(path)) else {
                continue;
            };
            let encoded = encode(&bytes);
            update.set.push((
                path.clone(),
                Indexed {
                    stat: *stat,
                    hash: encoded.hash.clone(),
                },
            ));
            update.snapshots.push(encoded);
        }
        update.removed = index
            .keys()
            .filter(|p| tree.get(p).is_none_or(|s| s.len > MAX_INDEXED_BYTES))
            .cloned()
            .collect();
        update.snapshots.sort_by(|a, b| a.hash.cmp(&b.hash));
        update.snapshots.dedup_by(|a, b| a.hash == b.hash);
        self.commit(index, update)?;
        Ok(tree)
    }

    /// Writes `update` to the store, then to the index in memory.
    fn commit(&self, index: &mut HashMap<String, Indexed>, update: IndexUpdate) -> io::Result<()> {
        let (set, removed) = (update.set.clone(), update.removed.clone());
        self.store.update_file_index(update)?;
        for gone in removed {
            index.remove(&gone);
        }
        index.extend(set);
        Ok(())
    }

    /// What changed since `before`, recorded as a checkpoint (none when
    /// nothing changed), and the index brought up to date.
    pub fn after(
        &self,
        before: &TreeStat,
        session_id: Option<&str>,
        job_id: &str,
    ) -> io::Result<Recorded> {
        let tree = self.look()?;
        let changed = tree.changes_since(before);
        let mut recorded = Recorded {
            changed,
            checkpoint: None,
            not_recorded: Vec::new(),
        };
        if recorded.changed.is_empty() {
            return Ok(recorded);
        }
        // Recorded under the root's write lock, like an apply: no apply,
        // rollback or recovery of another process (or host) meanwhile.
        let _root = self.checkpoints.lock(&self.ws)?;
        let mut guard = self
            .index
            .lock()
            .map_err(|_| io::Error::other("the file index lock is poisoned"))?;
        let index = guard.get_or_insert_with(HashMap::new);
        let mut files = Vec::new();
        let mut update = IndexUpdate::default();
        for c in &recorded.changed {
            let abs = self.root.join(&c.path);
            let prior = match (c.change, index.get(&c.path)) {
                (ChangeKind::Created, _) => None,
                (_, Some(ix)) => Some(self.checkpoints.snapshot(&ix.hash)?),
                (_, None) => {
                    recorded.not_recorded.push(c.path.clone());
                    continue;
                }
            };
            let link = std::fs::symlink_metadata(&abs).is_ok_and(|m| m.is_symlink());
            let now = match c.change {
                // A link (out of the root, perhaps) has no bytes of its own
                // to keep: its rollback removes or replaces the link.
                ChangeKind::Deleted => None,
                _ if link => None,
                _ => match tree.get(&c.path) {
                    Some(stat) if stat.len <= MAX_INDEXED_BYTES => match self.ws.read_abs(&abs) {
                        Ok(Some(bytes)) => {
                            update.set.push((
                                c.path.clone(),
                                Indexed {
                                    stat: *stat,
                                    hash: sha256_hex(&bytes),
                                },
                            ));
                            Some(bytes)
                        }
                        Ok(None) | Err(_) => {
                            recorded.not_recorded.push(c.path.clone());
                            continue;
                        }
                    },
                    _ => {
                        recorded.not_recorded.push(c.path.clone());
                        continue;
                    }
                },
            };
            if now.is_none() {
                update.removed.push(c.path.clone());
            }
            // The mode it had before the command, from the index.
            // (A link's own bits, 0777, are no file's mode to give back.)
            let before_mode = index
                .get(&c.path)
                .filter(|ix| ix.stat.mode & 0o170000 == 0o100000)
                .map(|ix| ix.stat.mode & 0o7777);
            files.push(FileChange {
                file_path: c.path.clone(),
                abs,
                before: prior,
                after: now,
                regions: Vec::new(),
                before_mode,
                after_mode: None,
            });
        }
        if files.is_empty() {
            return Ok(recorded);
        }
        // The record stores the new bytes too: the index may point at them.
        let checkpoint = self.checkpoints.record(
            &self.ws,
            session_id,
            job_id,
            CheckpointKind::Exec,
            None,
            &files,
        )?;
        self.commit(index, update)?;
        recorded.checkpoint = Some(checkpoint);
        Ok(recorded)
    }
}
