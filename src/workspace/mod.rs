//! The agent root: every path a tool receives is resolved here, and the
//! walking, searching and text decoding the tools need live beside it.

mod changes;
mod live;
mod sandbox;
mod search;
mod suggest;
mod text;
mod walk;

pub use changes::{ChangeKind, Changed, Stat, TreeStat};
pub use live::LiveTree;
pub use sandbox::{MAX_COMPONENT_BYTES, MAX_PATH_BYTES, Resolved, SandboxError};
pub use search::{SearchHit, SearchOptions, SearchOutcome, search};
pub use suggest::close_matches;
pub use text::{DecodeError, ReadRange, TextSlice, read_text_range, sha256_hex};
pub use walk::{Entry, EntryKind, ListOutcome, PathFilter, list};

use std::path::{Path, PathBuf};

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
        Ok(Workspace { root })
    }

    /// The canonical root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a tool path (relative to the root) through the sandbox.
    pub fn resolve(&self, input: &str) -> Result<Resolved, SandboxError> {
        sandbox::resolve(&self.root, input)
    }
}
