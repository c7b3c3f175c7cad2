//! Review operations the engine performs for a front end: record hunk
//! decisions, apply accepted hunks behind a checkpoint, roll back a
//! checkpoint. Each reports through events and the audit log.

use serde_json::json;

use super::engine::Engine;
use crate::checkpoint::{
    CheckpointKind, FileChange, RollbackError, files_rollback, scoped_rollback,
};
use crate::protocol::{ApplyFailure, EventBody, RollbackFailure};
use crate::review::{ApplyError, HunkState, edit_hunk, load_base, plan_apply, rebase_after_apply};

impl Engine {
    pub(super) fn decide(
        &mut self,
        job_id: &str,
        accept: &[String],
        reject: &[String],
        accept_all: bool,
    ) {
        let Some(bundle) = self.reviews.get_mut(job_id).and_then(|r| r.bundle.as_mut()) else {
            self.no_review(job_id);
            return;
        };
        let unknown = bundle.decide(accept, reject, accept_all);
        let bundle = bundle.clone();
        if unknown.is_empty() {
            for hunk in bundle.hunks() {
                let decided =
                    accept.contains(&hunk.hunk_id) || reject.contains(&hunk.hunk_id) || accept_all;
                let outcome = match &hunk.state {
                    HunkState::Accepted => "accepted",
                    HunkState::Rejected => "rejected",
                    HunkState::Conflicted { .. } => "conflict",
                    HunkState::Pending | HunkState::Applied => continue,
                };
                if decided {
                    self.audit(
                        job_id,
                        "decision",
                        &hunk.hunk_id,
                        hunk.state.accepted(),
                        outcome,
                    );
                }
            }
        }
        self.publish(
            job_id,
            EventBody::ReviewUpdated {
                bundle,
                unknown,
                error: None,
            },
        );
    }

    /// The reviewer's own text for a hunk: it replaces the proposal and is
    /// accepted (`origin=user`). Refused if the file changed since.
    pub(super) fn edit_hunk(&mut self, job_id: &str, hunk_id: &str, new_text: &str) {
        let Some(bundle) = self.reviews.get_mut(job_id).and_then(|r| r.bundle.as_mut()) else {
            self.no_review(job_id);
            return;
        };
        let mut unknown = Vec::new();
        let mut error = None;
        match bundle
            .files
            .iter_mut()
            .find(|f| f.hunks.iter().any(|h| h.hunk_id == hunk_id))
        {
            None => unknown.push(hunk_id.to_string()),
            Some(file) => {
                let edited = load_base(&self.ctx.workspace, file).and_then(|doc| {
                    let hunk = file.hunks.iter_mut().find(|h| h.hunk_id == hunk_id);
                    match hunk {
                        Some(hunk) => edit_hunk(&doc, hunk, new_text),
                        None => Ok(()),
                    }
                });
                error = edited.err().map(|e| e.to_string());
            }
        }
        let bundle = bundle.clone();
        if unknown.is_empty() {
            let outcome = match &error {
                None => "ok: origin=user".to_string(),
                Some(e) => format!("refused: {e}"),
            };
            self.audit(
                job_id,
                "edit_hunk",
                hunk_id,
                Some(error.is_none()),
                &outcome,
            );
        }
        self.publish(
            job_id,
            EventBody::ReviewUpdated {
                bundle,
                unknown,
                error,
            },
        );
    }

    fn no_review(&mut self, job_id: &str) {
        self.publish(
            job_id,
            EventBody::ApplyFailed {
                error: format!("job {job_id} has no diff to review"),
                code: ApplyFailure::NoReview,
                conflicts: Vec::new(),
            },
        );
    }

