//! What a command changed in the agent root: the stat of every file (size,
//! mtime, inode, mode) before and after, compared, as git compares its index
//! with the work tree; no file is read. The walk is the tools' own
//! (`.gitignore` honoured, `.git/` never entered), in parallel.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;

use serde::Serialize;

use super::walk::walker;

/// A file's stat as compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    pub len: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
    pub ino: u64,
    pub mode: u32,
}

/// Every file under a root with its stat, by `/`-separated relative path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeStat(BTreeMap<String, Stat>);

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    Created,
    Modified,
    Deleted,
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Changed {
    pub path: String,
    pub change: ChangeKind,
}

impl TreeStat {
    /// Stats every file under `root` (links as links, never followed).
    pub fn scan(root: &Path) -> TreeStat {
        let (files, _) = scan_under(root, root);
        TreeStat(files.into_iter().collect())
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub(crate) fn insert(&mut self, path: String, stat: Stat) {
        self.0.insert(path, stat);
    }

    /// Forgets `path` and, if it was a folder, everything under it.
    pub(crate) fn remove_tree(&mut self, path: &str) {
        self.0.remove(path);
        let under = format!("{path}/");
        let inside: Vec<String> = self
            .0
            .range(under.clone()..)
            .take_while(|(p, _)| p.starts_with(&under))
            .map(|(p, _)| p.clone())
            .collect();
        for p in inside {
            self.0.remove(&p);
        }
    }

    pub fn get(&self, path: &str) -> Option<&Stat> {
        self.0.get(path)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &Stat)> {
        self.0.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// What differs from `before` to `self`, sorted by path.
    pub fn changes_since(&self, before: &TreeStat) -> Vec<Changed> {
        let mut out = Vec::new();
        for (path, stat) in &self.0 {
            match before.0.get(path) {
                None => out.push(Changed {
                    path: path.clone(),
                    change: ChangeKind::Created,
                }),
                Some(old) if old != stat => out.push(Changed {
                    path: path.clone(),
                    change: ChangeKind::Modified,
                }),
                Some(_) => {}
            }
        }
        for path in before.0.keys().filter(|p| !self.0.contains_key(*p)) {
            out.push(Changed {
                path: path.clone(),
                change: ChangeKind::Deleted,
            });
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }
}

/// A file's stat as compared.
pub(crate) fn stat_of(meta: &std::fs::Metadata) -> Stat {
    Stat {
        len: meta.len(),
        mtime_ns: crate::platform::fs::mtime_ns(meta),
        ctime_ns: crate::platform::fs::identity(meta).1,
        ino: crate::platform::fs::identity(meta).0,
        mode: crate::platform::fs::full_mode(meta),
    }
}

/// Every file under `dir` (itself under `root`) with its stat, and every
/// folder, by path relative to `root`; the tools' walk rules.
pub(crate) fn scan_under(root: &Path, dir: &Path) -> (Vec<(String, Stat)>, Vec<String>) {
    let found = Mutex::new((Vec::new(), Vec::new()));
    walker(root, dir, true, Vec::new())
        .threads(2)
        .build_parallel()
        .run(|| {
            let found = &found;
            Box::new(move |item| {
                let Ok(entry) = item else {
                    return ignore::WalkState::Continue;
                };
                let Some(rel) = entry.path().strip_prefix(root).ok().and_then(Path::to_str) else {
                    return ignore::WalkState::Continue;
                };
                let rel = crate::platform::paths::slashed(rel);
                if entry.file_type().is_some_and(|t| t.is_dir()) {
                    if let Ok(mut f) = found.lock() {
                        f.1.push(rel.to_string());
                    }
                    return ignore::WalkState::Continue;
                }
                let Ok(meta) = entry.metadata() else {
                    return ignore::WalkState::Continue;
                };
                // A FIFO, a socket or a device is no file to keep: opening
                // a FIFO to read it would wait for a writer for ever.
                let kind = meta.file_type();
                if !(kind.is_file() || kind.is_symlink()) {
                    return ignore::WalkState::Continue;
                }
                if let Ok(mut f) = found.lock() {
                    f.0.push((rel.to_string(), stat_of(&meta)));
                }
                ignore::WalkState::Continue
            })
        });
    found.into_inner().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_modified_deleted_and_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.rs"), "a").unwrap();
        std::fs::write(root.join("src/b.rs"), "b").unwrap();
        std::fs::write(root.join("same.txt"), "same").unwrap();
        let before = TreeStat::scan(root);
        assert_eq!(before.len(), 4);
        std::fs::write(root.join("src/a.rs"), "a changed").unwrap();
        std::fs::remove_file(root.join("src/b.rs")).unwrap();
        std::fs::write(root.join("new.txt"), "new").unwrap();
        std::fs::create_dir_all(root.join("target")).unwrap();
        std::fs::write(root.join("target/out.o"), "ignored").unwrap();
        let after = TreeStat::scan(root);
        let changes = after.changes_since(&before);
        let got: Vec<(&str, ChangeKind)> = changes
            .iter()
            .map(|c| (c.path.as_str(), c.change))
            .collect();
        assert_eq!(
            got,
            [
                ("new.txt", ChangeKind::Created),
                ("src/a.rs", ChangeKind::Modified),
                ("src/b.rs", ChangeKind::Deleted),
            ]
        );
        // Same size, same second: the nanoseconds and ctime still tell.
        let t = TreeStat::scan(root);
        std::fs::write(root.join("same.txt"), "SAME").unwrap();
        assert_eq!(TreeStat::scan(root).changes_since(&t).len(), 1);
    }
}
