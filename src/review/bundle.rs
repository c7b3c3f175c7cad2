//! Building the diff bundle: apply every proposed edit in memory, diff old
//! and new lines with `similar`, group changes into hunks with context,
//! split hunks that are too large, and keep hunk ids stable across rebuilds.

use std::collections::BTreeMap;

use std::time::{Duration, Instant};

use similar::{Algorithm, DiffOp, DiffTag, capture_diff_slices_deadline, group_diff_ops};
use thiserror::Error;

use super::doc::{Doc, lines_of, terminate_inner};
use super::patch_text::{file_patches, patch_text};
use super::{Change, DiffBundle, EditOperation, FileDiff, Hunk, HunkState, ProposedEdit};
use crate::config::Limits;
use crate::workspace::{Workspace, sha256_hex};

/// Unchanged lines shown around a change.
pub(super) const CONTEXT: usize = 3;

#[derive(Debug, Error)]
pub enum BuildError {
    #[error("`{path}`: {reason}")]
    File { path: String, reason: String },
}

/// Builds the bundle for `edits`. Hunks equal to one of `previous` keep its
/// id (and decision); new hunks take ids from `next_hunk`.
pub fn build_bundle(
    workspace: &Workspace,
    job_id: &str,
    edits: &[ProposedEdit],
    limits: &Limits,
    previous: Option<&DiffBundle>,
    next_hunk: &mut u32,
) -> Result<DiffBundle, BuildError> {
    let mut by_file: BTreeMap<&str, Vec<&ProposedEdit>> = BTreeMap::new();
    for edit in edits {
        by_file
            .entry(edit.file_path.as_str())
            .or_default()
            .push(edit);
    }
    // Files are independent: diff them on two threads, then number the
    // hunks in file order so ids do not depend on timing.
    let work: Vec<(&str, Vec<&ProposedEdit>)> = by_file.into_iter().collect();
    let (first, second) = work.split_at(work.len() / 2);
    let run = |part: &[(&str, Vec<&ProposedEdit>)]| -> Result<Vec<FileHunks>, BuildError> {
        part.iter()
            .map(|(path, edits)| file_hunks(workspace, path, edits, limits))
            .collect()
    };
    let (diffs, other) = std::thread::scope(|scope| {
        let other = scope.spawn(|| run(second));
        (run(first), other.join())
    });
    let other = other.map_err(|_| BuildError::File {
        path: String::new(),
        reason: "diff thread panicked".into(),
    })?;
    let mut diffs_all = diffs?;
    diffs_all.extend(other?);
    let mut files = Vec::new();
    for diff in diffs_all {
        let old_ids: Vec<&Hunk> = previous
            .and_then(|p| p.files.iter().find(|f| f.file_path == diff.path))
            .map(|f| f.hunks.iter().collect())
            .unwrap_or_default();
        let hunks = diff
            .pieces
            .into_iter()
            .map(|(changes, edit_ids, oversized, patch)| {
                let same = old_ids.iter().find(|h| h.changes == changes);
                let (hunk_id, state) = match same {
                    Some(h) => (h.hunk_id.clone(), h.state.clone()),
                    None => {
                        let id = format!("h_{next_hunk}");
                        *next_hunk += 1;
                        (id, HunkState::Pending)
                    }
                };
                Hunk {
                    hunk_id,
                    patch,
                    state,
                    edit_ids,
                    oversized,
                    origin: super::HunkOrigin::Agent,
                    changes,
                }
            })
            .collect();
        files.push(FileDiff {
            file_path: diff.path,
            base_file_hash: diff.base_file_hash,
            hunks,
        });
    }
    Ok(DiffBundle {
        job_id: job_id.to_string(),
        files,
    })
}

/// One file's hunks before they get ids: (changes, edit ids, oversized, patch).
struct FileHunks {
    path: String,
    base_file_hash: Option<String>,
    pieces: Vec<(Vec<Change>, Vec<String>, bool, String)>,
}