    pub(super) fn apply(&mut self, job_id: &str) {
        let Some(review) = self.reviews.get(job_id) else {
            self.no_review(job_id);
            return;
        };
        let Some(bundle) = review.bundle.clone() else {
            self.no_review(job_id);
            return;
        };
        let edits = review.edits.clone();
        let accepted: Vec<String> = bundle
            .hunks()
            .filter(|h| h.state.is_to_apply())
            .map(|h| h.hunk_id.clone())
            .collect();
        self.publish(
            job_id,
            EventBody::ApplyStarted {
                hunk_ids: accepted.clone(),
            },
        );
        // Held from the checks to the last write: another process's apply
        // or rollback of this root waits, and recovery never mistakes this
        // one for an interrupted one.
        let _lock = self.checkpoints.as_ref().map(|s| s.lock()).transpose();
        let plans = match plan_apply(&self.ctx.workspace, &bundle, &edits) {
            Ok(plans) => plans,
            Err(e) => {
                let (code, conflicts) = match &e {
                    ApplyError::Conflict(list) => (
                        ApplyFailure::Conflict,
                        list.iter()
                            .map(|c| json!({"file_path": c.file_path, "reason": c.reason}))
                            .collect(),
                    ),
                    ApplyError::NothingAccepted => (ApplyFailure::NothingAccepted, Vec::new()),
                    ApplyError::Io { .. } => (ApplyFailure::IoError, Vec::new()),
                };
                self.audit(
                    job_id,
                    "apply",
                    &accepted.join(","),
                    Some(true),
                    &format!("{}: {e}", code.as_str()),
                );
                self.publish(
                    job_id,
                    EventBody::ApplyFailed {
                        error: e.to_string(),
                        code,
                        conflicts,
                    },
                );
                return;
            }
        };
        let changes: Vec<FileChange> = plans.iter().map(FileChange::from).collect();
        let files: Vec<String> = plans.iter().map(|p| p.file_path.clone()).collect();
        let session = self.session_id();
        let recorded = match &self.checkpoints {
            Some(store) => store.record(
                session.as_deref(),
                job_id,
                CheckpointKind::Apply,
                None,
                &changes,
            ),
            None => Err(std::io::Error::other(
                "no state directory to keep checkpoints in",
            )),
        };
        let checkpoint = match recorded {
            Ok(cp) => cp,
            Err(e) => {
                let error = format!("cannot record the checkpoint, so nothing was written: {e}");
                self.publish(
                    job_id,
                    EventBody::ApplyFailed {
                        error,
                        code: ApplyFailure::CheckpointFailed,
                        conflicts: Vec::new(),
                    },
                );
                return;
            }
        };
        let written = match &self.checkpoints {
            Some(store) => store.write_journaled(&self.ctx.workspace, &checkpoint, &changes),
            None => Ok(()),
        };
        if let Err(e) = written {
            self.audit(
                job_id,
                "apply",
                &accepted.join(","),
                Some(true),
                &format!("io_error: {e}"),
            );
            let error = format!("cannot write the files: {e}");
            self.publish(
                job_id,
                EventBody::ApplyFailed {
                    error,
                    code: ApplyFailure::IoError,
                    conflicts: Vec::new(),
                },
            );
            return;
        }
        self.publish(
            job_id,
            EventBody::CheckpointCreated {
                checkpoint_id: checkpoint.checkpoint_id.clone(),
                kind: CheckpointKind::Apply,
                files: files.clone(),
            },
        );
        // The other hunks of written files stay in the review, moved onto
        // the written text (or marked conflicted, with the reason).
        let mut bundle = bundle;
        let mut edits = edits;
        for plan in &plans {
            if let Some(file) = bundle
                .files
                .iter_mut()
                .find(|f| f.file_path == plan.file_path)
            {
                rebase_after_apply(file, &mut edits, &accepted, &plan.after);
            }
        }
        self.audit(
            job_id,
            "apply",
            &accepted.join(","),
            Some(true),
            &format!("ok: {}", checkpoint.checkpoint_id),
        );
        self.publish(
            job_id,
            EventBody::ApplyCompleted {
                checkpoint_id: checkpoint.checkpoint_id,
                files,
                hunk_ids: accepted,
                bundle,
                edits,
            },
        );
    }

