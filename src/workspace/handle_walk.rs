//! A walk of the agent root through directory handles: each folder is
//! opened beneath its parent's handle and checked to be the folder that was
//! listed, so a folder swapped for a link mid-walk is skipped, never
//! followed. Links are listed, never entered; `.git/` is never entered;
//! `.gitignore` and `.ignore` rules apply as git and ripgrep apply them
//! (deepest folder first; `.ignore` over `.gitignore` over the repository's
//! `info/exclude` over the global excludes), read through the same handles.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use cap_std::fs::Dir;
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use super::walk::EntryKind;
use super::{Resolved, RootDir, Scope, Workspace};

/// One entry the walk met.
#[derive(Debug, Clone)]
pub struct Met {
    /// As tools spell it: relative to the agent root, or `@scope/…`.
    pub rel: String,
    pub kind: EntryKind,
    pub size: u64,
    pub modified: Option<SystemTime>,
    /// 0 for the start itself (when it is a file), 1 for its entries ...
    pub depth: usize,
}

/// The ignore rules of one folder.
struct Layer {
    ignore: Option<Gitignore>,
    gitignore: Option<Gitignore>,
}

/// The rules in force in a folder: its own and its parents', deepest last.
#[derive(Clone)]
struct Rules {
    layers: Vec<Arc<Layer>>,
    exclude: Option<Arc<Gitignore>>,
    global: Arc<Gitignore>,
}

impl Rules {
    fn ignored(&self, abs: &Path, is_dir: bool) -> bool {
        let first = |pick: &dyn Fn(&Layer) -> Option<&Gitignore>| {
            self.layers
                .iter()
                .rev()
                .filter_map(|l| pick(l))
                .map(|g| g.matched(abs, is_dir))
                .find(|m| !m.is_none())
        };
        let decided = first(&|l| l.ignore.as_ref())
            .or_else(|| first(&|l| l.gitignore.as_ref()))
            .or_else(|| {
                self.exclude
                    .as_ref()
                    .map(|g| g.matched(abs, is_dir))
                    .filter(|m| !m.is_none())
            })
            .unwrap_or_else(|| self.global.matched(abs, is_dir));
        matches!(decided, Match::Ignore(_))
    }
}

/// The rules of a folder from its two files' text (read by the caller).
fn layer(folder: &Path, ignore: Option<Vec<u8>>, gitignore: Option<Vec<u8>>) -> Layer {
    let build = |bytes: Option<Vec<u8>>| {
        let bytes = bytes?;
        let mut builder = GitignoreBuilder::new(folder);
        for line in String::from_utf8_lossy(&bytes).lines() {
            let _ = builder.add_line(None, line);
        }
        builder.build().ok()
    };
    Layer {
        ignore: build(ignore),
        gitignore: build(gitignore),
    }
}

fn read_in(dir: &Dir, name: &str) -> Option<Vec<u8>> {
    dir.read(name).ok()
}

/// The rules in force at a scope's folder: the folders above it up to the
/// repository's top (their files are outside the scope: read by path), the
/// folder's own, `info/exclude` and the global excludes.
fn root_rules(scope: &Scope, dir: &RootDir) -> io::Result<Rules> {
    let root = scope.root.as_path();
    let (mut rules, _) = rules_above(root);
    let dir = dir.open_dir(Path::new("."))?;
    rules.layers.push(Arc::new(layer(
        root,
        read_in(&dir, ".ignore"),
        read_in(&dir, ".gitignore"),
    )));
    Ok(rules)
}

/// The rules of the folders above `root` up to its repository's top, and
/// that repository's `info/exclude`; none of them when they would hide
/// `root` itself (a folder the user opened is never empty because a
/// parent repository ignores it, e.g. a checkout under `target/`); true
/// then.
fn rules_above(root: &Path) -> (Rules, bool) {
    let mut above: Vec<&Path> = Vec::new();
    let mut top = None;
    for folder in root.ancestors() {
        above.push(folder);
        if folder.join(".git").exists() {
            top = Some(folder);
            break;
        }
    }
    let layers: Vec<Arc<Layer>> = above
        .iter()
        .rev()
        .filter(|f| **f != root)
        .map(|f| {
            Arc::new(layer(
                f,
                std::fs::read(f.join(".ignore")).ok(),
                std::fs::read(f.join(".gitignore")).ok(),
            ))
        })
        .collect();
    let exclude = top.and_then(|t| {
        let path = t.join(".git/info/exclude");
        let bytes = std::fs::read(path).ok()?;
        let mut builder = GitignoreBuilder::new(t);
        for line in String::from_utf8_lossy(&bytes).lines() {
            let _ = builder.add_line(None, line);
        }
        builder.build().ok().map(Arc::new)
    });
    let global = Arc::new(Gitignore::global().0);
    let rules = Rules {
        layers,
        exclude,
        global: Arc::new(Gitignore::empty()),
    };
    // The root and each folder between it and the top, as git would test them.
    let hidden = above
        .iter()
        .filter(|f| Some(**f) != top)
        .any(|f| rules.ignored(f, true));
    let rules = if hidden {
        Rules {
            layers: Vec::new(),
            exclude: None,
            global,
        }
    } else {
        Rules { global, ..rules }
    };
    (rules, hidden)
}

