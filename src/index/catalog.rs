//! The catalog: every regular file of the root the index may read (the
//! walk every tool shares: `.gitignore`/`.ignore`, no hidden files but the
//! CI folders of `SHOWN`, no links followed, never `.git/`), less
//! `[index] exclude`, with its stat.

use std::sync::Mutex;

use ignore::WalkState;

use super::model::Stat;
use crate::config::IndexConfig;
use crate::workspace::{PathFilter, Workspace, rel_of, walker};

/// Hidden folders at the root that hold a project's own code and hold no
/// secrets (CI definitions): indexed like the rest. Other hidden names
/// (`.env`, `.npmrc`, `.cargo/`, caches) stay out.
const SHOWN: [&str; 5] = [
    ".github",
    ".gitlab",
    ".circleci",
    ".buildkite",
    ".devcontainer",
];

/// `rel` is not hidden, or is under one of `SHOWN` with no other hidden part.
fn visible(rel: &str) -> bool {
    if !rel.starts_with('.') && !rel.contains("/.") {
        return true;
    }
    rel.split('/')
        .enumerate()
        .all(|(i, part)| !part.starts_with('.') || (i == 0 && SHOWN.contains(&part)))
}

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

/// The catalog from a tree kept current by inotify (a TUI's or a
/// server's): what `list` would find, without walking the tree again.
/// That scan keeps hidden files and links too, and the scopes nested in the
/// root: they are left out here as `list` leaves them out.
pub fn from_live(
    tree: &crate::workspace::TreeStat,
    ws: &Workspace,
    excludes: &Excludes,
) -> Vec<Listed> {
    let nested: Vec<String> = ws
        .nested_in(0)
        .iter()
        .filter_map(|p| p.strip_prefix(ws.root()).ok())
        .filter_map(|p| p.to_str())
        .map(|p| format!("{}/", crate::platform::paths::slashed(p)))
        .collect();
    tree.iter()
        .filter(|(_, s)| s.mode & 0o170000 == 0o100000)
        .filter(|(path, _)| visible(path))
        .filter(|(path, _)| !nested.iter().any(|n| path.starts_with(n.as_str())))
        .filter(|(path, _)| !excluded(excludes, path))
        .map(|(path, s)| Listed {
            path: path.clone(),
            stat: Stat {
                size: s.len,
                mtime_ns: s.mtime_ns,
                ctime_ns: s.ctime_ns,
                ino: s.ino,
            },
        })
        .collect()
}

/// `path` or a folder above it is excluded (a walk skips an excluded
/// folder whole).
fn excluded(excludes: &Excludes, path: &str) -> bool {
    let mut at = 0;
    while let Some(slash) = path[at..].find('/') {
        if excludes.hides(&path[..at + slash]) {
            return true;
        }
        at += slash + 1;
    }
    excludes.hides(path)
}

/// The stat the index compares (size, times, inode).
pub fn stat_of(meta: &std::fs::Metadata) -> Stat {
    Stat {
        size: meta.len(),
        mtime_ns: crate::platform::fs::mtime_ns(meta),
        ctime_ns: crate::platform::fs::identity(meta).1,
        ino: crate::platform::fs::identity(meta).0,
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
    walker(ws.root(), &start.abs, true, ws.nested_in(0))
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
                if !rel.is_empty() && (excludes.hides(&rel) || !visible(&rel)) {
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
    out.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    out
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;

    #[test]
    fn the_inotify_tree_lists_what_a_walk_lists() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for (path, text) in [
            ("src/a.rs", "a"),
            ("src/.hidden.rs", "h"),
            (".github/ci.yml", "c"),
            (".github/.hidden/x.yml", "c"),
            (".env", "SECRET=1"),
            (".cargo/credentials.toml", "token = 1"),
            ("src/.cache/c.rs", "c"),
            ("vendor/dep.rs", "v"),
            ("vendor_not/x.rs", "x"),
            ("target/out.rs", "t"),
            (".gitignore", "target/\n"),
            ("docs/guide.md", "g"),
        ] {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        std::os::unix::fs::symlink("a.rs", root.join("src/link.rs")).unwrap();
        let ws = Workspace::open(root).unwrap();
        let config = IndexConfig {
            exclude: vec!["vendor".into(), "*.md".into()],
            ..IndexConfig::default()
        };
        let excludes = Excludes::new(&config);
        let walked = list(&ws, &excludes);
        let paths: Vec<&str> = walked.iter().map(|l| l.path.as_str()).collect();
        assert_eq!(paths, [".github/ci.yml", "src/a.rs", "vendor_not/x.rs"]);
        let mut live = crate::workspace::LiveTree::new(ws.root());
        assert_eq!(from_live(live.refresh(), &ws, &excludes), walked);
        std::fs::write(root.join("src/b.rs"), "b").unwrap();
        let walked = list(&ws, &excludes);
        assert_eq!(walked.len(), 4);
        assert_eq!(from_live(live.refresh(), &ws, &excludes), walked);
    }
}
