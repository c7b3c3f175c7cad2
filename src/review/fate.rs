//! Where each proposed hunk stands from the model's point of view, and which
//! of those fates it has already been told (so it hears of each change once).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Hunk, HunkOrigin, HunkState};

/// Where a hunk stands, as last told to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fate {
    Waiting,
    Accepted,
    Rejected,
    Applied,
    /// The user's own text replaced the hunk (then accepted or applied).
    RewrittenAccepted,
    RewrittenApplied,
    /// Another hunk of the file was applied over its edit: it cannot be
    /// placed any more.
    Conflicted,
    /// Applied, then rolled back by the user: the file no longer has it.
    RolledBack,
}

impl Fate {
    /// A hunk's fate, `rolled_back` when a rollback took it back out.
    pub fn of_hunk(hunk: &Hunk, rolled_back: bool) -> Fate {
        match Fate::of(hunk) {
            Fate::Applied | Fate::RewrittenApplied if rolled_back => Fate::RolledBack,
            fate => fate,
        }
    }

    pub fn of(hunk: &Hunk) -> Fate {
        let rewritten = hunk.origin == HunkOrigin::User;
        match (&hunk.state, rewritten) {
            (HunkState::Applied, true) => Fate::RewrittenApplied,
            (HunkState::Applied, false) => Fate::Applied,
            (HunkState::Accepted, true) => Fate::RewrittenAccepted,
            (HunkState::Accepted, false) => Fate::Accepted,
            (HunkState::Rejected, _) => Fate::Rejected,
            (HunkState::Pending, _) => Fate::Waiting,
            (HunkState::Conflicted { .. }, _) => Fate::Conflicted,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Fate::Waiting => "still waiting for the user's review",
            Fate::Accepted => "accepted by the user, not applied yet",
            Fate::Rejected => "rejected by the user: do not propose it again unless asked",
            Fate::Applied => "applied: the file now contains it",
            Fate::RewrittenAccepted => "rewritten by the user and accepted, not applied yet",
            Fate::RewrittenApplied => {
                "rewritten by the user and applied: the file now contains the user's version"
            }
            Fate::Conflicted => {
                "in conflict: another hunk applied over its edit, so it can no longer be placed; \
                 read the file and propose it again if it is still wanted"
            }
            Fate::RolledBack => {
                "applied, then rolled back by the user: the file no longer contains it; do not \
                 propose it again unless asked"
            }
        }
    }
}

/// Fates last reported, per job, per hunk id.
pub type Reported = BTreeMap<String, BTreeMap<String, Fate>>;

/// Records the hunks of a newly proposed bundle as known to the model
/// (it proposed them, so it knows they wait for review).
pub fn note_proposed(reported: &mut Reported, bundle: &super::DiffBundle) {
    let known = reported.entry(bundle.job_id.clone()).or_default();
    for hunk in bundle.hunks() {
        known.entry(hunk.hunk_id.clone()).or_insert(Fate::Waiting);
    }
}

/// Adds what `fates` reports to `reported`.
pub fn merge(reported: &mut Reported, fates: Reported) {
    for (job, hunks) in fates {
        reported.entry(job).or_default().extend(hunks);
    }
}