/// True when the ignore files above `root` would hide `root` itself: a
/// walk of it then reads only its own rules and those below.
pub(crate) fn parents_hide(root: &Path) -> bool {
    rules_above(root).1
}

/// The kind of an entry of this type (the entry itself, never what a
/// link points at).
fn kind_of(file_type: &cap_std::fs::FileType) -> EntryKind {
    if file_type.is_symlink() {
        EntryKind::Symlink
    } else if file_type.is_dir() {
        EntryKind::Dir
    } else if file_type.is_file() {
        EntryKind::File
    } else {
        EntryKind::Other
    }
}

fn is_git_dir(name: &std::ffi::OsStr) -> bool {
    name.to_string_lossy().eq_ignore_ascii_case(".git")
}

/// Walks `start` (a folder or a file), depth first with each folder's
/// entries in name order, up to `max_depth` below it; `visit` returns
/// false to stop. Hidden entries only with `include_hidden`.
pub fn walk(
    ws: &Workspace,
    start: &Resolved,
    include_hidden: bool,
    max_depth: usize,
    visit: &mut dyn FnMut(Met) -> bool,
) -> io::Result<()> {
    let scope = ws.scope_of(start);
    let handle = ws.scope_dir(start.scope);
    let beneath = ws.beneath(&start.abs).to_path_buf();
    let meta = handle.metadata(&beneath)?;
    if !meta.is_dir() {
        visit(Met {
            rel: start.rel.clone(),
            kind: kind_of(&meta.file_type()),
            size: meta.len(),
            modified: meta.modified().ok().map(|t| t.into_std()),
            depth: 0,
        });
        return Ok(());
    }
    let mut rules = root_rules(scope, handle)?;
    // Folders between the root and the start add their rules too.
    let mut folder = PathBuf::new();
    for part in beneath.components() {
        let part = part.as_os_str();
        if part == "." {
            continue;
        }
        folder.push(part);
        let dir = handle.open_dir(&folder)?;
        rules.layers.push(Arc::new(layer(
            &scope.root.join(&folder),
            read_in(&dir, ".ignore"),
            read_in(&dir, ".gitignore"),
        )));
    }
    let dir = handle.open_dir(&beneath)?;
    let mut walker = Walker {
        root: scope.root.clone(),
        prefix: scope.prefix(),
        // Scopes nested in this one are walked as themselves, not twice.
        nested: ws.nested_in(start.scope),
        include_hidden,
        max_depth,
        visit,
        stopped: false,
    };
    walker.folder(&dir, &start.inner, &rules, 1);
    Ok(())
}

struct Walker<'v> {
    /// The scope's folder, and how its paths are spelled (`""`, `@id/`).
    root: PathBuf,
    prefix: String,
    nested: Vec<PathBuf>,
    include_hidden: bool,
    max_depth: usize,
    visit: &'v mut dyn FnMut(Met) -> bool,
    stopped: bool,
}

impl Walker<'_> {
    fn folder(&mut self, dir: &Dir, rel: &str, rules: &Rules, depth: usize) {
        let Ok(entries) = dir.entries() else { return };
        let mut names: Vec<(OsString, cap_std::fs::DirEntry)> = entries
            .filter_map(Result::ok)
            .map(|e| (e.file_name(), e))
            .collect();
        names.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, entry) in names {
            if self.stopped {
                return;
            }
            if is_git_dir(&name) {
                continue;
            }
            let text = name.to_string_lossy();
            if !self.include_hidden && text.starts_with('.') {
                continue;
            }
            // The entry itself, never what a link points at.
            let Ok(meta) = entry.metadata() else { continue };
            let kind = kind_of(&meta.file_type());
            let child = if rel.is_empty() {
                text.to_string()
            } else {
                format!("{rel}/{text}")
            };
            let abs = self.root.join(&child);
            if rules.ignored(&abs, kind == EntryKind::Dir) || self.nested.contains(&abs) {
                continue;
            }
            let keep_going = (self.visit)(Met {
                rel: format!("{}{child}", self.prefix),
                kind,
                size: if kind == EntryKind::File {
                    meta.len()
                } else {
                    0
                },
                modified: meta.modified().ok().map(|t| t.into_std()),
                depth,
            });
            if !keep_going {
                self.stopped = true;
                return;
            }
            if kind != EntryKind::Dir || depth >= self.max_depth {
                continue;
            }
            // Opened beneath this folder's handle, and only if it is still
            // the folder just listed (not a link swapped in since).
            let Ok(sub) = dir.open_dir(&name) else {
                continue;
            };
            if !sub
                .dir_metadata()
                .is_ok_and(|m| crate::platform::fs::same_dir(&m, &meta))
            {
                continue;
            }
            let mut inner = rules.clone();
            inner.layers.push(Arc::new(layer(
                &self.root.join(&child),
                read_in(&sub, ".ignore"),
                read_in(&sub, ".gitignore"),
            )));
            self.folder(&sub, &child, &inner, depth + 1);
        }
    }
}
