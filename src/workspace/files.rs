//! File operations under the agent root through directory handles: every
//! open, create, rename and delete is resolved by the kernel beneath the
//! root's handle (openat2 `RESOLVE_BENEATH`, via cap-std), so a folder
//! swapped for a symlink between a check and a use cannot redirect it
//! outside. Writes are durable: temp file, fsync, rename, fsync of the folder.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use cap_std::fs::{Dir, OpenOptions};

/// Prefix of the temp files a write leaves only if it is interrupted.
pub const TEMP_PREFIX: &str = ".agent-tui-";

/// One file to replace (`Some` bytes) or remove (`None`), by its path
/// beneath the root.
#[derive(Debug, Clone, Copy)]
pub struct FileWrite<'a> {
    pub beneath: &'a Path,
    pub bytes: Option<&'a [u8]>,
    /// Permission bits to give it (`None`: its own, or rw-r--r-- if new).
    pub mode: Option<u32>,
}

/// The root's directory handle.
#[derive(Debug)]
pub struct RootDir {
    dir: Dir,
}

/// `path` split into its folder beneath the root (`.` for the root) and
/// its last component.
fn split(path: &Path) -> io::Result<(PathBuf, &std::ffi::OsStr)> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"))?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((parent, name))
}

/// cap-std's refusal of a path that leaves the root, in our words.
fn explain(e: io::Error) -> io::Error {
    if e.to_string().contains("led outside of the filesystem") {
        io::Error::new(
            e.kind(),
            "the path leads outside the agent root (a folder on it is, or just became, a link out of it)",
        )
    } else {
        e
    }
}

impl RootDir {
    pub fn open(root: &Path) -> io::Result<RootDir> {
        Ok(RootDir {
            dir: Dir::open_ambient_dir(root, cap_std::ambient_authority())?,
        })
    }

    /// Opens a file for reading (never blocking on a FIFO); check what it
    /// is with the handle's own metadata.
    pub fn open_file(&self, beneath: &Path) -> io::Result<std::fs::File> {
        let mut options = OpenOptions::new();
        crate::platform::fs::no_block(options.read(true));
        Ok(self
            .dir
            .open_with(beneath, &options)
            .map_err(explain)?
            .into_std())
    }

