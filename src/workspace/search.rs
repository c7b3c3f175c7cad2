//! Project search: the `grep` crate over a parallel `ignore` walk, results
//! kept in (path, line) order so the same query always gives the same answer.

use std::collections::BTreeMap;
use std::io;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use grep::matcher::Matcher;
use grep::regex::{RegexMatcher, RegexMatcherBuilder};
use grep::searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::WalkState;

use super::Resolved;
use super::walk::{PathFilter, rel_of, walker};

/// Longest line kept in a snippet; longer ones (minified code) are cut.
const MAX_SNIPPET_LINE_CHARS: usize = 400;

/// Whether a file (its path relative to the root, its stat) can be left
/// unread: it is known not to match.
pub type SkipFile<'a> = dyn Fn(&str, &std::fs::Metadata) -> bool + Sync + 'a;

#[derive(Clone, Copy)]
pub struct SearchOptions<'a> {
    pub query: &'a str,
    /// `false`: `query` is a literal string.
    pub regex: bool,
    /// `None`: smart case (insensitive unless the query has an upper-case letter).
    pub case_sensitive: Option<bool>,
    pub filter: Option<&'a PathFilter>,
    /// Snippets to return at most.
    pub limit: usize,
    /// Lines of context around each match.
    pub context_lines: usize,
    /// Lines in one snippet at most.
    pub max_snippet_lines: usize,
    /// Files (by path relative to the root, with their stat) known not
    /// to match: the code index's trigrams tell, and they are not opened.
    pub skip: Option<&'a SkipFile<'a>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchHit {
    pub file_path: String,
    pub start_line: u64,
    pub end_line: u64,
    pub snippet: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchOutcome {
    pub hits: Vec<SearchHit>,
    pub truncated: bool,
}

/// Searches every non-ignored, non-hidden text file under `start`; each
/// file is opened beneath the root's handle, so a folder swapped for a
/// link mid-walk cannot make it read a file outside. Errors only when
/// `query` is not a valid pattern.
pub fn search(
    ws: &super::Workspace,
    start: &Resolved,
    opts: &SearchOptions<'_>,
) -> Result<SearchOutcome, grep::regex::Error> {
    let matcher = RegexMatcherBuilder::new()
        .fixed_strings(!opts.regex)
        .case_smart(opts.case_sensitive.is_none())
        .case_insensitive(opts.case_sensitive == Some(false))
        .line_terminator(Some(b'\n'))
        .build(opts.query)?;
    let keep = opts.limit.saturating_add(1);
    let best = Best::new(keep);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let handle = ws.scope_dir(start.scope);
    let root = &ws.scope_of(start).root;
    walker(root, &start.abs, false, ws.nested_in(start.scope))
        .threads(threads)
        .build_parallel()
        .run(|| {
            let matcher = matcher.clone();
            let mut searcher = SearcherBuilder::new()
                .line_number(true)
                .before_context(opts.context_lines)
                .after_context(opts.context_lines)
                .binary_detection(BinaryDetection::quit(0))
                .build();
            let best = &best;
            Box::new(move |item| {
                let Ok(entry) = item else {
                    return WalkState::Continue;
                };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return WalkState::Continue;
                }
                let Some(rel) = rel_of(start, entry.path()) else {
                    return WalkState::Continue;
                };
                if opts.filter.is_some_and(|f| !f.matches(&rel))
                    || best.sorts_after_all(&rel)
                    || opts
                        .skip
                        .is_some_and(|skip| entry.metadata().is_ok_and(|meta| skip(&rel, &meta)))
                {
                    return WalkState::Continue;
                }
                let Ok(file) = handle.open_file(ws.beneath(entry.path())) else {
                    return WalkState::Continue;
                };
                if !file.metadata().is_ok_and(|m| m.is_file()) {
                    return WalkState::Continue;
                }
                let snippets = search_file(&mut searcher, &matcher, &file, opts, keep);
                if !snippets.is_empty() {
                    best.add(rel, snippets);
                }
                WalkState::Continue
            })
        });
    Ok(best.finish(opts.limit))
}

fn search_file(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    file: &std::fs::File,
    opts: &SearchOptions<'_>,
    keep: usize,
) -> Vec<Snippet> {
    let mut sink = SnippetSink {
        matcher,
        max_lines: opts.max_snippet_lines.max(1),
        keep,
        done: Vec::new(),
        open: None,
    };
    // Unreadable files are skipped, as ripgrep does.
    if searcher.search_file(matcher, file, &mut sink).is_err() {
        return Vec::new();
    }
    sink.close();
    sink.done.truncate(keep);
    sink.done
}

