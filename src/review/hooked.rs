//! An `apply.before` hook's changes to a file being applied (SPEC 21):
//! they become hunks `origin: "hook:NAME"` of the same review, written in
//! the same apply and checkpoint, and the checkpoint's rollback regions
//! are moved onto the file as the hook left it (a hook's change that
//! touches an accepted hunk's lines joins that hunk's region, so rolling
//! the hunk back takes both back).

use similar::{Algorithm, DiffOp, capture_diff_slices};

use super::apply::{FilePlan, REGION_CONTEXT};
use super::doc::Doc;
use super::{
    Change, FileDiff, Hunk, HunkOrigin, HunkRegion, HunkState, ProposedEdit, new_id, patch_text,
    rebase_after_apply,
};

/// How the ids of hooks' hunks begin (`hook_…`; the agent's are `h_N`).
pub const HOOK_HUNK_PREFIX: &str = "hook_";

/// One hook's change to a planned file: its hunks (over `before`), and the
/// bytes it found.
#[derive(Debug, Clone)]
pub struct HookStage {
    pub hunks: Vec<Hunk>,
    pub before: Vec<u8>,
}

impl FilePlan {
    /// Hook `name` left `now` where the plan would write `after`: `now` is
    /// what gets written, its changes become hunks, and the regions follow.
    /// Where they cannot be proven to rebuild the file, the checkpoint keeps
    /// the whole file instead (a hard rollback still restores it).
    pub fn hooked(&mut self, name: &str, now: Vec<u8>) {
        let before = std::mem::replace(&mut self.after, now);
        let (Ok(old), Ok(new)) = (Doc::parse(&before), Doc::parse(&self.after)) else {
            self.regions.clear();
            self.stages.push(HookStage {
                hunks: Vec::new(),
                before,
            });
            return;
        };
        let hunks = hook_hunks(name, &old.lines, &new.lines);
        let regions = restage(
            std::mem::take(&mut self.regions),
            &old.lines,
            &new.lines,
            &hunks,
        );
        let base = Doc::parse(self.before.as_deref().unwrap_or_default())
            .map(|d| d.lines)
            .unwrap_or_default();
        if replay_regions(&base, &regions.iter().collect::<Vec<_>>()) == new.lines {
            self.regions = regions;
        }
        self.stages.push(HookStage { hunks, before });
    }

    /// The bytes the accepted hunks alone gave, before any hook.
    pub fn unhooked(&self) -> &[u8] {
        self.stages.first().map_or(&self.after, |s| &s.before)
    }

    /// Every hook hunk of the plan's file, in the order they were made.
    pub fn hook_hunk_ids(&self) -> impl Iterator<Item = &str> {
        self.stages
            .iter()
            .flat_map(|s| s.hunks.iter().map(|h| h.hunk_id.as_str()))
    }
}

/// The review after `plan` was written: the accepted hunks applied, then
/// each hook's hunks added to the file as applied, the rest rebased over
/// all of it.
pub fn rebase_applied(
    file: &mut FileDiff,
    edits: &mut [ProposedEdit],
    accepted: &[String],
    plan: &FilePlan,
) {
    rebase_after_apply(file, edits, accepted, plan.unhooked());
    for (i, stage) in plan.stages.iter().enumerate() {
        let written = plan.stages.get(i + 1).map_or(&plan.after, |s| &s.before);
        let ids: Vec<String> = stage.hunks.iter().map(|h| h.hunk_id.clone()).collect();
        file.hunks.extend(stage.hunks.iter().cloned());
        rebase_after_apply(file, edits, &ids, written);
    }
}

/// The line changes from `old` to `new`, one per run of changed lines.
pub fn line_changes(old: &[String], new: &[String]) -> Vec<Change> {
    let mut out: Vec<Change> = Vec::new();
    for op in capture_diff_slices(Algorithm::Myers, old, new) {
        let (at, len, from, count) = match op {
            DiffOp::Equal { .. } => continue,
            DiffOp::Delete {
                old_index, old_len, ..
            } => (old_index, old_len, 0, 0),
            DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => (old_index, 0, new_index, new_len),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => (old_index, old_len, new_index, new_len),
        };
        let added = &new[from..from + count];
        match out.last_mut() {
            Some(last) if last.old_start + last.old_len == at => {
                last.old_len += len;
                last.new_lines.extend_from_slice(added);
            }
            _ => out.push(Change {
                old_start: at,
                old_len: len,
                new_lines: added.to_vec(),
            }),
        }
    }
    out
}

