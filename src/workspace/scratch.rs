//! A scratch copy of the agent root (SPEC 17: what a verify runs in): the
//! root's files as the listing sees them (`.gitignore` honoured, never
//! `.git/`), each copied on write where the filesystem can (a reflink on
//! btrfs or XFS) and copied plainly where it cannot; never a hard link,
//! so nothing done in the copy reaches the root. Links are copied as
//! links that lead where the root's lead: one to a path in the root, to
//! that path in the copy; one out of the root, to where it pointed (a
//! command's writes are confined to the copy besides). What is neither a
//! file, a folder nor a link (a FIFO, a socket, a device) is left out and
//! never opened. The copy is removed when dropped.
//!
//! A root's copy goes to the same folder each time (named by the root,
//! held with a lock while a copy lives there; a second copy of the root at
//! once gets a folder of its own), and its files keep the root's
//! modification times, but for those a copy there wrote (listed under the
//! state home's scratch folder, never in the tmpfs, until the root's file
//! is newer than that copy's end; see `scratch_written`), which get a new
//! one: a build tool that
//! keys its caches by path and mtime (Cargo's fingerprints, rustc's
//! incremental folders) rebuilds only what the hunks touched, sees a file
//! put back as changed, and its cache does not grow per verify.

use std::io;
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use super::Workspace;
use super::scratch_written::Written;
use super::walk::{Entry, EntryKind, list};

/// How the files were copied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyKind {
    /// Copy-on-write clones (no bytes copied until written).
    Reflink,
    /// The filesystem has no clones: the bytes were copied.
    Plain,
    /// The filesystem has no clones: copied into memory (a tmpfs).
    Memory,
}

/// A copy of the root's files in a folder of its own.
#[derive(Debug)]
pub struct Scratch {
    dir: Option<Folder>,
    pub files: usize,
    pub kind: CopyKind,
    /// How long the copy took.
    pub took: Duration,
    /// The root as it was copied (`tree_stamp`).
    pub stamp: String,
}

/// Threads that copy at once.
const COPIERS: usize = 4;

impl Scratch {
    /// Copies the agent root of `ws` into a new folder under `parent`.
    pub fn of(ws: &Workspace, parent: &Path) -> io::Result<Scratch> {
        Scratch::placed(ws, parent, None)
    }

    /// Copies the agent root of `ws` into a new folder under `near` (on
    /// the root's filesystem, where clones work), or, when that
    /// filesystem cannot clone and the files fit in a quarter of its free
    /// space, under `memory` (a tmpfs: a plain copy there is several times
    /// faster than on disk).
    pub fn placed(ws: &Workspace, near: &Path, memory: Option<&Path>) -> io::Result<Scratch> {
        let started = Instant::now();
        let Some(root) = ws.scope_starts().into_iter().next() else {
            return Err(io::Error::other("the workspace has no root"));
        };
        let listing = list(ws, &root, None, None, usize::MAX);
        let stamp = super::tree_key::stamp_of(&listing.entries);
        let bytes: u64 = listing.entries.iter().map(|e| e.size).sum();
        let first = listing
            .entries
            .iter()
            .find(|e| e.kind == EntryKind::File)
            .map(|e| ws.root().join(&e.path));
        let key = short_hash(ws.root());
        let list = |place: &str| near.join(format!("agent-tui-scratch-{key}{place}.written"));
        let mut dir = new_dir(near, &key, list(""))?;
        let mut kind = match &first {
            Some(from) if reflink_copy::reflink(from, dir.path.join(".clone-probe")).is_ok() => {
                let _ = std::fs::remove_file(dir.path.join(".clone-probe"));
                CopyKind::Reflink
            }
            _ => CopyKind::Plain,
        };
        if kind == CopyKind::Plain
            && let Some(memory) = memory.filter(|m| fits(m, bytes))
            && let Ok(in_memory) = new_dir(memory, &key, list(".memory"))
        {
            sweep_lists(memory);
            dir = in_memory;
            kind = CopyKind::Memory;
        }
        link_dependencies(ws.root(), &dir.path, &listing.entries)?;
        let files = lay_out(ws, &mut dir, listing.entries)?;
        let cloned = copy_all(&files, kind == CopyKind::Reflink)?;
        if kind == CopyKind::Reflink && cloned < files.len() {
            kind = CopyKind::Plain;
        }
        Ok(Scratch {
            dir: Some(dir),
            files: files.len(),
            kind,
            took: started.elapsed(),
            stamp,
        })
    }

