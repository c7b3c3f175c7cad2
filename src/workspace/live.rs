//! A root's file stats kept current between looks. The system (inotify,
//! FSEvents, ReadDirectoryChangesW: `platform::watch`) says which paths changed since the last look, and only their folders'
//! entries are stat'ed again, so a look costs time in proportion to what
//! changed, not to the tree. Lost events (a full queue, a watched folder
//! moved, no watches left) fall back to a full scan.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crate::platform::watch::{Dirty, Watch};

use super::changes::{TreeStat, scan_under, stat_of};
use super::walk::walker;

/// The stats of every file under a root, as of the last `refresh`.
pub struct LiveTree {
    root: PathBuf,
    tree: TreeStat,
    watch: Option<Watch>,
    /// Full scans so far (the first, then one per lost event queue).
    scans: u32,
}

impl LiveTree {
    /// Scans `root` once and starts watching its folders.
    pub fn new(root: &Path) -> LiveTree {
        let mut live = LiveTree {
            root: root.to_path_buf(),
            tree: TreeStat::default(),
            watch: None,
            scans: 0,
        };
        live.rescan();
        live
    }

    /// Whether changes are followed by events (else each look is a scan).
    pub fn is_watching(&self) -> bool {
        self.watch.is_some()
    }

    /// How many times the whole tree was scanned.
    pub fn full_scans(&self) -> u32 {
        self.scans
    }

    /// The tree as it is now, with nothing a moment old missing: where
    /// the system reports changes only a while later (FSEvents,
    /// ReadDirectoryChangesW), a full scan; inotify's queue holds every
    /// change once the call that made it returned, so there the events do.
    /// What a command's checkpoint compares.
    pub fn refresh_exact(&mut self) -> &TreeStat {
        if crate::platform::watch::AT_ONCE {
            return self.refresh();
        }
        if let Some(watch) = &mut self.watch {
            let _ = watch.drain();
        }
        self.scans += 1;
        let (files, _) = scan_under(&self.root, &self.root);
        self.tree = TreeStat::default();
        for (path, stat) in files {
            self.tree.insert(path, stat);
        }
        &self.tree
    }

    /// The tree as it is now (where events come late, as of them).
    pub fn refresh(&mut self) -> &TreeStat {
        let dirty = match &mut self.watch {
            Some(watch) => watch.drain(),
            None => Dirty::Lost,
        };
        // New ignore rules change what the walk keeps everywhere.
        let dirty = match dirty {
            Dirty::Paths(paths) if paths.iter().any(|p| is_ignore_file(p)) => Dirty::Lost,
            dirty => dirty,
        };
        match dirty {
            Dirty::Lost => self.rescan(),
            Dirty::Paths(paths) => {
                if !self.apply(&paths) {
                    self.rescan();
                }
            }
        }
        &self.tree
    }

    fn rescan(&mut self) {
        self.scans += 1;
        let (files, dirs) = scan_under(&self.root, &self.root);
        self.tree = TreeStat::default();
        for (path, stat) in files {
            self.tree.insert(path, stat);
        }
        self.watch = Watch::new(&self.root);
        let mut all = vec![String::new()];
        all.extend(dirs.into_iter().filter(|d| !d.is_empty()));
        if !self.add_watches(&all) {
            self.watch = None;
        }
    }

    /// Watches `dirs`; false when the system refuses one (no watches left).
    fn add_watches(&mut self, dirs: &[String]) -> bool {
        self.watch.as_mut().is_some_and(|w| w.add(dirs))
    }

    /// Looks again at each changed path: its folder's entry for it says
    /// whether it is a file (stat it), a new folder (scan and watch it) or
    /// gone or ignored (forget it). False when watching failed.
    fn apply(&mut self, paths: &BTreeSet<String>) -> bool {
        let mut listed: HashMap<String, HashMap<String, Entry>> = HashMap::new();
        for path in paths {
            let parent = match path.rfind('/') {
                Some(at) => path[..at].to_string(),
                None => String::new(),
            };
            let entries = listed
                .entry(parent.clone())
                .or_insert_with(|| list_dir(&self.root, &parent));
            match entries.get(path) {
                Some(Entry::File(stat)) => {
                    self.tree.remove_tree(path);
                    self.tree.insert(path.clone(), *stat);
                }
                Some(Entry::Dir) => {
                    let watched = self.watch.as_ref().is_some_and(|w| w.watches(path));
                    if !watched {
                        self.tree.remove_tree(path);
                        let (files, dirs) = scan_under(&self.root, &self.root.join(path));
                        for (p, stat) in files {
                            self.tree.insert(p, stat);
                        }
                        if !self.add_watches(&dirs) {
                            return false;
                        }
                    }
                }
                None => {
                    self.tree.remove_tree(path);
                    if let Some(w) = &mut self.watch {
                        w.forget(path);
                    }
                }
            }
        }
        true
    }
}

enum Entry {
    File(super::changes::Stat),
    Dir,
}

/// The entries directly in `dir` (relative to `root`) that the tools'
/// walk keeps, by path relative to `root`.
fn list_dir(root: &Path, dir: &str) -> HashMap<String, Entry> {
    let mut out = HashMap::new();
    for entry in walker(root, &root.join(dir), true, Vec::new())
        .max_depth(Some(1))
        .build()
        .flatten()
    {
        if entry.depth() == 0 {
            continue;
        }
        let Some(rel) = entry.path().strip_prefix(root).ok().and_then(Path::to_str) else {
            continue;
        };
        let rel = crate::platform::paths::slashed(rel);
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            out.insert(rel.to_string(), Entry::Dir);
        } else if let Ok(meta) = entry.metadata()
            // Files and links only: a FIFO would block whoever reads it.
            && (meta.file_type().is_file() || meta.file_type().is_symlink())
        {
            out.insert(rel.to_string(), Entry::File(stat_of(&meta)));
        }
    }
    out
}

