//! The file work of an apply or a rollback, done on the blocking pool and
//! never on the engine task: checks against the disk, the checkpoint (with
//! its journal entry), the journaled writes. The engine publishes and
//! audits what came of it (`review_ops.rs`).

use serde_json::{Value, json};

use crate::checkpoint::{
    Checkpoint, CheckpointKind, CheckpointStore, FileChange, RollbackError, files_rollback,
    scoped_rollback,
};
use crate::protocol::{ApplyFailure, EngineError, RollbackFailure, UserWrite};
use crate::review::{ApplyError, DiffBundle, FilePlan, ProposedEdit, plan_apply};
use crate::workspace::Workspace;

/// What an apply did.
#[derive(Debug)]
pub enum ApplyDone {
    Written {
        checkpoint: Checkpoint,
        plans: Vec<FilePlan>,
    },
    /// Nothing was written.
    Refused {
        code: ApplyFailure,
        error: String,
        conflicts: Vec<Value>,
        /// Whether the refusal goes to the audit log (a checkpoint that
        /// could not be recorded never reached the files: it does not).
        audited: bool,
    },
}

/// What a rollback did.
#[derive(Debug)]
pub enum RollbackDone {
    /// No such checkpoint (or no store).
    Missing(String),
    Ran {
        /// The checkpoint rolled back.
        target: Box<Checkpoint>,
        /// The rollback's own checkpoint, or why nothing was written.
        result: Result<Box<Checkpoint>, RollbackError>,
    },
}

/// Work handed back to the engine task.
#[derive(Debug)]
pub enum ReviewDone {
    Apply {
        accepted: Vec<String>,
        bundle: DiffBundle,
        edits: Vec<ProposedEdit>,
        done: ApplyDone,
        /// Its `apply.before` hooks' runs.
        hooks: Vec<crate::protocol::HookOutcome>,
    },
    Rollback {
        checkpoint_id: String,
        hunks: Vec<String>,
        only: Vec<String>,
        /// The session told of it (`""`: none).
        tell: String,
        done: RollbackDone,
    },
    /// A person's own write of whole files (`WriteFiles`).
    UserWrite {
        by: String,
        files: Vec<String>,
        done: Result<Checkpoint, EngineError>,
    },
    /// A reviewer's own text for a hunk: its file as edited, or why not.
    EditHunk {
        job_id: String,
        hunk_id: String,
        result: Result<crate::review::FileDiff, String>,
    },
}

/// An apply of these hunks that recovery found written to its end after
/// the process applying them died, before the session heard of it: the
/// newest apply checkpoint of the job, naming exactly the accepted hunks,
/// with every file of it holding what it wrote. It stands (the files
/// prove it), so the review takes it as done instead of a conflict.
fn recovered_apply(
    ws: &Workspace,
    store: &CheckpointStore,
    job_id: &str,
    bundle: &DiffBundle,
) -> Option<ApplyDone> {
    let accepted: std::collections::BTreeSet<&str> =
        bundle.to_apply().map(|h| h.hunk_id.as_str()).collect();
    let checkpoint = store
        .list()
        .ok()?
        .into_iter()
        .rev()
        .find(|c| c.job_id == job_id && c.kind == CheckpointKind::Apply)?;
    let hunks: std::collections::BTreeSet<&str> = checkpoint
        .affected_files
        .iter()
        .flat_map(|f| f.hunks.iter().map(|h| h.hunk_id.as_str()))
        // An `apply.before` hook's own hunks are written with them.
        .filter(|id| !id.starts_with(crate::review::HOOK_HUNK_PREFIX))
        .collect();
    if hunks != accepted {
        return None;
    }
    let mut plans = Vec::new();
    for f in &checkpoint.affected_files {
        let at = ws
            .resolve_recorded(&f.file_path, f.scope_root.as_deref())
            .ok()?;
        let now = ws.read_opt(&at).ok()?;
        let expected = f.after_snapshot_hash.as_deref();
        let hash = now.as_deref().map(crate::workspace::sha256_hex);
        if hash.as_deref() != expected {
            return None;
        }
        plans.push(FilePlan {
            file_path: f.file_path.clone(),
            abs: at.abs,
            before: None,
            after: now.unwrap_or_default(),
            regions: Vec::new(),
            stages: Vec::new(),
        });
    }
    Some(ApplyDone::Written { checkpoint, plans })
}