fn file_hunks(
    workspace: &Workspace,
    path: &str,
    file_edits: &[&ProposedEdit],
    limits: &Limits,
) -> Result<FileHunks, BuildError> {
    let fail = |reason: String| BuildError::File {
        path: path.to_string(),
        reason,
    };
    let resolved = workspace.resolve(path).map_err(|e| fail(e.to_string()))?;
    let (doc, base_file_hash) = match workspace.read_opt(&resolved) {
        Ok(Some(bytes)) => (
            Doc::parse(&bytes).map_err(|e| fail(e.to_string()))?,
            Some(sha256_hex(&bytes)),
        ),
        Ok(None) => (Doc::default(), None),
        Err(e) => return Err(fail(e.to_string())),
    };
    let (edit_changes, new_lines) = apply_edits(&doc, file_edits);
    let mut pieces = Vec::new();
    for group in group_diff_ops(diff_ops(&doc.lines, &new_lines, &edit_changes), CONTEXT) {
        for (changes, edit_ids) in by_edit(&doc.lines, changes_of(&group, &new_lines), file_edits) {
            pieces.extend(split(&doc.lines, changes, edit_ids, file_edits, limits));
        }
    }
    let spans: Vec<&[Change]> = pieces.iter().map(|(c, _, _)| c.as_slice()).collect();
    let patches = file_patches(&doc.lines, &spans);
    let pieces = pieces
        .into_iter()
        .zip(patches)
        .map(|((changes, ids, oversized), patch)| (changes, ids, oversized, patch))
        .collect();
    Ok(FileHunks {
        path: path.to_string(),
        base_file_hash,
        pieces,
    })
}

/// The file's lines after every edit (edits do not overlap), and the edits
/// as changes sorted by position.
fn apply_edits(doc: &Doc, edits: &[&ProposedEdit]) -> (Vec<Change>, Vec<String>) {
    let eol = doc.eol();
    let mut changes: Vec<Change> = edits
        .iter()
        .map(|e| {
            let range = e.old_range();
            let touches_open_end = range.end == doc.lines.len()
                && doc.lines.last().is_some_and(|l| !l.ends_with('\n'));
            let new_lines = match e.operation {
                EditOperation::Delete => Vec::new(),
                EditOperation::Create => lines_of(&e.new_text, "\n", true),
                EditOperation::Replace => {
                    lines_of(&e.new_text, eol, touches_open_end && !range.is_empty())
                }
                EditOperation::Insert => lines_of(&e.new_text, eol, false),
            };
            Change {
                old_start: range.start,
                old_len: range.len(),
                new_lines,
            }
        })
        .collect();
    changes.sort_by_key(|c| (c.old_start, c.old_len > 0));
    let refs: Vec<&Change> = changes.iter().collect();
    let mut lines = super::apply_changes(&doc.lines, &refs);
    // A line that lost its place at the end gets an ending, so the diff shows
    // exactly the bytes the apply will write.
    terminate_inner(&mut lines, eol);
    (changes, lines)
}

/// Longest a diff of one edited region may take before `similar` settles
/// for a coarser (still correct) answer.
const REGION_DIFF_BUDGET: Duration = Duration::from_millis(50);

/// Line diff of `old` -> `new`, computed only around the edited regions
/// (each widened by a line, which also catches a last line that gained an
/// ending); everything between them is equal by construction.
fn diff_ops(old: &[String], new: &[String], changes: &[Change]) -> Vec<DiffOp> {
    // Widened regions in old coordinates, merged, with their new extents.
    let mut regions: Vec<(usize, usize, isize)> = Vec::new(); // (old_start, old_end, delta)
    for c in changes {
        let start = c.old_start.saturating_sub(1);
        let end = (c.old_start + c.old_len + 1).min(old.len());
        let delta = c.new_lines.len() as isize - c.old_len as isize;
        match regions.last_mut() {
            Some(last) if start <= last.1 => {
                last.1 = last.1.max(end);
                last.2 += delta;
            }
            _ => regions.push((start, end, delta)),
        }
    }
    let mut ops = Vec::new();
    let (mut old_pos, mut new_pos) = (0usize, 0usize);
    let deadline = |_: ()| Instant::now().checked_add(REGION_DIFF_BUDGET);
    for (start, end, delta) in regions {
        if start > old_pos {
            ops.push(DiffOp::Equal {
                old_index: old_pos,
                new_index: new_pos,
                len: start - old_pos,
            });
            new_pos += start - old_pos;
        }
        let new_end = ((new_pos + (end - start)) as isize + delta).max(new_pos as isize) as usize;
        let new_end = new_end.min(new.len());
        for op in capture_diff_slices_deadline(
            Algorithm::Myers,
            &old[start..end],
            &new[new_pos..new_end],
            deadline(()),
        ) {
            ops.push(shift(op, start, new_pos));
        }
        old_pos = end;
        new_pos = new_end;
    }
    if old_pos < old.len() {
        ops.push(DiffOp::Equal {
            old_index: old_pos,
            new_index: new_pos,
            len: old.len() - old_pos,
        });
    }
    ops
}