    /// The copy's folder.
    pub fn path(&self) -> &Path {
        self.dir
            .as_ref()
            .map_or(Path::new(""), |d| d.path.as_path())
    }

    /// Writes `bytes` as file `rel` of the copy (a new file's folders made).
    pub fn write(&self, rel: &str, bytes: &[u8]) -> io::Result<()> {
        let to = self.path().join(rel);
        if !to.starts_with(self.path()) || rel.split('/').any(|p| p == "..") {
            return Err(io::Error::other(format!(
                "`{rel}` is not a path of the copy"
            )));
        }
        self.unlink_dependencies_above(rel)?;
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)?;
        }
        // A link in the copy is replaced, never written through.
        let _ = std::fs::remove_file(&to);
        if let Some(dir) = &self.dir {
            dir.written.record(rel)?;
        }
        std::fs::write(to, bytes)
    }

    /// A dependency folder linked from the root on the way to `rel` (a
    /// hunk of a file in `node_modules/`) becomes a folder of the copy's
    /// own first: nothing is ever written through it into the root.
    fn unlink_dependencies_above(&self, rel: &str) -> io::Result<()> {
        let mut at = self.path().to_path_buf();
        for part in Path::new(rel)
            .parent()
            .unwrap_or(Path::new(""))
            .components()
        {
            at.push(part);
            if std::fs::symlink_metadata(&at).is_ok_and(|m| m.is_symlink())
                && std::fs::read_link(&at).is_ok_and(|t| !t.starts_with(self.path()))
                && DEPENDENCY_DIRS.iter().any(|d| at.ends_with(d))
            {
                std::fs::remove_file(&at)?;
                std::fs::create_dir(&at)?;
            }
        }
        Ok(())
    }

    /// Writes `bytes` where an apply of file `rel` would write them: through
    /// the links on its path (to their target's path in the copy), as the
    /// apply writes through them in the root.
    pub fn write_applied(&self, ws: &Workspace, rel: &str, bytes: &[u8]) -> io::Result<()> {
        let real = ws.resolve(rel).ok().and_then(|r| {
            let inside = r.abs.strip_prefix(ws.root()).ok()?;
            (r.scope == 0).then(|| inside.to_str().map(str::to_string))?
        });
        match real {
            Some(real) if !real.is_empty() => self.write(&real, bytes),
            _ => self.write(rel, bytes),
        }
    }

    /// Removes the copy now (its top folders on several threads); how
    /// long that took.
    pub fn remove(mut self) -> io::Result<Duration> {
        let started = Instant::now();
        if let Some(dir) = self.dir.take() {
            let tops: Vec<PathBuf> = std::fs::read_dir(&dir.path)?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .collect();
            let chunk = tops.len().div_ceil(COPIERS).max(1);
            std::thread::scope(|s| {
                for part in tops.chunks(chunk) {
                    s.spawn(move || {
                        for p in part {
                            let link_or_file =
                                std::fs::symlink_metadata(p).is_ok_and(|m| !m.is_dir());
                            let _ = if link_or_file {
                                std::fs::remove_file(p)
                            } else {
                                std::fs::remove_dir_all(p)
                            };
                        }
                    });
                }
            });
            std::fs::remove_dir(&dir.path)?;
        }
        Ok(started.elapsed())
    }
}

/// Folders that package managers fill and git ignores, which a project's
/// check needs (`npm test` its `node_modules`, pytest its `.venv`, a git
/// command `.git`): not copied but linked into the copy, where the check
/// reads them and cannot write them (it may write only in the copy).
const DEPENDENCY_DIRS: &[&str] = &[
    "node_modules",
    ".venv",
    "venv",
    ".tox",
    "vendor",
    "bower_components",
    "__pypackages__",
    ".git",
];

