//! The agent-root sandbox against a hostile list of paths: traversal
//! spellings, symlink chains, symlinked parents, look-alikes, `.git`, and
//! files that appear after the workspace was opened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

/// A link at `link` to `target`, as the system makes them.
fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) -> std::io::Result<()> {
    agent_tui::platform::fs::symlink(target.as_ref(), link.as_ref())
}
use std::path::Path;

use Want::{Err as Refused, Ok as Inside};
use agent_tui::workspace::{Access, ScopeSpec, Workspace};
use support::Env;
use support::hostile::{Fixture, Want, hostile_cases};

/// The fixture's root opened as a workspace.
trait Open {
    fn ws(&self) -> Workspace;
}

impl Open for Fixture {
    fn ws(&self) -> Workspace {
        Workspace::open(&self.root()).unwrap()
    }
}

#[test]
fn hostile_paths_are_refused_and_safe_ones_resolve() {
    let fx = Fixture::new();
    let ws = fx.ws();
    let cases = hostile_cases();
    assert!(cases.len() >= 60, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for (input, want) in &cases {
        let got = ws.resolve(input);
        match (want, &got) {
            (Inside(rel), Ok(r)) if r.rel == *rel => {
                assert!(
                    r.abs.starts_with(ws.root()),
                    "{input:?} -> {}",
                    r.abs.display()
                );
            }
            (Refused(code), Err(e)) if e.code() == *code => {
                let msg = e.to_string();
                assert!(msg.len() > 30, "{input:?}: message too thin: {msg}");
            }
            _ => failures.push(format!("{input:?}: wanted {}, got {got:?}", describe(want))),
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The same corpus through a scope beside the agent root (issue 15): the
/// fixture's `root/` is added as `@root-2` (its name repeats the agent
/// root's id), every case spelled `@root-2/<case>`.
#[test]
fn hostile_paths_through_a_scope_prefix_are_refused_and_safe_ones_resolve() {
    let fx = Fixture::new();
    let agent = fx.base.path().join("agent");
    std::fs::create_dir_all(&agent).unwrap();
    let ws = Workspace::open_scoped(
        &agent,
        &[ScopeSpec {
            path: fx.root(),
            access: Access::ReadWrite,
        }],
    )
    .unwrap();
    let scope = ws.scopes()[1].clone();
    assert_eq!(scope.id, "root-2");
    let mut failures = Vec::new();
    for (input, want) in &hostile_cases() {
        let spelled = format!("@root-2/{input}");
        let got = ws.resolve(&spelled);
        match (want, &got) {
            (Inside(rel), Ok(r)) if r.rel == scope.spell(rel) && r.scope == 1 => {
                assert!(r.abs.starts_with(&scope.root), "{spelled:?}");
            }
            (Refused(code), Err(e)) if e.code() == *code => {}
            _ => failures.push(format!(
                "{spelled:?}: wanted {}, got {got:?}",
                describe(want)
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn describe(w: &Want) -> String {
    match w {
        Inside(rel) => format!("Ok({rel:?})"),
        Refused(code) => format!("Err({code})"),
    }
}

#[test]
fn resolved_real_paths_of_inside_links_point_at_the_target() {
    let fx = Fixture::new();
    let ws = fx.ws();
    let r = ws.resolve("chain_in1").unwrap();
    assert_eq!(r.abs, ws.root().join("src/main.rs"));
    let r = ws.resolve("link_in/new_file.rs").unwrap();
    assert_eq!(r.abs, ws.root().join("src/new_file.rs"));
}

#[test]
fn absolute_path_inside_the_root_suggests_its_relative_form() {
    let fx = Fixture::new();
    let ws = fx.ws();
    let abs = ws.root().join("src/main.rs");
    let err = ws.resolve(abs.to_str().unwrap()).unwrap_err();
    assert_eq!(err.code(), "outside_root");
    assert!(err.to_string().contains("use `src/main.rs`"), "{err}");
}

#[test]
fn files_and_links_created_after_opening_are_checked_live() {
    let fx = Fixture::new();
    let ws = fx.ws();
    let root = fx.root();
    assert!(!root.join("late.txt").exists());
    std::fs::write(root.join("late.txt"), "late\n").unwrap();
    assert_eq!(ws.resolve("late.txt").unwrap().rel, "late.txt");
    symlink("../outside", root.join("late_link")).unwrap();
    assert_eq!(
        ws.resolve("late_link/secret.txt").unwrap_err().code(),
        "outside_root"
    );
    // A directory swapped for a link to the outside after start.
    std::fs::create_dir(root.join("swap")).unwrap();
    assert!(ws.resolve("swap/x").is_ok());
    std::fs::remove_dir(root.join("swap")).unwrap();
    symlink("../outside", root.join("swap")).unwrap();
    assert_eq!(
        ws.resolve("swap/secret.txt").unwrap_err().code(),
        "outside_root"
    );
}

#[test]
fn a_root_opened_through_a_symlink_is_still_enforced() {
    let fx = Fixture::new();
    let alias = fx.base.path().join("alias");
    symlink(fx.root(), &alias).unwrap();
    let ws = Workspace::open(&alias).unwrap();
    assert_eq!(ws.root(), fx.root().canonicalize().unwrap());
    assert!(ws.resolve("src/main.rs").is_ok());
    assert_eq!(
        ws.resolve("link_out/secret.txt").unwrap_err().code(),
        "outside_root"
    );
    assert_eq!(ws.resolve("../outside").unwrap_err().code(), "outside_root");
}

/// The same gate holds for every tool when driven through the binary.
#[test]
fn tools_refuse_hostile_paths_through_the_binary() {
    let fx = Fixture::new();
    let env = Env::new();
    let root = fx.root();
    let probes: &[(&str, String)] = &[
        (
            "read_file",
            r#"{"file_path": "link_out/secret.txt"}"#.into(),
        ),
        (
            "read_file",
            r#"{"file_path": "../outside/secret.txt"}"#.into(),
        ),
        ("read_file", r#"{"file_path": "/etc/passwd"}"#.into()),
        ("read_file", r#"{"file_path": ".git/config"}"#.into()),
        ("read_file", r#"{"file_path": "chain1/secret.txt"}"#.into()),
        ("read_file", r#"{"file_path": "src/main.rs\u0000"}"#.into()),
        ("list_files", r#"{"prefix": "link_out"}"#.into()),
        ("list_files", r#"{"prefix": "../outside"}"#.into()),
        ("list_files", r#"{"prefix": ".git"}"#.into()),
    ];
    for (tool, args) in probes {
        let (code, out) = env.tool(&root, tool, args);
        assert_eq!(code, 1, "{tool} {args}: {out}");
        let message = out["error"]["message"].as_str().unwrap();
        assert!(!message.contains("top secret"), "{message}");
        let code = out["error"]["code"].as_str().unwrap();
        assert!(
            ["outside_root", "forbidden_path", "invalid_path"].contains(&code),
            "{tool} {args}: {out}"
        );
    }
    let (code, out) = env.tool(&root, "read_file", r#"{"file_path": "link_in/main.rs"}"#);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["content"], "fn main() {}\n");
}

#[test]
fn walks_never_leave_the_root_or_enter_git() {
    let fx = Fixture::new();
    let env = Env::new();
    let root = fx.root();
    let (code, out) = env.tool(&root, "list_files", r#"{"limit": 2000}"#);
    assert_eq!(code, 0, "{out}");
    let paths: Vec<&str> = out["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&"src/main.rs"), "{paths:?}");
    assert!(
        paths.contains(&"link_out"),
        "links are listed as entries: {paths:?}"
    );
    assert!(
        !paths
            .iter()
            .any(|p| p.contains("secret") || p.starts_with(".git/") || *p == ".git"),
        "{paths:?}"
    );
    let (code, out) = env.tool(&root, "search_project", r#"{"query": "secret"}"#);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["results"].as_array().unwrap().len(), 0, "{out}");
    let (_, out) = env.tool(&root, "search_project", r#"{"query": "refs/heads"}"#);
    assert_eq!(
        out["results"].as_array().unwrap().len(),
        0,
        ".git must not be searched: {out}"
    );
    assert!(Path::new(&root).join(".git/HEAD").exists());
}

mod property {
    use super::*;
    use proptest::prelude::*;

    /// Pieces that hostile paths are made of, joined by assorted separators.
    const PIECES: &[&str] = &[
        "..",
        ".",
        "",
        "src",
        "main.rs",
        "link_in",
        "link_out",
        "chain1",
        "chain_in1",
        "sub",
        "parent_link",
        "up2",
        "sneaky",
        ".git",
        ".GIT",
        "gitlink",
        "outside",
        "secret.txt",
        "root",
        "dangling",
        "loop1",
        "\u{ff0e}\u{ff0e}",
        "%2e%2e",
        "~",
        "new",
    ];
    const SEPARATORS: &[&str] = &["/", "\\", "//", "/./"];

    fn hostile_path() -> impl Strategy<Value = String> {
        (
            any::<bool>(),
            proptest::collection::vec((0..PIECES.len(), 0..SEPARATORS.len()), 1..8),
        )
            .prop_map(|(leading_slash, parts)| {
                let mut s = String::from(if leading_slash { "/" } else { "" });
                for (p, sep) in parts {
                    s.push_str(PIECES[p]);
                    s.push_str(SEPARATORS[sep]);
                }
                s
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Whatever the spelling: either refused, or a path that really is
        /// inside the root (after the OS follows every link) and not in `.git`.
        #[test]
        fn resolution_never_escapes(input in hostile_path()) {
            let fx = FIXTURE.with(|f| f.root());
            let ws = Workspace::open(&fx).unwrap();
            if let Ok(r) = ws.resolve(&input) {
                prop_assert!(r.abs.starts_with(ws.root()), "{input:?} -> {}", r.abs.display());
                let real = deepest_existing(&r.abs).canonicalize().unwrap();
                prop_assert!(real.starts_with(ws.root()), "{input:?} really is {}", real.display());
                let inside = real.strip_prefix(ws.root()).unwrap();
                prop_assert!(
                    !inside.components().any(|c| c.as_os_str().eq_ignore_ascii_case(".git")),
                    "{input:?} reaches {}", real.display()
                );
                prop_assert!(!r.rel.starts_with('/') && !r.rel.split('/').any(|c| c == ".."));
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        /// Through a scope's prefix: refused, or really inside that scope.
        #[test]
        fn resolution_through_a_scope_never_leaves_it(input in hostile_path()) {
            let root = FIXTURE.with(|f| f.root());
            let agent = root.parent().unwrap().join("agent");
            std::fs::create_dir_all(&agent).unwrap();
            let ws = Workspace::open_scoped(
                &agent,
                &[ScopeSpec { path: root.clone(), access: Access::ReadOnly }],
            )
            .unwrap();
            let scope = ws.scopes()[1].root.clone();
            let spelled = format!("@root-2/{input}");
            if let Ok(r) = ws.resolve(&spelled) {
                let real = deepest_existing(&r.abs).canonicalize().unwrap();
                prop_assert!(real.starts_with(&scope), "{input:?} really is {}", real.display());
                prop_assert!(r.rel.starts_with("@root-2"), "{input:?} -> {}", r.rel);
                let writable = ws.resolve_writable(&spelled);
                prop_assert!(writable.is_err(), "{input:?}: a read-only scope took a write");
            }
        }
    }

    fn deepest_existing(p: &Path) -> &Path {
        let mut p = p;
        while std::fs::symlink_metadata(p).is_err() {
            p = p.parent().unwrap();
        }
        p
    }

    thread_local! {
        static FIXTURE: Fixture = Fixture::new();
    }
}
