//! After an apply wrote some hunks of a file, its other hunks stay in the
//! review, rebased onto the file as written: their changes and their edits
//! move by the lines the applied hunks added or removed above them (ids
//! stay), their patches show the new line numbers, and the file's base hash
//! becomes the written file's. A hunk that can no longer be placed is
//! marked conflicted, with the reason.

use super::doc::Doc;
use super::{Change, FileDiff, HunkState, ProposedEdit, refresh_patches};
use crate::protocol::words::counted;
use crate::workspace::sha256_hex;

/// `file`'s hunks in `applied` were just written, giving `written`; rebases
/// the rest (and their edits in `edits`) onto it.
pub fn rebase_after_apply(
    file: &mut FileDiff,
    edits: &mut [ProposedEdit],
    applied: &[String],
    written: &[u8],
) {
    let doc = Doc::parse(written).unwrap_or_default();
    // Applied changes with their hunk's place in the file's order (an
    // insert at the very spot of another change goes where the order says).
    let placed: Vec<(usize, Change)> = file
        .hunks
        .iter()
        .enumerate()
        .filter(|(_, h)| applied.contains(&h.hunk_id))
        .flat_map(|(i, h)| h.changes.iter().map(move |c| (i, c.clone())))
        .collect();
    let done: Vec<Change> = placed.iter().map(|(_, c)| c.clone()).collect();
    let applied_edits: Vec<&String> = file
        .hunks
        .iter()
        .filter(|h| applied.contains(&h.hunk_id))
        .flat_map(|h| h.edit_ids.iter())
        .collect();
    // Edits of the file: moved, and re-hashed when an applied hunk wrote
    // inside them (we know what we wrote there).
    for edit in edits
        .iter_mut()
        .filter(|e| e.file_path == file.file_path && !only_applied(file, applied, &e.edit_id))
    {
        let range = edit.old_range();
        let start = range.start as isize + shift_before(&done, range.start);
        let inside: isize = done
            .iter()
            .filter(|c| range.start <= c.old_start && c.old_start + c.old_len <= range.end)
            .filter(|c| !(c.old_len == 0 && c.old_start == range.start && range.is_empty()))
            .map(|c| c.new_lines.len() as isize - c.old_len as isize)
            .sum();
        let end = range.end as isize + shift_before(&done, range.start) + inside;
        let (start, end) = (start.max(0) as usize, end.max(start) as usize);
        if applied_edits.contains(&&edit.edit_id)
            && let Some(lines) = doc.lines.get(start..end)
        {
            edit.expected_hash = sha256_hex(lines.concat().as_bytes());
        }
        edit.start_line = start + 1;
        edit.end_line = if range.is_empty() { start } else { end };
    }
    for (index, hunk) in file.hunks.iter_mut().enumerate() {
        if applied.contains(&hunk.hunk_id) {
            hunk.state = HunkState::Applied;
            continue;
        }
        if hunk.state.is_applied() {
            continue;
        }
        let overlap = hunk
            .changes
            .iter()
            .find(|c| done.iter().any(|d| overlaps(c, d)))
            .map(|c| c.old_start);
        if let Some(at) = overlap {
            hunk.state = HunkState::Conflicted {
                reason: format!(
                    "line {} was changed by a hunk applied before it, so it can no longer be placed",
                    at + 1
                ),
            };
            continue;
        }
        for c in &mut hunk.changes {
            let moved = c.old_start as isize + shift_above(&placed, c.old_start, index);
            c.old_start = moved.max(0) as usize;
        }
        if let Some(reason) = misplaced(&hunk.changes, &doc) {
            hunk.state = HunkState::Conflicted { reason };
        }
    }
    // The hunks still to decide, shown against the file as written.
    refresh_patches(&doc.lines, file);
    file.base_file_hash = Some(sha256_hex(written));
}

/// Whether every hunk naming `edit_id` was applied (nothing left to place).
fn only_applied(file: &FileDiff, applied: &[String], edit_id: &String) -> bool {
    file.hunks
        .iter()
        .filter(|h| h.edit_ids.contains(edit_id))
        .all(|h| applied.contains(&h.hunk_id) || h.state.is_applied())
}

/// Lines added or removed above old line `at` for a change of hunk number
/// `index`: an applied insert at `at` itself counts when its hunk comes first.
fn shift_above(placed: &[(usize, Change)], at: usize, index: usize) -> isize {
    placed
        .iter()
        .filter(|(i, c)| {
            c.old_start + c.old_len <= at && !(c.old_len == 0 && c.old_start == at && *i > index)
        })
        .map(|(_, c)| c.new_lines.len() as isize - c.old_len as isize)
        .sum()
}

/// Lines added (or removed, negative) by applied changes wholly above `at`.
fn shift_before(done: &[Change], at: usize) -> isize {
    done.iter()
        .filter(|c| c.old_start + c.old_len <= at && !(c.old_len == 0 && c.old_start == at))
        .map(|c| c.new_lines.len() as isize - c.old_len as isize)
        .sum()
}

