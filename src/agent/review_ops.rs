//! Review commands: record hunk decisions, take a reviewer's own text for
//! a hunk, apply accepted hunks behind a checkpoint, roll back a
//! checkpoint (file work off the engine task, `review_work.rs`). Each is
//! reported through events and the audit log, and answered with a typed
//! reply or error; review commands that come meanwhile wait their turn.

use super::engine::{Core, Internal, ReplyTx};
use super::review_work::{ApplyDone, ReviewDone, apply_files, rollback_files};
use crate::checkpoint::CheckpointKind;
use crate::protocol::{ApplyFailure, EngineError, EventBody, Reply, UserWrite};
use crate::review::{
    DiffBundle, FileDiff, HunkState, ProposedEdit, edit_hunk, load_base, rebase_applied,
    refresh_patches,
};

impl Core {
    pub(super) fn decide(
        &mut self,
        key: &str,
        job_id: &str,
        accept: &[String],
        reject: &[String],
        accept_all: bool,
    ) -> Result<Reply, EngineError> {
        let Some(mut bundle) = self.bundle_of(key, job_id) else {
            return Err(self.no_review(key, job_id));
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
                    let approved = hunk.state.accepted();
                    self.audit(key, job_id, "decision", &hunk.hunk_id, approved, outcome);
                }
            }
        }
        let updated = EventBody::ReviewUpdated {
            bundle: bundle.clone(),
            unknown: unknown.clone(),
            error: None,
        };
        self.publish(key, job_id, updated);
        if unknown.is_empty() {
            self.auto_verify(key, job_id);
            Ok(Reply::Review { bundle })
        } else {
            Err(EngineError::Invalid {
                message: format!("no such hunk: {}", unknown.join(", ")),
                unknown,
            })
        }
    }

    /// The reviewer's own text for a hunk: it replaces the proposal and is
    /// accepted (`origin=user`). Refused if the file changed since. The file
    /// is read off the engine task.
    pub(super) fn edit_hunk(
        &mut self,
        key: &str,
        job_id: &str,
        hunk_id: &str,
        new_text: &str,
        reply: ReplyTx,
    ) {
        let Some(bundle) = self.bundle_of(key, job_id) else {
            let _ = reply.send(Err(self.no_review(key, job_id)));
            return;
        };
        let Some(file) = bundle
            .files
            .iter()
            .find(|f| f.hunks.iter().any(|h| h.hunk_id == hunk_id))
            .cloned()
        else {
            let unknown = vec![hunk_id.to_string()];
            let updated = EventBody::ReviewUpdated {
                bundle,
                unknown: unknown.clone(),
                error: None,
            };
            self.publish(key, job_id, updated);
            let _ = reply.send(Err(EngineError::Invalid {
                message: format!("no hunk {hunk_id} in this review"),
                unknown,
            }));
            return;
        };
        let ws = self.ctx.workspace.clone();
        let (job, hunk, text) = (
            job_id.to_string(),
            hunk_id.to_string(),
            new_text.to_string(),
        );
        self.off_task(key, reply, move || {
            let mut edited = file;
            let result = load_base(&ws, &edited)
                .and_then(
                    |doc| match edited.hunks.iter_mut().find(|h| h.hunk_id == hunk) {
                        // Its neighbours' context may change with its span.
                        Some(h) => edit_hunk(&doc, h, &text)
                            .map(|()| refresh_patches(&doc.lines, &mut edited)),
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
    fn hunk_edited(
        &mut self,
        job_id: &str,
        hunk_id: &str,
        result: Result<FileDiff, String>,
    ) -> Result<Reply, EngineError> {
        let key = self.jobs.get(job_id).cloned().unwrap_or_default();
        let Some(mut bundle) = self.bundle_of(&key, job_id) else {
            return Err(EngineError::not_found(format!(
                "job {job_id} has no review"
            )));
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
        let approved = Some(error.is_none());
        self.audit(&key, job_id, "edit_hunk", hunk_id, approved, &outcome);
        let updated = EventBody::ReviewUpdated {
            bundle: bundle.clone(),
            unknown: Vec::new(),
            error: error.clone(),
        };
        self.publish(&key, job_id, updated);
        match error {
            None => {
                self.auto_verify(&key, job_id);
                Ok(Reply::Review { bundle })
            }
            Some(message) => Err(EngineError::Conflict {
                message,
                conflicts: Vec::new(),
            }),
        }
    }

    /// The job's review as it stands (a copy: it changes by events only).
    fn bundle_of(&self, key: &str, job_id: &str) -> Option<DiffBundle> {
        self.sessions.get(key)?.state.job(job_id)?.bundle.clone()
    }

    /// The job's review and the edits behind it (copies).
    pub(super) fn review_of(
        &self,
        key: &str,
        job_id: &str,
    ) -> Option<(DiffBundle, Vec<ProposedEdit>)> {
        let job = self.sessions.get(key)?.state.job(job_id)?;
        Some((job.bundle.clone()?, job.edits.clone()))
    }

    /// Says (as an event, and as the error) that the job has no review.
    fn no_review(&mut self, key: &str, job_id: &str) -> EngineError {
        let error = format!("job {job_id} has no diff to review");
        let failed = EventBody::ApplyFailed {
            error: error.clone(),
            code: ApplyFailure::NoReview,
            conflicts: Vec::new(),
        };
        self.publish(key, job_id, failed);
        EngineError::not_found(error)
    }

    /// Starts an apply: the file work runs on the blocking pool; its
    /// result comes back as `Internal::Review` (`finish_review`).
    pub(super) fn apply(&mut self, key: &str, job_id: &str, reply: ReplyTx) {
        let Some((bundle, edits)) = self.review_of(key, job_id) else {
            let _ = reply.send(Err(self.no_review(key, job_id)));
            return;
        };
        let accepted: Vec<String> = bundle
            .hunks()
            .filter(|h| h.state.is_to_apply())
            .map(|h| h.hunk_id.clone())
            .collect();
        let applied: Vec<&str> = bundle
            .hunks()
            .filter(|h| h.state == crate::protocol::HunkState::Applied)
            .map(|h| h.hunk_id.as_str())
            .collect();
        if accepted.is_empty() && !applied.is_empty() {
            // Another process (or host) applied them first.
            let _ = reply.send(Err(EngineError::invalid(format!(
                "nothing is left to apply: {} applied already (agent-tui checkpoints lists \
                 the apply)",
                crate::protocol::words::counted(applied.len(), "hunk")
            ))));
            return;
        }
        // A verify still running would judge a tree the apply is changing
        // (its baseline, the "unmodified" tree, would hold the hunks): it
        // stops, and says so as `cancelled`.
        let _ = self.cancel_verify(key, job_id);
        let started = EventBody::ApplyStarted {
            hunk_ids: accepted.clone(),
        };
        self.publish(key, job_id, started);
        let ws = self.ctx.workspace.clone();
        let store = self.checkpoints.clone();
        let session = self.session_id(key).filter(|_| self.recorded(key));
        let job = job_id.to_string();
        let who = self.who(key);
        let hooks = super::hook_apply::ApplyHooks::of(&self.ctx, session.as_deref(), job_id, who);
        self.off_task(key, reply, move || {
            let mut runs = Vec::new();
            let mut before_write = |plans: &mut [crate::review::FilePlan]| {
                let hooks = hooks.as_ref()?;
                let (ran, blocked) = hooks.run(&ws, plans);
                runs = ran;
                blocked
            };
            let done = apply_files(
                &ws,
                store.as_ref(),
                session.as_deref(),
                &job,
                &bundle,
                &edits,
                &mut before_write,
            );
            ReviewDone::Apply {
                accepted,
                bundle,
                edits,
                done,
                hooks: runs,
            }
        });
    }

    /// Starts a rollback, off the engine task like an apply; its events go
    /// to session `key` (the one to tell), or to none.
    pub(super) fn rollback(
        &mut self,
        key: &str,
        checkpoint_id: &str,
        hunks: &[String],
        only: &[String],
        reply: ReplyTx,
    ) {
        let ws = self.ctx.workspace.clone();
        let store = self.checkpoints.clone();
        let (id, hunks, only) = (checkpoint_id.to_string(), hunks.to_vec(), only.to_vec());
        let tell = key.to_string();
        self.off_task(key, reply, move || {
            let done = rollback_files(&ws, store.as_ref(), &id, &hunks, &only);
            ReviewDone::Rollback {
                checkpoint_id: id,
                hunks,
                only,
                tell,
                done,
            }
        });
    }

    /// Runs `work` on the blocking pool; review commands that come
    /// meanwhile wait their turn (`deferred`), so they see its outcome.
    fn off_task(
        &mut self,
        key: &str,
        reply: ReplyTx,
        work: impl FnOnce() -> ReviewDone + Send + 'static,
    ) {
        self.review_busy = true;
        self.review_actor = self.actor.clone();
        if let Some(live) = self.live(key) {
            live.reviewing = true;
        }
        self.touch(key);
        let tx = self.internal_tx.clone();
        tokio::task::spawn_blocking(move || {
            let _ = tx.send(Internal::Review(Box::new(work()), Some(reply)));
        });
    }

    /// A person's own write of whole files, off the task like an apply.
    pub(super) fn write_files(&mut self, files: Vec<UserWrite>, by: String, reply: ReplyTx) {
        let ws = self.ctx.workspace.clone();
        let store = self.checkpoints.clone();
        let job = format!("user_write_{}", crate::review::new_id("w"));
        let key = super::engine::LOOSE.to_string();
        self.off_task(&key, reply, move || {
            let done = super::review_work::write_user_files(&ws, store.as_ref(), &job, &files);
            ReviewDone::UserWrite {
                by,
                files: files.into_iter().map(|f| f.file_path).collect(),
                done,
            }
        });
    }

    /// Publishes and audits what an apply or rollback did, answers its
    /// command, then runs the review commands that waited for it.
    pub(super) fn finish_review(&mut self, done: ReviewDone, reply: Option<ReplyTx>) {
        // What came of it is audited as the asker's.
        self.actor = self.review_actor.take();
        let (key, result) = match done {
            ReviewDone::Apply {
                accepted,
                bundle,
                edits,
                done,
                hooks,
            } => {
                let job_id = bundle.job_id.clone();
                let key = self.jobs.get(&job_id).cloned().unwrap_or_default();
                for run in hooks {
                    let started = EventBody::HookStarted {
                        name: run.name.clone(),
                        event: run.event.clone(),
                    };
                    self.publish(&key, &job_id, started);
                    self.publish(&key, &job_id, EventBody::HookCompleted(Box::new(run)));
                }
                let result = self.applied(&key, &job_id, accepted, bundle, edits, done);
                (key, result)
            }
            ReviewDone::Rollback {
                checkpoint_id,
                hunks,
                only,
                tell,
                done,
            } => {
                let result = self.rolled_back(&tell, &checkpoint_id, &hunks, &only, done);
                (tell, result)
            }
            ReviewDone::UserWrite { by, files, done } => {
                let key = super::engine::LOOSE.to_string();
                let what = files.join(", ");
                let result = match done {
                    Ok(cp) => {
                        let outcome = format!("written by {by}");
                        self.audit(&key, &cp.job_id, "fs.write", &what, Some(true), &outcome);
                        Ok(Reply::Written {
                            checkpoint_id: cp.checkpoint_id,
                            files,
                        })
                    }
                    Err(e) => {
                        let outcome = format!("refused for {by}: {e}");
                        self.audit(&key, "user_write", "fs.write", &what, Some(false), &outcome);
                        Err(e)
                    }
                };
                (key, result)
            }
            ReviewDone::EditHunk {
                job_id,
                hunk_id,
                result,
            } => {
                let key = self.jobs.get(&job_id).cloned().unwrap_or_default();
                (key, self.hunk_edited(&job_id, &hunk_id, result))
            }
        };
        if let Some(reply) = reply {
            let _ = reply.send(result);
        }
        self.actor = None;
        self.review_busy = false;
        if let Some(live) = self.live(&key) {
            live.reviewing = false;
        }
        self.touch(&key);
        while !self.review_busy
            && let Some(q) = self.deferred.pop_front()
        {
            self.dispatch(q);
        }
    }

    fn applied(
        &mut self,
        key: &str,
        job_id: &str,
        accepted: Vec<String>,
        bundle: DiffBundle,
        edits: Vec<ProposedEdit>,
        done: ApplyDone,
    ) -> Result<Reply, EngineError> {
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
                    let target = accepted.join(",");
                    self.audit(key, job_id, "apply", &target, Some(true), &outcome);
                }
                let failed = EventBody::ApplyFailed {
                    error: error.clone(),
                    code,
                    conflicts: conflicts.clone(),
                };
                self.publish(key, job_id, failed);
                return Err(apply_error(code, error, conflicts));
            }
        };
        let files: Vec<String> = plans.iter().map(|p| p.file_path.clone()).collect();
        let created = EventBody::CheckpointCreated {
            checkpoint_id: checkpoint.checkpoint_id.clone(),
            kind: CheckpointKind::Apply,
            files: files.clone(),
        };
        self.publish(key, job_id, created);
        // The other hunks of written files stay in the review, moved onto
        // the written text (or marked conflicted, with the reason).
        // A hook's changes (`apply.before`) are hunks of the review too,
        // applied with them.
        let (mut bundle, mut edits) = (bundle, edits);
        let mut hooked = Vec::new();
        for plan in &plans {
            if let Some(file) = bundle
                .files
                .iter_mut()
                .find(|f| f.file_path == plan.file_path)
            {
                rebase_applied(file, &mut edits, &accepted, plan);
            }
            hooked.extend(plan.hook_hunk_ids().map(str::to_string));
        }
        let mut accepted = accepted;
        accepted.extend(hooked);
        let outcome = format!("ok: {}", checkpoint.checkpoint_id);
        // The files by their scoped paths (`src/x.rs`, `@lib/y.rs`).
        let target = format!("{} in {}", accepted.join(","), files.join(", "));
        self.audit(key, job_id, "apply", &target, Some(true), &outcome);
        let reply = Reply::Applied {
            checkpoint_id: checkpoint.checkpoint_id.clone(),
            files: files.clone(),
            hunk_ids: accepted.clone(),
            bundle: bundle.clone(),
        };
        let completed = EventBody::ApplyCompleted {
            checkpoint_id: checkpoint.checkpoint_id,
            files,
            hunk_ids: accepted,
            bundle,
            edits,
        };
        self.publish(key, job_id, completed);
        Ok(reply)
    }
}

/// The typed error of an apply that wrote nothing.
fn apply_error(
    code: ApplyFailure,
    message: String,
    conflicts: Vec<serde_json::Value>,
) -> EngineError {
    match code {
        ApplyFailure::Conflict => EngineError::Conflict { message, conflicts },
        ApplyFailure::NothingAccepted => EngineError::invalid(message),
        ApplyFailure::NoReview => EngineError::not_found(message),
        ApplyFailure::CheckpointFailed | ApplyFailure::IoError | ApplyFailure::BlockedByHook => {
            EngineError::Failed {
                message,
                reason: Some(code.as_str().to_string()),
                detail: None,
            }
        }
    }
}
