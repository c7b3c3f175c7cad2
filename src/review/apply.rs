//! Applying accepted hunks: check every file's hash and every edit's target
//! lines, compute the new bytes, then write each file atomically (temp file
//! + rename) keeping permissions. Any mismatch: nothing is written.

use std::path::PathBuf;

use thiserror::Error;

use super::doc::Doc;
use super::{Change, DiffBundle, FileDiff, Hunk, HunkOrigin, HunkRegion, ProposedEdit};
use crate::workspace::{Workspace, sha256_hex};

/// Lines of context kept to find a hunk again at rollback.
pub(super) const REGION_CONTEXT: usize = 3;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileConflict {
    pub file_path: String,
    pub reason: String,
}

#[derive(Debug, Error)]
pub enum ApplyError {
    #[error("no hunk is accepted; accept hunks first")]
    NothingAccepted,
    #[error("conflict: {}", .0.iter().map(|c| format!("{} ({})", c.file_path, c.reason)).collect::<Vec<_>>().join("; "))]
    Conflict(Vec<FileConflict>),
    #[error("cannot write `{path}`: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

/// One file's write, fully computed before anything touches the disk.
#[derive(Debug, Clone)]
pub struct FilePlan {
    pub file_path: String,
    pub abs: PathBuf,
    /// The bytes now on disk (`None`: the file does not exist).
    pub before: Option<Vec<u8>>,
    pub after: Vec<u8>,
    pub regions: Vec<HunkRegion>,
    /// What `apply.before` hooks changed on top of the accepted hunks, in
    /// order (`after` is the last one's bytes).
    pub stages: Vec<super::HookStage>,
}

/// Checks and computes the writes for the accepted, unapplied hunks.
pub fn plan_apply(
    workspace: &Workspace,
    bundle: &DiffBundle,
    edits: &[ProposedEdit],
) -> Result<Vec<FilePlan>, ApplyError> {
    // Files are independent: check and compute them on two threads.
    let (first, second) = bundle.files.split_at(bundle.files.len() / 2);
    let run = |files: &[FileDiff]| {
        let mut plans = Vec::new();
        let mut conflicts = Vec::new();
        for file in files {
            plan_file(workspace, file, edits, &mut plans, &mut conflicts);
        }
        (plans, conflicts)
    };
    let ((mut plans, mut conflicts), other) = std::thread::scope(|scope| {
        let other = scope.spawn(|| run(second));
        (run(first), other.join())
    });
    match other {
        Ok((p, c)) => {
            plans.extend(p);
            conflicts.extend(c);
        }
        Err(_) => {
            return Err(ApplyError::Io {
                path: String::new(),
                source: std::io::Error::other("apply thread panicked"),
            });
        }
    }
    if !conflicts.is_empty() {
        return Err(ApplyError::Conflict(conflicts));
    }
    if plans.is_empty() {
        return Err(ApplyError::NothingAccepted);
    }
    Ok(plans)
}

/// Checks one file and computes its write, or records why it conflicts.
fn plan_file(
    workspace: &Workspace,
    file: &FileDiff,
    edits: &[ProposedEdit],
    plans: &mut Vec<FilePlan>,
    conflicts: &mut Vec<FileConflict>,
) {
    let accepted: Vec<_> = file
        .hunks
        .iter()
        .filter(|h| h.state.is_to_apply())
        .collect();
    if accepted.is_empty() {
        return;
    }
    let conflict = |reason: String| FileConflict {
        file_path: file.file_path.clone(),
        reason,
    };
    // A file beside the root goes to the folder it was proposed in only.
    let proposed_in = edits
        .iter()
        .filter(|e| e.file_path == file.file_path)
        .find_map(|e| e.scope_folder.as_deref());
    let resolved = match workspace.resolve_writable(&file.file_path) {
        Ok(r) => r,
        Err(e) => {
            conflicts.push(conflict(match proposed_in {
                Some(folder) => {
                    format!("{e}; it was proposed in {folder}: add --add-dir {folder}:rw")
                }
                None => e.to_string(),
            }));
            return;
        }
    };
    if let Some(folder) = proposed_in
        && workspace.scope_of(&resolved).root != std::path::Path::new(folder)
    {
        let scope = workspace.scope_of(&resolved);
        conflicts.push(conflict(format!(
            "`@{}` is {} in this run, but the edits were proposed in {folder}: add that \
             folder instead (--add-dir {folder}:rw)",
            scope.id,
            scope.root.display()
        )));
        return;
    }
    let before = match workspace.read_opt(&resolved) {
        Ok(bytes) => bytes,
        Err(e) => {
            conflicts.push(conflict(format!("cannot read it: {e}")));
            return;
        }
    };
    let current_hash = before.as_deref().map(sha256_hex);
    if current_hash != file.base_file_hash {
        conflicts.push(conflict(match (&current_hash, &file.base_file_hash) {
            (Some(_), None) => "it was created since the edits were proposed".into(),
            (None, Some(_)) => "it was deleted since the edits were proposed".into(),
            _ => "it changed since the edits were proposed".into(),
        }));
        return;
    }
    let doc = match Doc::parse(before.as_deref().unwrap_or_default()) {
        Ok(d) => d,
        Err(e) => {
            conflicts.push(conflict(e.to_string()));
            return;
        }
    };
    let edit_ids: Vec<&String> = accepted.iter().flat_map(|h| h.edit_ids.iter()).collect();
    for edit in edits.iter().filter(|e| edit_ids.contains(&&e.edit_id)) {
        let target = doc
            .lines
            .get(edit.old_range())
            .map(|l| l.concat())
            .unwrap_or_default();
        if sha256_hex(target.as_bytes()) != edit.expected_hash {
            conflicts.push(conflict(format!(
                "lines {}-{} no longer hold what {} was proposed for",
                edit.start_line, edit.end_line, edit.edit_id
            )));
        }
    }
    let mut changes: Vec<(&str, &Change)> = accepted
        .iter()
        .flat_map(|h| h.changes.iter().map(|c| (h.hunk_id.as_str(), c)))
        .collect();
    changes.sort_by_key(|(_, c)| c.old_start);
    let only: Vec<&Change> = changes.iter().map(|(_, c)| *c).collect();
    let mut new_lines = apply_changes(&doc.lines, &only);
    super::doc::terminate_inner(&mut new_lines, doc.eol());
    let after = super::render_lines(doc.bom, &new_lines, doc.eol());
    plans.push(FilePlan {
        file_path: file.file_path.clone(),
        abs: resolved.abs,
        before,
        regions: with_origins(regions(&doc.lines, &new_lines, &changes), &accepted),
        after,
        stages: Vec::new(),
    });
}

/// `old` with `changes` (sorted by `old_start`, non-overlapping) applied.
pub fn apply_changes(old: &[String], changes: &[&Change]) -> Vec<String> {
    let mut out = Vec::with_capacity(old.len());
    let mut i = 0;
    for c in changes {
        if c.old_start > i {
            out.extend_from_slice(&old[i..c.old_start.min(old.len())]);
            i = c.old_start;
        }
        out.extend(c.new_lines.iter().cloned());
        i = i.max(c.old_start + c.old_len);
    }
    if i < old.len() {
        out.extend_from_slice(&old[i..]);
    }
    out
}

/// `regions` with the origin of the hunk each is of.
fn with_origins(mut regions: Vec<HunkRegion>, hunks: &[&Hunk]) -> Vec<HunkRegion> {
    for r in &mut regions {
        if let Some(h) = hunks.iter().find(|h| h.hunk_id == r.hunk_id) {
            r.origin = h.origin.clone();
        }
    }
    regions
}

/// Where each hunk's changes landed in the new file, one region per hunk.
pub(super) fn regions(
    old: &[String],
    new: &[String],
    changes: &[(&str, &Change)],
) -> Vec<HunkRegion> {
    let mut out: Vec<HunkRegion> = Vec::new();
    // Walked as `apply_changes` walks them: `next` is the first old line
    // not yet copied or replaced, `written` the new lines so far. A change
    // that starts inside the one before (an insertion where another hunk
    // removed lines) lands after that one's new lines, not before them.
    let (mut next, mut written) = (0usize, 0usize);
    let mut spans: Vec<(String, usize, usize, usize, usize)> = Vec::new();
    for (id, c) in changes {
        if c.old_start > next {
            written += c.old_start.min(old.len()).saturating_sub(next);
            next = c.old_start;
        }
        let after_start = written;
        let after_end = after_start + c.new_lines.len();
        written = after_end;
        next = next.max(c.old_start + c.old_len);
        match spans.last_mut() {
            Some(last) if last.0 == *id => {
                last.2 = c.old_start + c.old_len;
                last.4 = after_end;
            }
            _ => spans.push((
                id.to_string(),
                c.old_start,
                c.old_start + c.old_len,
                after_start,
                after_end,
            )),
        }
    }
    let last = old.len().saturating_sub(1);
    let last_covered = spans.iter().any(|s| s.1 <= last && last < s.2);
    let mut open_end = old.last().is_some_and(|l| !l.ends_with('\n')) && !last_covered;
    for (id, mut old_start, old_end, mut after_start, after_end) in spans {
        // Text added after an unterminated last line also terminated that
        // line: the region includes it so undoing the hunk restores it.
        if open_end && old_start == old.len() && old_start > 0 && after_start > 0 {
            old_start -= 1;
            after_start -= 1;
            open_end = false;
        }
        out.push(HunkRegion {
            hunk_id: id,
            origin: HunkOrigin::Agent,
            after_start,
            before_lines: old[old_start..old_end].to_vec(),
            after_lines: new[after_start..after_end].to_vec(),
            ctx_before: new[after_start.saturating_sub(REGION_CONTEXT)..after_start].to_vec(),
            ctx_after: new[after_end..(after_end + REGION_CONTEXT).min(new.len())].to_vec(),
        });
    }
    out
}

/// Writes every plan's `after` bytes (atomically per file, durably, beneath
/// the root).
pub fn write_plans(workspace: &Workspace, plans: &[FilePlan]) -> Result<(), ApplyError> {
    let writes: Vec<crate::workspace::PathWrite> = plans
        .iter()
        .map(|p| (p.abs.as_path(), Some(p.after.as_slice()), None))
        .collect();
    workspace
        .write_files(&writes)
        .map_err(|source| ApplyError::Io {
            path: plans
                .iter()
                .map(|p| p.file_path.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &[&str]) -> Vec<String> {
        text.iter().map(|l| format!("{l}\n")).collect()
    }

    /// A hunk inserting where another hunk removed a line (the fuzzer's
    /// `edit` finding): the insertion lands after the removal, and its
    /// region says so, so undoing both, last first, gives the old lines.
    #[test]
    fn an_insertion_where_a_line_was_removed_is_placed_after_it() {
        let old = lines(&["a", "b", "c"]);
        let remove = Change {
            old_start: 1,
            old_len: 1,
            new_lines: Vec::new(),
        };
        let insert = Change {
            old_start: 1,
            old_len: 0,
            new_lines: lines(&["x", "y"]),
        };
        let changes = [("h_1", &remove), ("h_2", &insert)];
        let new = apply_changes(&old, &[&remove, &insert]);
        assert_eq!(new, lines(&["a", "x", "y", "c"]));
        let found = regions(&old, &new, &changes);
        let at: Vec<(&str, usize)> = found
            .iter()
            .map(|r| (r.hunk_id.as_str(), r.after_start))
            .collect();
        assert_eq!(at, [("h_1", 1), ("h_2", 1)]);
        assert_eq!(found[1].after_lines, lines(&["x", "y"]));
        let mut back = new.clone();
        for r in found.iter().rev() {
            let end = r.after_start + r.after_lines.len();
            assert_eq!(back[r.after_start..end], r.after_lines[..]);
            back.splice(r.after_start..end, r.before_lines.iter().cloned());
        }
        assert_eq!(back, old);
    }
}
