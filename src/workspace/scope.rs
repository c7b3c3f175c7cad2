//! Scopes (SPEC 14): the agent root (`@root`) and the folders added with
//! `--add-dir DIR[:rw]` or `[workspace] extra_roots`, each with an id
//! (`@<folder name>`, `-2`, `-3` … when names repeat) and an access.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use thiserror::Error;

use super::RootDir;

/// What tools may do in a scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    ReadOnly,
    ReadWrite,
}

impl Access {
    pub fn as_str(self) -> &'static str {
        match self {
            Access::ReadOnly => "read_only",
            Access::ReadWrite => "read_write",
        }
    }
}

/// An extra root as the user gave it: `DIR`, `DIR:ro` or `DIR:rw`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeSpec {
    pub path: PathBuf,
    pub access: Access,
}

impl ScopeSpec {
    /// Parses `DIR[:rw|:ro]`; a relative `DIR` is taken relative to `base`,
    /// and `~/` is the home folder.
    pub fn parse(text: &str, base: &Path) -> Result<ScopeSpec, ScopeError> {
        let (path, access) = if let Some(p) = text.strip_suffix(":rw") {
            (p, Access::ReadWrite)
        } else if let Some(p) = text.strip_suffix(":ro") {
            (p, Access::ReadOnly)
        } else {
            (text, Access::ReadOnly)
        };
        if path.is_empty() {
            return Err(ScopeError::Empty(text.to_string()));
        }
        Ok(ScopeSpec {
            path: base.join(expand_home(path)),
            access,
        })
    }
}

/// `~` and `~/x` in the home folder (`$HOME`); any other path as given.
pub fn expand_home(path: &str) -> PathBuf {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty());
    match (path.strip_prefix('~'), home) {
        (Some(""), Some(home)) => PathBuf::from(home),
        (Some(rest), Some(home)) if rest.starts_with('/') => {
            PathBuf::from(home).join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(path),
    }
}

#[derive(Debug, Error)]
pub enum ScopeError {
    #[error("`{0}` names no folder; give `--add-dir DIR` or `--add-dir DIR:rw`")]
    Empty(String),
    #[error("added folder `{0}` does not exist")]
    Missing(PathBuf),
    #[error("added folder `{0}` is not a directory")]
    NotADirectory(PathBuf),
    #[error(
        "added folder `{0}` is inside `.git/`, which tools may not touch; the git tools read the repository"
    )]
    GitInternal(PathBuf),
    #[error("cannot open added folder `{path}`: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// One opened scope.
#[derive(Debug, Clone)]
pub struct Scope {
    /// Without the `@`: `root` for the agent root.
    pub id: String,
    /// Canonical folder.
    pub root: PathBuf,
    pub access: Access,
    pub(super) dir: Arc<RootDir>,
}

impl Scope {
    pub(super) fn open(id: String, root: PathBuf, access: Access) -> Result<Scope, ScopeError> {
        let dir = RootDir::open(&root).map_err(|source| ScopeError::Io {
            path: root.clone(),
            source,
        })?;
        Ok(Scope {
            id,
            root,
            access,
            dir: Arc::new(dir),
        })
    }

    /// Whether this is the agent root.
    pub fn primary(&self) -> bool {
        self.id == PRIMARY
    }

    /// `rel` (relative to this scope's folder) as tools spell it: plain for
    /// the agent root, `@id/rel` (or `@id`) for the others.
    pub fn spell(&self, rel: &str) -> String {
        match (self.primary(), rel.is_empty()) {
            (true, _) => rel.to_string(),
            (false, true) => format!("@{}", self.id),
            (false, false) => format!("@{}/{}", self.id, rel),
        }
    }

    /// The prefix of this scope's paths (`""` or `@id/`).
    pub fn prefix(&self) -> String {
        if self.primary() {
            String::new()
        } else {
            format!("@{}/", self.id)
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "@{}", self.id)
    }
}

/// The agent root's id.
pub const PRIMARY: &str = "root";

