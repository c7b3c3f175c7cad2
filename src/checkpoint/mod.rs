//! Checkpoints (SPEC section 8): recorded before every apply or rollback,
//! with each affected file's prior and new bytes stored content-addressed,
//! so any of them can be undone in full (hard) or hunk by hunk (scoped).

mod exec;
mod journal;
mod rollback;

pub use exec::{ExecTracker, MAX_INDEXED_BYTES, Recorded};
pub use journal::{RecoveryError, recover};

pub use rollback::{RollbackError, files_rollback, hard_rollback, scoped_rollback, three_way};

pub use crate::protocol::checkpoint::{
    AffectedFile, Checkpoint, CheckpointHunk, CheckpointKind, LeftAlone, Recovery, Settled,
    ThreeWay,
};

use std::io;
use std::path::PathBuf;
use std::time::SystemTime;

use crate::protocol::checkpoint::HunkRegion;
use crate::review::{Change, FilePlan, new_id, patch_text_at};
use crate::store::RootStore;
use crate::store::snapshots::{Encoded, encode};
use crate::workspace::{Workspace, sha256_hex};

/// One file as a checkpoint sees it: bytes before and after, hunk regions.
#[derive(Debug, Clone)]
pub struct FileChange {
    pub file_path: String,
    pub abs: PathBuf,
    pub before: Option<Vec<u8>>,
    pub after: Option<Vec<u8>>,
    pub regions: Vec<HunkRegion>,
    /// The file's permission bits before (`None`: read from `abs` when the
    /// checkpoint is recorded, before anything is written).
    pub before_mode: Option<u32>,
    /// The permission bits to write it with (`None`: its own, or rw-r--r--).
    pub after_mode: Option<u32>,
}

impl From<&FilePlan> for FileChange {
    fn from(p: &FilePlan) -> FileChange {
        FileChange {
            file_path: p.file_path.clone(),
            abs: p.abs.clone(),
            before: p.before.clone(),
            after: Some(p.after.clone()),
            regions: p.regions.clone(),
            before_mode: None,
            after_mode: None,
        }
    }
}

/// Checkpoint records and their snapshots for one agent root, in the store.
#[derive(Clone)]
pub struct CheckpointStore {
    root: RootStore,
}

impl CheckpointStore {
    pub fn new(root: &RootStore) -> CheckpointStore {
        CheckpointStore { root: root.clone() }
    }

    /// The bytes of snapshot `hash`, checked.
    pub fn snapshot(&self, hash: &str) -> io::Result<Vec<u8>> {
        Ok(self.root.store.snapshot(hash)?)
    }

    /// Stores the snapshots and the record in one transaction; only then
    /// may files be written.
    pub fn record(
        &self,
        ws: &Workspace,
        session_id: Option<&str>,
        job_id: &str,
        kind: CheckpointKind,
        rolls_back: Option<&str>,
        files: &[FileChange],
    ) -> io::Result<Checkpoint> {
        // Hashing and compressing are independent per file: two threads.
        let (first, second) = files.split_at(files.len() / 2);
        let (a, b) = std::thread::scope(|scope| {
            let other = scope.spawn(|| affected(ws, second));
            (affected(ws, first), other.join())
        });
        let (mut affected, mut snapshots) = a;
        let (more, more_snapshots) = b.map_err(|_| io::Error::other("snapshot thread panicked"))?;
        affected.extend(more);
        snapshots.extend(more_snapshots);
        let checkpoint = Checkpoint {
            checkpoint_id: new_id("cp"),
            session_id: session_id.map(str::to_string),
            job_id: job_id.to_string(),
            created_at: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            kind,
            rolls_back: rolls_back.map(str::to_string),
            affected_files: affected,
        };
        // An apply or a rollback writes the files next: its journal entry
        // is committed with the record. A command's files are already written.
        let journal = kind != CheckpointKind::Exec;
        self.root
            .insert_checkpoint(&checkpoint, snapshots, journal)?;
        Ok(checkpoint)
    }

    pub fn get(&self, id: &str) -> io::Result<Option<Checkpoint>> {
        Ok(self.root.checkpoint(id)?)
    }

    /// Every checkpoint, oldest first.
    pub fn list(&self) -> io::Result<Vec<Checkpoint>> {
        Ok(self.root.checkpoints()?)
    }

    pub fn latest(&self) -> io::Result<Option<Checkpoint>> {
        Ok(self.root.latest_checkpoint()?)
    }
}

/// Describes `files` and encodes the snapshots they need.
fn affected(ws: &Workspace, files: &[FileChange]) -> (Vec<AffectedFile>, Vec<Encoded>) {
    let mut affected = Vec::with_capacity(files.len());
    let mut snapshots = Vec::new();
    for f in files {
        let base = f.before.as_deref().map(|b| {
            let e = encode(b);
            let hash = e.hash.clone();
            snapshots.push(e);
            hash
        });
        // With hunk regions the new bytes follow from base + regions, so
        // only whole-file changes (hard rollbacks) store them.
        let after = match (&f.after, f.regions.is_empty()) {
            (Some(bytes), true) => {
                let e = encode(bytes);
                let hash = e.hash.clone();
                snapshots.push(e);
                Some(hash)
            }
            (Some(bytes), false) => Some(sha256_hex(bytes)),
            (None, _) => None,
        };
        let hunks = f.regions.iter().map(reverse_hunk).collect();
        let mode = f
            .before
            .as_ref()
            .and(f.before_mode.or_else(|| mode_of(&f.abs)));
        affected.push(AffectedFile {
            file_path: f.file_path.clone(),
            scope_root: ws.recorded_root(&f.abs),
            base_snapshot_hash: base,
            after_snapshot_hash: after,
            hunks,
            mode,
        });
    }
    (affected, snapshots)
}

/// A regular file's permission bits (a link is not followed).
pub fn mode_of(abs: &std::path::Path) -> Option<u32> {
    std::fs::symlink_metadata(abs)
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|m| crate::platform::fs::mode(&m))
}

/// A hunk with the patch that undoes it, built from its region alone.
fn reverse_hunk(r: &HunkRegion) -> CheckpointHunk {
    let lines: Vec<String> = r
        .ctx_before
        .iter()
        .chain(&r.after_lines)
        .chain(&r.ctx_after)
        .cloned()
        .collect();
    let change = Change {
        old_start: r.ctx_before.len(),
        old_len: r.after_lines.len(),
        new_lines: r.before_lines.clone(),
    };
    CheckpointHunk {
        hunk_id: r.hunk_id.clone(),
        origin: r.origin.clone(),
        reverse_patch: patch_text_at(&lines, &[change], r.after_start - r.ctx_before.len()),
        region: r.clone(),
    }
}

/// Writes each change's `after` bytes, or removes the file when `None`
/// (durably, beneath the root).
pub fn write_changes(ws: &Workspace, files: &[FileChange]) -> io::Result<()> {
    let writes: Vec<crate::workspace::PathWrite> = files
        .iter()
        .map(|f| (f.abs.as_path(), f.after.as_deref(), f.after_mode))
        .collect();
    ws.write_files(&writes)
}