/// Folders this deep or less are looked in for dependency folders (a
/// monorepo's `packages/web/node_modules`): a few stats each, not one per
/// folder of a large tree.
const DEPENDENCY_DEPTH: usize = 3;

/// Links each dependency folder the listing left out (ignored) into the
/// copy, in the root and in its folders down to `DEPENDENCY_DEPTH`.
fn link_dependencies(root: &Path, copy: &Path, entries: &[Entry]) -> io::Result<()> {
    let folders = std::iter::once("").chain(
        entries
            .iter()
            .filter(|e| e.kind == EntryKind::Dir && e.path.matches('/').count() < DEPENDENCY_DEPTH)
            .map(|e| e.path.as_str()),
    );
    let listed: std::collections::HashSet<&str> = entries.iter().map(|e| e.path.as_str()).collect();
    for folder in folders {
        for name in DEPENDENCY_DIRS {
            let rel = match folder {
                "" => (*name).to_string(),
                _ => format!("{folder}/{name}"),
            };
            let from = root.join(&rel);
            if listed.contains(rel.as_str())
                || !std::fs::symlink_metadata(&from).is_ok_and(|m| m.is_dir())
            {
                continue;
            }
            let to = copy.join(&rel);
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent)?;
            }
            crate::platform::fs::symlink(&from, &to)?;
        }
    }
    Ok(())
}

/// A file to copy: from, to, the modification time it keeps.
type Job = (PathBuf, PathBuf, Option<SystemTime>);

/// Makes the folders and links of `entries` in `dir`; the files to copy.
/// What is not a file, folder or link is left out.
fn lay_out(ws: &Workspace, dir: &mut Folder, entries: Vec<Entry>) -> io::Result<Vec<Job>> {
    let mut files = Vec::new();
    for e in entries {
        let to = dir.path.join(&e.path);
        match e.kind {
            EntryKind::Dir => std::fs::create_dir_all(&to)?,
            EntryKind::File => {
                // Only in the root's own folder, and not for a file a
                // verify there wrote last time (its build is of that).
                let keep = dir.written.keeps_time(&e.path, e.modified);
                files.push((ws.root().join(&e.path), to, e.modified.filter(|_| keep)));
            }
            EntryKind::Symlink => {
                if let Some(parent) = to.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                let target = std::fs::read_link(ws.root().join(&e.path))?;
                let target = link_in_copy(ws.root(), &dir.path, &e.path, target);
                crate::platform::fs::symlink(&target, &to)?;
            }
            EntryKind::Other => {}
        }
    }
    Ok(files)
}

/// What the copy's link `rel` (its target in the root `target`) points
/// to: into the root, the same path in the copy (a relative target that
/// stays beneath the root as it is, any other rewritten into the copy);
/// out of the root, where it pointed (a relative target made absolute).
/// Never into the root: a write through it would reach the root.
fn link_in_copy(root: &Path, copy: &Path, rel: &str, target: PathBuf) -> PathBuf {
    let parent = Path::new(rel).parent().unwrap_or(Path::new(""));
    if target.is_relative() {
        // The folders above the link it climbs, one by one, must stay in
        // the root: `../root-name/a` leaves it on the way.
        let mut depth = parent.components().count();
        let beneath = target.components().all(|c| match c {
            Component::ParentDir if depth == 0 => false,
            Component::ParentDir => {
                depth -= 1;
                true
            }
            Component::Normal(_) => {
                depth += 1;
                true
            }
            Component::CurDir | Component::RootDir | Component::Prefix(_) => true,
        });
        if beneath {
            return target;
        }
    }
    let lexical = normalized(&root.join(parent).join(&target));
    let inside = lexical
        .strip_prefix(root)
        .map(Path::to_path_buf)
        .or_else(|_| {
            // An absolute target spelt through a link to the root's folder.
            std::fs::canonicalize(&lexical)
                .ok()
                .and_then(|real| real.strip_prefix(root).ok().map(Path::to_path_buf))
                .ok_or(())
        });
    match inside {
        Ok(inside) => copy.join(inside),
        Err(()) => lexical,
    }
}