/// Checks, records the checkpoint, writes (under the root's lock).
pub fn apply_files(
    ws: &Workspace,
    store: Option<&CheckpointStore>,
    session: Option<&str>,
    job_id: &str,
    bundle: &DiffBundle,
    edits: &[ProposedEdit],
    before_write: &mut dyn FnMut(&mut [FilePlan]) -> Option<String>,
) -> ApplyDone {
    // Held from the checks to the last write: another process's apply or
    // rollback of this root waits, and recovery never mistakes this one
    // for an interrupted one.
    let _lock = store.map(|s| s.lock(ws)).transpose();
    let mut plans = match plan_apply(ws, bundle, edits) {
        Ok(plans) => plans,
        Err(ApplyError::Conflict(_))
            if let Some(done) = store.and_then(|s| recovered_apply(ws, s, job_id, bundle)) =>
        {
            return done;
        }
        Err(e) => return plan_refused(&e),
    };
    // `apply.before` hooks: their changes join the apply; a block stops it.
    if let Some(why) = before_write(&mut plans) {
        return ApplyDone::Refused {
            code: ApplyFailure::BlockedByHook,
            error: why,
            conflicts: Vec::new(),
            audited: true,
        };
    }
    let changes: Vec<FileChange> = plans.iter().map(FileChange::from).collect();
    let Some(store) = store else {
        return ApplyDone::Refused {
            code: ApplyFailure::CheckpointFailed,
            error: "cannot record the checkpoint, so nothing was written: no state directory \
                    to keep checkpoints in"
                .into(),
            conflicts: Vec::new(),
            audited: false,
        };
    };
    let checkpoint = match store.record(ws, session, job_id, CheckpointKind::Apply, None, &changes)
    {
        Ok(cp) => cp,
        Err(e) => {
            return ApplyDone::Refused {
                code: ApplyFailure::CheckpointFailed,
                error: format!("cannot record the checkpoint, so nothing was written: {e}"),
                conflicts: Vec::new(),
                audited: false,
            };
        }
    };
    if let Err(e) = store.write_journaled(ws, &checkpoint, &changes) {
        return ApplyDone::Refused {
            code: ApplyFailure::IoError,
            error: format!("cannot write the files: {e}"),
            conflicts: Vec::new(),
            audited: true,
        };
    }
    ApplyDone::Written { checkpoint, plans }
}

/// An apply its plan refused: conflicts named, nothing written.
fn plan_refused(e: &ApplyError) -> ApplyDone {
    let (code, conflicts) = match e {
        ApplyError::Conflict(list) => (
            ApplyFailure::Conflict,
            list.iter()
                .map(|c| json!({"file_path": c.file_path, "reason": c.reason}))
                .collect(),
        ),
        ApplyError::NothingAccepted => (ApplyFailure::NothingAccepted, Vec::new()),
        ApplyError::Io { .. } => (ApplyFailure::IoError, Vec::new()),
    };
    ApplyDone::Refused {
        code,
        error: e.to_string(),
        conflicts,
        audited: true,
    }
}