    pub(super) fn rollback(&mut self, checkpoint_id: &str, hunks: &[String], only: &[String]) {
        let found = match &self.checkpoints {
            Some(store) => store.get(checkpoint_id).map_err(|e| e.to_string()),
            None => Err("no state directory: there are no checkpoints".into()),
        };
        let checkpoint = match found {
            Ok(Some(cp)) => cp,
            Ok(None) | Err(_) => {
                let error = match found {
                    Err(e) => e,
                    Ok(_) => {
                        format!("no checkpoint {checkpoint_id}; see `agent-tui checkpoints list`")
                    }
                };
                self.publish(
                    checkpoint_id,
                    EventBody::RollbackFailed {
                        checkpoint_id: checkpoint_id.to_string(),
                        error,
                        code: RollbackFailure::NotFound,
                        conflicts: Vec::new(),
                    },
                );
                return;
            }
        };
        let job_id = checkpoint.job_id.clone();
        self.publish(
            &job_id,
            EventBody::RollbackStarted {
                checkpoint_id: checkpoint_id.to_string(),
                hunks: hunks.to_vec(),
            },
        );
        let Some(store) = &self.checkpoints else {
            return;
        };
        let _lock = store.lock();
        let result = if hunks.is_empty() {
            files_rollback(&self.ctx.workspace, store, &checkpoint, only)
        } else {
            scoped_rollback(&self.ctx.workspace, store, &checkpoint, hunks)
        };
        let target = match (hunks.is_empty(), only.is_empty()) {
            (true, true) => checkpoint_id.to_string(),
            (true, false) => format!("{checkpoint_id} {}", only.join(",")),
            (false, _) => format!("{checkpoint_id} {}", hunks.join(",")),
        };
        match result {
            Ok(record) => {
                let files: Vec<String> = record
                    .affected_files
                    .iter()
                    .map(|f| f.file_path.clone())
                    .collect();
                self.audit(
                    &job_id,
                    "rollback",
                    &target,
                    Some(true),
                    &format!("ok: {}", record.checkpoint_id),
                );
                self.publish(
                    &job_id,
                    EventBody::CheckpointCreated {
                        checkpoint_id: record.checkpoint_id.clone(),
                        kind: CheckpointKind::Rollback,
                        files: files.clone(),
                    },
                );
                let what = if !only.is_empty() {
                    format!("{} of checkpoint {checkpoint_id}", only.join(", "))
                } else if hunks.is_empty() {
                    format!("every change of checkpoint {checkpoint_id}")
                } else {
                    format!("hunks {} of checkpoint {checkpoint_id}", hunks.join(", "))
                };
                self.note(
                    None,
                    format!(
                        "[agent-tui: the user rolled back {what}; {} now hold what they held \
                         before (read them again before building on them)]",
                        files.join(", ")
                    ),
                );
                self.publish(
                    &job_id,
                    EventBody::RollbackCompleted {
                        checkpoint_id: checkpoint_id.to_string(),
                        rollback_checkpoint_id: record.checkpoint_id,
                        files,
                    },
                );
            }
            Err(e) => {
                let (code, conflicts) = match &e {
                    RollbackError::Conflict(list) => (RollbackFailure::Conflict, list.clone()),
                    RollbackError::UnknownHunk(..) => (RollbackFailure::UnknownHunk, Vec::new()),
                    RollbackError::UnknownFile(..) => (RollbackFailure::UnknownFile, Vec::new()),
                    RollbackError::Path(_) | RollbackError::Io(_) => {
                        (RollbackFailure::IoError, Vec::new())
                    }
                };
                self.audit(
                    &job_id,
                    "rollback",
                    &target,
                    Some(true),
                    &format!("{}: {e}", code.as_str()),
                );
                self.publish(
                    &job_id,
                    EventBody::RollbackFailed {
                        checkpoint_id: checkpoint_id.to_string(),
                        error: e.to_string(),
                        code,
                        conflicts,
                    },
                );
            }
        }
    }
}