/// `path` with `.` and `..` taken away by their text.
fn normalized(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// `path` opened for reading if it is a regular file (`None` if it is
/// not): opened without waiting (a FIFO put in its place would wait for a
/// writer) and without following a link.
pub(super) fn open_regular(path: &Path) -> io::Result<Option<std::fs::File>> {
    let file = crate::platform::fs::open_no_follow(path)?;
    Ok(file.metadata()?.is_file().then_some(file))
}

/// How one file came into the copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Copied {
    Cloned,
    Written,
    /// It is no longer a regular file: left out.
    Skipped,
}

/// Copies `from` to `to`: a clone where `clone` (the filesystem said it
/// can), else its bytes; its permissions and `modified` kept.
fn copy_one(
    from: &Path,
    to: &Path,
    clone: bool,
    modified: Option<SystemTime>,
) -> io::Result<Copied> {
    let Some(mut src) = open_regular(from)? else {
        return Ok(Copied::Skipped);
    };
    let mut dst = std::fs::File::options()
        .write(true)
        .create(true)
        .truncate(true)
        .open(to)?;
    // A failed clone costs a call: tried only where the first file cloned.
    let how = if clone && crate::platform::fs::clone_file(&dst, &src) {
        Copied::Cloned
    } else {
        io::copy(&mut src, &mut dst)?;
        Copied::Written
    };
    dst.set_permissions(src.metadata()?.permissions())?;
    if let Some(modified) = modified {
        dst.set_modified(modified)?;
    }
    Ok(how)
}

/// Copies each file on `COPIERS` threads, cloning where `clones` (the
/// filesystem said it can), each keeping its modification time; how many
/// were clones.
fn copy_all(files: &[Job], clones: bool) -> io::Result<usize> {
    let chunk = files.len().div_ceil(COPIERS).max(1);
    std::thread::scope(|s| {
        let workers: Vec<_> = files
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || -> io::Result<usize> {
                    let mut cloned = 0;
                    for (from, to, modified) in part {
                        if let Some(parent) = to.parent()
                            && !parent.exists()
                        {
                            std::fs::create_dir_all(parent)?;
                        }
                        if copy_one(from, to, clones, *modified)? == Copied::Cloned {
                            cloned += 1;
                        }
                    }
                    Ok(cloned)
                })
            })
            .collect();
        let mut cloned = 0;
        for w in workers {
            cloned += w
                .join()
                .map_err(|_| io::Error::other("a copying thread failed"))??;
        }
        Ok(cloned)
    })
}

/// A copy's folder, removed when dropped; a root's own folder is held with
/// a lock on it while the copy lives there.
#[derive(Debug)]
struct Folder {
    path: PathBuf,
    _lock: Option<std::fs::File>,
    /// In the root's own folder, the files copies there wrote.
    written: Written,
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
        let _ = self.written.close();
    }
}

