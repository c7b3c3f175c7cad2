//! The folders of `src/` import only folders below them, never in a circle,
//! and the front ends reach the engine only through its door: the layers
//! ARCHITECTURE.md draws, checked on the source (every `crate::<folder>`
//! path outside unit tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;

/// Bottom to top; a folder may import those on earlier lines only.
const LAYERS: &[&[&str]] = &[
    &["platform"],
    &["protocol"],
    &["config"],
    &["workspace"],
    &["index"],
    &["store"],
    &["web"],
    &["llm"],
    &["context"],
    &["review"],
    &["checkpoint"],
    &["tools"],
    &["mcp"],
    &["agent"],
    &["tui", "eval", "server"],
    &["cli"],
];

/// What each front end may import: the door, the wire types, the config
/// (and the command line picks a front end).
const FRONT_ENDS: &[(&str, &[&str])] = &[
    ("tui", &["agent", "protocol", "config", "platform"]),
    ("eval", &["agent", "protocol", "config", "platform"]),
    ("server", &["agent", "protocol", "config", "platform"]),
    (
        "cli",
        &[
            "agent", "protocol", "config", "tui", "eval", "server", "platform",
        ],
    ),
];

fn layer_of(folder: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&folder))
}

/// `crate::<folder>` paths of `text` (unit tests and comments left out).
fn imports(text: &str) -> Vec<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    let mut out = Vec::new();
    for line in code.lines() {
        let line = line.split("//").next().unwrap_or_default();
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if name.is_empty() {
                // `use crate::{a, b}`: each name in the braces.
                let group = rest.trim_start_matches('{');
                let inside = group.split('}').next().unwrap_or_default();
                out.extend(
                    inside
                        .split(',')
                        .map(|n| n.trim().split("::").next().unwrap_or_default().to_string())
                        .filter(|n| !n.is_empty()),
                );
            } else {
                out.push(name);
            }
        }
    }
    out
}

fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Each folder's imports of other folders, with the files that make them.
fn arrows() -> BTreeMap<(String, String), Vec<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    let mut arrows: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for file in files {
        let rel = file
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .to_string();
        let folder = rel
            .split('/')
            .next()
            .unwrap()
            .trim_end_matches(".rs")
            .to_string();
        if layer_of(&folder).is_none() {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for to in imports(&text) {
            if to != folder && layer_of(&to).is_some() {
                arrows
                    .entry((folder.clone(), to))
                    .or_default()
                    .push(rel.clone());
            }
        }
    }
    arrows
}

#[test]
fn every_folder_imports_only_folders_below_it() {
    let wrong: Vec<String> = arrows()
        .into_iter()
        .filter(|((from, to), _)| layer_of(to) >= layer_of(from))
        .map(|((from, to), files)| format!("{from} -> {to} ({})", files.join(", ")))
        .collect();
    assert!(
        wrong.is_empty(),
        "imports that point up or sideways:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn front_ends_use_only_the_engines_door() {
    let wrong: Vec<String> = arrows()
        .into_iter()
        .filter(|((from, to), _)| {
            FRONT_ENDS
                .iter()
                .find(|(f, _)| f == from)
                .is_some_and(|(_, allowed)| !allowed.contains(&to.as_str()))
        })
        .map(|((from, to), files)| format!("{from} -> {to} ({})", files.join(", ")))
        .collect();
    assert!(
        wrong.is_empty(),
        "front ends past the door:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_checker_sees_what_it_checks() {
    let found = imports(
        "use crate::store::Store;\nuse crate::{review, llm::Message};\n// crate::tui in a comment\n\
         #[cfg(test)]\nmod tests { use crate::tui::App; }",
    );
    assert_eq!(found, ["store", "review", "llm"]);
    // The real source has arrows to check (the engine's own, at least).
    let all = arrows();
    assert!(all.contains_key(&("agent".to_string(), "store".to_string())));
    assert!(all.contains_key(&("cli".to_string(), "agent".to_string())));
}

/// The crate allows `unsafe` in one audited place: the wrapper's step
/// between fork and exec (`platform/sandbox/reaper.rs` `in_child`). A second one is a
/// decision to make in review, not by accident.
#[test]
fn unsafe_code_stays_in_its_one_place() {
    let mut files = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let mut found = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            if code.contains("unsafe ") || code.contains("unsafe_code") {
                found.push(format!("{}:{}", f.display(), n + 1));
            }
        }
    }
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(
        found
            .iter()
            .all(|f| f.contains("src/platform/sandbox/reaper.rs")),
        "{found:#?}"
    );
}

/// What differs by OS stays in `src/platform/`: no other folder names an
/// OS-only crate or module (outside unit tests), so shared code cannot
/// call Linux alone by accident (the macOS and Windows builds in CI fail
/// when it does).
#[test]
fn os_specific_code_stays_in_the_platform_room() {
    const OS_ONLY: &[&str] = &[
        "nix::",
        "rustix::",
        "libc::",
        "landlock::",
        "seccompiler::",
        "inotify::",
        "notify::",
        "windows_sys::",
        "std::os::unix",
        "std::os::windows",
        "std::os::fd",
        "signal::unix",
        "signal::windows",
        "CommandExt",
        "PermissionsExt",
        "MetadataExt",
        "OpenOptionsExt",
    ];
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    let mut found = Vec::new();
    for f in &files {
        if f.starts_with(src.join("platform")) {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        let code = code.split("#[cfg(all(test").next().unwrap_or_default();
        for (n, line) in code.lines().enumerate() {
            let line = line.split("//").next().unwrap_or_default();
            // A whole name: `crate::x::notify::` is our own module.
            let named = |name: &str| {
                line.match_indices(name).any(|(at, _)| {
                    !line[..at]
                        .chars()
                        .next_back()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
                })
            };
            if let Some(name) = OS_ONLY.iter().find(|name| named(name)) {
                found.push(format!("{}:{}: {name}", f.display(), n + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "OS-specific code outside src/platform/: {found:#?}"
    );
}