/// Whether two changes touch the same old lines (an insert touches the
/// line it goes before only when the other replaces around it).
fn overlaps(a: &Change, b: &Change) -> bool {
    let (a0, a1) = (a.old_start, a.old_start + a.old_len);
    let (b0, b1) = (b.old_start, b.old_start + b.old_len);
    match (a.old_len == 0, b.old_len == 0) {
        // Two inserts at one spot both fit (in hunk order).
        (true, true) => false,
        (true, false) => b0 < a0 && a0 < b1,
        (false, true) => a0 < b0 && b0 < a1,
        (false, false) => a0 < b1 && b0 < a1,
    }
}

/// Why rebased changes do not fit the written file, if they do not.
fn misplaced(changes: &[Change], doc: &Doc) -> Option<String> {
    let last = changes.iter().map(|c| c.old_start + c.old_len).max()?;
    (last > doc.lines.len()).then(|| {
        format!(
            "it reaches line {last}, past the end of the file as written ({})",
            counted(doc.lines.len(), "line")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::{Hunk, HunkOrigin};

    fn change(start: usize, len: usize, new: &[&str]) -> Change {
        Change {
            old_start: start,
            old_len: len,
            new_lines: new.iter().map(|l| format!("{l}\n")).collect(),
        }
    }

    fn hunk(id: &str, edit: &str, changes: Vec<Change>) -> Hunk {
        Hunk {
            hunk_id: id.into(),
            patch: String::new(),
            state: HunkState::Pending,
            edit_ids: vec![edit.into()],
            oversized: false,
            origin: HunkOrigin::Agent,
            changes,
        }
    }

    #[test]
    fn later_hunks_move_by_what_earlier_ones_added() {
        // 10 lines; h_1 turns line 2 into three lines, h_2 replaces line 8.
        let old: String = (1..=10).map(|i| format!("l{i}\n")).collect();
        let mut file = FileDiff {
            file_path: "f".into(),
            base_file_hash: Some(sha256_hex(old.as_bytes())),
            hunks: vec![
                hunk("h_1", "e_1", vec![change(1, 1, &["a", "b", "c"])]),
                hunk("h_2", "e_2", vec![change(7, 1, &["eight"])]),
            ],
        };
        let mut edits = vec![ProposedEdit {
            edit_id: "e_2".into(),
            file_path: "f".into(),
            operation: crate::review::EditOperation::Replace,
            start_line: 8,
            end_line: 8,
            new_text: "eight\n".into(),
            expected_hash: sha256_hex(b"l8\n"),
            rationale: None,
            scope_folder: None,
        }];
        let written = old.replacen("l2\n", "a\nb\nc\n", 1);
        rebase_after_apply(&mut file, &mut edits, &["h_1".into()], written.as_bytes());
        assert_eq!(file.hunks[0].state, HunkState::Applied);
        assert_eq!(file.hunks[1].state, HunkState::Pending);
        assert_eq!(file.hunks[1].changes[0].old_start, 9);
        let patch = &file.hunks[1].patch;
        assert!(patch.starts_with("@@ -7,6 +7,6 @@"), "{patch}");
        assert!(patch.contains("-l8\n+eight\n"), "{patch}");
        assert_eq!((edits[0].start_line, edits[0].end_line), (10, 10));
        assert_eq!(file.base_file_hash, Some(sha256_hex(written.as_bytes())));
    }

    #[test]
    fn inserts_at_one_spot_keep_their_order_whichever_is_applied_first() {
        let old = "a\nb\n";
        let file = || FileDiff {
            file_path: "f".into(),
            base_file_hash: Some(sha256_hex(old.as_bytes())),
            hunks: vec![
                hunk("h_1", "e_1", vec![change(1, 0, &["x"])]),
                hunk("h_2", "e_1", vec![change(1, 0, &["y"])]),
            ],
        };
        let mut first = file();
        rebase_after_apply(&mut first, &mut [], &["h_1".into()], b"a\nx\nb\n");
        assert_eq!(first.hunks[1].changes[0].old_start, 2, "y goes after x");
        let mut second = file();
        rebase_after_apply(&mut second, &mut [], &["h_2".into()], b"a\ny\nb\n");
        assert_eq!(second.hunks[0].changes[0].old_start, 1, "x goes before y");
    }

    #[test]
    fn a_hunk_over_applied_lines_is_conflicted_with_the_reason() {
        let old = "a\nb\nc\n";
        let mut file = FileDiff {
            file_path: "f".into(),
            base_file_hash: Some(sha256_hex(old.as_bytes())),
            hunks: vec![
                hunk("h_1", "e_1", vec![change(0, 2, &["A"])]),
                // A reviewer's own text that reaches into h_1's lines.
                hunk("h_2", "e_2", vec![change(1, 2, &["B"])]),
            ],
        };
        rebase_after_apply(&mut file, &mut [], &["h_1".into()], b"A\nc\n");
        let HunkState::Conflicted { reason } = &file.hunks[1].state else {
            panic!("{:?}", file.hunks[1].state)
        };
        assert!(reason.contains("line 2"), "{reason}");
        let wire = serde_json::to_value(&file.hunks[1]).unwrap();
        assert_eq!(wire["accepted"], serde_json::Value::Null);
        assert_eq!(wire["conflict"], serde_json::Value::String(reason.clone()));
        let back: Hunk = serde_json::from_value(wire).unwrap();
        assert_eq!(back.state, file.hunks[1].state);
    }
}
