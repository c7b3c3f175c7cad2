//! Snippets of `code_search`'s results: the lines of a file with the most
//! of the query's words (a long line shown around the word, not from its
//! start), a window of lines, a line clipped to its shown length.

use std::path::Path;

use super::View;
use super::search::{SNIPPET_LINE_CHARS, Snippet};
use super::tokens::{head, terms};
use crate::workspace::Workspace;

/// Lines of file `doc` with the most of `words` (definitions first), up to
/// two windows of three lines.
pub fn term_snippets(ws: &Workspace, view: &View, doc: u32, words: &[&str]) -> Vec<Snippet> {
    let Some(text) = read_text(ws, &view.doc(doc).path) else {
        return Vec::new();
    };
    let lines: Vec<&str> = text.lines().collect();
    let starts: Vec<u32> = view.symbols_of(doc).iter().map(|s| s.start_line).collect();
    // Lines with none of the words' heads are not split into terms at all;
    // the text is lower-cased once (ASCII only, so offsets stay put).
    let heads: Vec<&str> = words.iter().map(|w| head(w)).collect();
    let lower = text.to_ascii_lowercase();
    // Each line's count of heads found is a bound on its count of words:
    // only the lines best by that bound are split into terms.
    let mut found = vec![0u64; lines.len()];
    let starts_at: Vec<usize> = lines
        .iter()
        .map(|l| (l.as_ptr() as usize).saturating_sub(text.as_ptr() as usize))
        .collect();
    for (bit, h) in heads.iter().filter(|h| !h.is_empty()).enumerate().take(64) {
        for at in memchr::memmem::find_iter(lower.as_bytes(), h.as_bytes()) {
            // `lines()` yields slices of `text`: the line holding `at`.
            let line = starts_at.partition_point(|s| *s <= at).saturating_sub(1);
            if let Some(mask) = found.get_mut(line) {
                *mask |= 1 << bit;
            }
        }
    }
    let mut bounds: Vec<(f32, usize)> = found
        .iter()
        .enumerate()
        .filter(|(_, m)| **m != 0)
        .map(|(i, m)| (m.count_ones() as f32 + bonus(&starts, i), i))
        .collect();
    bounds.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    bounds.truncate(SPLIT_AT_MOST);
    let mut seen: Vec<&str> = Vec::new();
    let mut scored: Vec<(f32, usize)> = Vec::new();
    for (_, i) in bounds {
        seen.clear();
        terms(lines[i], &mut |t| {
            if let Some(w) = words.iter().find(|w| **w == t)
                && !seen.contains(w)
            {
                seen.push(w);
            }
        });
        if !seen.is_empty() {
            scored.push((seen.len() as f32 + bonus(&starts, i), i));
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut out: Vec<Snippet> = Vec::new();
    for (_, i) in scored {
        if out.len() == 2 {
            break;
        }
        let line = i as u32 + 1;
        if out
            .iter()
            .any(|s| line + 1 >= s.start_line && line <= s.end_line + 1)
        {
            continue;
        }
        let mut snippet = window(&lines, i, 1);
        if let Some(at) = first_word_at(lines[i], words) {
            // A long line (minified code) shows where the word is, not its start.
            let centre = i + 1 - snippet.start_line as usize;
            let mut texts: Vec<String> = snippet.text.split('\n').map(str::to_string).collect();
            if let Some(t) = texts.get_mut(centre) {
                *t = clip_at(lines[i], at);
            }
            snippet.text = texts.join("\n");
        }
        out.push(snippet);
    }
    out.sort_by_key(|s| s.start_line);
    out
}

/// How many lines, best by the words' heads they hold, are split into
/// terms to pick a file's snippets.
const SPLIT_AT_MOST: usize = 64;

/// A definition's first line (0-based `i`) counts half a word more.
fn bonus(starts: &[u32], i: usize) -> f32 {
    if starts.contains(&(i as u32 + 1)) {
        0.5
    } else {
        0.0
    }
}

/// Byte offset of the first of `words` (ASCII case ignored) in `line`, when the
/// line is too long to show whole.
fn first_word_at(line: &str, words: &[&str]) -> Option<usize> {
    if line.len() <= SNIPPET_LINE_CHARS {
        return None;
    }
    let bytes = line.as_bytes();
    words
        .iter()
        .filter(|w| !w.is_empty())
        .filter_map(|w| {
            bytes
                .windows(w.len())
                .position(|b| b.eq_ignore_ascii_case(w.as_bytes()))
        })
        .min()
}

/// `line` clipped to a window that starts a little before byte `at`.
pub fn clip_at(line: &str, at: usize) -> String {
    let mut start = at.saturating_sub(SNIPPET_LINE_CHARS / 4);
    while !line.is_char_boundary(start) {
        start -= 1;
    }
    if start == 0 {
        return clip(line);
    }
    format!("…{}", clip(&line[start..]))
}

/// Lines `i - around ..= i + around` (0-based `i`) as a snippet.
pub fn window(lines: &[&str], i: usize, around: usize) -> Snippet {
    let first = i.saturating_sub(around);
    let last = (i + around).min(lines.len().saturating_sub(1));
    let text = lines[first..=last]
        .iter()
        .map(|l| clip(l))
        .collect::<Vec<_>>()
        .join("\n");
    Snippet {
        start_line: first as u32 + 1,
        end_line: last as u32 + 1,
        text,
    }
}

pub fn clip(line: &str) -> String {
    if line.chars().count() <= SNIPPET_LINE_CHARS {
        return line.to_string();
    }
    let mut out: String = line.chars().take(SNIPPET_LINE_CHARS).collect();
    out.push('…');
    out
}

/// A file's text (lossy), read beneath the root; `None` if unreadable.
pub fn read_text(ws: &Workspace, rel: &str) -> Option<String> {
    let bytes = ws.scope_dir(0).read_opt(Path::new(rel)).ok()??;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}
