//! A rollback's outcome: published (started, completed or failed), audited,
//! the checkpoint's session (and its model) told, answered with a typed
//! reply or error.

use super::engine::Core;
use super::review_work::{RollbackDone, rollback_failure};
use crate::checkpoint::CheckpointKind;
use crate::protocol::{EngineError, EventBody, Reply, RollbackFailure};

impl Core {
    /// What a rollback of `checkpoint_id` did (`hunks`, or `only` some
    /// files, or all of it).
    pub(super) fn rolled_back(
        &mut self,
        key: &str,
        checkpoint_id: &str,
        hunks: &[String],
        only: &[String],
        done: RollbackDone,
    ) -> Result<Reply, EngineError> {
        let (target, result) = match done {
            RollbackDone::Ran { target, result } => (target, result),
            RollbackDone::Missing(error) => {
                let failed = EventBody::RollbackFailed {
                    checkpoint_id: checkpoint_id.to_string(),
                    error: error.clone(),
                    code: RollbackFailure::NotFound,
                    conflicts: Vec::new(),
                };
                self.publish(key, checkpoint_id, failed);
                return Err(EngineError::not_found(error));
            }
        };
        let job_id = target.job_id.clone();
        let started = EventBody::RollbackStarted {
            checkpoint_id: checkpoint_id.to_string(),
            hunks: hunks.to_vec(),
        };
        self.publish(key, &job_id, started);
        let what = match (hunks.is_empty(), only.is_empty()) {
            (true, true) => checkpoint_id.to_string(),
            (true, false) => format!("{checkpoint_id} {}", only.join(",")),
            (false, _) => format!("{checkpoint_id} {}", hunks.join(",")),
        };
        let record = match result {
            Ok(record) => record,
            Err(e) => {
                let (code, conflicts) = rollback_failure(&e);
                // The error may say its kind itself ("conflict: …").
                let said = e.to_string();
                let outcome = match said.starts_with(&format!("{}:", code.as_str())) {
                    true => said,
                    false => format!("{}: {said}", code.as_str()),
                };
                self.audit(key, &job_id, "rollback", &what, Some(true), &outcome);
                let failed = EventBody::RollbackFailed {
                    checkpoint_id: checkpoint_id.to_string(),
                    error: e.to_string(),
                    code,
                    conflicts: conflicts.clone(),
                };
                self.publish(key, &job_id, failed);
                return Err(rollback_error(code, e.to_string(), conflicts));
            }
        };
        let said = if !only.is_empty() {
            format!("{} of checkpoint {checkpoint_id}", only.join(", "))
        } else if hunks.is_empty() {
            format!("every change of checkpoint {checkpoint_id}")
        } else {
            format!("hunks {} of checkpoint {checkpoint_id}", hunks.join(", "))
        };
        self.rolled_back_ok(key, &job_id, checkpoint_id, (&what, &said), &record)
    }

    /// A rollback that wrote its files: audited, its checkpoint said, the
    /// model told (`said`: what was rolled back, in words).
    fn rolled_back_ok(
        &mut self,
        key: &str,
        job_id: &str,
        checkpoint_id: &str,
        (what, said): (&str, &str),
        record: &crate::checkpoint::Checkpoint,
    ) -> Result<Reply, EngineError> {
        let files: Vec<String> = record
            .affected_files
            .iter()
            .map(|f| f.file_path.clone())
            .collect();
        let outcome = format!("ok: {}", record.checkpoint_id);
        let target = format!("{what} in {}", files.join(", "));
        self.audit(key, job_id, "rollback", &target, Some(true), &outcome);
        let created = EventBody::CheckpointCreated {
            checkpoint_id: record.checkpoint_id.clone(),
            kind: CheckpointKind::Rollback,
            files: files.clone(),
        };
        self.publish(key, job_id, created);
        let (verb, pronoun) = match files.len() {
            1 => ("holds", "it"),
            _ => ("hold", "they"),
        };
        let note = format!(
            "[agent-tui: the user rolled back {said}; {} now {verb} what {pronoun} held \
             before (read them again before building on them)]",
            files.join(", ")
        );
        self.note(key, None, note);
        let completed = EventBody::RollbackCompleted {
            checkpoint_id: checkpoint_id.to_string(),
            rollback_checkpoint_id: record.checkpoint_id.clone(),
            files: files.clone(),
        };
        self.publish(key, job_id, completed);
        Ok(Reply::RolledBack {
            checkpoint_id: checkpoint_id.to_string(),
            rollback_checkpoint_id: record.checkpoint_id.clone(),
            files,
        })
    }
}

/// The typed error of a rollback that wrote nothing.
fn rollback_error(code: RollbackFailure, message: String, conflicts: Vec<String>) -> EngineError {
    match code {
        RollbackFailure::Conflict => EngineError::Conflict {
            message,
            conflicts: conflicts
                .into_iter()
                .map(serde_json::Value::String)
                .collect(),
        },
        RollbackFailure::NotFound => EngineError::not_found(message),
        RollbackFailure::UnknownHunk | RollbackFailure::UnknownFile => {
            EngineError::invalid(message)
        }
        RollbackFailure::IoError => EngineError::Failed {
            message,
            reason: Some(code.as_str().to_string()),
            detail: None,
        },
    }
}
