//! Checkpoints on the wire (SPEC section 8): the record of an apply, a
//! rollback or a command's changes, the regions its hunks landed in, what
//! crash recovery settled, and the three-way view of a file. Recording and
//! rolling back are `checkpoint`'s.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckpointKind {
    Apply,
    Rollback,
    /// What a command (`run_command`) changed.
    Exec,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub checkpoint_id: String,
    pub session_id: Option<String>,
    pub job_id: String,
    pub created_at: String,
    pub kind: CheckpointKind,
    /// For a rollback: the checkpoint it rolled back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rolls_back: Option<String>,
    pub affected_files: Vec<AffectedFile>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AffectedFile {
    pub file_path: String,
    /// For a file outside the agent root: the folder of its scope, so that
    /// `@id/…` means the same folder whatever the scope is called later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope_root: Option<String>,
    /// The file's bytes before (`null`: it did not exist).
    pub base_snapshot_hash: Option<String>,
    /// The file's bytes after (`null`: it was deleted).
    pub after_snapshot_hash: Option<String>,
    pub hunks: Vec<CheckpointHunk>,
    /// The file's permission bits before (`0o755`), which a rollback gives
    /// it back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointHunk {
    pub hunk_id: String,
    /// Who wrote it: `agent`, `user` or `hook:NAME` (a formatter's change
    /// applied with the accepted hunks).
    #[serde(default)]
    pub origin: super::review::HunkOrigin,
    /// Unified diff that undoes the hunk.
    pub reverse_patch: String,
    /// Where the hunk sits in the file after the apply.
    pub region: HunkRegion,
}

/// Where a hunk landed, for rollback: `before_lines` were replaced by
/// `after_lines` starting at line index `after_start` of the new file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HunkRegion {
    pub hunk_id: String,
    /// Who wrote the hunk (see `CheckpointHunk::origin`).
    #[serde(default, skip_serializing_if = "super::review::HunkOrigin::is_agent")]
    pub origin: super::review::HunkOrigin,
    pub after_start: usize,
    pub before_lines: Vec<String>,
    pub after_lines: Vec<String>,
    pub ctx_before: Vec<String>,
    pub ctx_after: Vec<String>,
}

/// How an interrupted operation was settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Settled {
    /// Every file had been written: the operation stands.
    Finished,
    /// Some had not: those written were restored, the checkpoint dropped.
    Undone,
}

/// A file recovery did not touch because it holds neither version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftAlone {
    pub file_path: String,
    pub reason: String,
}

/// What recovery did with one interrupted apply or rollback.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recovery {
    pub checkpoint_id: String,
    pub job_id: String,
    /// `apply` or `rollback`.
    pub operation: String,
    pub outcome: Settled,
    /// Files put back to their bytes before the operation.
    pub restored: Vec<String>,
    pub left_alone: Vec<LeftAlone>,
    /// Temp files of the interrupted write removed.
    pub temp_files_removed: usize,
}

impl Recovery {
    /// One line for a log or a terminal.
    pub fn summary(&self) -> String {
        let mut line = match self.outcome {
            Settled::Finished => format!(
                "an interrupted {} (checkpoint {}) had written every file; it stands",
                self.operation, self.checkpoint_id
            ),
            Settled::Undone => format!(
                "an interrupted {} (checkpoint {}) was undone: {}",
                self.operation,
                self.checkpoint_id,
                if self.restored.is_empty() {
                    "none of its files had been written".to_string()
                } else {
                    format!("restored {}", self.restored.join(", "))
                }
            ),
        };
        for left in &self.left_alone {
            line.push_str(&format!(
                "; left {} as found ({})",
                left.file_path, left.reason
            ));
        }
        line
    }
}

/// The three versions of an affected file, as text where they exist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreeWay {
    pub file_path: String,
    pub current: Option<String>,
    /// Why `current` could not be read (its scope's folder is not added
    /// to this run, say): the checkpoint is shown all the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
    /// Before the checkpoint's change.
    pub base: Option<String>,
    /// What the change wrote (the agent's proposal as applied).
    pub proposed: Option<String>,
    /// The hooks whose changes the apply wrote with it (`apply.before`
    /// formatters), by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<String>,
}
