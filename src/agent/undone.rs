//! Which applied hunks the user rolled back since: an apply's checkpoint
//! names its job and hunks; a rollback of it (all of it, some hunks, some
//! files) takes them back out of the files, and a rollback of that
//! rollback puts them back. The model hears of it with the review's other
//! outcomes ("applied, then rolled back").

use std::collections::{BTreeSet, HashMap};

use crate::protocol::EventBody;

/// A checkpoint that wrote hunks of a job: an apply, or a rollback that
/// took them back out (`undoes`).
#[derive(Debug, Clone, PartialEq, Default)]
struct Wrote {
    job_id: String,
    /// Each hunk with its file.
    hunks: Vec<(String, String)>,
    undoes: bool,
}

/// The session's applies and rollbacks, as their events come.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Undone {
    checkpoints: HashMap<String, Wrote>,
    /// The rollback under way: its checkpoint and chosen hunks.
    rolling: Option<(String, Vec<String>)>,
}

/// What a rollback changed: job, hunks, and whether they are now out of
/// the files (`true`) or back in them.
pub type Change = (String, Vec<String>, bool);

impl Undone {
    /// Follows `body` (of job `job_id`). A rollback's end says which
    /// hunks it moved.
    pub fn follow(&mut self, job_id: &str, body: &EventBody) -> Option<Change> {
        match body {
            EventBody::ApplyCompleted {
                checkpoint_id,
                hunk_ids,
                bundle,
                ..
            } => {
                let file_of = |id: &str| {
                    bundle
                        .files
                        .iter()
                        .find(|f| f.hunks.iter().any(|h| h.hunk_id == id))
                        .map(|f| f.file_path.clone())
                };
                let hunks = hunk_ids
                    .iter()
                    .map(|h| (h.clone(), file_of(h).unwrap_or_default()))
                    .collect();
                let wrote = Wrote {
                    job_id: job_id.to_string(),
                    hunks,
                    undoes: false,
                };
                self.checkpoints.insert(checkpoint_id.clone(), wrote);
                None
            }
            EventBody::RollbackStarted {
                checkpoint_id,
                hunks,
            } => {
                self.rolling = Some((checkpoint_id.clone(), hunks.clone()));
                None
            }
            EventBody::RollbackCompleted {
                checkpoint_id,
                rollback_checkpoint_id,
                files,
            } => {
                let chosen = match self.rolling.take() {
                    Some((cp, hunks)) if &cp == checkpoint_id => hunks,
                    _ => Vec::new(),
                };
                let target = self.checkpoints.get(checkpoint_id)?.clone();
                let moved: Vec<(String, String)> = target
                    .hunks
                    .iter()
                    .filter(|(hunk, file)| {
                        if chosen.is_empty() {
                            files.contains(file)
                        } else {
                            chosen.contains(hunk)
                        }
                    })
                    .cloned()
                    .collect();
                if moved.is_empty() {
                    return None;
                }
                let ids = moved.iter().map(|(h, _)| h.clone()).collect();
                let undone = Wrote {
                    job_id: target.job_id.clone(),
                    hunks: moved,
                    undoes: !target.undoes,
                };
                self.checkpoints
                    .insert(rollback_checkpoint_id.clone(), undone);
                Some((target.job_id, ids, !target.undoes))
            }
            _ => None,
        }
    }
}

/// Applies a rollback's change to a job's set of hunks taken back out.
pub fn record(out: &mut BTreeSet<String>, (_, hunks, undone): &Change) {
    for h in hunks {
        if *undone {
            out.insert(h.clone());
        } else {
            out.remove(h);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rollback_takes_hunks_out_and_its_own_rollback_puts_them_back() {
        use crate::protocol::review::{FileDiff, Hunk, HunkOrigin, HunkState};
        let mut u = Undone::default();
        let file = |path: &str, id: &str| FileDiff {
            file_path: path.into(),
            base_file_hash: None,
            hunks: vec![Hunk {
                hunk_id: id.into(),
                patch: String::new(),
                state: HunkState::Applied,
                edit_ids: Vec::new(),
                oversized: false,
                origin: HunkOrigin::default(),
                changes: Vec::new(),
            }],
        };
        let applied = EventBody::ApplyCompleted {
            checkpoint_id: "cp1".into(),
            files: vec!["a.txt".into(), "b.txt".into()],
            hunk_ids: vec!["h_1".into(), "h_2".into()],
            bundle: crate::protocol::DiffBundle {
                job_id: "j".into(),
                files: vec![file("a.txt", "h_1"), file("b.txt", "h_2")],
            },
            edits: Vec::new(),
        };
        assert_eq!(u.follow("j", &applied), None);
        let started = |cp: &str, hunks: &[&str]| EventBody::RollbackStarted {
            checkpoint_id: cp.into(),
            hunks: hunks.iter().map(|h| h.to_string()).collect(),
        };
        let done = |cp: &str, back: &str, files: &[&str]| EventBody::RollbackCompleted {
            checkpoint_id: cp.into(),
            rollback_checkpoint_id: back.into(),
            files: files.iter().map(|f| f.to_string()).collect(),
        };
        u.follow("j", &started("cp1", &["h_1"]));
        let change = u.follow("j", &done("cp1", "cp2", &["a.txt"])).unwrap();
        assert_eq!(change, ("j".into(), vec!["h_1".into()], true));
        let mut out = BTreeSet::new();
        record(&mut out, &change);
        assert!(out.contains("h_1"));
        // Undoing that rollback puts h_1 back.
        u.follow("j", &started("cp2", &[]));
        let change = u.follow("j", &done("cp2", "cp3", &["a.txt"])).unwrap();
        assert_eq!(change, ("j".into(), vec!["h_1".into()], false));
        record(&mut out, &change);
        assert!(out.is_empty());
        // A hard rollback of the apply: every hunk of its files.
        u.follow("j", &started("cp1", &[]));
        let change = u
            .follow("j", &done("cp1", "cp4", &["a.txt", "b.txt"]))
            .unwrap();
        assert_eq!(change.1, ["h_1", "h_2"]);
    }
}