/// Whether `path` is a `.gitignore` or `.ignore` file.
fn is_ignore_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    matches!(name, ".gitignore" | ".ignore")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// Waits (at most 5 s: some systems report changes a moment later)
    /// until the live tree equals a full scan.
    fn settles(live: &mut LiveTree, root: &std::path::Path) -> bool {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            if *live.refresh() == TreeStat::scan(root) {
                return true;
            }
            if std::time::Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// On every system: files made, changed and removed, a new folder and
    /// what is in it, are seen by the watch without a full scan.
    #[test]
    fn files_made_changed_and_removed_are_seen_without_a_scan() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::write(root.join("a.txt"), "a").unwrap();
        let mut live = LiveTree::new(root);
        assert!(live.is_watching());
        fs::create_dir(root.join("sub")).unwrap();
        fs::write(root.join("sub/b.txt"), "b").unwrap();
        assert!(settles(&mut live, root), "a new folder and its file");
        fs::write(root.join("a.txt"), "changed, and longer").unwrap();
        assert!(settles(&mut live, root), "a changed file");
        fs::remove_file(root.join("sub/b.txt")).unwrap();
        assert!(settles(&mut live, root), "a removed file");
        assert_eq!(live.full_scans(), 1);
    }

    /// After every kind of change, what the watch says equals a full scan.
    #[test]
    #[cfg(unix)]
    fn refresh_matches_a_full_scan_after_each_change() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("src/deep")).unwrap();
        fs::write(root.join("src/a.rs"), "a").unwrap();
        fs::write(root.join("src/deep/b.rs"), "b").unwrap();
        fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
        let mut live = LiveTree::new(root);
        assert!(live.is_watching());
        type Step = Box<dyn Fn(&Path)>;
        let steps: Vec<(&str, Step)> = vec![
            (
                "modify",
                Box::new(|r| fs::write(r.join("src/a.rs"), "aa").unwrap()),
            ),
            (
                "create",
                Box::new(|r| fs::write(r.join("top.txt"), "t").unwrap()),
            ),
            (
                "delete",
                Box::new(|r| fs::remove_file(r.join("src/deep/b.rs")).unwrap()),
            ),
            (
                "new folder with files",
                Box::new(|r| {
                    fs::create_dir_all(r.join("gen/x/y")).unwrap();
                    fs::write(r.join("gen/x/y/z.rs"), "z").unwrap();
                    fs::write(r.join("gen/g.rs"), "g").unwrap();
                }),
            ),
            (
                "file in the new folder",
                Box::new(|r| fs::write(r.join("gen/x/late.rs"), "l").unwrap()),
            ),
            (
                "ignored output",
                Box::new(|r| {
                    fs::create_dir_all(r.join("target/debug")).unwrap();
                    fs::write(r.join("target/debug/bin"), "b").unwrap();
                    fs::write(r.join("run.log"), "log").unwrap();
                }),
            ),
            (
                "rename a file",
                Box::new(|r| fs::rename(r.join("top.txt"), r.join("src/moved.txt")).unwrap()),
            ),
            (
                "move a folder",
                Box::new(|r| fs::rename(r.join("gen/x"), r.join("src/x")).unwrap()),
            ),
            (
                "remove a tree",
                Box::new(|r| fs::remove_dir_all(r.join("gen")).unwrap()),
            ),
            (
                "new ignore rule",
                Box::new(|r| fs::write(r.join(".gitignore"), "target/\n*.log\nsrc/x/\n").unwrap()),
            ),
            (
                "replace a file by a folder",
                Box::new(|r| {
                    fs::remove_file(r.join("src/a.rs")).unwrap();
                    fs::create_dir(r.join("src/a.rs")).unwrap();
                    fs::write(r.join("src/a.rs/inner"), "i").unwrap();
                }),
            ),
            (
                "chmod",
                Box::new(|r| {
                    use std::os::unix::fs::PermissionsExt;
                    fs::set_permissions(r.join("src/moved.txt"), fs::Permissions::from_mode(0o755))
                        .unwrap();
                }),
            ),
        ];
        // Only a moved folder and new ignore rules need a full scan.
        let mut expected_scans = 1;
        for (what, step) in steps {
            step(root);
            assert_eq!(live.refresh(), &TreeStat::scan(root), "after: {what}");
            assert!(live.is_watching(), "{what}");
            expected_scans += u32::from(matches!(what, "move a folder" | "new ignore rule"));
            assert_eq!(live.full_scans(), expected_scans, "after: {what}");
        }
    }

    /// Many random changes between two looks still add up.
    #[test]
    #[cfg(unix)]
    fn a_burst_of_random_changes_is_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let mut live = LiveTree::new(root);
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for round in 0..20 {
            for _ in 0..50 {
                let d = format!("d{}", next(5));
                let f = root.join(&d).join(format!("f{}", next(8)));
                match next(4) {
                    0 | 1 => {
                        fs::create_dir_all(root.join(&d)).unwrap();
                        fs::write(&f, format!("{}", next(1000))).unwrap();
                    }
                    2 => {
                        let _ = fs::remove_file(&f);
                    }
                    _ => {
                        let _ = fs::remove_dir_all(root.join(&d));
                    }
                }
            }
            assert_eq!(live.refresh(), &TreeStat::scan(root), "round {round}");
        }
        assert_eq!(live.full_scans(), 1, "events alone kept it current");
    }
}