    /// The file's bytes; `None` when it does not exist.
    pub fn read_opt(&self, beneath: &Path) -> io::Result<Option<Vec<u8>>> {
        match self.dir.read(beneath) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(explain(e)),
        }
    }

    /// Metadata, following symlinks that stay beneath the root.
    pub fn metadata(&self, beneath: &Path) -> io::Result<cap_std::fs::Metadata> {
        self.dir.metadata(beneath).map_err(explain)
    }

    /// A folder beneath the root, as a handle of its own.
    pub fn open_dir(&self, beneath: &Path) -> io::Result<Dir> {
        if beneath.as_os_str().is_empty() {
            return self.dir.try_clone();
        }
        self.dir.open_dir(beneath).map_err(explain)
    }

    /// Replaces or removes every file in `writes`, durably: all temp files
    /// written and synced first (two threads), then each renamed into
    /// place (or unlinked), then each folder synced once.
    pub fn write_all(&self, writes: &[FileWrite]) -> io::Result<()> {
        let mut dirs: BTreeMap<PathBuf, Dir> = BTreeMap::new();
        let mut staged = Vec::with_capacity(writes.len());
        let result = self.stage(writes, &mut dirs, &mut staged).map_err(explain);
        if let Err(e) = result.and_then(|()| sync_files(&staged)) {
            discard(&dirs, &staged);
            return Err(e);
        }
        // `staged[left..]`: the temp files not renamed yet (in write order).
        let mut left = 0;
        for (i, w) in writes.iter().enumerate() {
            let (parent, name) = split(w.beneath)?;
            let dir = dirs
                .get(&parent)
                .ok_or_else(|| io::Error::other("folder handle missing"))?;
            let temp = staged.get(left).filter(|s| s.index == i);
            let done = match temp {
                Some(s) => dir.rename(&s.temp, dir, name),
                None => match dir.remove_file(name) {
                    Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                    other => other,
                },
            };
            if let Err(e) = done {
                discard(&dirs, &staged[left..]);
                return Err(e);
            }
            left += usize::from(temp.is_some());
        }
        for dir in dirs.values() {
            sync_dir(dir)?;
        }
        Ok(())
    }

    /// Opens each write's folder (creating missing ones durably) and writes
    /// its temp file.
    fn stage(
        &self,
        writes: &[FileWrite],
        dirs: &mut BTreeMap<PathBuf, Dir>,
        staged: &mut Vec<Staged>,
    ) -> io::Result<()> {
        for (index, w) in writes.iter().enumerate() {
            let (parent, name) = split(w.beneath)?;
            if !dirs.contains_key(&parent) {
                let dir = match (self.open_dir(&parent), w.bytes) {
                    (Ok(d), _) => d,
                    (Err(e), Some(_)) if e.kind() == io::ErrorKind::NotFound => {
                        self.create_dirs(&parent)?
                    }
                    (Err(e), _) => return Err(e),
                };
                dirs.insert(parent.clone(), dir);
            }
            let Some(bytes) = w.bytes else { continue };
            let dir = dirs
                .get(&parent)
                .ok_or_else(|| io::Error::other("folder handle missing"))?;
            let mode = match (w.mode, dir.symlink_metadata(name)) {
                (Some(mode), _) => mode & 0o7777,
                (None, Ok(m)) if m.is_file() => crate::platform::fs::cap_mode(&m),
                // New files: the usual rw-r--r--.
                (None, _) => 0o644,
            };
            let (temp, file) = create_temp(dir)?;
            let file = file.into_std();
            staged.push(Staged {
                index,
                parent,
                temp,
                file,
            });
            let s = staged.last_mut().ok_or_else(|| io::Error::other("empty"))?;
            s.file.write_all(bytes)?;
            crate::platform::fs::set_file_mode(&s.file, mode)?;
        }
        Ok(())
    }

    /// Creates `path`'s missing folders one component at a time (each
    /// beneath the last handle), syncing the folder each is created in.
    fn create_dirs(&self, path: &Path) -> io::Result<Dir> {
        let mut at = self.dir.try_clone()?;
        for part in path.components() {
            let part = part.as_os_str();
            if part == "." {
                continue;
            }
            at = match at.open_dir(part) {
                Ok(d) => d,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    match at.create_dir(part) {
                        Ok(()) => {}
                        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                        Err(e) => return Err(e),
                    }
                    sync_dir(&at)?;
                    at.open_dir(part)?
                }
                Err(e) => return Err(e),
            };
        }
        Ok(at)
    }

    /// Removes leftover temp files of an interrupted write in `folder`.
    pub fn remove_temps(&self, folder: &Path) -> io::Result<usize> {
        let dir = match self.open_dir(folder) {
            Ok(d) => d,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(e),
        };
        let mut removed = 0;
        for entry in dir.entries()? {
            let name = entry?.file_name();
            let text = name.to_string_lossy();
            if text.starts_with(TEMP_PREFIX) && text.ends_with(".tmp") {
                dir.remove_file(&name)?;
                removed += 1;
            }
        }
        if removed > 0 {
            sync_dir(&dir)?;
        }
        Ok(removed)
    }
}

/// Makes a folder's entries durable. Folder handles are `O_PATH` (which
/// cannot be synced), so the folder is opened for reading through it.
fn sync_dir(dir: &Dir) -> io::Result<()> {
    crate::platform::fs::sync_dir(dir)
}

/// A temp file written for `writes[index]`, not yet renamed.
struct Staged {
    index: usize,
    parent: PathBuf,
    temp: String,
    file: std::fs::File,
}

fn create_temp(dir: &Dir) -> io::Result<(String, cap_std::fs::File)> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    for _ in 0..16 {
        let name = format!("{TEMP_PREFIX}{:016x}.tmp", fastrand::u64(..));
        match dir.open_with(&name, &options) {
            Ok(file) => return Ok((name, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("cannot create a temp file"))
}

/// The bytes of every temp file reach the disk before any name points at
/// them. Each fsync mostly waits on the device, so up to eight run at once.
fn sync_files(staged: &[Staged]) -> io::Result<()> {
    let per = staged.len().div_ceil(8).max(1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = staged
            .chunks(per)
            .map(|part| scope.spawn(move || part.iter().try_for_each(|s| s.file.sync_all())))
            .collect();
        handles.into_iter().try_for_each(|h| {
            h.join()
                .unwrap_or_else(|_| Err(io::Error::other("sync thread panicked")))
        })
    })
}

/// Removes the temp files of a write that failed (best effort).
fn discard(dirs: &BTreeMap<PathBuf, Dir>, staged: &[Staged]) {
    for s in staged {
        if let Some(dir) = dirs.get(&s.parent) {
            let _ = dir.remove_file(&s.temp);
        }
    }
}
