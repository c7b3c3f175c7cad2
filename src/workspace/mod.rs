//! The agent root: every path a tool receives is resolved here, and the
//! walking, searching and text decoding the tools need live beside it.

mod changes;
mod files;
mod handle_walk;
mod live;
mod sandbox;
mod scope;
mod scratch;
mod scratch_written;
mod search;
mod suggest;
mod text;
mod tree_key;
mod walk;

pub use changes::{ChangeKind, Changed, Stat, TreeStat};
pub use files::{FileWrite, RootDir, TEMP_PREFIX};
pub use handle_walk::{Met, walk as walk_beneath};
pub use live::LiveTree;
pub use sandbox::{MAX_COMPONENT_BYTES, MAX_PATH_BYTES, Resolved, SandboxError};
pub use scope::{Access, Scope, ScopeError, ScopeSpec, expand_home};
pub use scratch::{CopyKind, Scratch};
pub use search::{SearchHit, SearchOptions, SearchOutcome, SkipFile, search};
pub use suggest::close_matches;
pub use text::{DecodeError, ReadRange, TextSlice, read_text_range, sha256_hex};
pub use tree_key::{tree_key, tree_stamp};
pub use walk::{Entry, EntryKind, ListOutcome, PathFilter, each_file, list, list_all};
pub(crate) use walk::{rel_of, walker};

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
    #[error(transparent)]
    Scope(#[from] ScopeError),
}

/// An opened agent root and the scopes added beside it. Each folder is
/// canonicalized once; every lookup after that checks the live file system,
/// so files created later resolve too.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// `scopes[0]` is the agent root; the rest were added (`--add-dir`).
    scopes: Arc<Vec<Scope>>,
}

impl Workspace {
    /// The agent root alone.
    pub fn open(path: &Path) -> Result<Workspace, WorkspaceError> {
        Workspace::open_scoped(path, &[])
    }

    /// The agent root and the extra roots of `extras`.
    pub fn open_scoped(path: &Path, extras: &[ScopeSpec]) -> Result<Workspace, WorkspaceError> {
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
        let primary = Scope::open(scope::PRIMARY.to_string(), root.clone(), Access::ReadWrite)
            .map_err(|e| match e {
                ScopeError::Io { source, .. } => WorkspaceError::Io {
                    path: path.to_path_buf(),
                    source,
                },
                other => WorkspaceError::Scope(other),
            })?;
        let mut scopes = vec![primary];
        scopes.extend(scope::open_extras(&root, extras)?);
        Ok(Workspace {
            scopes: Arc::new(scopes),
        })
    }

    /// The canonical agent root.
    pub fn root(&self) -> &Path {
        &self.scopes[0].root
    }

    /// Every scope, the agent root first.
    pub fn scopes(&self) -> &[Scope] {
        &self.scopes
    }

    /// Every scope's folder, the agent root's first (what a confined hook
    /// may read).
    pub fn scope_roots(&self) -> Vec<&Path> {
        self.scopes.iter().map(|s| s.root.as_path()).collect()
    }

    /// Each scope's own folder, resolved, the agent root's first: where
    /// walks over every scope start.
    pub fn scope_starts(&self) -> Vec<Resolved> {
        self.scopes
            .iter()
            .enumerate()
            .map(|(i, s)| Resolved {
                rel: s.spell(""),
                abs: s.root.clone(),
                scope: i,
                inner: String::new(),
            })
            .collect()
    }

    /// The folders of the scopes nested in scope `index` (walked as
    /// themselves, so a walk of `index` skips them).
    pub fn nested_in(&self, index: usize) -> Vec<PathBuf> {
        let outer = &self.scope_at(index).root;
        self.scopes
            .iter()
            .filter(|s| s.root != *outer && s.root.starts_with(outer))
            .map(|s| s.root.clone())
            .collect()
    }

    /// Scope `index` (the agent root for an index out of range).
    fn scope_at(&self, index: usize) -> &Scope {
        self.scopes.get(index).unwrap_or(&self.scopes[0])
    }

    /// The scope a resolved path belongs to.
    pub fn scope_of(&self, at: &Resolved) -> &Scope {
        self.scope_at(at.scope)
    }

