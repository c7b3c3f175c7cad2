//! The review on the wire (SPEC section 7): proposed edits, the diff
//! bundle of a job, its files and hunks. A hunk's state is one enum here
//! and SPEC's `accepted` null/true/false (plus `applied`, `conflict`) in
//! JSON. Deciding, applying and rebasing them is `review`'s.

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
    /// The folder of the file's scope when it is beside the agent root
    /// (`@name/…`): the review is applied there only, whatever folder the
    /// name stands for later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope_folder: Option<String>,
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
#[serde(from = "HunkWire", into = "HunkWire")]
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

/// Who wrote a hunk's new text: on the wire `agent`, `user` or
/// `hook:NAME` (an `apply.before` hook's change, SPEC 21).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum HunkOrigin {
    #[default]
    Agent,
    User,
    Hook(String),
}

impl HunkOrigin {
    pub fn is_agent(&self) -> bool {
        *self == HunkOrigin::Agent
    }

    /// The hook that wrote it, if one did.
    pub fn hook(&self) -> Option<&str> {
        match self {
            HunkOrigin::Hook(name) => Some(name),
            _ => None,
        }
    }
}

impl Serialize for HunkOrigin {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            HunkOrigin::Agent => s.serialize_str("agent"),
            HunkOrigin::User => s.serialize_str("user"),
            HunkOrigin::Hook(name) => s.serialize_str(&format!("hook:{name}")),
        }
    }
}

impl<'de> Deserialize<'de> for HunkOrigin {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        match text.as_str() {
            "agent" => Ok(HunkOrigin::Agent),
            "user" => Ok(HunkOrigin::User),
            _ => match text.strip_prefix("hook:") {
                Some(name) if !name.is_empty() => Ok(HunkOrigin::Hook(name.to_string())),
                _ => Err(serde::de::Error::custom(format!(
                    "unknown hunk origin `{text}` (agent, user or hook:NAME)"
                ))),
            },
        }
    }
}

/// Old lines `old_start..old_start + old_len` become `new_lines` (each with
/// its line ending).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    pub old_start: usize,
    pub old_len: usize,
    pub new_lines: Vec<String>,
}

impl Hunk {
    /// The new side of the hunk's changed span, as a reviewer edits it: its
    /// added lines and the unchanged lines between them, without the context
    /// around the span. Each line ends in `\n`.
    pub fn proposed_text(&self) -> String {
        self.span_side('+')
    }

    /// The old side of the same span: the lines the hunk replaces.
    pub fn replaced_text(&self) -> String {
        self.span_side('-')
    }

    fn span_side(&self, side: char) -> String {
        let body: Vec<&str> = self
            .patch
            .lines()
            .filter(|l| !l.starts_with("@@") && !l.starts_with('\\'))
            .collect();
        let changed = |l: &&str| l.starts_with('+') || l.starts_with('-');
        let (Some(first), Some(last)) = (
            body.iter().position(changed),
            body.iter().rposition(changed),
        ) else {
            return String::new();
        };
        let mut out = String::new();
        for line in &body[first..=last] {
            if let Some(text) = line.strip_prefix(side).or_else(|| line.strip_prefix(' ')) {
                out.push_str(text);
                out.push('\n');
            } else if line.is_empty() {
                // An unchanged empty line some tools print without its space.
                out.push('\n');
            }
        }
        out
    }
}

impl DiffBundle {
    pub fn hunks(&self) -> impl Iterator<Item = &Hunk> {
        self.files.iter().flat_map(|f| f.hunks.iter())
    }

    /// A job's status once its review changed to this: a review whose
    /// every hunk was rejected closes the job (`completed`: nothing to
    /// write), and taking a rejection back before anything was applied
    /// reopens it. Any other status stays (a running job's review, an
    /// apply's own `completed`).
    pub fn settles(&self, status: super::JobStatus) -> super::JobStatus {
        use super::JobStatus::{AwaitingReview, Completed};
        let applied = self.hunks().any(|h| h.state == HunkState::Applied);
        let all_rejected =
            self.hunks().next().is_some() && self.hunks().all(|h| h.state == HunkState::Rejected);
        match status {
            AwaitingReview if all_rejected => Completed,
            Completed if !applied && self.is_pending() => AwaitingReview,
            other => other,
        }
    }

