//! Proposed edits -> diff bundle -> hunk decisions -> hash-checked apply.
//! The types here are what sessions store and what `review --json` prints.

mod apply;
mod bundle;
mod doc;
mod edit;
mod fate;
#[doc(hidden)]
pub mod fuzzing; // fuzz doors: any bytes in, a panic only when a property fails
mod hooked;
mod indent;
mod intent;
mod patch_text;
mod rebase;
mod validate;

pub use apply::{ApplyError, FileConflict, FilePlan, apply_changes, plan_apply, write_plans};
pub use bundle::{BuildError, build_bundle};
pub use doc::{Doc, DocError, render_lines, text_of};
pub use edit::{EditHunkError, edit_hunk, load_base, proposed_text, replaced_text};
pub use fate::{Fate, Reported, merge as merge_fates, note_proposed};
pub use hooked::{HOOK_HUNK_PREFIX, HookStage, line_changes, rebase_applied, replay_regions};
pub use patch_text::{patch_text, patch_text_at, refresh_patches};
pub use rebase::rebase_after_apply;

/// A fresh id with a sortable time part: `<prefix>_<millis>_<4 hex>`.
pub fn new_id(prefix: &str) -> String {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!("{prefix}_{millis}_{:04x}", fastrand::u16(..))
}
pub use validate::{EditError, EditRequest, validate_edits};

pub use crate::protocol::checkpoint::HunkRegion;
pub use crate::protocol::review::{
    Change, DiffBundle, EditOperation, FileDiff, Hunk, HunkOrigin, HunkState, ProposedEdit,
};

impl DiffBundle {
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
