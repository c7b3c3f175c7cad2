//! The one gate every tool path goes through: lexical checks, then a
//! component-by-component walk that follows symlinks only while they stay
//! inside the agent root.

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use thiserror::Error;

/// Longest path we accept, in bytes (Linux PATH_MAX).
pub const MAX_PATH_BYTES: usize = 4096;
/// Longest single path component, in bytes (NAME_MAX).
pub const MAX_COMPONENT_BYTES: usize = 255;

/// A path that passed the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The path as tools spell it, `/`-separated: relative to the agent
    /// root (`""` is the root), or `@scope/…` in another scope.
    pub rel: String,
    /// Where it really lives on disk (symlinks inside its scope followed).
    pub abs: PathBuf,
    /// The scope it belongs to (an index into `Workspace::scopes`; 0 is
    /// the agent root): the innermost one holding `abs`.
    pub scope: usize,
    /// Relative to that scope's folder; `""` is the scope's folder.
    pub inner: String,
}

impl Resolved {
    /// The path as tools report it: `rel`, or `.` for the root itself.
    pub fn display(&self) -> &str {
        if self.rel.is_empty() { "." } else { &self.rel }
    }
}

#[derive(Debug, Error)]
pub enum SandboxError {
    #[error("path contains a NUL byte; give a plain relative path such as `src/main.rs`")]
    NulByte,
    #[error(
        "path `{0}` contains a control character; give a plain relative path such as `src/main.rs`"
    )]
    ControlChar(String),
    #[error("path is {len} bytes long, over the limit of {max}; use a shorter path")]
    TooLong { len: usize, max: usize },
    #[error(
        "path component `{0}…` is longer than {MAX_COMPONENT_BYTES} bytes; no file can have that name"
    )]
    ComponentTooLong(String),
    #[error("`{input}` is an absolute path; paths are relative to the agent root{}",
        match suggestion { Some(s) => format!(": use `{s}`"), None => ", e.g. `src/main.rs`, and nothing outside the root can be reached".to_string() })]
    Absolute {
        input: String,
        suggestion: Option<String>,
    },
    #[error(
        "`{0}` starts with `~`, which is not expanded; paths are relative to the agent root, e.g. `src/main.rs`"
    )]
    HomeRelative(String),
    #[error(
        "`{0}` looks like a URL; tools take paths relative to the agent root, e.g. `src/main.rs`"
    )]
    Url(String),
    #[error(
        "`{0}` climbs out of the agent root (a `..` above it); only files inside the root can be used"
    )]
    Escapes(String),
    #[error(
        "`{input}` leaves the scope `@{scope}` through `..`; only files inside a scope can be used (list_scopes shows them)"
    )]
    EscapesScope { input: String, scope: String },
    #[error(
        "`{id}` is not a scope; the scopes are {known} (list_scopes shows each with its folder and access)"
    )]
    UnknownScope { id: String, known: String },
    #[error(
        "`{path}` lives in `{root}`, which is not a scope of this run; start agent-tui with `--add-dir {root}:rw` to reach it"
    )]
    ScopeGone { path: String, root: String },
    #[error(
        "`{path}` is in the read-only scope `@{scope}` ({root}); nothing there may be written. Propose the change in a writable scope, or ask the user to add the folder with `--add-dir {root}:rw`"
    )]
    ReadOnly {
        path: String,
        scope: String,
        root: String,
    },
    #[error(
        "`{0}` is inside `.git/`, which tools may not touch; use git_status, git_diff or git_log for repository state"
    )]
    GitInternal(String),
    #[error(
        "`{link}` is a symbolic link to `{target}`, outside {within}; only files inside it can be used"
    )]
    SymlinkOutside {
        link: String,
        target: String,
        within: String,
    },
    #[error(
        "`{link}` is a symbolic link that cannot be followed (its target is missing or it loops); use list_files to see what exists"
    )]
    SymlinkBroken { link: String },
    #[error("`{input}`: `{name}` {why}; give the file's plain name")]
    WindowsName {
        input: String,
        name: String,
        why: &'static str,
    },
    #[error("cannot inspect `{path}`: {source}")]
    Io { path: String, source: io::Error },
}

impl SandboxError {
    /// Stable error code for JSON results.
    pub fn code(&self) -> &'static str {
        match self {
            SandboxError::NulByte
            | SandboxError::ControlChar(_)
            | SandboxError::TooLong { .. }
            | SandboxError::ComponentTooLong(_)
            | SandboxError::HomeRelative(_)
            | SandboxError::Url(_)
            | SandboxError::WindowsName { .. } => "invalid_path",
            SandboxError::Absolute { .. }
            | SandboxError::Escapes(_)
            | SandboxError::EscapesScope { .. }
            | SandboxError::SymlinkOutside { .. } => "outside_root",
            SandboxError::UnknownScope { .. } | SandboxError::ScopeGone { .. } => "unknown_scope",
            SandboxError::ReadOnly { .. } => "read_only_scope",
            SandboxError::GitInternal(_) => "forbidden_path",
            SandboxError::SymlinkBroken { .. } => "broken_symlink",
            SandboxError::Io { .. } => "io_error",
        }
    }
}