/// A person's own write: each file checked against the hash it was read
/// with (409 naming every file that moved), then recorded as a checkpoint
/// and written atomically under the root's lock, as an apply is.
pub fn write_user_files(
    ws: &Workspace,
    store: Option<&CheckpointStore>,
    job_id: &str,
    files: &[UserWrite],
) -> Result<Checkpoint, EngineError> {
    let Some(store) = store else {
        return Err(EngineError::unavailable(
            "no state directory to keep the checkpoint in, so nothing was written",
        ));
    };
    let _lock = store
        .lock(ws)
        .map_err(|e| EngineError::failed(format!("cannot lock the root: {e}")))?;
    let mut changes = Vec::new();
    let mut conflicts = Vec::new();
    for f in files {
        let resolved = ws
            .resolve_writable(&f.file_path)
            .map_err(super::path_refused)?;
        let before = ws.read_opt(&resolved).map_err(|e| match e.kind() {
            std::io::ErrorKind::IsADirectory => EngineError::invalid(format!(
                "`{}` is a folder; only files can be written",
                f.file_path
            )),
            std::io::ErrorKind::NotADirectory => EngineError::invalid(format!(
                "`{}` lies below a file; nothing can be written there",
                f.file_path
            )),
            _ => EngineError::failed(format!("`{}`: cannot read it: {e}", f.file_path)),
        })?;
        let current = before.as_deref().map(crate::workspace::sha256_hex);
        let expected = f.expected_hash.as_ref().map(|h| {
            if h.starts_with("sha256:") {
                h.clone()
            } else {
                format!("sha256:{h}")
            }
        });
        if current != expected {
            let reason = match (&current, &expected) {
                (Some(_), None) => "it exists already (expected_hash null means create only)",
                (None, Some(_)) => "it does not exist (it was deleted, or never was)",
                _ => "it changed since it was read",
            };
            conflicts
                .push(json!({"file_path": f.file_path, "reason": reason, "current_hash": current}));
            continue;
        }
        changes.push(FileChange {
            file_path: resolved.rel.clone(),
            abs: resolved.abs.clone(),
            before,
            after: Some(f.content.clone().into_bytes()),
            regions: Vec::new(),
            before_mode: None,
            after_mode: None,
        });
    }
    if !conflicts.is_empty() {
        return Err(EngineError::Conflict {
            message: "nothing was written: a file is not as it was read".into(),
            conflicts,
        });
    }
    let checkpoint = store
        .record(ws, None, job_id, CheckpointKind::Apply, None, &changes)
        .map_err(|e| {
            EngineError::failed(format!(
                "cannot record the checkpoint, so nothing was written: {e}"
            ))
        })?;
    store
        .write_journaled(ws, &checkpoint, &changes)
        .map_err(|e| EngineError::failed(format!("cannot write the files: {e}")))?;
    Ok(checkpoint)
}

/// Finds the checkpoint and rolls it back (hard, by file or by hunk).
pub fn rollback_files(
    ws: &Workspace,
    store: Option<&CheckpointStore>,
    checkpoint_id: &str,
    hunks: &[String],
    only: &[String],
) -> RollbackDone {
    let Some(store) = store else {
        return RollbackDone::Missing("no state directory: there are no checkpoints".into());
    };
    let _lock = store.lock(ws);
    let target = match store.get(checkpoint_id) {
        Ok(Some(cp)) => cp,
        Ok(None) => {
            return RollbackDone::Missing(format!(
                "no checkpoint {checkpoint_id}; see `agent-tui checkpoints list`"
            ));
        }
        Err(e) => return RollbackDone::Missing(e.to_string()),
    };
    let result = if hunks.is_empty() {
        files_rollback(ws, store, &target, only)
    } else {
        scoped_rollback(ws, store, &target, hunks)
    };
    RollbackDone::Ran {
        target: Box::new(target),
        result: result.map(Box::new),
    }
}

/// `checkpoint.rollback.failed`'s code for a rollback error.
pub fn rollback_failure(e: &RollbackError) -> (RollbackFailure, Vec<String>) {
    match e {
        RollbackError::Conflict(list) => (RollbackFailure::Conflict, list.clone()),
        RollbackError::UnknownHunk(..) => (RollbackFailure::UnknownHunk, Vec::new()),
        RollbackError::UnknownFile(..) => (RollbackFailure::UnknownFile, Vec::new()),
        // A file the sandbox now refuses (a link out of the root in its
        // place, a scope not added): the files changed, as for an apply.
        RollbackError::Path(why) => (RollbackFailure::Conflict, vec![why.clone()]),
        RollbackError::Io(_) => (RollbackFailure::IoError, Vec::new()),
    }
}