fn shift(op: DiffOp, old_off: usize, new_off: usize) -> DiffOp {
    match op {
        DiffOp::Equal {
            old_index,
            new_index,
            len,
        } => DiffOp::Equal {
            old_index: old_index + old_off,
            new_index: new_index + new_off,
            len,
        },
        DiffOp::Delete {
            old_index,
            old_len,
            new_index,
        } => DiffOp::Delete {
            old_index: old_index + old_off,
            old_len,
            new_index: new_index + new_off,
        },
        DiffOp::Insert {
            old_index,
            new_index,
            new_len,
        } => DiffOp::Insert {
            old_index: old_index + old_off,
            new_index: new_index + new_off,
            new_len,
        },
        DiffOp::Replace {
            old_index,
            old_len,
            new_index,
            new_len,
        } => DiffOp::Replace {
            old_index: old_index + old_off,
            old_len,
            new_index: new_index + new_off,
            new_len,
        },
    }
}

/// The non-equal ops of a group as changes.
fn changes_of(group: &[DiffOp], new_lines: &[String]) -> Vec<Change> {
    group
        .iter()
        .filter_map(|op| {
            let (tag, old, new) = op.as_tag_tuple();
            (tag != DiffTag::Equal).then(|| Change {
                old_start: old.start,
                old_len: old.len(),
                new_lines: new_lines[new].to_vec(),
            })
        })
        .collect()
}

pub(super) fn span(changes: &[Change]) -> (usize, usize) {
    let start = changes.iter().map(|c| c.old_start).min().unwrap_or(0);
    let end = changes
        .iter()
        .map(|c| c.old_start + c.old_len)
        .max()
        .unwrap_or(0);
    (start, end)
}

fn edits_touching(edits: &[&ProposedEdit], changes: &[Change]) -> Vec<String> {
    let (s, e) = span(changes);
    edits
        .iter()
        .filter(|edit| {
            let r = edit.old_range();
            r.start <= e && s <= r.end
        })
        .map(|edit| edit.edit_id.clone())
        .collect()
}

/// The changes of one diff group cut into one run per edit, with the ids
/// of the edits each run makes: two changes close enough to share their
/// context are still separate hunks when no edit made both, and one change
/// that several edits made side by side (no unchanged line between them) is
/// cut back into each edit's own, so each edit the model proposed can be
/// accepted on its own. Changes of one edit stay together.
fn by_edit(
    old: &[String],
    changes: Vec<Change>,
    edits: &[&ProposedEdit],
) -> Vec<(Vec<Change>, Vec<String>)> {
    let mut runs: Vec<(Vec<Change>, Vec<String>)> = Vec::new();
    for change in changes {
        let parts = match own_changes(old, &change, edits) {
            Some(pieces) => pieces.into_iter().map(|(c, id)| (c, vec![id])).collect(),
            None => {
                let ids = edits_touching(edits, std::slice::from_ref(&change));
                vec![(change, ids)]
            }
        };
        for (change, ids) in parts {
            match runs.last_mut() {
                Some((run, last)) if ids.is_empty() || ids.iter().any(|id| last.contains(id)) => {
                    run.push(change);
                    for id in ids {
                        if !last.contains(&id) {
                            last.push(id);
                        }
                    }
                }
                _ => runs.push((vec![change], ids)),
            }
        }
    }
    runs
}

/// `change` as the changes of the edits that made it, one each, when more
/// than one did and their own changes add up to exactly it.
fn own_changes(
    old: &[String],
    change: &Change,
    edits: &[&ProposedEdit],
) -> Option<Vec<(Change, String)>> {
    let ids = edits_touching(edits, std::slice::from_ref(change));
    if ids.len() < 2 {
        return None;
    }
    let (s, e) = (change.old_start, change.old_start + change.old_len);
    let mut pieces: Vec<(Change, String)> = edits
        .iter()
        .filter(|x| ids.contains(&x.edit_id))
        .map(|x| (own_change(old, x), x.edit_id.clone()))
        .filter(|(c, _)| {
            (c.old_len > 0 || !c.new_lines.is_empty())
                && c.old_start <= e
                && s <= c.old_start + c.old_len
        })
        .collect();
    pieces.sort_by_key(|(c, _)| (c.old_start, c.old_len > 0));
    let inside = pieces
        .iter()
        .all(|(c, _)| s <= c.old_start && c.old_start + c.old_len <= e)
        && pieces
            .windows(2)
            .all(|w| w[0].0.old_start + w[0].0.old_len <= w[1].0.old_start);
    let refs: Vec<&Change> = pieces.iter().map(|(c, _)| c).collect();
    (pieces.len() > 1
        && inside
        && super::apply_changes(old, &refs) == super::apply_changes(old, &[change]))
    .then_some(pieces)
}

