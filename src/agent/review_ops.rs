//! Review operations the engine performs for a front end: record hunk
//! decisions, apply accepted hunks behind a checkpoint, roll back a
//! checkpoint (their file work off the engine task, `review_work.rs`).
//! Each reports through events and the audit log.

use super::emit::JobMsg;
use super::engine::Engine;
use super::review_work::{
    ApplyDone, ReviewDone, RollbackDone, apply_files, rollback_failure, rollback_files,
};
use crate::checkpoint::CheckpointKind;
use crate::protocol::{ApplyFailure, EventBody, RollbackFailure};
use crate::review::{
    DiffBundle, FileDiff, HunkState, ProposedEdit, edit_hunk, load_base, rebase_after_apply,
};

impl Engine {
    pub(super) fn decide(
        &mut self,
        job_id: &str,
        accept: &[String],
        reject: &[String],
        accept_all: bool,
    ) {
        let Some(mut bundle) = self.bundle_of(job_id) else {
            self.no_review(job_id);
            return;
        };
        let unknown = bundle.decide(accept, reject, accept_all);
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
    /// accepted (`origin=user`). Refused if the file changed since. The file
    /// is read off the engine task.
    pub(super) fn edit_hunk(&mut self, job_id: &str, hunk_id: &str, new_text: &str) {
        let Some(bundle) = self.bundle_of(job_id) else {
            self.no_review(job_id);
            return;
        };
        let Some(file) = bundle
            .files
            .iter()
            .find(|f| f.hunks.iter().any(|h| h.hunk_id == hunk_id))
            .cloned()
        else {
            self.publish(
                job_id,
                EventBody::ReviewUpdated {
                    bundle,
                    unknown: vec![hunk_id.to_string()],
                    error: None,
                },
            );
            return;
        };
        let ws = self.ctx.workspace.clone();
        let (job, hunk, text) = (
            job_id.to_string(),
            hunk_id.to_string(),
            new_text.to_string(),
        );
        self.off_task(job_id, move || {
            let mut edited = file;
            let result = load_base(&ws, &edited)
                .and_then(
                    |doc| match edited.hunks.iter_mut().find(|h| h.hunk_id == hunk) {
                        Some(h) => edit_hunk(&doc, h, &text),
                        None => Ok(()),
                    },
                )
                .map(|()| edited)
                .map_err(|e| e.to_string());
            ReviewDone::EditHunk {
                job_id: job,
                hunk_id: hunk,
                result,
            }
        });
    }

    /// The edited hunk's file goes into the review (or the refusal is said).
    fn hunk_edited(&mut self, job_id: &str, hunk_id: &str, result: Result<FileDiff, String>) {
        let Some(mut bundle) = self.bundle_of(job_id) else {
            return;
        };
        let error = match result {
            Ok(file) => {
                if let Some(slot) = bundle
                    .files
                    .iter_mut()
                    .find(|f| f.file_path == file.file_path)
                {
                    *slot = file;
                }
                None
            }
            Err(e) => Some(e),
        };
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
        self.publish(
            job_id,
            EventBody::ReviewUpdated {
                bundle,
                unknown: Vec::new(),
                error,
            },
        );
    }

    /// The job's review as it stands (a copy: it changes by events only).
    fn bundle_of(&self, job_id: &str) -> Option<DiffBundle> {
        self.state.job(job_id)?.bundle.clone()
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

    /// Starts an apply: the file work runs on the blocking pool; its
    /// result comes back as `JobMsg::Review` (`finish_review`).
    pub(super) fn apply(&mut self, job_id: &str) {
        let Some(bundle) = self.bundle_of(job_id) else {
            self.no_review(job_id);
            return;
        };
        let edits = self
            .state
            .job(job_id)
            .map(|j| j.edits.clone())
            .unwrap_or_default();
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
        let ws = self.ctx.workspace.clone();
        let store = self.checkpoints.clone();
        let session = self.session_id();
        let job = job_id.to_string();
        self.off_task(job_id, move || {
            let done = apply_files(
                &ws,
                store.as_ref(),
                session.as_deref(),
                &job,
                &bundle,
                &edits,
            );
            ReviewDone::Apply {
                accepted,
                bundle,
                edits,
                done,
            }
        });
    }

    /// Starts a rollback, off the engine task like an apply.
    pub(super) fn rollback(&mut self, checkpoint_id: &str, hunks: &[String], only: &[String]) {
        let ws = self.ctx.workspace.clone();
        let store = self.checkpoints.clone();
        let (id, hunks, only) = (checkpoint_id.to_string(), hunks.to_vec(), only.to_vec());
        self.off_task(checkpoint_id, move || {
            let done = rollback_files(&ws, store.as_ref(), &id, &hunks, &only);
            ReviewDone::Rollback {
                checkpoint_id: id,
                hunks,
                only,
                done,
            }
        });
    }

    /// Runs `work` on the blocking pool; review ops that come meanwhile
    /// wait their turn (`deferred`), so they see its outcome.
    fn off_task(&mut self, key: &str, work: impl FnOnce() -> ReviewDone + Send + 'static) {
        self.review_busy = true;
        let tx = self.internal_tx.clone();
        let key = key.to_string();
        tokio::task::spawn_blocking(move || {
            let _ = tx.send((key, JobMsg::Review(Box::new(work()))));
        });
    }

    /// Publishes and audits what an apply or rollback did, then runs the
    /// review ops that waited for it.
    pub(super) fn finish_review(&mut self, done: ReviewDone) {
        match done {
            ReviewDone::Apply {
                accepted,
                bundle,
                edits,
                done,
            } => {
                let job_id = bundle.job_id.clone();
                self.applied(&job_id, accepted, bundle, edits, done);
            }
            ReviewDone::Rollback {
                checkpoint_id,
                hunks,
                only,
                done,
            } => self.rolled_back(&checkpoint_id, &hunks, &only, done),
            ReviewDone::EditHunk {
                job_id,
                hunk_id,
                result,
            } => self.hunk_edited(&job_id, &hunk_id, result),
        }
        self.review_busy = false;
        while !self.review_busy
            && let Some(op) = self.deferred.pop_front()
        {
            self.handle(op);
        }
    }

    fn applied(
        &mut self,
        job_id: &str,
        accepted: Vec<String>,
        bundle: DiffBundle,
        edits: Vec<ProposedEdit>,
        done: ApplyDone,
    ) {
        let (checkpoint, plans) = match done {
            ApplyDone::Written { checkpoint, plans } => (checkpoint, plans),
            ApplyDone::Refused {
                code,
                error,
                conflicts,
                audited,
            } => {
                if audited {
                    let outcome = format!("{}: {error}", code.as_str());
                    self.audit(job_id, "apply", &accepted.join(","), Some(true), &outcome);
                }
                self.publish(
                    job_id,
                    EventBody::ApplyFailed {
                        error,
                        code,
                        conflicts,
                    },
                );
                return;
            }
        };
        let files: Vec<String> = plans.iter().map(|p| p.file_path.clone()).collect();
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
        let (mut bundle, mut edits) = (bundle, edits);
        for plan in &plans {
            if let Some(file) = bundle
                .files
                .iter_mut()
                .find(|f| f.file_path == plan.file_path)
            {
                rebase_after_apply(file, &mut edits, &accepted, &plan.after);
            }
        }
        let outcome = format!("ok: {}", checkpoint.checkpoint_id);
        // The files by their scoped paths (`src/x.rs`, `@lib/y.rs`).
        let target = format!("{} in {}", accepted.join(","), files.join(", "));
        self.audit(job_id, "apply", &target, Some(true), &outcome);
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

    fn rolled_back(
        &mut self,
        checkpoint_id: &str,
        hunks: &[String],
        only: &[String],
        done: RollbackDone,
    ) {
        let (target, result) = match done {
            RollbackDone::Ran { target, result } => (target, result),
            RollbackDone::Missing(error) => {
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
        let job_id = target.job_id.clone();
        self.publish(
            &job_id,
            EventBody::RollbackStarted {
                checkpoint_id: checkpoint_id.to_string(),
                hunks: hunks.to_vec(),
            },
        );
        let what = match (hunks.is_empty(), only.is_empty()) {
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
                let outcome = format!("ok: {}", record.checkpoint_id);
                let target = format!("{what} in {}", files.join(", "));
                self.audit(&job_id, "rollback", &target, Some(true), &outcome);
                self.publish(
                    &job_id,
                    EventBody::CheckpointCreated {
                        checkpoint_id: record.checkpoint_id.clone(),
                        kind: CheckpointKind::Rollback,
                        files: files.clone(),
                    },
                );
                let said = if !only.is_empty() {
                    format!("{} of checkpoint {checkpoint_id}", only.join(", "))
                } else if hunks.is_empty() {
                    format!("every change of checkpoint {checkpoint_id}")
                } else {
                    format!("hunks {} of checkpoint {checkpoint_id}", hunks.join(", "))
                };
                self.note(
                    None,
                    format!(
                        "[agent-tui: the user rolled back {said}; {} now hold what they held \
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
                let (code, conflicts) = rollback_failure(&e);
                let outcome = format!("{}: {e}", code.as_str());
                self.audit(&job_id, "rollback", &what, Some(true), &outcome);
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