/// Resolves `input` against the canonical `root` (a scope's folder): the
/// normalized relative path and where it lives. `""` and `.` are the root.
pub(super) fn resolve(root: &Path, input: &str) -> Result<(String, PathBuf), SandboxError> {
    let parts = lexical(root, input)?;
    let mut abs = root.to_path_buf();
    let mut walked: Vec<&str> = Vec::with_capacity(parts.len());
    let mut rest = parts.iter();
    for part in rest.by_ref() {
        walked.push(part);
        let next = abs.join(part);
        match fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = walked.join("/");
                let target = fs::canonicalize(&next)
                    .map_err(|_| SandboxError::SymlinkBroken { link: link.clone() })?;
                if !target.starts_with(root) {
                    return Err(SandboxError::SymlinkOutside {
                        link,
                        target: target.display().to_string(),
                        within: "the agent root".to_string(),
                    });
                }
                abs = target;
            }
            Ok(_) => abs = next,
            Err(e) if is_absent(&e) => {
                // Nothing further exists, so nothing further can be a link.
                abs = next;
                break;
            }
            Err(source) => {
                return Err(SandboxError::Io {
                    path: walked.join("/"),
                    source,
                });
            }
        }
    }
    for part in rest {
        abs.push(part);
    }
    // A link inside the root may still land in `.git/`.
    if let Ok(inside) = abs.strip_prefix(root)
        && inside
            .components()
            .any(|c| is_git_dir(&c.as_os_str().to_string_lossy()))
    {
        return Err(SandboxError::GitInternal(parts.join("/")));
    }
    Ok((parts.join("/"), abs))
}

fn is_absent(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

fn is_git_dir(name: &str) -> bool {
    name.eq_ignore_ascii_case(".git")
}

/// Checks that need no file system: spelling, length, absoluteness, `..`,
/// `.git`. Returns the normalized components.
fn lexical(root: &Path, input: &str) -> Result<Vec<String>, SandboxError> {
    if input.contains('\0') {
        return Err(SandboxError::NulByte);
    }
    if input.chars().any(char::is_control) {
        return Err(SandboxError::ControlChar(input.escape_debug().to_string()));
    }
    if input.len() > MAX_PATH_BYTES {
        return Err(SandboxError::TooLong {
            len: input.len(),
            max: MAX_PATH_BYTES,
        });
    }
    if input.contains("://") {
        return Err(SandboxError::Url(input.to_string()));
    }
    if input == "~" || input.starts_with("~/") || input.starts_with("~\\") {
        return Err(SandboxError::HomeRelative(input.to_string()));
    }
    // Models trained on Windows paths write `\`; treat it as a separator so
    // `..\..\x` cannot pass as one odd file name.
    let unified = input.replace('\\', "/");
    let bytes = unified.as_bytes();
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    if unified.starts_with('/') || drive {
        return Err(SandboxError::Absolute {
            input: input.to_string(),
            suggestion: suggest_relative(root, input),
        });
    }
    let mut parts: Vec<String> = Vec::new();
    for part in unified.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(SandboxError::Escapes(input.to_string()));
                }
            }
            name => {
                if name.len() > MAX_COMPONENT_BYTES {
                    let head: String = name.chars().take(24).collect();
                    return Err(SandboxError::ComponentTooLong(head));
                }
                if is_git_dir(name) {
                    return Err(SandboxError::GitInternal(input.to_string()));
                }
                windows_name(input, name)?;
                parts.push(name.to_string());
            }
        }
    }
    Ok(parts)
}

/// Where files live on Windows, a name Windows reads as something else
/// (a device, a data stream, a short name, a dropped trailing dot) is
/// refused: it could reach another file than the one named.
fn windows_name(input: &str, name: &str) -> Result<(), SandboxError> {
    use crate::platform::paths::{CHECK_WINDOWS_NAMES, windows_hazard};
    if !CHECK_WINDOWS_NAMES {
        return Ok(());
    }
    match windows_hazard(name) {
        Some(hazard) => Err(SandboxError::WindowsName {
            input: input.to_string(),
            name: name.to_string(),
            why: hazard.explain(),
        }),
        None => Ok(()),
    }
}

/// For an absolute path that points inside the root, the relative spelling.
fn suggest_relative(root: &Path, input: &str) -> Option<String> {
    let path = Path::new(input);
    let inside = path.strip_prefix(root).ok()?;
    if inside
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        return None;
    }
    let rel = inside.to_string_lossy().to_string();
    Some(if rel.is_empty() { ".".into() } else { rel })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_normalizes() {
        let root = Path::new("/r");
        assert_eq!(lexical(root, "./a//b/./c/").unwrap(), ["a", "b", "c"]);
        assert_eq!(lexical(root, "a/../b").unwrap(), ["b"]);
        assert_eq!(lexical(root, "a\\b").unwrap(), ["a", "b"]);
        assert!(lexical(root, "").unwrap().is_empty());
    }

    #[test]
    fn absolute_inside_root_suggests_relative() {
        let err = lexical(Path::new("/r/p"), "/r/p/src/x.rs").unwrap_err();
        assert!(err.to_string().contains("use `src/x.rs`"), "{err}");
        let err = lexical(Path::new("/r/p"), "/etc/passwd").unwrap_err();
        assert!(!err.to_string().contains("use `"), "{err}");
    }
}