    /// Resolves a tool path: relative to the agent root, or `@scope/…`.
    pub fn resolve(&self, input: &str) -> Result<Resolved, SandboxError> {
        let (index, rest) = self.split_scope(input)?;
        let scope = &self.scopes[index];
        let (inner, abs) = sandbox::resolve(&scope.root, rest).map_err(|e| match e {
            SandboxError::Absolute { input, .. } => SandboxError::Absolute {
                suggestion: self.spell_abs(Path::new(&input)),
                input,
            },
            SandboxError::Escapes(_) if !scope.primary() => SandboxError::EscapesScope {
                input: input.to_string(),
                scope: scope.id.clone(),
            },
            SandboxError::SymlinkOutside { link, target, .. } if !scope.primary() => {
                SandboxError::SymlinkOutside {
                    link: scope.spell(&link),
                    target,
                    within: format!("the scope `{scope}`"),
                }
            }
            other => other,
        })?;
        // A path may lead into a scope nested inside this one: it belongs there.
        let owner = self.owner(&abs).unwrap_or(index);
        let inner = if owner == index {
            inner
        } else {
            rel_string(abs.strip_prefix(&self.scopes[owner].root).unwrap_or(&abs))
        };
        Ok(Resolved {
            rel: self.scopes[owner].spell(&inner),
            abs,
            scope: owner,
            inner,
        })
    }

    /// A path as a checkpoint recorded it: `scope_root` (the folder of its
    /// scope, kept for paths outside the agent root) picks the scope by its
    /// folder, whatever its id is in this run.
    pub fn resolve_recorded(
        &self,
        path: &str,
        scope_root: Option<&str>,
    ) -> Result<Resolved, SandboxError> {
        let Some(folder) = scope_root else {
            return self.resolve(path);
        };
        let inner = path
            .strip_prefix('@')
            .and_then(|t| t.split_once('/'))
            .map_or("", |(_, rest)| rest);
        match self.scopes.iter().find(|s| s.root == Path::new(folder)) {
            Some(scope) => self.resolve(&scope.spell(inner)),
            None => Err(SandboxError::ScopeGone {
                path: path.to_string(),
                root: folder.to_string(),
            }),
        }
    }

    /// What a checkpoint keeps of the scope of `abs`: its folder, for a
    /// scope other than the agent root.
    pub fn recorded_root(&self, abs: &Path) -> Option<String> {
        let scope = &self.scopes[self.owner(abs)?];
        (!scope.primary()).then(|| scope.root.display().to_string())
    }

    /// Resolves a path that is to be written: its scope must be writable.
    pub fn resolve_writable(&self, input: &str) -> Result<Resolved, SandboxError> {
        let at = self.resolve(input)?;
        self.check_writable(&at)?;
        Ok(at)
    }

    /// Refuses a resolved path in a read-only scope.
    pub fn check_writable(&self, at: &Resolved) -> Result<(), SandboxError> {
        let scope = self.scope_of(at);
        match scope.access {
            Access::ReadWrite => Ok(()),
            Access::ReadOnly => Err(SandboxError::ReadOnly {
                path: at.display().to_string(),
                scope: scope.id.clone(),
                root: scope.root.display().to_string(),
            }),
        }
    }

