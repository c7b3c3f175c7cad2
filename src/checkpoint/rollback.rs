//! Undoing a checkpoint: hard (every affected file back to its prior bytes)
//! or scoped (chosen hunks reverted where their region is unchanged; any
//! changed region is a conflict and nothing is written). Each rollback
//! records its own checkpoint first, so it can be undone too.

use thiserror::Error;

use super::{Checkpoint, CheckpointKind, CheckpointStore, FileChange, ThreeWay};
use crate::review::{Doc, HunkRegion, render_lines, replay_regions};
use crate::workspace::Workspace;

#[derive(Debug, Error)]
pub enum RollbackError {
    #[error("checkpoint {0} has no hunk {1}")]
    UnknownHunk(String, String),
    #[error("checkpoint {0} did not change {1}")]
    UnknownFile(String, String),
    #[error("conflict: {}", .0.join("; "))]
    Conflict(Vec<String>),
    #[error("{0}")]
    Path(String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Where `file` is now, its bytes, and whether a symbolic link is there.
/// A link at the recorded path (a command made it, or made it replace a
/// file) is the thing to undo, not the file it points to: its own place
/// is returned (with the bytes read through it, if it points inside), so
/// a rollback removes or replaces the link itself.
fn read_current(
    ws: &Workspace,
    file: &super::AffectedFile,
    to_write: bool,
) -> Result<(std::path::PathBuf, Option<Vec<u8>>, bool), RollbackError> {
    let check = |r: crate::workspace::Resolved| match to_write {
        true => ws.check_writable(&r).map(|()| r),
        false => Ok(r),
    };
    if let Some(link) = link_at(ws, file) {
        let through = ws.read_abs(&link).ok().flatten();
        return Ok((link, through, true));
    }
    let resolved = ws
        .resolve_recorded(&file.file_path, file.scope_root.as_deref())
        .and_then(check)
        .map_err(|e| RollbackError::Path(e.to_string()))?;
    let bytes = ws.read_opt(&resolved)?;
    Ok((resolved.abs, bytes, false))
}

/// A command's checkpoint names files by their real paths (folders it saw
/// were folders): one of them replaced by a link since would take the
/// rollback's writes somewhere else in the root (`d/x` into `e/x`).
fn refuse_linked_folders(
    ws: &Workspace,
    file: &super::AffectedFile,
    kind: CheckpointKind,
) -> Result<(), RollbackError> {
    if kind != CheckpointKind::Exec || file.file_path.starts_with('@') {
        return Ok(());
    }
    let mut at = ws.root().to_path_buf();
    let parts: Vec<&str> = file.file_path.split('/').collect();
    for (i, part) in parts[..parts.len().saturating_sub(1)].iter().enumerate() {
        at.push(part);
        if std::fs::symlink_metadata(&at).is_ok_and(|m| m.is_symlink()) {
            return Err(RollbackError::Path(format!(
                "`{}` is a symbolic link now (it was a folder when `{}` was recorded): a \
                 rollback does not write through it; remove the link, then roll back again",
                parts[..=i].join("/"),
                file.file_path
            )));
        }
    }
    Ok(())
}

/// The recorded path's own place when a symbolic link is there (its
/// folder resolved inside the root; the link itself not followed).
fn link_at(ws: &Workspace, file: &super::AffectedFile) -> Option<std::path::PathBuf> {
    let (folder, name) = match file.file_path.rsplit_once('/') {
        Some((folder, name)) => (folder, name),
        None => ("", file.file_path.as_str()),
    };
    let folder = ws
        .resolve_recorded(folder, file.scope_root.as_deref())
        .ok()
        .filter(|f| ws.check_writable(f).is_ok())?;
    let place = folder.abs.join(name);
    std::fs::symlink_metadata(&place)
        .is_ok_and(|m| m.file_type().is_symlink())
        .then_some(place)
}

/// Current, base and proposed text of every file `checkpoint` touched.
pub fn three_way(
    ws: &Workspace,
    store: &CheckpointStore,
    checkpoint: &Checkpoint,
) -> Result<Vec<ThreeWay>, RollbackError> {
    let text = |hash: &Option<String>| -> Result<Option<String>, RollbackError> {
        Ok(match hash {
            Some(h) => Some(String::from_utf8_lossy(&store.snapshot(h)?).into_owned()),
            None => None,
        })
    };
    let mut out = Vec::new();
    for f in &checkpoint.affected_files {
        // A file whose folder is not reachable now is shown without it.
        let (current, unreadable) = match read_current(ws, f, false) {
            Ok((_, current, _)) => (current, None),
            Err(RollbackError::Path(why)) => (None, Some(why)),
            Err(e) => return Err(e),
        };
        let base = text(&f.base_snapshot_hash)?;
        let proposed = match (&f.after_snapshot_hash, f.hunks.is_empty()) {
            (None, _) => None,
            (Some(hash), true) => text(&Some(hash.clone()))?,
            (Some(_), false) => Some(replay(base.as_deref().unwrap_or_default(), f)),
        };
        let mut hooks: Vec<String> = f
            .hunks
            .iter()
            .filter_map(|h| h.origin.hook().map(str::to_string))
            .collect();
        hooks.dedup();
        out.push(ThreeWay {
            file_path: f.file_path.clone(),
            current: current.map(|b| String::from_utf8_lossy(&b).into_owned()),
            unreadable,
            base,
            proposed,
            hooks,
        });
    }
    Ok(out)
}

/// The file after the checkpoint's change: its base with every hunk region
/// replaced by what the change wrote there.
fn replay(base: &str, file: &super::AffectedFile) -> String {
    let doc = Doc::parse(base.as_bytes()).unwrap_or_default();
    let regions: Vec<&HunkRegion> = file.hunks.iter().map(|h| &h.region).collect();
    let lines = replay_regions(&doc.lines, &regions);
    String::from_utf8_lossy(&render_lines(doc.bom, &lines, doc.eol())).into_owned()
}

/// Restores every affected file to its bytes before `checkpoint` (files it
/// created are removed). Returns the rollback's own checkpoint.
pub fn hard_rollback(
    ws: &Workspace,
    store: &CheckpointStore,
    checkpoint: &Checkpoint,
) -> Result<Checkpoint, RollbackError> {
    files_rollback(ws, store, checkpoint, &[])
}

/// Restores the files `only` (all when empty) to their bytes before
/// `checkpoint`; other files it touched keep what they have now.
pub fn files_rollback(
    ws: &Workspace,
    store: &CheckpointStore,
    checkpoint: &Checkpoint,
    only: &[String],
) -> Result<Checkpoint, RollbackError> {
    for path in only {
        if !checkpoint
            .affected_files
            .iter()
            .any(|f| &f.file_path == path)
        {
            return Err(RollbackError::UnknownFile(
                checkpoint.checkpoint_id.clone(),
                path.clone(),
            ));
        }
    }
    let mut changes = Vec::new();
    for f in checkpoint
        .affected_files
        .iter()
        .filter(|f| only.is_empty() || only.contains(&f.file_path))
    {
        refuse_linked_folders(ws, f, checkpoint.kind)?;
        let (abs, current, link) = read_current(ws, f, true)?;
        let target = match &f.base_snapshot_hash {
            Some(h) => Some(store.snapshot(h)?),
            None => None,
        };
        // Its permission bits count too (a chmod is a change to undo).
        let mode_back = f
            .mode
            .filter(|m| target.is_some() && crate::checkpoint::mode_of(&abs) != Some(*m));
        if current == target && !link && mode_back.is_none() {
            continue;
        }
        changes.push(FileChange {
            file_path: f.file_path.clone(),
            abs,
            before: current,
            after: target,
            regions: Vec::new(),
            before_mode: None,
            after_mode: f.mode,
        });
    }
    finish(ws, store, checkpoint, changes)
}

/// Reverts the hunks `hunk_ids` of `checkpoint`, keeping everything else.
pub fn scoped_rollback(
    ws: &Workspace,
    store: &CheckpointStore,
    checkpoint: &Checkpoint,
    hunk_ids: &[String],
) -> Result<Checkpoint, RollbackError> {
    for id in hunk_ids {
        if !checkpoint
            .affected_files
            .iter()
            .any(|f| f.hunks.iter().any(|h| &h.hunk_id == id))
        {
            return Err(RollbackError::UnknownHunk(
                checkpoint.checkpoint_id.clone(),
                id.clone(),
            ));
        }
    }
    let mut changes = Vec::new();
    let mut conflicts = Vec::new();
    for f in &checkpoint.affected_files {
        let chosen: Vec<&HunkRegion> = f
            .hunks
            .iter()
            .filter(|h| hunk_ids.contains(&h.hunk_id))
            .map(|h| &h.region)
            .collect();
        if chosen.is_empty() {
            continue;
        }
        refuse_linked_folders(ws, f, checkpoint.kind)?;
        let (abs, current, link) = read_current(ws, f, true)?;
        if link {
            conflicts.push(format!(
                "{} is now a symbolic link (a whole-file rollback replaces it)",
                f.file_path
            ));
            continue;
        }
        let Some(bytes) = current.clone() else {
            conflicts.push(format!("{} no longer exists", f.file_path));
            continue;
        };
        let doc = match Doc::parse(&bytes) {
            Ok(d) => d,
            Err(e) => {
                conflicts.push(format!("{}: {e}", f.file_path));
                continue;
            }
        };
        let mut spots = Vec::new();
        for region in &chosen {
            match locate(&doc.lines, region).or_else(|| locate_own(&doc.lines, region)) {
                Some(at) => spots.push((at, *region)),
                None if reverted(&doc.lines, region) => conflicts.push(format!(
                    "{} hunk {}: it is rolled back already (its lines are as they were before \
                     the checkpoint)",
                    f.file_path, region.hunk_id
                )),
                None => conflicts.push(format!(
                    "{} hunk {}: its lines changed since the checkpoint",
                    f.file_path, region.hunk_id
                )),
            }
        }
        spots.sort_by_key(|(at, _)| *at);
        if spots
            .windows(2)
            .any(|w| w[0].0 + w[0].1.after_lines.len() > w[1].0)
        {
            conflicts.push(format!("{}: the chosen hunks overlap", f.file_path));
            continue;
        }
        let mut lines = doc.lines.clone();
        for (at, region) in spots.iter().rev() {
            lines.splice(
                *at..*at + region.after_lines.len(),
                region.before_lines.iter().cloned(),
            );
        }
        // Where each reverted region sits in the result, for undoing this rollback.
        let mut shift: isize = 0;
        let mut reverted = Vec::new();
        for (at, region) in &spots {
            let start = (*at as isize + shift) as usize;
            let end = start + region.before_lines.len();
            reverted.push(HunkRegion {
                hunk_id: region.hunk_id.clone(),
                origin: region.origin.clone(),
                after_start: start,
                before_lines: region.after_lines.clone(),
                after_lines: region.before_lines.clone(),
                ctx_before: lines[start.saturating_sub(3)..start].to_vec(),
                ctx_after: lines[end..(end + 3).min(lines.len())].to_vec(),
            });
            shift += region.before_lines.len() as isize - region.after_lines.len() as isize;
        }
        let after = render_lines(doc.bom, &lines, doc.eol());
        // Undoing every hunk of a file the checkpoint created removes it.
        let after = if f.base_snapshot_hash.is_none() && lines.is_empty() {
            None
        } else {
            Some(after)
        };
        changes.push(FileChange {
            file_path: f.file_path.clone(),
            abs,
            before: current,
            after,
            regions: reverted,
            before_mode: None,
            after_mode: None,
        });
    }
    if !conflicts.is_empty() {
        return Err(RollbackError::Conflict(conflicts));
    }
    finish(ws, store, checkpoint, changes)
}

fn finish(
    ws: &Workspace,
    store: &CheckpointStore,
    checkpoint: &Checkpoint,
    changes: Vec<FileChange>,
) -> Result<Checkpoint, RollbackError> {
    let record = store.record(
        ws,
        checkpoint.session_id.as_deref(),
        &checkpoint.job_id,
        CheckpointKind::Rollback,
        Some(&checkpoint.checkpoint_id),
        &changes,
    )?;
    store.write_journaled(ws, &record, &changes)?;
    Ok(record)
}

/// Where `region`'s own lines are when the lines around them changed (an
/// edit near the hunk, or a neighbouring hunk rolled back since, which a
/// rollback of this hunk keeps): at the recorded place, else at their one
/// place in the file. A hunk that only removed lines has none of its own:
/// it is found at the recorded place when the context on one side still
/// holds there and the removed lines are not back already.
fn locate_own(lines: &[String], region: &HunkRegion) -> Option<usize> {
    let own = &region.after_lines;
    if own.is_empty() {
        let start = region.after_start;
        let side = |ctx: &[String], from: Option<usize>| {
            !ctx.is_empty() && from.is_some_and(|f| reads(lines, f, &[ctx]))
        };
        let holds = side(
            &region.ctx_before,
            start.checked_sub(region.ctx_before.len()),
        ) || side(&region.ctx_after, Some(start));
        return (holds && !reverted(lines, region)).then_some(start);
    }
    let at = |start: usize| lines.get(start..start + own.len()) == Some(own.as_slice());
    if at(region.after_start) {
        return Some(region.after_start);
    }
    let hits: Vec<usize> = (0..=lines.len().saturating_sub(own.len()))
        .filter(|&s| at(s))
        .collect();
    match hits.as_slice() {
        [one] => Some(*one),
        _ => None,
    }
}

/// Whether `region` reads as it did before the checkpoint (rolled back):
/// its old lines are back at its place, or, for a hunk that only added
/// lines, its context on both sides meets there again.
fn reverted(lines: &[String], region: &HunkRegion) -> bool {
    let before = &region.before_lines;
    let start = region.after_start;
    if before.is_empty() {
        let (above, below) = (&region.ctx_before, &region.ctx_after);
        return !region.after_lines.is_empty()
            && (!above.is_empty() || !below.is_empty())
            && start
                .checked_sub(above.len())
                .is_some_and(|f| reads(lines, f, &[above, below]));
    }
    lines.get(start..start + before.len()) == Some(before.as_slice())
}

/// Where `region`'s lines now start: at the recorded place if they (with
/// their context) are still there, else at a unique exact match.
fn locate(lines: &[String], region: &HunkRegion) -> Option<usize> {
    let needle: [&[String]; 3] = [&region.ctx_before, &region.after_lines, &region.ctx_after];
    let len: usize = needle.iter().map(|p| p.len()).sum();
    if len == 0 {
        return lines.is_empty().then_some(0);
    }
    let fits = |start: usize| reads(lines, start, &needle);
    let offset = region.ctx_before.len();
    if let Some(start) = region.after_start.checked_sub(offset)
        && fits(start)
    {
        return Some(region.after_start);
    }
    let hits: Vec<usize> = (0..=lines.len().saturating_sub(len))
        .filter(|&s| fits(s))
        .collect();
    match hits.as_slice() {
        [one] => Some(one + offset),
        _ => None,
    }
}

/// Whether `lines` from `from` on read as `parts`, one after another.
fn reads(lines: &[String], from: usize, parts: &[&[String]]) -> bool {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    lines
        .get(from..from + len)
        .is_some_and(|w| w.iter().eq(parts.iter().flat_map(|p| p.iter())))
}
