//! Listing the agent root: a sorted, `.gitignore`-aware walk that never
//! follows links and never enters `.git/`, plus the glob filter shared with search.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkBuilder;
use serde::Serialize;

use super::Resolved;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    File,
    Dir,
    Symlink,
    /// Not a regular file, folder or link: a FIFO, a socket, a device.
    /// Listed, never opened (opening a FIFO waits for a writer).
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Relative to the agent root, `/`-separated.
    pub path: String,
    /// Bytes for files; 0 for directories and links.
    pub size: u64,
    pub modified: Option<SystemTime>,
    pub kind: EntryKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListOutcome {
    pub entries: Vec<Entry>,
    pub truncated: bool,
}

/// A glob over relative paths. Without a `/` it matches the file name at any
/// depth (`*.rs`); with one it matches the whole relative path (`src/**/*.rs`).
#[derive(Debug, Clone)]
pub struct PathFilter {
    matcher: GlobMatcher,
    whole_path: bool,
}

impl PathFilter {
    pub fn new(glob: &str) -> Result<PathFilter, globset::Error> {
        let whole_path = glob.contains('/');
        let glob = glob.trim_start_matches("./");
        let matcher = GlobBuilder::new(glob)
            .literal_separator(true)
            .backslash_escape(true)
            .build()?
            .compile_matcher();
        Ok(PathFilter {
            matcher,
            whole_path,
        })
    }

    pub fn matches(&self, rel: &str) -> bool {
        if self.whole_path {
            self.matcher.is_match(rel)
        } else {
            let name = rel.rsplit('/').next().unwrap_or(rel);
            self.matcher.is_match(name)
        }
    }
}

/// A walker over `dir` (in the scope folder `root`) with the rules every
/// tool shares: `.gitignore` honoured even outside a git repository, links
/// not followed, `.git/` never entered, nor the folders of `skip` (scopes
/// nested in this one, walked as themselves). When the ignore files above
/// `root` would hide it, only its own rules and those below it apply.
pub(crate) fn walker(
    root: &Path,
    dir: &Path,
    include_hidden: bool,
    skip: Vec<PathBuf>,
) -> WalkBuilder {
    let mut builder = WalkBuilder::new(dir);
    if super::handle_walk::parents_hide(root) {
        // The folders from `root` down to `dir`'s parent give their rules
        // as explicit ignore files, each rooted at its own folder.
        builder.parents(false);
        let mut folder = dir.to_path_buf();
        while folder.pop() && folder.starts_with(root) {
            for name in [".gitignore", ".ignore"] {
                let file = folder.join(name);
                if file.is_file() {
                    builder.add_ignore(file);
                }
            }
        }
    }
    builder
        .hidden(!include_hidden)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |e| {
            let git = e.file_name().eq_ignore_ascii_case(".git");
            let nested = e.depth() > 0 && skip.iter().any(|s| s == e.path());
            !git && !nested
        });
    builder
}

/// `rel` of a walked path under `start`.
pub(crate) fn rel_of(start: &Resolved, path: &Path) -> Option<String> {
    // By bytes: the walk yields `start.abs` joined with names, and a
    // component-wise `strip_prefix` is most of a large tree's walk.
    let sep = |b: &u8| *b == b'/' || (cfg!(windows) && *b == b'\\');
    let abs = start.abs.as_os_str().as_encoded_bytes();
    let tail = path.as_os_str().as_encoded_bytes().strip_prefix(abs)?;
    let tail = match tail {
        [] => tail,
        _ if abs.last().is_some_and(sep) => tail,
        [b, rest @ ..] if sep(b) => rest,
        _ => return None,
    };
    let tail = std::str::from_utf8(tail).ok()?;
    // Windows walks name folders with `\`; every path here uses `/`.
    let owned;
    let tail = if cfg!(windows) && tail.contains('\\') {
        owned = tail.replace('\\', "/");
        owned.as_str()
    } else {
        tail
    };
    Some(match (start.rel.is_empty(), tail.is_empty()) {
        (true, _) => tail.to_string(),
        (false, true) => start.rel.clone(),
        (false, false) => format!("{}/{}", start.rel, tail),
    })
}

/// Lists what is under `start` (or `start` itself if it is a file), sorted
/// by path, keeping entries whose path starts with `name_prefix` and that
/// match `filter`, at most `limit` of them. The walk goes through directory
/// handles (`handle_walk`): nothing outside the root is listed even while
/// folders are swapped for links.
pub fn list(
    ws: &super::Workspace,
    start: &Resolved,
    name_prefix: Option<&str>,
    filter: Option<&PathFilter>,
    limit: usize,
) -> ListOutcome {
    let mut entries = Vec::new();
    let mut truncated = false;
    let _ = super::handle_walk::walk(ws, start, true, usize::MAX, &mut |met| {
        if name_prefix.is_some_and(|p| !met.rel.starts_with(p))
            || filter.is_some_and(|f| !f.matches(&met.rel))
        {
            return true;
        }
        if entries.len() == limit {
            truncated = true;
            return false;
        }
        entries.push(Entry {
            path: met.rel,
            size: met.size,
            modified: met.modified,
            kind: met.kind,
        });
        true
    });
    ListOutcome { entries, truncated }
}

/// What is in every scope, the agent root's entries first, within one
/// `limit` (a listing with no prefix, `@` completion).
pub fn list_all(ws: &super::Workspace, filter: Option<&PathFilter>, limit: usize) -> ListOutcome {
    let mut all = ListOutcome {
        entries: Vec::new(),
        truncated: false,
    };
    for start in ws.scope_starts() {
        let left = limit - all.entries.len();
        if left == 0 {
            all.truncated = true;
            break;
        }
        let outcome = list(ws, &start, None, filter, left);
        all.entries.extend(outcome.entries);
        if outcome.truncated {
            all.truncated = true;
            break;
        }
    }
    all
}

/// Hands `visit` the path of every file in every scope, the agent root's
/// first, up to `limit` files (`@` completion: no entry kept but what the
/// caller keeps). True when the walk stopped at `limit`.
pub fn each_file(ws: &super::Workspace, limit: usize, visit: &mut dyn FnMut(&str)) -> bool {
    let mut seen = 0;
    for start in ws.scope_starts() {
        let mut full = false;
        let _ = super::handle_walk::walk(ws, &start, true, usize::MAX, &mut |met| {
            if met.kind != EntryKind::File {
                return true;
            }
            if seen == limit {
                full = true;
                return false;
            }
            seen += 1;
            visit(&met.rel);
            true
        });
        if full {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_without_slash_matches_file_names_anywhere() {
        let f = PathFilter::new("*.rs").unwrap();
        assert!(f.matches("src/a/b.rs"));
        assert!(!f.matches("src/a/b.rsx"));
        let f = PathFilter::new("src/*.rs").unwrap();
        assert!(f.matches("src/b.rs"));
        assert!(!f.matches("src/a/b.rs"));
        let f = PathFilter::new("src/**/*.{rs,toml}").unwrap();
        assert!(f.matches("src/a/b.toml"));
        assert!(!f.matches("tests/b.rs"));
        assert!(PathFilter::new("src/[a").is_err());
    }
}