#[derive(Debug)]
struct Snippet {
    start: u64,
    end: u64,
    text: String,
}

struct Building {
    start: u64,
    last: u64,
    lines: Vec<String>,
    has_match: bool,
}

/// Turns the searcher's matched and context lines into snippets of
/// contiguous lines that hold at least one match.
struct SnippetSink<'m> {
    matcher: &'m RegexMatcher,
    max_lines: usize,
    keep: usize,
    done: Vec<Snippet>,
    open: Option<Building>,
}

impl SnippetSink<'_> {
    fn push(&mut self, number: u64, bytes: &[u8], is_match: bool) {
        let contiguous = self
            .open
            .as_ref()
            .is_some_and(|b| b.last + 1 == number && b.lines.len() < self.max_lines);
        if !contiguous {
            self.close();
        }
        let line = clip_line(bytes);
        let b = self.open.get_or_insert(Building {
            start: number,
            last: number,
            lines: Vec::new(),
            has_match: false,
        });
        b.last = number;
        b.lines.push(line);
        b.has_match |= is_match;
    }

    fn close(&mut self) {
        if let Some(b) = self.open.take()
            && b.has_match
        {
            self.done.push(Snippet {
                start: b.start,
                end: b.last,
                text: b.lines.join("\n"),
            });
        }
    }

    fn wants_more(&self) -> bool {
        self.done.len() < self.keep
    }
}

impl Sink for SnippetSink<'_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, m: &SinkMatch<'_>) -> Result<bool, io::Error> {
        let first = m.line_number().unwrap_or(1);
        for (i, line) in m.lines().enumerate() {
            // A multi-line block may include lines that only border a match.
            let hit = i == 0 || self.matcher.is_match(line).unwrap_or(true);
            self.push(first + i as u64, line, hit);
        }
        Ok(self.wants_more())
    }

    fn context(&mut self, _: &Searcher, c: &SinkContext<'_>) -> Result<bool, io::Error> {
        self.push(c.line_number().unwrap_or(1), c.bytes(), false);
        Ok(self.wants_more())
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, io::Error> {
        self.close();
        Ok(self.wants_more())
    }
}

fn clip_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_end_matches(['\n', '\r']);
    match text.char_indices().nth(MAX_SNIPPET_LINE_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// The `keep` first snippets in (path, line) order seen so far, shared by the
/// walker threads. Once full, files that sort after everything kept are skipped.
struct Best {
    keep: usize,
    full: AtomicBool,
    inner: Mutex<(BTreeMap<String, Vec<Snippet>>, usize)>,
}

impl Best {
    fn new(keep: usize) -> Best {
        Best {
            keep,
            full: AtomicBool::new(false),
            inner: Mutex::new((BTreeMap::new(), 0)),
        }
    }

    fn sorts_after_all(&self, rel: &str) -> bool {
        if !self.full.load(Ordering::Relaxed) {
            return false;
        }
        let Ok(guard) = self.inner.lock() else {
            return false;
        };
        guard
            .0
            .last_key_value()
            .is_some_and(|(last, _)| rel > last.as_str())
    }

    fn add(&self, rel: String, snippets: Vec<Snippet>) {
        let Ok(mut guard) = self.inner.lock() else {
            return;
        };
        let (map, count) = &mut *guard;
        *count += snippets.len();
        map.insert(rel, snippets);
        while *count > self.keep {
            let Some(mut last) = map.last_entry() else {
                break;
            };
            let excess = *count - self.keep;
            if last.get().len() <= excess {
                *count -= last.get().len();
                last.remove();
            } else {
                let len = last.get().len();
                last.get_mut().truncate(len - excess);
                *count -= excess;
            }
        }
        if *count >= self.keep {
            self.full.store(true, Ordering::Relaxed);
        }
    }

    fn finish(self, limit: usize) -> SearchOutcome {
        let (map, count) = self.inner.into_inner().unwrap_or_else(|e| e.into_inner());
        let mut hits = Vec::with_capacity(limit.min(count));
        for (path, snippets) in map {
            for s in snippets {
                hits.push(SearchHit {
                    file_path: path.clone(),
                    start_line: s.start,
                    end_line: s.end,
                    snippet: s.text,
                });
            }
        }
        let truncated = hits.len() > limit;
        hits.truncate(limit);
        SearchOutcome { hits, truncated }
    }
}
