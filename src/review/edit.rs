//! A reviewer's own version of a hunk: the proposed text offered for editing,
//! and the edited text turned back into the hunk's one change (`origin=user`).

use thiserror::Error;

use super::doc::{Doc, lines_of};
use super::{Change, FileDiff, Hunk, HunkOrigin, HunkState, patch_text};
use crate::workspace::{Workspace, sha256_hex};

#[derive(Debug, Error, PartialEq, Eq)]
pub enum EditHunkError {
    #[error("hunk {0} is already written to disk; roll it back instead")]
    Applied(String),
    #[error("hunk {0} has no changes to edit")]
    Empty(String),
    #[error(
        "{0} changed since the edits were proposed, so its hunks cannot be edited; re-run the job"
    )]
    Changed(String),
    #[error("cannot read {path}: {reason}")]
    Unreadable { path: String, reason: String },
}

/// The file as its hunks were proposed against, read from disk: refused if
/// it changed since (its hash no longer equals `base_file_hash`).
pub fn load_base(workspace: &Workspace, file: &FileDiff) -> Result<Doc, EditHunkError> {
    let unreadable = |reason: String| EditHunkError::Unreadable {
        path: file.file_path.clone(),
        reason,
    };
    let resolved = workspace
        .resolve(&file.file_path)
        .map_err(|e| unreadable(e.to_string()))?;
    let bytes = workspace
        .read_opt(&resolved)
        .map_err(|e| unreadable(e.to_string()))?;
    if bytes.as_deref().map(sha256_hex) != file.base_file_hash {
        return Err(EditHunkError::Changed(file.file_path.clone()));
    }
    Doc::parse(bytes.as_deref().unwrap_or_default()).map_err(|e| unreadable(e.to_string()))
}

/// The new side of the hunk's changed span (see `Hunk::proposed_text`).
pub fn proposed_text(hunk: &Hunk) -> String {
    hunk.proposed_text()
}

/// The old side of the same span: the lines the hunk replaces.
pub fn replaced_text(hunk: &Hunk) -> String {
    hunk.replaced_text()
}

