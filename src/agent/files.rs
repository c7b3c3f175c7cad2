//! The root's files as front ends show them: a folder's entries for a file
//! tree, a file with a review's hunks inline, and folders a typed path can
//! complete to (`Ctrl+O`). Everything under the root is read through its
//! directory handles.

use crate::protocol::{EngineError, EntryKind, FileDiff, FileRow, FolderEntry};
use crate::workspace::{Workspace, walk_beneath};

/// One folder's entries: folders first, then files, by name (ignoring
/// case); `.gitignore`d ones and `.git/` left out. `""` with scopes beside
/// the root lists the scopes themselves.
pub(super) fn folder(ws: &Workspace, rel: &str) -> Result<Vec<FolderEntry>, EngineError> {
    let start = ws
        .resolve(rel)
        .map_err(|e| EngineError::invalid(e.to_string()))?;
    let mut out: Vec<FolderEntry> = Vec::new();
    let _ = walk_beneath(ws, &start, true, 1, &mut |met| {
        let name = met.rel.rsplit('/').next().unwrap_or(&met.rel).to_string();
        out.push(FolderEntry {
            path: met.rel,
            name,
            kind: if met.kind == crate::workspace::EntryKind::Dir {
                EntryKind::Dir
            } else {
                EntryKind::File
            },
        });
        true
    });
    out.sort_by(|a, b| {
        let dir = |e: &FolderEntry| e.kind == EntryKind::Dir;
        dir(b)
            .cmp(&dir(a))
            .then_with(|| a.name.to_lowercase().cmp(&b.name.to_lowercase()))
    });
    Ok(out)
}

/// The file as it is now with every hunk of `file` shown inline.
pub(super) fn whole_file(ws: &Workspace, file: &FileDiff) -> Vec<FileRow> {
    let bytes = ws
        .resolve(&file.file_path)
        .ok()
        .and_then(|r| ws.read_opt(&r).ok().flatten())
        .unwrap_or_default();
    let old = crate::review::Doc::parse(&bytes)
        .map(|d| d.lines)
        .unwrap_or_default();
    let mut changes: Vec<(&str, &crate::review::Change)> = file
        .hunks
        .iter()
        .flat_map(|h| h.changes.iter().map(move |c| (h.hunk_id.as_str(), c)))
        .collect();
    changes.sort_by_key(|(_, c)| c.old_start);
    let row = |sign: char, line: &str, hunk: Option<&str>| FileRow {
        sign,
        text: crate::review::text_of(line).to_string(),
        hunk_id: hunk.map(str::to_string),
    };
    let mut rows = Vec::new();
    let mut at = 0;
    for (hunk, c) in changes {
        while at < c.old_start.min(old.len()) {
            rows.push(row(' ', &old[at], None));
            at += 1;
        }
        for l in old.iter().skip(c.old_start).take(c.old_len) {
            rows.push(row('-', l, Some(hunk)));
        }
        for l in &c.new_lines {
            rows.push(row('+', l, Some(hunk)));
        }
        at = at.max(c.old_start + c.old_len);
    }
    while at < old.len() {
        rows.push(row(' ', &old[at], None));
        at += 1;
    }
    rows
}

/// `~` and `~/…` as the home folder.
pub fn expand_home(path: &str) -> std::path::PathBuf {
    crate::workspace::expand_home(path)
}

/// Folders `typed` (a path being typed, `~` allowed) can complete to, as
/// typed (with `~` kept) and ending in `/`; hidden ones only when the
/// typed name starts with a dot. At most 200, sorted.
pub fn complete_folder(typed: &str) -> Vec<String> {
    let home = expand_home("~").display().to_string();
    // `~` alone completes inside the home folder, like `~/`.
    let typed_dir = if typed == "~" { "~/" } else { typed };
    let expanded = expand_home(typed_dir).display().to_string();
    let (folder, stem) = match expanded.rfind('/') {
        Some(at) => (&expanded[..=at], &expanded[at + 1..]),
        None => ("./", expanded.as_str()),
    };
    let shown = |name: &str| -> String {
        let full = if expanded.contains('/') {
            format!("{folder}{name}/")
        } else {
            format!("{name}/")
        };
        match typed.strip_prefix('~') {
            Some(_) if !home.is_empty() => full.replacen(&home, "~", 1),
            _ => full,
        }
    };
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| n.starts_with(stem) && (stem.starts_with('.') || !n.starts_with('.')))
        .map(|n| shown(&n))
        .collect();
    out.sort();
    out.truncate(200);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        for f in [
            "src/main.rs",
            "src/lib.rs",
            "src/deep/x.rs",
            "README.md",
            "target/junk.o",
            ".git/HEAD",
            ".github/ci.yml",
        ] {
            std::fs::create_dir_all(p.join(f).parent().unwrap()).unwrap();
            std::fs::write(p.join(f), "x").unwrap();
        }
        std::fs::write(p.join(".gitignore"), "target/\n").unwrap();
        dir
    }

    fn names(entries: &[FolderEntry]) -> Vec<&str> {
        entries.iter().map(|e| e.name.as_str()).collect()
    }

    #[test]
    fn folders_first_by_name_without_ignored_or_git() {
        let dir = fixture();
        let ws = Workspace::open(dir.path()).unwrap();
        let top = folder(&ws, "").unwrap();
        assert_eq!(names(&top), [".github", "src", ".gitignore", "README.md"]);
        let src = folder(&ws, "src").unwrap();
        assert_eq!(names(&src), ["deep", "lib.rs", "main.rs"]);
        assert_eq!(src[0].path, "src/deep");
        assert!(folder(&ws, "../x").is_err());
    }

    #[test]
    fn completes_folders_only() {
        let dir = tempfile::tempdir().unwrap();
        for d in ["alpha", "alps", "beta", ".hidden"] {
            std::fs::create_dir(dir.path().join(d)).unwrap();
        }
        std::fs::write(dir.path().join("alpine.txt"), "x").unwrap();
        let base = format!("{}/", dir.path().display());
        let found = complete_folder(&format!("{base}al"));
        assert_eq!(found, [format!("{base}alpha/"), format!("{base}alps/")]);
        assert_eq!(
            complete_folder(&format!("{base}.h")),
            [format!("{base}.hidden/")]
        );
        assert_eq!(complete_folder(&base).len(), 3);
    }
}