/// Canonicalizes each spec, merges repeats (read-write wins) and drops the
/// agent root itself; gives the scopes after the primary one their ids.
pub(super) fn open_extras(primary: &Path, specs: &[ScopeSpec]) -> Result<Vec<Scope>, ScopeError> {
    let mut merged: Vec<(PathBuf, Access)> = Vec::new();
    for spec in specs {
        let canonical = std::fs::canonicalize(&spec.path).map_err(|source| {
            if source.kind() == std::io::ErrorKind::NotFound {
                ScopeError::Missing(spec.path.clone())
            } else {
                ScopeError::Io {
                    path: spec.path.clone(),
                    source,
                }
            }
        })?;
        if !canonical.is_dir() {
            return Err(ScopeError::NotADirectory(spec.path.clone()));
        }
        if canonical
            .components()
            .any(|c| c.as_os_str().eq_ignore_ascii_case(".git"))
        {
            return Err(ScopeError::GitInternal(spec.path.clone()));
        }
        if canonical == primary {
            continue;
        }
        match merged.iter_mut().find(|(p, _)| *p == canonical) {
            Some((_, access)) if spec.access == Access::ReadWrite => *access = Access::ReadWrite,
            Some(_) => {}
            None => merged.push((canonical, spec.access)),
        }
    }
    let mut taken: Vec<String> = vec![PRIMARY.to_string()];
    let mut scopes = Vec::with_capacity(merged.len());
    for (root, access) in merged {
        let name = root
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "fs".to_string());
        let mut id = name.clone();
        let mut n = 2;
        while taken.iter().any(|t| t.eq_ignore_ascii_case(&id)) {
            id = format!("{name}-{n}");
            n += 1;
        }
        taken.push(id.clone());
        scopes.push(Scope::open(id, root, access)?);
    }
    Ok(scopes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(unix)]
    fn the_home_folder_is_spelled_with_a_tilde() {
        let home = PathBuf::from(std::env::var_os("HOME").unwrap());
        assert_eq!(expand_home("~/src/x"), home.join("src/x"));
        assert_eq!(expand_home("~"), home);
        assert_eq!(expand_home("~bob/x"), Path::new("~bob/x"));
        assert_eq!(expand_home("a/~"), Path::new("a/~"));
        assert_eq!(
            ScopeSpec::parse("~/sdk:rw", Path::new("/b")).unwrap().path,
            home.join("sdk")
        );
    }

    #[test]
    fn parses_access_suffixes() {
        let base = Path::new("/b");
        let s = ScopeSpec::parse("../lib:rw", base).unwrap();
        assert_eq!(s.path, Path::new("/b/../lib"));
        assert_eq!(s.access, Access::ReadWrite);
        assert_eq!(
            ScopeSpec::parse("/x/docs", base).unwrap().access,
            Access::ReadOnly
        );
        assert_eq!(
            ScopeSpec::parse("/x/docs:ro", base).unwrap().path,
            Path::new("/x/docs")
        );
        assert!(ScopeSpec::parse(":rw", base).is_err());
    }

    #[test]
    fn ids_follow_folder_names_and_repeat_with_suffixes() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().canonicalize().unwrap();
        for d in ["p", "a/docs", "b/docs", "c/root"] {
            std::fs::create_dir_all(top.join(d)).unwrap();
        }
        let spec = |p: &str, access| ScopeSpec {
            path: top.join(p),
            access,
        };
        let scopes = open_extras(
            &top.join("p"),
            &[
                spec("a/docs", Access::ReadOnly),
                spec("b/docs", Access::ReadOnly),
                spec("c/root", Access::ReadOnly),
                spec("a/docs", Access::ReadWrite),
                spec("p", Access::ReadOnly),
            ],
        )
        .unwrap();
        let ids: Vec<(&str, Access)> = scopes.iter().map(|s| (s.id.as_str(), s.access)).collect();
        assert_eq!(
            ids,
            [
                ("docs", Access::ReadWrite),
                ("docs-2", Access::ReadOnly),
                ("root-2", Access::ReadOnly)
            ]
        );
        assert!(matches!(
            open_extras(&top.join("p"), &[spec("nope", Access::ReadOnly)]),
            Err(ScopeError::Missing(_))
        ));
    }
}
