//! A hunk as sessions store it and `review --json` prints it (SPEC 7):
//! `accepted` null/true/false, plus `applied` and `conflict`, mapped to and
//! from the one `HunkState`.

use serde::{Deserialize, Serialize};

use super::{Change, Hunk, HunkOrigin, HunkState};

#[derive(Serialize, Deserialize)]
pub(super) struct HunkWire {
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