/// Hook `name`'s changes from `old` to `new`: one hunk a run of changed
/// lines, accepted (the apply writes them).
fn hook_hunks(name: &str, old: &[String], new: &[String]) -> Vec<Hunk> {
    line_changes(old, new)
        .into_iter()
        .map(|change| Hunk {
            hunk_id: new_id(HOOK_HUNK_PREFIX.trim_end_matches('_')),
            patch: patch_text(old, std::slice::from_ref(&change)),
            state: HunkState::Accepted,
            edit_ids: Vec::new(),
            oversized: false,
            origin: HunkOrigin::Hook(name.to_string()),
            changes: vec![change],
        })
        .collect()
}

/// A region or a hook's change, by its span of `old` lines.
enum Piece<'a> {
    Region(HunkRegion),
    Change(&'a Hunk, &'a Change),
}

impl Piece<'_> {
    fn span(&self) -> (usize, usize) {
        match self {
            Piece::Region(r) => (r.after_start, r.after_start + r.after_lines.len()),
            Piece::Change(_, c) => (c.old_start, c.old_start + c.old_len),
        }
    }
}

/// `regions` (over `old`) moved onto `new`, with a region for each hook
/// hunk that touches none (one that does joins it).
fn restage(
    regions: Vec<HunkRegion>,
    old: &[String],
    new: &[String],
    hooked: &[Hunk],
) -> Vec<HunkRegion> {
    let mut pieces: Vec<Piece<'_>> = regions.into_iter().map(Piece::Region).collect();
    for hunk in hooked {
        pieces.extend(hunk.changes.iter().map(|c| Piece::Change(hunk, c)));
    }
    pieces.sort_by_key(Piece::span);
    // Pieces that overlap (or start together with a change) go as one.
    let mut groups: Vec<(usize, usize, Vec<Piece<'_>>)> = Vec::new();
    for piece in pieces {
        let (start, end) = piece.span();
        let changed = |g: &[Piece<'_>]| g.iter().any(|p| matches!(p, Piece::Change(..)));
        match groups.last_mut() {
            Some((g_start, g_end, group))
                if start < *g_end
                    || (start == *g_start
                        && (matches!(piece, Piece::Change(..)) || changed(group))) =>
            {
                *g_end = (*g_end).max(end);
                group.push(piece);
            }
            _ => groups.push((start, end, vec![piece])),
        }
    }
    let mut out = Vec::with_capacity(groups.len());
    let mut shift: isize = 0;
    for (start, end, group) in groups {
        let grown: isize = group
            .iter()
            .filter_map(|p| match p {
                Piece::Change(_, c) => Some(c.new_lines.len() as isize - c.old_len as isize),
                Piece::Region(_) => None,
            })
            .sum();
        let after_start = (start as isize + shift).max(0) as usize;
        let after_end = ((end - start) as isize + grown).max(0) as usize + after_start;
        shift += grown;
        // The first region's hunk owns the group; else the hook's change.
        let (owner, origin) = group
            .iter()
            .find_map(|p| match p {
                Piece::Region(r) => Some((r.hunk_id.clone(), r.origin.clone())),
                Piece::Change(..) => None,
            })
            .or_else(|| {
                group.iter().find_map(|p| match p {
                    Piece::Change(h, _) => Some((h.hunk_id.clone(), h.origin.clone())),
                    Piece::Region(_) => None,
                })
            })
            .unwrap_or_default();
        // Lines no region covers are the base's own.
        let mut before_lines = Vec::new();
        let mut at = start;
        for p in &group {
            if let Piece::Region(r) = p {
                before_lines.extend_from_slice(old.get(at..r.after_start).unwrap_or_default());
                before_lines.extend(r.before_lines.iter().cloned());
                at = r.after_start + r.after_lines.len();
            }
        }
        before_lines.extend_from_slice(old.get(at.min(end)..end).unwrap_or_default());
        let after_end = after_end.min(new.len());
        let after_start = after_start.min(after_end);
        out.push(HunkRegion {
            hunk_id: owner,
            origin,
            after_start,
            before_lines,
            after_lines: new[after_start..after_end].to_vec(),
            ctx_before: new[after_start.saturating_sub(REGION_CONTEXT)..after_start].to_vec(),
            ctx_after: new[after_end..(after_end + REGION_CONTEXT).min(new.len())].to_vec(),
        });
    }
    out
}

/// `base` with every region's old lines replaced by its new ones: the file
/// a checkpoint wrote, rebuilt from its base (regions are in the written
/// file's lines; walked in order, the running position stays right).
pub fn replay_regions(base: &[String], regions: &[&HunkRegion]) -> Vec<String> {
    let mut lines = base.to_vec();
    let mut sorted: Vec<&HunkRegion> = regions.to_vec();
    sorted.sort_by_key(|r| r.after_start);
    for r in sorted {
        let end = (r.after_start + r.before_lines.len()).min(lines.len());
        let start = r.after_start.min(end);
        lines.splice(start..end, r.after_lines.iter().cloned());
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        Doc::parse(text.as_bytes()).unwrap().lines
    }

    /// A plan of `base` -> `model` by the apply's own code, then `hook`.
    fn planned(base: &str, model: &str, hook: &str) -> FilePlan {
        let (old, mid) = (lines(base), lines(model));
        let changes = line_changes(&old, &mid);
        let ids: Vec<String> = (0..changes.len()).map(|i| format!("h_{}", i + 1)).collect();
        let tagged: Vec<(&str, &Change)> =
            ids.iter().map(String::as_str).zip(changes.iter()).collect();
        let mut plan = FilePlan {
            file_path: "a.txt".into(),
            abs: "/nowhere/a.txt".into(),
            before: Some(base.as_bytes().to_vec()),
            after: model.as_bytes().to_vec(),
            regions: super::super::apply::regions(&old, &mid, &tagged),
            stages: Vec::new(),
        };
        plan.hooked("fmt", hook.as_bytes().to_vec());
        plan
    }

    #[test]
    fn a_change_apart_from_the_hunks_is_its_own_region_and_hunk() {
        let plan = planned(
            "a\nb\nc\nd\ne\nf\n",
            "a\nB\nc\nd\ne\nf\n",
            "a\nB\nc\nd\ne\nF\n",
        );
        assert_eq!(plan.after, b"a\nB\nc\nd\ne\nF\n");
        let hunks = &plan.stages[0].hunks;
        assert_eq!(hunks.len(), 1);
        assert_eq!(hunks[0].origin, HunkOrigin::Hook("fmt".into()));
        assert!(hunks[0].patch.contains("-f\n+F\n"), "{}", hunks[0].patch);
        let ids: Vec<&str> = plan.regions.iter().map(|r| r.hunk_id.as_str()).collect();
        assert_eq!(ids, ["h_1", hunks[0].hunk_id.as_str()]);
        assert_eq!(plan.regions[1].before_lines, ["f\n"]);
        assert_eq!(
            replay_regions(
                &lines("a\nb\nc\nd\ne\nf\n"),
                &plan.regions.iter().collect::<Vec<_>>()
            ),
            lines("a\nB\nc\nd\ne\nF\n")
        );
    }

    #[test]
    fn a_change_over_a_hunk_joins_its_region_and_lines_shift_below() {
        // The model rewrote b; the hook reformats it and adds a line above e.
        let plan = planned("a\nb\nc\nd\ne\n", "a\nb2\nc\nd\ne\n", "a\nB2\nc\nd\nx\ne\n");
        assert_eq!(plan.regions.len(), 2, "{:?}", plan.regions);
        assert_eq!(plan.regions[0].hunk_id, "h_1");
        assert_eq!(plan.regions[0].before_lines, ["b\n"]);
        assert_eq!(plan.regions[0].after_lines, ["B2\n"]);
        assert_eq!(plan.regions[1].after_start, 4);
        assert_eq!(plan.regions[1].after_lines, ["x\n"]);
        assert_eq!(plan.unhooked(), b"a\nb2\nc\nd\ne\n");
    }

    #[test]
    fn a_hook_that_leaves_no_text_keeps_the_whole_file_instead() {
        let plan = planned("a\n", "b\n", "\0binary");
        assert!(plan.regions.is_empty());
        assert!(plan.stages[0].hunks.is_empty());
        assert_eq!(plan.after, b"\0binary");
    }

    #[test]
    fn line_changes_rebuild_the_new_text() {
        let (old, new) = (lines("1\n2\n3\n4\n"), lines("0\n1\n3\n4\n5\n"));
        let changes = line_changes(&old, &new);
        let refs: Vec<&Change> = changes.iter().collect();
        assert_eq!(super::super::apply_changes(&old, &refs), new);
    }
}
