//! A scratch copy of the agent root (SPEC 17: what a verify runs in): the
//! root's files as the listing sees them (`.gitignore` honoured, never
//! `.git/`), each copied on write where the filesystem can (a reflink on
//! btrfs or XFS) and copied plainly where it cannot; never a hard link,
//! so nothing done in the copy reaches the root. Links are copied as
//! links (a command's writes are confined to the copy besides). The copy
//! is removed when dropped.
//!
//! A root's copy goes to the same folder each time (named by the root,
//! held with a lock while a copy lives there; a second copy of the root at
//! once gets a folder of its own), and its files keep the root's
//! modification times, but for those a copy there wrote (listed beside
//! the folder until the root's file is newer than that copy's end; see
//! `scratch_written`), which get a new one: a build tool that
//! keys its caches by path and mtime (Cargo's fingerprints, rustc's
//! incremental folders) rebuilds only what the hunks touched, sees a file
//! put back as changed, and its cache does not grow per verify.

use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use super::Workspace;
use super::scratch_written::Written;
use super::walk::{EntryKind, list};

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
        let bytes: u64 = listing.entries.iter().map(|e| e.size).sum();
        let first = listing
            .entries
            .iter()
            .find(|e| e.kind == EntryKind::File)
            .map(|e| ws.root().join(&e.path));
        let key = short_hash(ws.root());
        let mut dir = new_dir(near, &key)?;
        let mut kind = match &first {
            Some(from) if reflink_copy::reflink(from, dir.path.join(".clone-probe")).is_ok() => {
                let _ = std::fs::remove_file(dir.path.join(".clone-probe"));
                CopyKind::Reflink
            }
            _ => CopyKind::Plain,
        };
        if kind == CopyKind::Plain
            && let Some(memory) = memory.filter(|m| fits(m, bytes))
            && let Ok(in_memory) = new_dir(memory, &key)
        {
            dir = in_memory;
            kind = CopyKind::Memory;
        }
        let (mut files, mut links) = (Vec::new(), Vec::new());
        for e in listing.entries {
            let to = dir.path.join(&e.path);
            match e.kind {
                EntryKind::Dir => std::fs::create_dir_all(&to)?,
                EntryKind::File => {
                    // Only in the root's own folder, and not for a file a
                    // verify there wrote last time (its build is of that).
                    let keep = dir.written.keeps_time(&e.path, e.modified);
                    files.push((ws.root().join(&e.path), to, e.modified.filter(|_| keep)));
                }
                EntryKind::Symlink => links.push((ws.root().join(&e.path), to)),
            }
        }
        for (from, to) in &links {
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::os::unix::fs::symlink(std::fs::read_link(from)?, to)?;
        }
        let cloned = copy_all(&files, kind == CopyKind::Reflink)?;
        if kind == CopyKind::Reflink && cloned < files.len() {
            kind = CopyKind::Plain;
        }
        Ok(Scratch {
            dir: Some(dir),
            files: files.len(),
            kind,
            took: started.elapsed(),
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

/// The content of the root's files as a copy would hold them (paths,
/// link targets and bytes), as a hex key: a verify's baseline is cached
/// by it.
pub fn tree_key(ws: &Workspace) -> io::Result<String> {
    use sha2::Digest;
    let Some(root) = ws.scope_starts().into_iter().next() else {
        return Err(io::Error::other("the workspace has no root"));
    };
    let mut entries = list(ws, &root, None, None, usize::MAX).entries;
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    let mut hash = sha2::Sha256::new();
    for e in &entries {
        let from = ws.root().join(&e.path);
        let (tag, bytes) = match e.kind {
            EntryKind::Dir => continue,
            EntryKind::File => (b'f', std::fs::read(&from)?),
            EntryKind::Symlink => (
                b'l',
                std::fs::read_link(&from)?
                    .into_os_string()
                    .into_encoded_bytes(),
            ),
        };
        hash.update([tag]);
        hash.update(e.path.as_bytes());
        hash.update([0]);
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(&bytes);
    }
    Ok(hash.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// A file to copy: from, to, the modification time it keeps.
type Job = (PathBuf, PathBuf, Option<SystemTime>);

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
                        // A failed clone costs a create and an unlink: tried
                        // only where the first file cloned.
                        if !clones {
                            std::fs::copy(from, to)?;
                        } else if reflink_copy::reflink_or_copy(from, to)?.is_none() {
                            cloned += 1;
                        }
                        if let Some(modified) = modified {
                            keep_mtime(to, *modified)?;
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

/// Sets `to`'s modification time (its access time left alone).
fn keep_mtime(to: &Path, modified: SystemTime) -> io::Result<()> {
    let Ok(since) = modified.duration_since(SystemTime::UNIX_EPOCH) else {
        return Ok(());
    };
    let times = rustix::fs::Timestamps {
        last_access: rustix::fs::Timespec {
            tv_sec: 0,
            tv_nsec: rustix::fs::UTIME_OMIT,
        },
        last_modification: rustix::fs::Timespec {
            tv_sec: i64::try_from(since.as_secs()).unwrap_or(i64::MAX),
            tv_nsec: i64::from(since.subsec_nanos()),
        },
    };
    rustix::fs::utimensat(rustix::fs::CWD, to, &times, rustix::fs::AtFlags::empty())?;
    Ok(())
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
/// (`agent-tui-scratch-<key>`) unless another copy of the root is there
/// now, else a new one.
fn new_dir(parent: &Path, key: &str) -> io::Result<Folder> {
    private(parent)?;
    if let Some(folder) = claim(&parent.join(format!("agent-tui-scratch-{key}"))) {
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

/// `path` as this copy's folder, locked and emptied of what a copy that
/// did not end left there; `None` while another copy holds it.
fn claim(path: &Path) -> Option<Folder> {
    match std::fs::DirBuilder::new().mode(0o700).create(path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(_) => return None,
    }
    let lock = std::fs::File::open(path).ok()?;
    lock.try_lock().ok()?;
    // Still the folder at that path (not one removed meanwhile), a folder.
    let (now, held) = (std::fs::symlink_metadata(path).ok()?, lock.metadata().ok()?);
    if !now.is_dir() || now.ino() != held.ino() || now.dev() != held.dev() {
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
    let written = Written::load(PathBuf::from(format!("{}.written", path.display())));
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
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(parent)?;
    let meta = std::fs::symlink_metadata(parent)?;
    if !meta.is_dir() || meta.uid() != nix::unistd::getuid().as_raw() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} is not a folder of this user's", parent.display()),
        ));
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(parent, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Whether `bytes` of files fit in a quarter of the free space at `dir`
/// (or, not made yet, its parent).
fn fits(dir: &Path, bytes: u64) -> bool {
    let at = if dir.exists() {
        dir
    } else {
        dir.parent().unwrap_or(dir)
    };
    nix::sys::statvfs::statvfs(at).is_ok_and(|v| {
        let free = v.blocks_available().saturating_mul(v.fragment_size());
        bytes < free / 4
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

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
        assert!(!c.join(".git").exists(), ".git stays out");
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
        s.remove().unwrap();
        assert!(!c.exists(), "removed");
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
}
