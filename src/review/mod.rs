//! Proposed edits -> diff bundle -> hunk decisions -> hash-checked apply.
//! The types here are what sessions store and what `review --json` prints.

mod apply;
mod bundle;
mod doc;
mod edit;
mod fate;
mod rebase;
mod validate;
mod wire;

pub use apply::{
    ApplyError, FileConflict, FilePlan, HunkRegion, apply_changes, plan_apply, write_plans,
};
pub use bundle::{BuildError, build_bundle, patch_text, patch_text_at};
pub use doc::{Doc, DocError, render_lines, text_of};
pub use edit::{EditHunkError, edit_hunk, load_base, proposed_text, replaced_text};
pub use fate::{Fate, Reported, merge as merge_fates, note_proposed};
pub use rebase::rebase_after_apply;

/// A fresh id with a sortable time part: `<prefix>_<millis>_<4 hex>`.
pub fn new_id(prefix: &str) -> String {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!("{prefix}_{millis}_{:04x}", fastrand::u16(..))
}
pub use validate::{EditError, EditRequest, validate_edits};

use serde::{Deserialize, Serialize};

/// What an edit does to its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EditOperation {
    /// Lines `start_line..=end_line` become `new_text`.
    Replace,
    /// `new_text` goes before line `start_line` (`total_lines + 1` appends).
    Insert,
    /// Lines `start_line..=end_line` go away.
    Delete,
    /// A new file with `new_text` as its content.
    Create,
}

/// A validated edit (SPEC section 7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProposedEdit {
    pub edit_id: String,
    pub file_path: String,
    pub operation: EditOperation,
    pub start_line: usize,
    /// `start_line - 1` for inserts and creates (an empty range).
    pub end_line: usize,
    pub new_text: String,
    /// `sha256:<hex>` of the target lines' bytes at proposal time.
    pub expected_hash: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rationale: Option<String>,
}

impl ProposedEdit {
    /// The 0-based, half-open range of old lines it replaces.
    pub fn old_range(&self) -> std::ops::Range<usize> {
        let start = self.start_line.saturating_sub(1);
        start..self.end_line.max(start)
    }
}

/// All proposed changes of one job, grouped by file and hunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffBundle {
    pub job_id: String,
    pub files: Vec<FileDiff>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDiff {
    pub file_path: String,
    /// `sha256:<hex>` of the file when the edits were proposed; `null` for a
    /// file that does not exist yet.
    pub base_file_hash: Option<String>,
    pub hunks: Vec<Hunk>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "wire::HunkWire", into = "wire::HunkWire")]
pub struct Hunk {
    pub hunk_id: String,
    /// Unified-diff text of this hunk (`@@ ... @@` and its lines).
    pub patch: String,
    /// Where the hunk stands (on the wire: `accepted`, `applied`, `conflict`).
    pub state: HunkState,
    pub edit_ids: Vec<String>,
    /// Still larger than `max_hunk_lines`/`max_hunk_bytes` after splitting.
    pub oversized: bool,
    /// `agent` as proposed, `user` once the reviewer edited it (`e`).
    pub origin: HunkOrigin,
    /// What the hunk does, in old-file line indices (0-based).
    pub changes: Vec<Change>,
}

/// Where a hunk stands in its review.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum HunkState {
    /// Not decided yet.
    #[default]
    Pending,
    Accepted,
    Rejected,
    /// Written to disk by an apply.
    Applied,
    /// It can no longer be placed on the file as it is now (another hunk
    /// of the file was applied over its edit); never applied, never
    /// silently rejected: the reviewer sees why.
    Conflicted {
        reason: String,
    },
}

impl HunkState {
    /// SPEC's `accepted`: `null` undecided (or conflicted), `true`, `false`.
    pub fn accepted(&self) -> Option<bool> {
        match self {
            HunkState::Pending | HunkState::Conflicted { .. } => None,
            HunkState::Accepted | HunkState::Applied => Some(true),
            HunkState::Rejected => Some(false),
        }
    }

    pub fn is_applied(&self) -> bool {
        matches!(self, HunkState::Applied)
    }

    /// Accepted and not written yet: what the next apply writes.
    pub fn is_to_apply(&self) -> bool {
        matches!(self, HunkState::Accepted)
    }

    pub fn is_undecided(&self) -> bool {
        matches!(self, HunkState::Pending)
    }

    pub fn conflict(&self) -> Option<&str> {
        match self {
            HunkState::Conflicted { reason } => Some(reason),
            _ => None,
        }
    }
}

/// Who wrote a hunk's new text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HunkOrigin {
    #[default]
    Agent,
    User,
}

/// Old lines `old_start..old_start + old_len` become `new_lines` (each with
/// its line ending).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    pub old_start: usize,
    pub old_len: usize,
    pub new_lines: Vec<String>,
}

impl DiffBundle {
    pub fn hunks(&self) -> impl Iterator<Item = &Hunk> {
        self.files.iter().flat_map(|f| f.hunks.iter())
    }

    /// Hunks still waiting: not applied and not rejected (a conflicted
    /// hunk waits for the reviewer to see it).
    pub fn is_pending(&self) -> bool {
        self.hunks()
            .any(|h| !matches!(h.state, HunkState::Applied | HunkState::Rejected))
    }

    /// Records decisions; returns the ids that name no hunk of the bundle.
    /// `accept_all` accepts every undecided hunk not in `reject`.
    pub fn decide(
        &mut self,
        accept: &[String],
        reject: &[String],
        accept_all: bool,
    ) -> Vec<String> {
        let known: Vec<String> = self.hunks().map(|h| h.hunk_id.clone()).collect();
        let unknown: Vec<String> = accept
            .iter()
            .chain(reject)
            .filter(|id| !known.contains(id))
            .cloned()
            .collect();
        if !unknown.is_empty() {
            return unknown;
        }
        for hunk in self.files.iter_mut().flat_map(|f| f.hunks.iter_mut()) {
            if hunk.state.is_applied() {
                continue;
            }
            if reject.contains(&hunk.hunk_id) {
                hunk.state = HunkState::Rejected;
            } else if matches!(hunk.state, HunkState::Conflicted { .. }) {
                // Only a new proposal can place it again.
            } else if accept.contains(&hunk.hunk_id) || (accept_all && hunk.state.is_undecided()) {
                hunk.state = HunkState::Accepted;
            }
        }
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hunk(id: &str) -> Hunk {
        Hunk {
            hunk_id: id.into(),
            patch: String::new(),
            state: HunkState::Pending,
            edit_ids: vec![],
            oversized: false,
            origin: HunkOrigin::Agent,
            changes: vec![],
        }
    }

    #[test]
    fn decisions_per_hunk_and_all() {
        let mut b = DiffBundle {
            job_id: "j".into(),
            files: vec![FileDiff {
                file_path: "a".into(),
                base_file_hash: None,
                hunks: vec![hunk("h_1"), hunk("h_2"), hunk("h_3")],
            }],
        };
        assert_eq!(b.decide(&["h_9".into()], &[], false), ["h_9"]);
        assert!(
            b.hunks().all(|h| h.state.is_undecided()),
            "unknown ids change nothing"
        );
        b.decide(&["h_1".into()], &["h_2".into()], false);
        let states: Vec<_> = b.hunks().map(|h| h.state.accepted()).collect();
        assert_eq!(states, [Some(true), Some(false), None]);
        b.decide(&[], &[], true);
        let states: Vec<_> = b.hunks().map(|h| h.state.accepted()).collect();
        assert_eq!(states, [Some(true), Some(false), Some(true)]);
        assert!(b.is_pending());
    }
}