    /// The scope named by a leading `@id/` (index, rest of the path).
    fn split_scope<'a>(&self, input: &'a str) -> Result<(usize, &'a str), SandboxError> {
        let Some(tail) = input.strip_prefix('@') else {
            return Ok((0, input));
        };
        let (id, rest) = match tail.find(['/', '\\']) {
            Some(at) => (&tail[..at], &tail[at + 1..]),
            None => (tail, ""),
        };
        if let Some(i) = self.scopes.iter().position(|s| s.id == id) {
            return Ok((i, rest));
        }
        // A real file or folder of the root whose name starts with `@`.
        let first = input.split(['/', '\\']).next().unwrap_or(input);
        if self.root().join(first).symlink_metadata().is_ok() {
            return Ok((0, input));
        }
        Err(SandboxError::UnknownScope {
            id: format!("@{id}"),
            known: self
                .scopes
                .iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(", "),
        })
    }

    /// The innermost scope whose folder holds `abs`.
    fn owner(&self, abs: &Path) -> Option<usize> {
        self.scopes
            .iter()
            .enumerate()
            .filter(|(_, s)| abs.starts_with(&s.root))
            .max_by_key(|(_, s)| s.root.components().count())
            .map(|(i, _)| i)
    }

    /// An absolute path inside some scope, as tools spell it.
    pub fn spell_abs(&self, abs: &Path) -> Option<String> {
        let owner = self.owner(abs)?;
        let scope = &self.scopes[owner];
        let inside = abs.strip_prefix(&scope.root).ok()?;
        if inside
            .components()
            .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            return None;
        }
        let spelled = scope.spell(&rel_string(inside));
        Some(if spelled.is_empty() {
            ".".into()
        } else {
            spelled
        })
    }

    /// `abs` (a resolved path) beneath its scope's handle, and that handle.
    fn locate<'a>(&self, abs: &'a Path) -> (&RootDir, &'a Path) {
        let Some(owner) = self.owner(abs) else {
            // Not under any scope: no handle-relative path reaches it.
            return (&self.scopes[0].dir, Path::new("/"));
        };
        let scope = &self.scopes[owner];
        let beneath = match abs.strip_prefix(&scope.root) {
            Ok(p) if p.as_os_str().is_empty() => Path::new("."),
            Ok(p) => p,
            Err(_) => Path::new("/"),
        };
        (&scope.dir, beneath)
    }

    /// `abs` (a resolved path) as the path beneath its scope's handle.
    pub fn beneath<'a>(&self, abs: &'a Path) -> &'a Path {
        self.locate(abs).1
    }

    /// The directory handle of a scope.
    pub fn scope_dir(&self, index: usize) -> &RootDir {
        &self.scope_at(index).dir
    }

    /// Opens a resolved file for reading, beneath its scope.
    pub fn open_file(&self, at: &Resolved) -> io::Result<std::fs::File> {
        let (dir, beneath) = self.locate(&at.abs);
        dir.open_file(beneath)
    }

    /// A resolved file's bytes (`None`: it does not exist), read beneath its scope.
    pub fn read_opt(&self, at: &Resolved) -> io::Result<Option<Vec<u8>>> {
        self.read_abs(&at.abs)
    }

    /// The bytes of `abs` (a resolved path), read beneath its scope.
    pub fn read_abs(&self, abs: &Path) -> io::Result<Option<Vec<u8>>> {
        let (dir, beneath) = self.locate(abs);
        dir.read_opt(beneath)
    }

    /// Metadata of a resolved path (links inside its scope followed).
    pub fn metadata(&self, at: &Resolved) -> io::Result<cap_std::fs::Metadata> {
        let (dir, beneath) = self.locate(&at.abs);
        dir.metadata(beneath)
    }

    /// Replaces (`Some`) or removes (`None`) each file, given by its
    /// resolved absolute path, durably and beneath its scope's handle: one
    /// batch per scope.
    pub fn write_files(&self, writes: &[PathWrite]) -> io::Result<()> {
        // Each write's scope, checked before anything is written.
        let mut batches: Vec<Vec<FileWrite>> = vec![Vec::new(); self.scopes.len()];
        for (abs, bytes, mode) in writes {
            let Some(index) = self.owner(abs) else {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!("`{}` is outside every scope", abs.display()),
                ));
            };
            let scope = &self.scopes[index];
            if scope.access == Access::ReadOnly {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!("the scope `{scope}` is read-only"),
                ));
            }
            let beneath = abs.strip_prefix(&scope.root).unwrap_or(Path::new("/"));
            batches[index].push(FileWrite {
                beneath,
                bytes: *bytes,
                mode: *mode,
            });
        }
        for (scope, batch) in self.scopes.iter().zip(&batches) {
            if !batch.is_empty() {
                scope.dir.write_all(batch)?;
            }
        }
        Ok(())
    }
}

/// One write of `write_files`: a resolved path, its new bytes (`None`:
/// remove it) and the permission bits to give it (`None`: its own).
pub type PathWrite<'a> = (&'a Path, Option<&'a [u8]>, Option<u32>);

/// A relative path as a `/`-separated string.
fn rel_string(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}