/// Replaces the hunk's changes with one change over the same old lines whose
/// new side is `new_text`, recomputes its patch against `doc` (the file as
/// proposed against) and marks it accepted and `origin=user`. Line endings
/// follow the file; a span that ended without one still does.
pub fn edit_hunk(doc: &Doc, hunk: &mut Hunk, new_text: &str) -> Result<(), EditHunkError> {
    if hunk.state.is_applied() {
        return Err(EditHunkError::Applied(hunk.hunk_id.clone()));
    }
    let (Some(start), Some(end)) = (
        hunk.changes.iter().map(|c| c.old_start).min(),
        hunk.changes.iter().map(|c| c.old_start + c.old_len).max(),
    ) else {
        return Err(EditHunkError::Empty(hunk.hunk_id.clone()));
    };
    let end = end.min(doc.lines.len());
    let start = start.min(end);
    // Does the span's current new side end without a line ending (the last
    // line of a file that has none)? Then the edited one does too.
    let mut sorted: Vec<&Change> = hunk.changes.iter().collect();
    sorted.sort_by_key(|c| c.old_start);
    let old_span = &doc.lines[start..end];
    let shifted: Vec<Change> = sorted
        .iter()
        .map(|c| Change {
            old_start: c.old_start - start,
            ..(*c).clone()
        })
        .collect();
    let refs: Vec<&Change> = shifted.iter().collect();
    let before = super::apply_changes(old_span, &refs);
    let open_end = match before.last() {
        Some(line) => !line.ends_with('\n'),
        None => end == doc.lines.len() && doc.lines.last().is_some_and(|l| !l.ends_with('\n')),
    };
    let new_lines = if new_text.is_empty() {
        Vec::new()
    } else {
        // The editor ends every line; a span that had no final line ending
        // keeps having none.
        let text = match open_end {
            true => new_text.strip_suffix('\n').unwrap_or(new_text),
            false => new_text,
        };
        lines_of(text, doc.eol(), open_end)
    };
    let change = Change {
        old_start: start,
        old_len: end - start,
        new_lines,
    };
    hunk.patch = patch_text(&doc.lines, std::slice::from_ref(&change));
    hunk.changes = vec![change];
    hunk.state = HunkState::Accepted;
    hunk.origin = HunkOrigin::User;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::apply_changes;

    fn hunk_for(doc: &Doc, changes: Vec<Change>) -> Hunk {
        Hunk {
            hunk_id: "h_1".into(),
            patch: patch_text(&doc.lines, &changes),
            state: HunkState::Pending,
            edit_ids: vec!["e_1".into()],
            oversized: false,
            origin: HunkOrigin::Agent,
            changes,
        }
    }

    fn result(doc: &Doc, hunk: &Hunk) -> String {
        let refs: Vec<&Change> = hunk.changes.iter().collect();
        apply_changes(&doc.lines, &refs).concat()
    }

    #[test]
    fn offers_the_new_side_between_the_first_and_last_change() {
        let doc = Doc::parse(b"a\nb\nc\nd\ne\nf\ng\n").unwrap();
        let h = hunk_for(
            &doc,
            vec![
                Change {
                    old_start: 1,
                    old_len: 1,
                    new_lines: vec!["B\n".into()],
                },
                Change {
                    old_start: 3,
                    old_len: 1,
                    new_lines: vec!["D\n".into(), "D2\n".into()],
                },
            ],
        );
        assert_eq!(proposed_text(&h), "B\nc\nD\nD2\n");
        assert_eq!(replaced_text(&h), "b\nc\nd\n");
    }

    #[test]
    fn edited_text_replaces_the_span_and_marks_the_hunk_user_accepted() {
        let doc = Doc::parse(b"a\nb\nc\nd\ne\n").unwrap();
        let mut h = hunk_for(
            &doc,
            vec![
                Change {
                    old_start: 1,
                    old_len: 1,
                    new_lines: vec!["B\n".into()],
                },
                Change {
                    old_start: 3,
                    old_len: 1,
                    new_lines: vec!["D\n".into()],
                },
            ],
        );
        // Unchanged text keeps the proposal's meaning.
        let same = proposed_text(&h);
        let mut copy = h.clone();
        edit_hunk(&doc, &mut copy, &same).unwrap();
        assert_eq!(result(&doc, &copy), result(&doc, &h));

        edit_hunk(&doc, &mut h, "mine\n").unwrap();
        assert_eq!(result(&doc, &h), "a\nmine\ne\n");
        assert_eq!(h.origin, HunkOrigin::User);
        assert_eq!(h.state, HunkState::Accepted);
        assert_eq!(h.edit_ids, vec!["e_1".to_string()]);
        assert_eq!(h.patch, "@@ -1,5 +1,3 @@\n a\n-b\n-c\n-d\n+mine\n e\n");
    }

    #[test]
    fn keeps_crlf_and_a_missing_final_newline() {
        let doc = Doc::parse(b"a\r\nb\r\nc").unwrap();
        let mut h = hunk_for(
            &doc,
            vec![Change {
                old_start: 2,
                old_len: 1,
                new_lines: vec!["C".into()],
            }],
        );
        assert_eq!(proposed_text(&h), "C\n");
        edit_hunk(&doc, &mut h, "x\ny\n").unwrap();
        assert_eq!(result(&doc, &h), "a\r\nb\r\nx\r\ny");
    }

    #[test]
    fn empty_text_deletes_the_span_and_applied_hunks_are_refused() {
        let doc = Doc::parse(b"a\nb\nc\n").unwrap();
        let mut h = hunk_for(
            &doc,
            vec![Change {
                old_start: 1,
                old_len: 1,
                new_lines: vec!["B\n".into(), "B2\n".into()],
            }],
        );
        edit_hunk(&doc, &mut h, "").unwrap();
        assert_eq!(result(&doc, &h), "a\nc\n");
        h.state = HunkState::Applied;
        assert_eq!(
            edit_hunk(&doc, &mut h, "z\n"),
            Err(EditHunkError::Applied("h_1".into()))
        );
    }

    #[test]
    fn an_insert_into_a_new_file_can_be_edited() {
        let doc = Doc::default();
        let mut h = hunk_for(
            &doc,
            vec![Change {
                old_start: 0,
                old_len: 0,
                new_lines: vec!["fn main() {}\n".into()],
            }],
        );
        assert_eq!(proposed_text(&h), "fn main() {}\n");
        edit_hunk(&doc, &mut h, "fn main() {\n}\n").unwrap();
        assert_eq!(result(&doc, &h), "fn main() {\n}\n");
    }

    #[test]
    fn an_edited_hunk_shares_no_context_line_with_its_neighbour() {
        // Lines b and e change in two hunks two lines apart: one line of
        // context each between them.
        let doc = Doc::parse(b"a\nb\nc\nd\ne\nf\n").unwrap();
        let one = |at: usize, text: &str| Change {
            old_start: at,
            old_len: 1,
            new_lines: vec![text.into()],
        };
        let mut first = hunk_for(&doc, vec![one(1, "B\n")]);
        let mut second = hunk_for(&doc, vec![one(4, "E\n")]);
        second.hunk_id = "h_2".into();
        first.patch = String::new();
        let mut file = FileDiff {
            file_path: "f.txt".into(),
            base_file_hash: None,
            hunks: vec![first, second],
        };
        edit_hunk(&doc, &mut file.hunks[0], "BB\n").unwrap();
        assert!(
            file.hunks[0].patch.contains(" d\n"),
            "three lines of context at first"
        );
        super::super::refresh_patches(&doc.lines, &mut file);
        assert_eq!(file.hunks[0].patch, "@@ -1,3 +1,3 @@\n a\n-b\n+BB\n c\n");
        assert_eq!(file.hunks[1].patch, "@@ -4,3 +4,3 @@\n d\n-e\n+E\n f\n");
    }
}