/// A short hex name for the root at `root`.
fn short_hash(root: &Path) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(root.as_os_str().as_encoded_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// The folder for a copy under `parent`: the root's own
/// (`agent-tui-scratch-<key>`, the files copies there wrote listed in
/// `list`) unless another copy of the root is there now, else a new one.
fn new_dir(parent: &Path, key: &str, list: PathBuf) -> io::Result<Folder> {
    private(parent)?;
    if let Some(folder) = claim(&parent.join(format!("agent-tui-scratch-{key}")), list) {
        return Ok(folder);
    }
    let dir = tempfile::Builder::new()
        .prefix("agent-tui-scratch-")
        .tempdir_in(parent)?;
    Ok(Folder {
        path: dir.keep(),
        _lock: None,
        written: Written::default(),
    })
}

/// Removes the lists earlier versions kept beside their copies in the
/// tmpfs (one a root, never removed).
fn sweep_lists(memory: &Path) {
    let Ok(entries) = std::fs::read_dir(memory) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let list = name.starts_with("agent-tui-scratch-")
            && (name.ends_with(".written") || name.ends_with(".written.new"));
        if list && entry.file_type().is_ok_and(|t| t.is_file()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// `path` as this copy's folder, locked and emptied of what a copy that
/// did not end left there; `None` while another copy holds it.
fn claim(path: &Path, list: PathBuf) -> Option<Folder> {
    match crate::platform::fs::create_private_dir(path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(_) => return None,
    }
    let lock = std::fs::File::open(path).ok()?;
    lock.try_lock().ok()?;
    // Still the folder at that path (not one removed meanwhile), a folder.
    let (now, held) = (std::fs::symlink_metadata(path).ok()?, lock.metadata().ok()?);
    if !now.is_dir() || !crate::platform::fs::same_file(&now, &held) {
        return None;
    }
    for entry in std::fs::read_dir(path).ok()? {
        let p = entry.ok()?.path();
        let dir = std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir());
        let gone = if dir {
            std::fs::remove_dir_all(&p)
        } else {
            std::fs::remove_file(&p)
        };
        gone.ok()?;
    }
    let written = Written::load(list);
    Some(Folder {
        path: path.to_path_buf(),
        _lock: Some(lock),
        written,
    })
}

/// Makes `parent` (and what is missing above it) and checks it is this
/// user's own folder that nobody else can enter (a tmpfs like `/dev/shm` is
/// shared by every user): one of ours left open is closed; someone else's,
/// or a link, is refused.
fn private(parent: &Path) -> io::Result<()> {
    crate::platform::fs::private_dir(parent)
}

/// Whether `bytes` of files fit in a quarter of the free space at `dir`
/// (or, not made yet, its parent).
fn fits(dir: &Path, bytes: u64) -> bool {
    let at = if dir.exists() {
        dir
    } else {
        dir.parent().unwrap_or(dir)
    };
    // Where the system cannot tell, the copy is tried (and fails cleanly
    // if the disk fills).
    crate::platform::fs::free_bytes(at).is_none_or(|free| bytes < free / 4)
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use crate::workspace::tree_key;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    #[test]
    fn a_copy_has_the_files_not_the_ignored_or_git_and_shares_nothing() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        for (p, t) in [
            ("src/main.rs", "fn main() {}\n"),
            ("target/big.o", "object"),
            (".gitignore", "target/\n"),
            (".git/HEAD", "ref: refs/heads/main\n"),
            ("docs/a.md", "# a\n"),
            ("web/node_modules/left/index.js", "module.exports = 1;\n"),
            ("web/.gitignore", "node_modules/\n"),
        ] {
            std::fs::create_dir_all(r.join(p).parent().unwrap()).unwrap();
            std::fs::write(r.join(p), t).unwrap();
        }
        std::os::unix::fs::symlink("src/main.rs", r.join("link.rs")).unwrap();
        let ws = Workspace::open(r).unwrap();
        let parent = tempfile::tempdir().unwrap();
        let s = Scratch::of(&ws, parent.path()).unwrap();
        let c = s.path().to_path_buf();
        assert_eq!(
            std::fs::read_to_string(c.join("src/main.rs")).unwrap(),
            "fn main() {}\n"
        );
        assert!(c.join("docs/a.md").exists() && c.join(".gitignore").exists());
        assert!(!c.join("target").exists(), "ignored files stay out");
        // Dependency folders (and .git) are the root's, linked: read where
        // they are, never copied.
        for dep in [".git", "web/node_modules"] {
            assert_eq!(
                std::fs::read_link(c.join(dep)).unwrap(),
                r.join(dep),
                "{dep}"
            );
        }
        assert!(c.join("web/node_modules/left/index.js").exists());
        assert_eq!(
            std::fs::read_link(c.join("link.rs")).unwrap(),
            Path::new("src/main.rs")
        );
        // Not a hard link: another inode, one link each.
        let (a, b) = (
            std::fs::metadata(r.join("src/main.rs")).unwrap(),
            std::fs::metadata(c.join("src/main.rs")).unwrap(),
        );
        assert_ne!(a.ino(), b.ino());
        assert_eq!(b.nlink(), 1);
        // Writing the copy leaves the root alone, a link included.
        s.write("src/main.rs", b"broken").unwrap();
        s.write("link.rs", b"through the link?").unwrap();
        s.write("src/new.rs", b"new").unwrap();
        assert!(s.write("../escape.rs", b"x").is_err());
        assert_eq!(
            std::fs::read_to_string(r.join("src/main.rs")).unwrap(),
            "fn main() {}\n"
        );
        assert!(!r.join("src/new.rs").exists() && !parent.path().join("escape.rs").exists());
        // A hunk of a file in a linked folder goes to a folder of the
        // copy's own, never through the link into the root.
        s.write("web/node_modules/left/index.js", b"changed")
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(r.join("web/node_modules/left/index.js")).unwrap(),
            "module.exports = 1;\n"
        );
        assert!(
            !std::fs::symlink_metadata(c.join("web/node_modules"))
                .unwrap()
                .is_symlink()
        );
        s.remove().unwrap();
        assert!(!c.exists(), "removed");
        assert!(r.join(".git/HEAD").exists() && r.join("web/node_modules/left/index.js").exists());
    }

    #[test]
    fn where_clones_fail_the_copy_goes_to_memory_if_it_fits() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("a.txt"), "a\n").unwrap();
        let ws = Workspace::open(root.path()).unwrap();
        let (near, memory) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let s = Scratch::placed(&ws, near.path(), Some(memory.path())).unwrap();
        match s.kind {
            CopyKind::Reflink => assert!(s.path().starts_with(near.path())),
            CopyKind::Memory => assert!(s.path().starts_with(memory.path())),
            CopyKind::Plain => panic!("memory had room"),
        }
        assert_eq!(std::fs::read(s.path().join("a.txt")).unwrap(), b"a\n");
        assert_eq!(
            std::fs::read_dir(near.path()).unwrap().count(),
            usize::from(s.kind == CopyKind::Reflink),
            "no folder left behind where the copy did not go"
        );
        // Nothing fits in no space: beside the root.
        assert!(!fits(memory.path(), u64::MAX));
    }

    #[test]
    fn a_root_copies_to_its_own_folder_with_its_files_times() {
        let root = tempfile::tempdir().unwrap();
        let file = root.path().join("lib.rs");
        std::fs::write(&file, "pub fn a() {}\n").unwrap();
        let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_600_000_000);
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let ws = Workspace::open(root.path()).unwrap();
        let parent = tempfile::tempdir().unwrap();
        let first = Scratch::of(&ws, parent.path()).unwrap();
        let at = first.path().to_path_buf();
        let copied = std::fs::metadata(at.join("lib.rs")).unwrap();
        assert_eq!(copied.modified().unwrap(), old, "the root's mtime kept");
        // A second copy of the root while the first lives: its own folder.
        let second = Scratch::of(&ws, parent.path()).unwrap();
        assert_ne!(second.path(), at);
        let other = second.path().to_path_buf();
        second.remove().unwrap();
        first.remove().unwrap();
        assert!(!at.exists() && !other.exists());
        // The next copy is in the same folder again, left overs cleared.
        std::fs::create_dir_all(at.join("stale")).unwrap();
        let again = Scratch::of(&ws, parent.path()).unwrap();
        assert_eq!(again.path(), at);
        assert!(!at.join("stale").exists());
        // A file a copy wrote is new to the next copy there: its time is
        // not put back (a build of the written version must not look
        // newer than it).
        again.write("lib.rs", b"pub fn b() {}\n").unwrap();
        drop(again);
        assert!(!at.exists(), "removed when dropped");
        let next = Scratch::of(&ws, parent.path()).unwrap();
        let copied = std::fs::metadata(next.path().join("lib.rs")).unwrap();
        assert_ne!(copied.modified().unwrap(), old);
        assert_eq!(
            std::fs::read(next.path().join("lib.rs")).unwrap(),
            b"pub fn a() {}\n"
        );
        // Still so while the root's file is older than that copy's end.
        drop(next);
        let list = PathBuf::from(format!("{}.written", at.display()));
        let next = Scratch::of(&ws, parent.path()).unwrap();
        let copied = std::fs::metadata(next.path().join("lib.rs")).unwrap();
        assert_ne!(copied.modified().unwrap(), old);
        drop(next);
        assert!(std::fs::read_to_string(&list).unwrap().contains("lib.rs"));
        // The hunk applied in the root after it: every build of the written
        // version is older than the root's file, which keeps its time, and
        // the list forgets it.
        std::thread::sleep(std::time::Duration::from_millis(5));
        std::fs::write(root.path().join("lib.rs"), "pub fn b() {}\n").unwrap();
        let applied = std::fs::metadata(root.path().join("lib.rs"))
            .unwrap()
            .modified()
            .unwrap();
        let next = Scratch::of(&ws, parent.path()).unwrap();
        let copied = std::fs::metadata(next.path().join("lib.rs")).unwrap();
        assert_eq!(copied.modified().unwrap(), applied);
        drop(next);
        assert!(!list.exists(), "nothing listed");
        // A copy that never ended (a crash; or a list of an earlier version,
        // a plain path) keeps its file listed however new the root's is.
        std::fs::write(&list, "lib.rs\n").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        std::fs::write(root.path().join("lib.rs"), "pub fn c() {}\n").unwrap();
        let next = Scratch::of(&ws, parent.path()).unwrap();
        let copied = std::fs::metadata(next.path().join("lib.rs")).unwrap();
        let root_time = std::fs::metadata(root.path().join("lib.rs"))
            .unwrap()
            .modified()
            .unwrap();
        assert_ne!(copied.modified().unwrap(), root_time);
        drop(next);
        assert!(std::fs::read_to_string(&list).unwrap().contains("lib.rs"));
    }

    #[test]
    fn a_copy_goes_only_into_a_private_folder_of_this_user() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("a.txt"), "a\n").unwrap();
        let ws = Workspace::open(root.path()).unwrap();
        let base = tempfile::tempdir().unwrap();
        let open = base.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let s = Scratch::of(&ws, &open).unwrap();
        let mode = std::fs::metadata(&open).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700, "closed to others");
        drop(s);
        // A link where the folder should be is refused, not followed.
        let link = base.path().join("link");
        std::os::unix::fs::symlink(&open, &link).unwrap();
        assert!(Scratch::of(&ws, &link).is_err());
    }

    /// Runs `f` on a thread: its result, or a panic if it takes longer
    /// than `secs` (a FIFO opened would wait for ever).
    fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        rx.recv_timeout(Duration::from_secs(secs))
            .expect("it did not end: something waited on a special file")
    }

    #[test]
    fn a_fifo_is_listed_as_other_and_left_out_of_the_copy_unopened() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("a.txt"), "a\n").unwrap();
        nix::unistd::mkfifo(&root.path().join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let ws = Workspace::open(root.path()).unwrap();
        let start = ws.resolve("").unwrap();
        let kinds: Vec<_> = list(&ws, &start, None, None, 10)
            .entries
            .into_iter()
            .map(|e| (e.path, e.kind))
            .collect();
        assert_eq!(
            kinds,
            [
                ("a.txt".to_string(), EntryKind::File),
                ("pipe".to_string(), EntryKind::Other)
            ]
        );
        let parent = tempfile::tempdir().unwrap();
        let near = parent.path().to_path_buf();
        let (copied, key) = within(10, move || {
            let s = Scratch::of(&ws, &near).unwrap();
            let copied: Vec<_> = std::fs::read_dir(s.path())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            (copied, tree_key(&ws).unwrap())
        });
        assert_eq!(copied, ["a.txt"]);
        assert_eq!(key.len(), 64);
    }

    #[test]
    fn the_tree_key_changes_with_a_files_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("run.sh"), "#!/bin/sh\n").unwrap();
        let mode = |m| {
            std::fs::set_permissions(
                dir.path().join("run.sh"),
                std::fs::Permissions::from_mode(m),
            )
            .unwrap()
        };
        let ws = Workspace::open(dir.path()).unwrap();
        mode(0o755);
        let runnable = tree_key(&ws).unwrap();
        mode(0o644);
        assert_ne!(tree_key(&ws).unwrap(), runnable);
        mode(0o755);
        assert_eq!(tree_key(&ws).unwrap(), runnable);
    }

    #[test]
    fn links_lead_where_the_roots_do_and_writes_go_through_them() {
        let base = tempfile::tempdir().unwrap();
        std::fs::create_dir(base.path().join("proj")).unwrap();
        let r = base.path().join("proj").canonicalize().unwrap();
        std::fs::create_dir(r.join("sub")).unwrap();
        std::fs::write(r.join("a.txt"), "a\n").unwrap();
        std::fs::write(base.path().join("outside.txt"), "out\n").unwrap();
        let link = |target: &Path, name: &str| std::os::unix::fs::symlink(target, r.join(name));
        link(Path::new("a.txt"), "rel").unwrap();
        link(Path::new("../a.txt"), "sub/up").unwrap();
        link(&r.join("a.txt"), "abs").unwrap();
        link(Path::new("../proj/a.txt"), "round").unwrap();
        link(Path::new("../outside.txt"), "out_rel").unwrap();
        link(&base.path().join("outside.txt"), "out_abs").unwrap();
        let ws = Workspace::open(&r).unwrap();
        let parent = tempfile::tempdir().unwrap();
        let s = Scratch::of(&ws, parent.path()).unwrap();
        let c = s.path().to_path_buf();
        let target = |name: &str| std::fs::read_link(c.join(name)).unwrap();
        // Relative links beneath the root as they are; the rest into the
        // copy (never into the root), or out of the root where they led.
        assert_eq!(target("rel"), Path::new("a.txt"));
        assert_eq!(target("sub/up"), Path::new("../a.txt"));
        assert_eq!(target("abs"), c.join("a.txt"));
        assert_eq!(target("round"), c.join("a.txt"));
        assert_eq!(target("out_rel"), base.path().join("outside.txt"));
        assert_eq!(target("out_abs"), base.path().join("outside.txt"));
        assert_eq!(std::fs::read_to_string(c.join("out_rel")).unwrap(), "out\n");
        // A hunk of a link's file goes to its target, as an apply writes it.
        s.write_applied(&ws, "abs", b"new\n").unwrap();
        assert!(
            std::fs::symlink_metadata(c.join("abs"))
                .unwrap()
                .is_symlink()
        );
        for name in ["a.txt", "rel", "sub/up", "abs", "round"] {
            assert_eq!(
                std::fs::read_to_string(c.join(name)).unwrap(),
                "new\n",
                "{name}"
            );
        }
        assert_eq!(std::fs::read_to_string(r.join("a.txt")).unwrap(), "a\n");
        s.write_applied(&ws, "sub/new.txt", b"n\n").unwrap();
        assert_eq!(std::fs::read(c.join("sub/new.txt")).unwrap(), b"n\n");
    }

    #[test]
    fn nothing_is_left_in_memory_when_the_copy_is_gone() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("a.txt"), "a\n").unwrap();
        let ws = Workspace::open(root.path()).unwrap();
        let (near, memory) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        // A list an earlier version left in the tmpfs goes too.
        std::fs::write(memory.path().join("agent-tui-scratch-0.written"), "x\n").unwrap();
        let s = Scratch::placed(&ws, near.path(), Some(memory.path())).unwrap();
        s.write("a.txt", b"b\n").unwrap();
        let in_memory = s.kind == CopyKind::Memory;
        drop(s);
        let names = |d: &Path| -> Vec<String> {
            std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        };
        if in_memory {
            assert!(
                names(memory.path()).is_empty(),
                "{:?}",
                names(memory.path())
            );
            let lists = names(near.path());
            assert!(
                lists.iter().all(|n| n.ends_with(".memory.written")),
                "{lists:?}"
            );
            assert_eq!(lists.len(), 1);
        }
    }
}