    /// Hunks still waiting: not applied and not rejected (a conflicted
    /// hunk waits for the reviewer to see it).
    pub fn is_pending(&self) -> bool {
        self.hunks()
            .any(|h| !matches!(h.state, HunkState::Applied | HunkState::Rejected))
    }

    /// The hunks an apply would write now (accepted, not yet applied).
    pub fn to_apply(&self) -> impl Iterator<Item = &Hunk> {
        self.hunks().filter(|h| h.state.is_to_apply())
    }

    /// Names the decisions a verify runs with: which hunks an apply would
    /// write and their text. A verify whose key differs is stale.
    pub fn verify_key(&self) -> String {
        use sha2::Digest;
        let mut hash = sha2::Sha256::new();
        for h in self.to_apply() {
            hash.update(h.hunk_id.as_bytes());
            hash.update([0]);
            hash.update(h.patch.as_bytes());
            hash.update([0]);
        }
        let digest = hash.finalize();
        digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
    }
}

/// A hunk as sessions store it and `review --json` prints it.
#[derive(Serialize, Deserialize)]
struct HunkWire {
    hunk_id: String,
    patch: String,
    accepted: Option<bool>,
    edit_ids: Vec<String>,
    #[serde(default)]
    oversized: bool,
    #[serde(default)]
    applied: bool,
    /// Why a conflicted hunk can no longer be placed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    conflict: Option<String>,
    #[serde(default)]
    origin: HunkOrigin,
    changes: Vec<Change>,
}

impl From<HunkWire> for Hunk {
    fn from(w: HunkWire) -> Hunk {
        let state = match (w.applied, w.conflict, w.accepted) {
            (true, _, _) => HunkState::Applied,
            (false, Some(reason), _) => HunkState::Conflicted { reason },
            (false, None, None) => HunkState::Pending,
            (false, None, Some(true)) => HunkState::Accepted,
            (false, None, Some(false)) => HunkState::Rejected,
        };
        Hunk {
            hunk_id: w.hunk_id,
            patch: w.patch,
            state,
            edit_ids: w.edit_ids,
            oversized: w.oversized,
            origin: w.origin,
            changes: w.changes,
        }
    }
}

impl From<Hunk> for HunkWire {
    fn from(h: Hunk) -> HunkWire {
        HunkWire {
            accepted: h.state.accepted(),
            applied: h.state.is_applied(),
            conflict: h.state.conflict().map(str::to_string),
            hunk_id: h.hunk_id,
            patch: h.patch,
            edit_ids: h.edit_ids,
            oversized: h.oversized,
            origin: h.origin,
            changes: h.changes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::JobStatus::{AwaitingReview, Completed, Running};

    fn bundle(states: &[HunkState]) -> DiffBundle {
        let hunks = states
            .iter()
            .enumerate()
            .map(|(i, state)| Hunk {
                hunk_id: format!("h_{}", i + 1),
                patch: String::new(),
                state: state.clone(),
                edit_ids: Vec::new(),
                oversized: false,
                origin: HunkOrigin::default(),
                changes: Vec::new(),
            })
            .collect();
        DiffBundle {
            job_id: "j".into(),
            files: vec![FileDiff {
                file_path: "a.txt".into(),
                base_file_hash: None,
                hunks,
            }],
        }
    }

    #[test]
    fn a_review_rejected_whole_settles_its_job_and_a_change_of_mind_reopens_it() {
        use HunkState::{Accepted, Applied, Pending, Rejected};
        assert_eq!(
            bundle(&[Rejected, Rejected]).settles(AwaitingReview),
            Completed
        );
        assert_eq!(
            bundle(&[Rejected, Pending]).settles(AwaitingReview),
            AwaitingReview
        );
        assert_eq!(
            bundle(&[Accepted, Rejected]).settles(Completed),
            AwaitingReview
        );
        // An apply's completion stands; a running job's review is its own.
        assert_eq!(bundle(&[Applied, Pending]).settles(Completed), Completed);
        assert_eq!(bundle(&[Rejected]).settles(Running), Running);
        assert_eq!(bundle(&[]).settles(AwaitingReview), AwaitingReview);
    }
}
