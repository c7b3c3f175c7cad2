//! Unified-diff text of hunks: a hunk's patch with its context, and a
//! file's hunks' patches cut so that none shares a context line with its
//! neighbour (any subset applies with `patch` at no fuzz).

use super::bundle::{CONTEXT, span};
use super::{Change, FileDiff, Hunk, HunkState};

/// Unified-diff text of `changes` against `old`, with up to three lines of
/// context. Line numbers of the new side assume every earlier change of
/// this hunk is applied.
pub fn patch_text(old: &[String], changes: &[Change]) -> String {
    patch_text_at(old, changes, 0)
}

/// The patches of a file's hunks (`hunks` in file order), each with as much
/// context as it can have without sharing a line with its neighbours', so
/// that any of them together still make one unified diff that applies
/// (`patch` with no fuzz): hunks with `k` unchanged lines between them get
/// `k / 2` lines of context each, on both sides (a hunk with less context
/// before than after would be taken as the start of the file); hunks with
/// nothing between them (pieces of one split change, edits side by side)
/// get none.
pub fn file_patches(old: &[String], hunks: &[&[Change]]) -> Vec<String> {
    let spans: Vec<(usize, usize)> = hunks.iter().map(|c| span(c)).collect();
    let room = |a: Option<&(usize, usize)>, b: Option<&(usize, usize)>| match (a, b) {
        (Some(a), Some(b)) => b.0.saturating_sub(a.1) / 2,
        _ => CONTEXT,
    };
    hunks
        .iter()
        .enumerate()
        .map(|(i, changes)| {
            let before = room(i.checked_sub(1).and_then(|p| spans.get(p)), spans.get(i));
            let after = room(spans.get(i), spans.get(i + 1));
            patch_with_context(old, changes, 0, before.min(after).min(CONTEXT))
        })
        .collect()
}

/// The patches of `file`'s hunks still to place (not applied, not
/// conflicted), against `old`, the file they apply to, by `file_patches`.
pub fn refresh_patches(old: &[String], file: &mut FileDiff) {
    let mut open: Vec<&mut Hunk> = file
        .hunks
        .iter_mut()
        .filter(|h| !h.state.is_applied() && !matches!(h.state, HunkState::Conflicted { .. }))
        .collect();
    let changes: Vec<&[Change]> = open.iter().map(|h| h.changes.as_slice()).collect();
    let patches = file_patches(old, &changes);
    for (hunk, patch) in open.iter_mut().zip(patches) {
        hunk.patch = patch;
    }
}

/// `patch_text` of a slice of a file that starts at line index `offset`.
pub fn patch_text_at(old: &[String], changes: &[Change], offset: usize) -> String {
    patch_with_context(old, changes, offset, CONTEXT)
}

fn patch_with_context(old: &[String], changes: &[Change], offset: usize, context: usize) -> String {
    let (s, e) = span(changes);
    let from = s.saturating_sub(context);
    let to = (e + context).min(old.len());
    let mut body = String::new();
    let (mut old_count, mut new_count) = (0usize, 0usize);
    let mut i = from;
    let mut sorted: Vec<&Change> = changes.iter().collect();
    sorted.sort_by_key(|c| c.old_start);
    let mut next = sorted.into_iter().peekable();
    while i < to || next.peek().is_some() {
        if let Some(c) = next.peek()
            && c.old_start == i
        {
            for line in old
                .get(c.old_start..c.old_start + c.old_len)
                .unwrap_or_default()
            {
                push_line(&mut body, '-', line);
            }
            for line in &c.new_lines {
                push_line(&mut body, '+', line);
            }
            old_count += c.old_len;
            new_count += c.new_lines.len();
            i = c.old_start + c.old_len;
            next.next();
            continue;
        }
        if i >= to {
            break;
        }
        let Some(line) = old.get(i) else { break };
        push_line(&mut body, ' ', line);
        old_count += 1;
        new_count += 1;
        i += 1;
    }
    let from = from + offset;
    let old_start = if old_count == 0 { from } else { from + 1 };
    let new_start = if new_count == 0 { from } else { from + 1 };
    format!("@@ -{old_start},{old_count} +{new_start},{new_count} @@\n{body}")
}

fn push_line(out: &mut String, prefix: char, line: &str) {
    out.push(prefix);
    out.push_str(line);
    if !line.ends_with('\n') {
        out.push_str("\n\\ No newline at end of file\n");
    }
}
