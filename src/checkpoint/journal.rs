//! Atomic multi-file applies and rollbacks: the checkpoint and its journal
//! entry are committed before the first project write, and the entry is
//! closed when the last file is in place. An entry still open (a crash, a
//! kill, a failed write) is settled: every file written → finished; else
//! the files already written go back to their bytes before, so the project
//! holds the whole operation or none of it.

use std::io;

use super::{Checkpoint, CheckpointStore, FileChange, LeftAlone, Recovery, Settled, write_changes};
use crate::store::RootLock;
use crate::workspace::{Workspace, sha256_hex};

#[derive(Debug, thiserror::Error)]
pub enum RecoveryError {
    #[error("cannot read the journal: {0}")]
    Store(#[from] crate::store::StoreError),
    #[error("cannot settle checkpoint {checkpoint_id}'s interrupted write: {source}")]
    Io {
        checkpoint_id: String,
        source: io::Error,
    },
}

impl CheckpointStore {
    /// The write lock of the root and of its writable scopes: held from
    /// the checks before an apply or rollback to the journal's close, and
    /// by recovery.
    pub fn lock(&self, ws: &Workspace) -> io::Result<RootLock> {
        Ok(self.root.lock_with(&writable_folders(ws))?)
    }

    /// Writes the files of `checkpoint` (recorded, its journal open) and
    /// closes the journal. A failed write is undone before returning.
    pub fn write_journaled(
        &self,
        ws: &Workspace,
        checkpoint: &Checkpoint,
        changes: &[FileChange],
    ) -> io::Result<()> {
        match write_changes(ws, changes) {
            Ok(()) => Ok(self.root.close_journal(&checkpoint.checkpoint_id)?),
            Err(e) => {
                let undone = settle(ws, self, checkpoint);
                let note = match undone {
                    Ok(r) if r.outcome == Settled::Undone && r.left_alone.is_empty() => {
                        "nothing was changed".to_string()
                    }
                    Ok(r) => r.summary(),
                    Err(e) => format!("and undoing it failed too: {e}"),
                };
                Err(io::Error::new(e.kind(), format!("{e}; {note}")))
            }
        }
    }
}

/// The folders of the writable scopes beside the agent root.
fn writable_folders(ws: &Workspace) -> Vec<&std::path::Path> {
    ws.scopes()[1..]
        .iter()
        .filter(|s| s.access == crate::workspace::Access::ReadWrite)
        .map(|s| s.root.as_path())
        .collect()
}

/// Settles every interrupted apply or rollback of the root, oldest first,
/// under the root's lock (an operation another process is running now is
/// waited for, never mistaken for an interrupted one).
pub fn recover(ws: &Workspace, store: &CheckpointStore) -> Result<Vec<Recovery>, RecoveryError> {
    let open = store.root.open_journal()?;
    if open.is_empty() {
        return Ok(Vec::new());
    }
    let _lock = store.root.lock_with(&writable_folders(ws))?;
    let mut out = Vec::new();
    for entry in store.root.open_journal()? {
        let Some(checkpoint) = store.root.checkpoint(&entry.checkpoint_id)? else {
            store.root.close_journal(&entry.checkpoint_id)?;
            continue;
        };
        out.push(
            settle(ws, store, &checkpoint).map_err(|source| RecoveryError::Io {
                checkpoint_id: entry.checkpoint_id.clone(),
                source,
            })?,
        );
    }
    Ok(out)
}

/// Where one file of an interrupted operation stands.
enum Found {
    Written,
    Before,
    Neither,
}

fn settle(ws: &Workspace, store: &CheckpointStore, cp: &Checkpoint) -> io::Result<Recovery> {
    let mut temp_files_removed = 0;
    let mut found = Vec::new();
    for f in &cp.affected_files {
        let resolved = ws
            .resolve_recorded(&f.file_path, f.scope_root.as_deref())
            .map_err(|e| io::Error::other(e.to_string()))?;
        let beneath = ws.beneath(&resolved.abs);
        let folder = beneath.parent().unwrap_or(std::path::Path::new("."));
        temp_files_removed += ws.scope_dir(resolved.scope).remove_temps(folder)?;
        let now = ws.read_opt(&resolved)?;
        let hash = now.as_deref().map(sha256_hex);
        let state = if hash == f.after_snapshot_hash {
            Found::Written
        } else if hash == f.base_snapshot_hash {
            Found::Before
        } else {
            Found::Neither
        };
        found.push((f, resolved, now, state));
    }
    let mut recovery = Recovery {
        checkpoint_id: cp.checkpoint_id.clone(),
        job_id: cp.job_id.clone(),
        operation: match cp.kind {
            super::CheckpointKind::Rollback => "rollback".into(),
            _ => "apply".into(),
        },
        outcome: Settled::Finished,
        restored: Vec::new(),
        left_alone: Vec::new(),
        temp_files_removed,
    };
    if found.iter().all(|(_, _, _, s)| matches!(s, Found::Written)) {
        store.root.close_journal(&cp.checkpoint_id)?;
        return Ok(recovery);
    }
    let mut changes = Vec::new();
    for (f, resolved, now, state) in found {
        match state {
            Found::Before => {}
            Found::Neither => recovery.left_alone.push(LeftAlone {
                file_path: f.file_path.clone(),
                reason: "it holds neither its bytes before nor after; changed by something else"
                    .into(),
            }),
            Found::Written if f.after_snapshot_hash == f.base_snapshot_hash => {}
            Found::Written => {
                let before = match &f.base_snapshot_hash {
                    Some(h) => Some(store.snapshot(h)?),
                    None => None,
                };
                recovery.restored.push(f.file_path.clone());
                changes.push(FileChange {
                    file_path: f.file_path.clone(),
                    abs: resolved.abs,
                    before: now,
                    after: before,
                    regions: Vec::new(),
                    before_mode: None,
                    after_mode: f.mode,
                });
            }
        }
    }
    write_changes(ws, &changes)?;
    store.root.discard_journaled(&cp.checkpoint_id)?;
    recovery.outcome = Settled::Undone;
    Ok(recovery)
}