/// What `edit` alone changes in `old`: its own lines, with the line before
/// them when that gained an ending (content added after an unterminated
/// last line), less the lines at its ends that it leaves as they were.
fn own_change(old: &[String], edit: &ProposedEdit) -> Change {
    let doc = Doc {
        bom: false,
        lines: old.to_vec(),
    };
    let (_, new) = apply_edits(&doc, &[edit]);
    let r = edit.old_range();
    let (mut start, mut old_end) = (r.start, r.end);
    let mut new_end = new.len() + r.len() - old.len() + r.start;
    if start > 0 && old[start - 1] != new[start - 1] {
        start -= 1;
    }
    while start < old_end && start < new_end && old[start] == new[start] {
        start += 1;
    }
    while old_end > start && new_end > start && old[old_end - 1] == new[new_end - 1] {
        old_end -= 1;
        new_end -= 1;
    }
    Change {
        old_start: start,
        old_len: old_end - start,
        new_lines: new[start..new_end].to_vec(),
    }
}

type Piece = (Vec<Change>, Vec<String>, bool);

fn too_big(old: &[String], changes: &[Change], limits: &Limits) -> bool {
    let patch = patch_text(old, changes);
    patch.lines().count().saturating_sub(1) > limits.max_hunk_lines
        || patch.len() > limits.max_hunk_bytes
}

/// Splits an oversized hunk at edit boundaries, then at blank lines; what
/// still does not fit is flagged.
fn split(
    old: &[String],
    changes: Vec<Change>,
    edit_ids: Vec<String>,
    edits: &[&ProposedEdit],
    limits: &Limits,
) -> Vec<Piece> {
    if !too_big(old, &changes, limits) {
        return vec![(changes, edit_ids, false)];
    }
    // Edit boundaries: one piece per edit, if each edit lies inside this hunk.
    let mine: Vec<&&ProposedEdit> = edits
        .iter()
        .filter(|x| edit_ids.contains(&x.edit_id))
        .collect();
    // Pieces are only used if they add up to exactly this hunk (checked below).
    let per_edit: Vec<(Change, String)> = if mine.len() > 1 {
        mine.iter()
            .map(|x| (own_change(old, x), x.edit_id.clone()))
            .filter(|(c, _)| c.old_len > 0 || !c.new_lines.is_empty())
            .collect()
    } else {
        Vec::new()
    };
    // Per-edit pieces must add up to the hunk; where they do not (an edit
    // also terminated the old last line), keep the hunk's own changes.
    let same_result = {
        let pieces: Vec<&Change> = per_edit.iter().map(|(c, _)| c).collect();
        !pieces.is_empty()
            && super::apply_changes(old, &pieces)
                == super::apply_changes(old, &changes.iter().collect::<Vec<_>>())
    };
    let per_edit = if same_result {
        per_edit
    } else {
        changes.into_iter().map(|c| (c, String::new())).collect()
    };
    let mut out = Vec::new();
    for (change, edit_id) in per_edit {
        let ids = if edit_id.is_empty() {
            edit_ids.clone()
        } else {
            vec![edit_id]
        };
        if !too_big(old, std::slice::from_ref(&change), limits) {
            out.push((vec![change], ids, false));
            continue;
        }
        for piece in split_at_blank_lines(
            &change,
            old,
            limits.max_hunk_lines.saturating_sub(2 * CONTEXT).max(1),
        ) {
            let big = too_big(old, std::slice::from_ref(&piece), limits);
            out.push((vec![piece], ids.clone(), big));
        }
    }
    out
}

/// A large change as deletions then insertions, each cut after blank lines
/// into pieces of at most `max` lines where possible.
fn split_at_blank_lines(change: &Change, old: &[String], max: usize) -> Vec<Change> {
    let mut out = Vec::new();
    let old_lines = &old[change.old_start..change.old_start + change.old_len];
    let mut at = change.old_start;
    for chunk in chunks(old_lines, max) {
        out.push(Change {
            old_start: at,
            old_len: chunk.len(),
            new_lines: Vec::new(),
        });
        at += chunk.len();
    }
    for chunk in chunks(&change.new_lines, max) {
        out.push(Change {
            old_start: change.old_start + change.old_len,
            old_len: 0,
            new_lines: chunk.to_vec(),
        });
    }
    out
}

/// Cuts `lines` after blank lines into runs of at most `max` lines; a run
/// with no blank line to cut at stays whole.
fn chunks(lines: &[String], max: usize) -> Vec<&[String]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut last_cut = None;
    for (i, line) in lines.iter().enumerate() {
        if i + 1 - start > max
            && let Some(cut) = last_cut
            && cut > start
        {
            out.push(&lines[start..cut]);
            start = cut;
        }
        if super::text_of(line).trim().is_empty() {
            last_cut = Some(i + 1);
        }
    }
    if start < lines.len() {
        out.push(&lines[start..]);
    }
    out
}
