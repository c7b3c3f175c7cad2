//! The agent root: every path a tool receives is resolved here, and the
//! walking, searching and text decoding the tools need live beside it.

mod changes;
mod files;
mod handle_walk;
mod live;
mod sandbox;
mod search;
mod suggest;
mod text;
mod walk;

pub use changes::{ChangeKind, Changed, Stat, TreeStat};
pub use files::{FileWrite, RootDir, TEMP_PREFIX};
pub use handle_walk::{Met, walk as walk_beneath};
pub use live::LiveTree;
pub use sandbox::{MAX_COMPONENT_BYTES, MAX_PATH_BYTES, Resolved, SandboxError};
pub use search::{SearchHit, SearchOptions, SearchOutcome, search};
pub use suggest::close_matches;
pub use text::{DecodeError, ReadRange, TextSlice, read_text_range, sha256_hex};
pub use walk::{Entry, EntryKind, ListOutcome, PathFilter, list};

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use thiserror::Error;

#[derive(Debug, Error)]
pub enum WorkspaceError {
    #[error("agent root `{path}` does not exist")]
    Missing { path: PathBuf },
    #[error("agent root `{path}` is not a directory")]
    NotADirectory { path: PathBuf },
    #[error("cannot open agent root `{path}`: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// An opened agent root. The root is canonicalized once; every lookup after
/// that checks the live file system, so files created later resolve too.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
    /// The root's directory handle: every file operation goes through it.
    dir: Arc<RootDir>,
}

impl Workspace {
    pub fn open(path: &Path) -> Result<Workspace, WorkspaceError> {
        let root = std::fs::canonicalize(path).map_err(|source| {
            if source.kind() == std::io::ErrorKind::NotFound {
                WorkspaceError::Missing {
                    path: path.to_path_buf(),
                }
            } else {
                WorkspaceError::Io {
                    path: path.to_path_buf(),
                    source,
                }
            }
        })?;
        if !root.is_dir() {
            return Err(WorkspaceError::NotADirectory {
                path: path.to_path_buf(),
            });
        }
        let dir = RootDir::open(&root).map_err(|source| WorkspaceError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Workspace {
            root,
            dir: Arc::new(dir),
        })
    }

    /// The canonical root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a tool path (relative to the root) through the sandbox.
    pub fn resolve(&self, input: &str) -> Result<Resolved, SandboxError> {
        sandbox::resolve(&self.root, input)
    }

    /// `abs` (a resolved path) as the path beneath the root's handle.
    pub fn beneath<'a>(&self, abs: &'a Path) -> &'a Path {
        match abs.strip_prefix(&self.root) {
            Ok(p) if p.as_os_str().is_empty() => Path::new("."),
            Ok(p) => p,
            // Not under the root: no handle-relative path reaches it.
            Err(_) => Path::new("/"),
        }
    }

    /// The root's directory handle, for walks.
    pub fn dir(&self) -> &RootDir {
        &self.dir
    }

    /// Opens a resolved file for reading, beneath the root.
    pub fn open_file(&self, at: &Resolved) -> io::Result<std::fs::File> {
        self.dir.open_file(self.beneath(&at.abs))
    }

    /// A resolved file's bytes (`None`: it does not exist), read beneath the root.
    pub fn read_opt(&self, at: &Resolved) -> io::Result<Option<Vec<u8>>> {
        self.read_abs(&at.abs)
    }

    /// The bytes of `abs` (a resolved path), read beneath the root.
    pub fn read_abs(&self, abs: &Path) -> io::Result<Option<Vec<u8>>> {
        self.dir.read_opt(self.beneath(abs))
    }

    /// Metadata of a resolved path (links inside the root followed).
    pub fn metadata(&self, at: &Resolved) -> io::Result<cap_std::fs::Metadata> {
        self.dir.metadata(self.beneath(&at.abs))
    }

    /// Replaces (`Some`) or removes (`None`) each file, given by its
    /// resolved absolute path, durably and beneath the root.
    pub fn write_files(&self, writes: &[(&Path, Option<&[u8]>)]) -> io::Result<()> {
        let writes: Vec<FileWrite> = writes
            .iter()
            .map(|(abs, bytes)| FileWrite {
                beneath: self.beneath(abs),
                bytes: *bytes,
            })
            .collect();
        self.dir.write_all(&writes)
    }
}
