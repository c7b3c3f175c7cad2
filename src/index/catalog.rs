//! The catalog: every regular file of the root the index may read (the
//! walk every tool shares: `.gitignore`/`.ignore`, no hidden files, no
//! links followed, never `.git/`), less `[index] exclude`, with its stat.

use std::os::unix::fs::MetadataExt;
use std::sync::Mutex;

use ignore::WalkState;

use super::model::Stat;
use crate::config::IndexConfig;
use crate::workspace::{PathFilter, Workspace, rel_of, walker};

/// One catalogued file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub path: String,
    pub stat: Stat,
}

/// The compiled `[index] exclude`.
pub struct Excludes(Vec<PathFilter>);

impl Excludes {
    pub fn new(config: &IndexConfig) -> Excludes {
        Excludes(
            config
                .exclude
                .iter()
                .filter_map(|g| PathFilter::new(g).ok())
                .collect(),
        )
    }

    pub fn hides(&self, rel: &str) -> bool {
        self.0.iter().any(|f| f.matches(rel))
    }
}

/// The stat the index compares (size, times, inode).
pub fn stat_of(meta: &std::fs::Metadata) -> Stat {
    Stat {
        size: meta.len(),
        mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
        ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
        ino: meta.ino(),
    }
}

/// The agent root's files, sorted by path, each with its stat. Reads no
/// file; a file that vanishes mid-walk is simply not listed.
pub fn list(ws: &Workspace, excludes: &Excludes) -> Vec<Listed> {
    let Some(start) = ws.scope_starts().into_iter().next() else {
        return Vec::new();
    };
    let found = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    walker(ws.root(), &start.abs, false, ws.nested_in(0))
        .threads(threads)
        .build_parallel()
        .run(|| {
            let found = &found;
            let start = &start;
            Box::new(move |item| {
                let Ok(entry) = item else {
                    return WalkState::Continue;
                };
                let Some(rel) = rel_of(start, entry.path()) else {
                    return WalkState::Continue;
                };
                if !rel.is_empty() && excludes.hides(&rel) {
                    return if entry.file_type().is_some_and(|t| t.is_dir()) {
                        WalkState::Skip
                    } else {
                        WalkState::Continue
                    };
                }
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return WalkState::Continue;
                }
                let Ok(meta) = entry.metadata() else {
                    return WalkState::Continue;
                };
                let stat = stat_of(&meta);
                if let Ok(mut found) = found.lock() {
                    found.push(Listed { path: rel, stat });
                }
                WalkState::Continue
            })
        });
    let mut out = found.into_inner().unwrap_or_default();
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}
