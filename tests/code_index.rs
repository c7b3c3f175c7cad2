//! The code index from outside (SPEC 18): `agent-tui index` and the index
//! tools through the real binary, on real files: shapes, every language's
//! symbols, freshness from a cold process, hostile files, a build killed
//! midway, and the index turned off.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use serde_json::Value;
use support::{Env, code, json_of, stderr, write_files};

fn index(env: &Env, root: &Path, action: &str) -> Output {
    env.cmd()
        .args(["index", action, "--json", "--root"])
        .arg(root)
        .output()
        .unwrap()
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            (
                "src/permissions.rs",
                "/// Checks access.\npub struct PermissionChecker {\n    allowed: Vec<String>,\n}\n\nimpl PermissionChecker {\n    pub fn check_read(&self, path: &str) -> bool {\n        self.allowed.iter().any(|a| path.starts_with(a))\n    }\n}\n\npub fn deny_all() -> PermissionChecker {\n    PermissionChecker { allowed: vec![] }\n}\n",
            ),
            (
                "src/main.rs",
                "mod permissions;\nfn main() {\n    let checker = permissions::deny_all();\n    if checker.check_read(\"/etc\") {\n        println!(\"permission denied\");\n    }\n}\n",
            ),
            (
                "py/tool.py",
                "class Fetcher:\n    def fetch_url(self, url):\n        return url\n\ndef main():\n    Fetcher().fetch_url('x')\n",
            ),
            (
                "web/app.ts",
                "export interface Options { verbose: boolean }\nexport function renderPage(opts: Options): string {\n  return String(opts.verbose);\n}\n",
            ),
            (
                "web/view.tsx",
                "export function Button(props: { label: string }) {\n  return <button>{props.label}</button>;\n}\n",
            ),
            (
                "web/util.js",
                "function debounceCalls(fn) {\n  return fn;\n}\nclass EventBus { emit() {} }\n",
            ),
            (
                "go/server.go",
                "package main\n\nfunc StartServer(port int) error {\n\treturn nil\n}\n",
            ),
            (
                "java/App.java",
                "public class App {\n    public void runApp() {}\n}\n",
            ),
            (
                "c/hash.c",
                "int hash_bytes(const char *p, int n) {\n    return n;\n}\n",
            ),
            (
                "cpp/tree.cpp",
                "class RedBlackTree {\n public:\n  void insertNode(int k);\n};\nvoid RedBlackTree::insertNode(int k) {}\n",
            ),
            (
                "docs/permissions.md",
                "# Permissions\n\nHow permission checks work.\n",
            ),
            (".gitignore", "ignored/\n"),
            ("ignored/secret.rs", "pub fn hidden_function() {}\n"),
        ],
    );
    dir
}

fn results(v: &Value) -> Vec<String> {
    v["results"]
        .as_array()
        .unwrap_or_else(|| panic!("no results: {v}"))
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn build_status_clear_and_nothing_in_the_project() {
    let env = Env::new();
    let root = project();
    let before = support::walk(root.path());
    let out = index(&env, root.path(), "status");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json_of(&out)["state"], "none");

    let out = index(&env, root.path(), "build");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let built = json_of(&out);
    assert_eq!(built["built"], true);
    assert_eq!(built["generation"], 1);
    assert!(built["symbols"].as_u64().unwrap() >= 15, "{built}");
    assert!(built["bytes_on_disk"].as_u64().unwrap() > 0);
    for key in ["files", "indexed", "terms", "source_bytes", "duration_ms"] {
        assert!(built[key].is_u64(), "{key} in {built}");
    }
    // Up to date: kept. Rebuild: a new generation.
    assert_eq!(json_of(&index(&env, root.path(), "build"))["built"], false);
    assert_eq!(
        json_of(&index(&env, root.path(), "rebuild"))["generation"],
        2
    );

    let status = json_of(&index(&env, root.path(), "status"));
    assert_eq!(status["state"], "ready");
    assert_eq!(status["fresh"], true);
    assert_eq!(status["generation"], 2);
    assert!(
        status["path"]
            .as_str()
            .unwrap()
            .starts_with(env.home.path().to_str().unwrap())
    );
    assert_eq!(
        support::walk(root.path()),
        before,
        "the index wrote into the project"
    );

    std::fs::write(root.path().join("src/new.rs"), "pub fn fresh_one() {}\n").unwrap();
    let status = json_of(&index(&env, root.path(), "status"));
    assert_eq!(
        (status["fresh"].clone(), status["changed"].clone()),
        (false.into(), 1.into())
    );

    assert_eq!(json_of(&index(&env, root.path(), "clear"))["cleared"], true);
    assert_eq!(
        json_of(&index(&env, root.path(), "status"))["state"],
        "none"
    );
    // Human output names what it did.
    let out = env
        .cmd()
        .args(["index", "build", "--root"])
        .arg(root.path())
        .output()
        .unwrap();
    assert!(
        support::stdout(&out).starts_with("indexed "),
        "{}",
        support::stdout(&out)
    );
}

#[test]
fn code_search_ranks_explains_and_filters() {
    let env = Env::new();
    let root = project();
    let (c, v) = env.tool(
        root.path(),
        "code_search",
        r#"{"query": "permissions checker read access"}"#,
    );
    assert_eq!(c, 0, "{v}");
    let paths = results(&v);
    assert_eq!(paths[0], "src/permissions.rs", "{v}");
    assert!(!paths.contains(&"ignored/secret.rs".to_string()));
    let first = &v["results"][0];
    assert!(first["score"].as_f64().unwrap() > 0.0);
    let why = first["why"].as_array().unwrap();
    assert!(
        why.iter()
            .any(|w| w.as_str().unwrap().starts_with("path: ")),
        "{why:?}"
    );
    assert!(
        why.iter()
            .any(|w| w.as_str().unwrap().contains("PermissionChecker")),
        "{why:?}"
    );
    let snippet = &first["snippets"][0];
    assert!(snippet["start_line"].as_u64().unwrap() >= 1);
    assert!(
        snippet["text"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("permission")
    );
    assert_eq!(v["index"]["fresh"], true);
    assert!(v["index"]["files"].as_u64().unwrap() >= 10);
    assert_eq!(v["truncated"], false);
    // The markdown file mentions it too, but ranks below the source.
    let md = paths
        .iter()
        .position(|p| p == "docs/permissions.md")
        .unwrap();
    assert!(md > 0);

    let (_, v) = env.tool(
        root.path(),
        "code_search",
        r#"{"query": "permission", "path_glob": "*.md"}"#,
    );
    assert_eq!(results(&v), ["docs/permissions.md"]);
    let (_, v) = env.tool(
        root.path(),
        "code_search",
        r#"{"query": "permission", "limit": 1}"#,
    );
    assert_eq!(
        (results(&v).len(), v["truncated"].clone()),
        (1, true.into())
    );
    let (_, v) = env.tool(
        root.path(),
        "code_search",
        r#"{"query": "starts_with(a)", "mode": "text"}"#,
    );
    assert_eq!(results(&v), ["src/permissions.rs"], "{v}");
    assert_eq!(v["results"][0]["snippets"][0]["start_line"], 7);
    let (_, v) = env.tool(
        root.path(),
        "code_search",
        r#"{"query": "fn \\w+_all", "mode": "regex"}"#,
    );
    assert_eq!(results(&v), ["src/permissions.rs"], "{v}");
    let (_, v) = env.tool(
        root.path(),
        "code_search",
        r#"{"query": "renderPage", "mode": "symbol"}"#,
    );
    assert_eq!(results(&v)[0], "web/app.ts", "{v}");
    assert!(
        v["results"][0]["why"][0]
            .as_str()
            .unwrap()
            .contains("function renderPage")
    );

    let (c, v) = env.tool(
        root.path(),
        "code_search",
        r#"{"query": "(", "mode": "regex"}"#,
    );
    assert_eq!(
        (c, v["error"]["code"].as_str()),
        (1, Some("invalid_arguments")),
        "{v}"
    );
    let (c, v) = env.tool(
        root.path(),
        "code_search",
        r#"{"query": "x", "mode": "fuzzy"}"#,
    );
    assert_eq!(
        (c, v["error"]["code"].as_str()),
        (1, Some("invalid_arguments")),
        "{v}"
    );
}

#[test]
fn symbols_of_every_language() {
    let env = Env::new();
    let root = project();
    for (name, kind, path) in [
        ("PermissionChecker", "struct", "src/permissions.rs"),
        ("check_read", "method", "src/permissions.rs"),
        ("fetch_url", "function", "py/tool.py"),
        ("Options", "interface", "web/app.ts"),
        ("Button", "function", "web/view.tsx"),
        ("EventBus", "class", "web/util.js"),
        ("StartServer", "function", "go/server.go"),
        ("runApp", "method", "java/App.java"),
        ("hash_bytes", "function", "c/hash.c"),
        ("RedBlackTree", "class", "cpp/tree.cpp"),
    ] {
        let (c, v) = env.tool(
            root.path(),
            "find_symbol",
            &format!(r#"{{"name": "{name}", "exact": true}}"#),
        );
        assert_eq!(c, 0, "{v}");
        let s = &v["symbols"][0];
        assert_eq!(
            (s["name"].as_str(), s["path"].as_str()),
            (Some(name), Some(path)),
            "{v}"
        );
        assert_eq!(s["kind"], kind, "{name}: {v}");
        for key in ["start_line", "end_line", "signature", "container"] {
            assert!(s.get(key).is_some(), "{key} missing: {s}");
        }
    }
    let (_, v) = env.tool(root.path(), "find_symbol", r#"{"name": "check_read"}"#);
    assert_eq!(v["symbols"][0]["container"], "PermissionChecker");
    assert_eq!(
        v["symbols"][0]["signature"],
        "pub fn check_read(&self, path: &str) -> bool {"
    );
    assert_eq!(
        (
            v["symbols"][0]["start_line"].clone(),
            v["symbols"][0]["end_line"].clone()
        ),
        (7.into(), 9.into())
    );
    // Not exact: case and parts of names match, the exact one first.
    let (_, v) = env.tool(
        root.path(),
        "find_symbol",
        r#"{"name": "permissionchecker"}"#,
    );
    assert_eq!(v["symbols"][0]["name"], "PermissionChecker");
    let (_, v) = env.tool(
        root.path(),
        "find_symbol",
        r#"{"name": "Checker", "kind": "impl"}"#,
    );
    assert_eq!(v["symbols"].as_array().unwrap().len(), 1, "{v}");
    // .gitignored files are not indexed.
    let (_, v) = env.tool(root.path(), "find_symbol", r#"{"name": "hidden_function"}"#);
    assert_eq!(v["symbols"], Value::Array(vec![]));

    let (_, v) = env.tool(
        root.path(),
        "file_outline",
        r#"{"path": "src/permissions.rs"}"#,
    );
    assert_eq!(v["path"], "src/permissions.rs");
    let top: Vec<&str> = v["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        top,
        ["PermissionChecker", "PermissionChecker", "deny_all"],
        "{v}"
    );
    assert_eq!(v["symbols"][1]["kind"], "impl");
    assert_eq!(v["symbols"][1]["children"][0]["name"], "check_read");
    let (_, v) = env.tool(
        root.path(),
        "file_outline",
        r#"{"path": "docs/permissions.md"}"#,
    );
    assert_eq!(v["symbols"], Value::Array(vec![]));
    assert!(v["note"].is_string());
    let (c, v) = env.tool(root.path(), "file_outline", r#"{"path": "src/nope.rs"}"#);
    assert_eq!(
        (c, v["error"]["code"].as_str()),
        (1, Some("not_found")),
        "{v}"
    );
    let (c, v) = env.tool(
        root.path(),
        "file_outline",
        r#"{"path": "../../etc/passwd"}"#,
    );
    assert_eq!(c, 1, "{v}");
    assert_eq!(v["error"]["code"], "outside_root");

    let (_, v) = env.tool(root.path(), "find_references", r#"{"name": "check_read"}"#);
    assert_eq!(v["approximate"], true);
    let refs = v["references"].as_array().unwrap();
    assert_eq!(refs.len(), 1, "{v}");
    assert_eq!(
        (refs[0]["path"].as_str(), refs[0]["line"].as_u64()),
        (Some("src/main.rs"), Some(4))
    );
    assert_eq!(refs[0]["in_symbol"], "main");
    assert!(
        refs[0]["snippet"]
            .as_str()
            .unwrap()
            .contains("checker.check_read")
    );

    let (_, v) = env.tool(root.path(), "repo_map", r#"{"max_tokens": 64}"#);
    assert!(v["tokens"].as_u64().unwrap() <= 64, "{v}");
    assert!(v["files"].as_u64().unwrap() >= 1);
    let map = v["map"].as_str().unwrap();
    assert!(map.contains("│ "), "{map}");
    let (_, v) = env.tool(
        root.path(),
        "repo_map",
        r#"{"focus_paths": ["src/main.rs"], "max_tokens": 256}"#,
    );
    let map = v["map"].as_str().unwrap();
    assert!(map.starts_with("src/permissions.rs:\n"), "{map}");
    assert!(!map.contains("src/main.rs:"), "{map}");
}

#[test]
fn a_cold_process_sees_what_changed_without_a_watcher() {
    let env = Env::new();
    let root = project();
    assert_eq!(code(&index(&env, root.path(), "build")), 0);
    let find = |name: &str| {
        let (_, v) = env.tool(
            root.path(),
            "find_symbol",
            &format!(r#"{{"name": "{name}", "exact": true}}"#),
        );
        v["symbols"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["path"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    std::fs::write(
        root.path().join("src/late.rs"),
        "pub fn arrived_late() {}\n",
    )
    .unwrap();
    assert_eq!(find("arrived_late"), ["src/late.rs"]);
    // Changed in place: the old name goes, the new one comes.
    std::fs::write(
        root.path().join("src/late.rs"),
        "pub fn renamed_later() {}\n",
    )
    .unwrap();
    assert_eq!(find("arrived_late"), Vec::<String>::new());
    assert_eq!(find("renamed_later"), ["src/late.rs"]);
    std::fs::remove_file(root.path().join("src/permissions.rs")).unwrap();
    assert_eq!(find("deny_all"), Vec::<String>::new());
    let (_, v) = env.tool(
        root.path(),
        "code_search",
        r#"{"query": "permission checker"}"#,
    );
    assert!(
        !results(&v).contains(&"src/permissions.rs".to_string()),
        "{v}"
    );
    // The stored generation still names it; status says what changed.
    let status = json_of(&index(&env, root.path(), "status"));
    assert_eq!(status["changed"], 2, "{status}");
}

#[test]
fn hostile_files_do_not_break_it() {
    let env = Env::new();
    let root = project();
    let config = env.home.path().join("config.toml");
    std::fs::write(
        &config,
        "[index]\nmax_file_bytes = 200000\nexclude = [\"vendor/**\"]\n",
    )
    .unwrap();
    let r = root.path();
    // One line of 300 kB (over the cap), a minified file under it, a
    // binary, invalid UTF-8, a link loop and a link out of the root.
    std::fs::write(
        r.join("huge.min.js"),
        format!("var a={};", "x".repeat(300_000)),
    )
    .unwrap();
    std::fs::write(
        r.join("small.min.js"),
        format!("function minifiedThing(){{{}}}", "a;".repeat(50_000)),
    )
    .unwrap();
    std::fs::write(
        r.join("far.min.js"),
        format!("{}function farAwayName(){{}}", "b;".repeat(5_000)),
    )
    .unwrap();
    std::fs::write(r.join("blob.bin"), [0u8, 1, 2, 0, 159, 146, 150]).unwrap();
    std::fs::write(
        r.join("latin1.rs"),
        b"pub fn caf\xe9_maker() {}\npub fn plain_after() {}\n",
    )
    .unwrap();
    std::os::unix::fs::symlink("loop", r.join("loop")).unwrap();
    std::os::unix::fs::symlink("/etc", r.join("etc_link")).unwrap();
    std::fs::create_dir_all(r.join("vendor")).unwrap();
    std::fs::write(r.join("vendor/dep.rs"), "pub fn vendored_fn() {}\n").unwrap();
    let tool = |name: &str, args: &str| {
        let out = env
            .cmd()
            .arg("--config")
            .arg(&config)
            .args(["tool", name, args, "--root"])
            .arg(r)
            .output()
            .unwrap();
        (code(&out), json_of(&out))
    };
    let (c, v) = tool("find_symbol", r#"{"name": "plain_after"}"#);
    assert_eq!(c, 0, "{v}");
    assert_eq!(v["symbols"][0]["path"], "latin1.rs");
    let (_, v) = tool("find_symbol", r#"{"name": "vendored_fn"}"#);
    assert_eq!(v["symbols"], Value::Array(vec![]), "excluded: {v}");
    let (_, v) = tool("code_search", r#"{"query": "minifiedThing"}"#);
    assert_eq!(results(&v), ["small.min.js"]);
    // A long line's snippet shows where the word is.
    let (_, v) = tool("code_search", r#"{"query": "farAwayName"}"#);
    let text = v["results"][0]["snippets"][0]["text"].as_str().unwrap();
    assert!(text.starts_with('…') && text.contains("farAwayName"), "{v}");
    let (_, v) = tool("code_search", r#"{"query": "passwd root"}"#);
    assert!(
        results(&v).iter().all(|p| !p.starts_with("etc_link")),
        "{v}"
    );
    let out = env
        .cmd()
        .arg("--config")
        .arg(&config)
        .args(["index", "status", "--json", "--root"])
        .arg(r)
        .output()
        .unwrap();
    let status = json_of(&out);
    assert_eq!(status["fresh"], true, "{status}");

    let bad = env.home.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[index]\nmax_file_bytes = 0\nexclude = [\"src/[a\"]\n",
    )
    .unwrap();
    let out = env
        .cmd()
        .arg("--config")
        .arg(&bad)
        .args(["index", "status", "--root"])
        .arg(r)
        .output()
        .unwrap();
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("index.max_file_bytes"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("src/[a"), "{}", stderr(&out));
}

#[test]
fn turned_off_it_offers_no_tools_and_says_so() {
    let env = Env::new();
    let root = project();
    let config = env.home.path().join("off.toml");
    std::fs::write(&config, "[index]\nenabled = false\n").unwrap();
    let out = env
        .cmd()
        .arg("--config")
        .arg(&config)
        .args(["tool", "--list", "--root"])
        .arg(root.path())
        .output()
        .unwrap();
    let names: Vec<String> = json_of(&out)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert!(names.contains(&"search_project".to_string()));
    for gone in [
        "code_search",
        "find_symbol",
        "find_references",
        "file_outline",
        "repo_map",
    ] {
        assert!(!names.contains(&gone.to_string()), "{gone} offered");
    }
    let out = env
        .cmd()
        .arg("--config")
        .arg(&config)
        .args(["index", "build", "--root"])
        .arg(root.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("enabled = false"), "{}", stderr(&out));
    // On by default: every index tool in every mode.
    let tools = env.tool_list(root.path());
    for name in [
        "code_search",
        "find_symbol",
        "find_references",
        "file_outline",
        "repo_map",
    ] {
        let t = tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name}"));
        assert_eq!(t["modes"].as_array().unwrap().len(), 3, "{t}");
    }
}

#[test]
fn a_build_killed_midway_leaves_the_last_generation_or_none() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    for d in 0..40 {
        for f in 0..60 {
            let text = format!(
                "pub struct Thing{d}x{f} {{ value: u32 }}\nimpl Thing{d}x{f} {{\n    pub fn compute_{d}_{f}(&self) -> u32 {{ self.value * {f} }}\n}}\n{}",
                "// filler line for the tokenizer\n".repeat(40)
            );
            let path = root.path().join(format!("m{d}/f{f}.rs"));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
    }
    let mut generation = 0;
    for (round, delay) in [30u64, 80, 150, 300, 5, 600].into_iter().enumerate() {
        let mut child = env
            .cmd()
            .args(["index", "rebuild", "--root"])
            .arg(root.path())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay));
        let _ = child.kill();
        let finished = child.wait().unwrap().success();
        let status = json_of(&index(&env, root.path(), "status"));
        assert!(status.get("problem").is_none(), "round {round}: {status}");
        let now = status["generation"].as_u64().unwrap();
        if finished {
            generation += 1;
        }
        assert!(
            now == generation || (now == generation + 1),
            "round {round}: {now} vs {generation}"
        );
        generation = now;
        assert!(
            status["state"] == "ready" || (status["state"] == "none" && now == 0),
            "{status}"
        );
    }
    // The next query works and is right.
    let (c, v) = env.tool(
        root.path(),
        "find_symbol",
        r#"{"name": "compute_39_59", "exact": true}"#,
    );
    assert_eq!(c, 0, "{v}");
    assert_eq!(v["symbols"][0]["path"], "m39/f59.rs");
    // What a killed build left beside the index goes at the next build.
    assert_eq!(code(&index(&env, root.path(), "build")), 0);
    let dir = Path::new(
        json_of(&index(&env, root.path(), "status"))["path"]
            .as_str()
            .unwrap(),
    )
    .parent()
    .unwrap()
    .to_path_buf();
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        left.iter().all(|n| n == "index.bin" || n == "build.lock"),
        "{left:?}"
    );
}

#[test]
fn a_50_mb_line_and_files_deleted_during_the_build() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    for d in 0..20 {
        for f in 0..100 {
            let path = r.join(format!("m{d}/f{f}.rs"));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            let text = format!(
                "pub fn gone_{d}_{f}() -> u32 {{ {f} }}\n{}",
                "// words for the tokenizer to split apart\n".repeat(60)
            );
            std::fs::write(path, text).unwrap();
        }
    }
    // One line of 50 MB, as a minified bundle (over the default cap: listed,
    // never read whole) and a small file that stays.
    let line: String = (0..2_000_000)
        .map(|i| format!("var v{i}=f{i}(a);"))
        .take_while({
            let mut n = 0usize;
            move |s: &String| {
                n += s.len();
                n <= 50_000_000
            }
        })
        .collect();
    std::fs::write(r.join("bundle.min.js"), &line).unwrap();
    std::fs::write(r.join("keep.rs"), "pub fn stays_here() {}\n").unwrap();
    drop(line);
    let mut child = env
        .cmd()
        .args(["index", "build", "--json", "--root"])
        .arg(r)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Half of the folders go while the build walks and reads them.
    std::thread::sleep(Duration::from_millis(40));
    for d in (0..20).step_by(2) {
        std::fs::remove_dir_all(r.join(format!("m{d}"))).unwrap();
    }
    assert!(
        child.try_wait().unwrap().is_none(),
        "the build ended before the deletions"
    );
    let out = child.wait_with_output().unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let built = json_of(&out);
    assert!(built["files"].as_u64().unwrap() >= 1002, "{built}");
    // No answer points into a deleted file, from this process or the next.
    for name in ["gone_0_7", "gone_18_99", "gone_1_7"] {
        let (c, v) = env.tool(
            r,
            "find_symbol",
            &format!(r#"{{"name": "{name}", "exact": true}}"#),
        );
        assert_eq!(c, 0, "{v}");
        let deleted = name == "gone_0_7" || name == "gone_18_99";
        assert_eq!(
            v["symbols"].as_array().unwrap().is_empty(),
            deleted,
            "{name}: {v}"
        );
    }
    let (_, v) = env.tool(
        r,
        "code_search",
        r#"{"query": "gone tokenizer", "limit": 50}"#,
    );
    let paths = results(&v);
    assert!(!paths.is_empty(), "{v}");
    for p in &paths {
        let d: u32 = p[1..p.find('/').unwrap()].parse().unwrap();
        assert!(d % 2 == 1, "a deleted file was found: {p}");
    }
    // The bundle is listed, not read (over `max_file_bytes`).
    let (_, v) = env.tool(r, "code_search", r#"{"query": "v1234 f1234"}"#);
    assert_eq!(results(&v), Vec::<String>::new(), "{v}");
    let (_, v) = env.tool(r, "find_symbol", r#"{"name": "stays_here"}"#);
    assert_eq!(v["symbols"][0]["path"], "keep.rs", "{v}");
    // The next build after the deletions is correct and fresh.
    assert_eq!(code(&index(&env, r, "rebuild")), 0);
    let status = json_of(&index(&env, r, "status"));
    assert_eq!(status["fresh"], true, "{status}");
    assert_eq!(status["files"], 1002, "{status}");
}

/// A tree with what can trip a prefilter: cases, a Kelvin sign and a long
/// s (they match `k` and `s` when case is ignored), accents, CRLF, a NUL
/// after the first 8 KiB, files over the index's size cap, an excluded
/// folder, a nested .gitignore.
fn search_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut files: Vec<(String, String)> = vec![
        ("src/lib.rs".into(), "pub fn ReadFileSync(path: &str) -> Vec<u8> {\n    std::fs::read(path).unwrap_or_default()\n}\n// TODO: fix the Kelvin case\n".into()),
        ("src/kelvin.txt".into(), "temperature 300\u{212A} and the \u{17F}tar\n".into()),
        ("src/accents.md".into(), "Café, naïve, ÉCOLE, straße\n".into()),
        ("src/crlf.txt".into(), "line one\r\nline two\r\nfoo_bar baz\r\n".into()),
        ("web/app.ts".into(), "export function renderPage(opts: Options): string {\n  return `<div>${opts.title}</div>`;\n}\n".into()),
        ("web/.gitignore".into(), "generated.js\n".into()),
        ("web/generated.js".into(), "const renderPage = 1;\n".into()),
        ("vendor/dep.go".into(), "package dep\nfunc ReadFileSync() {}\n".into()),
        ("big/huge.txt".into(), format!("{}needle in a haystack\n", "hay ".repeat(3000))),
    ];
    for i in 0..30 {
        files.push((
            format!("gen/m{i}.py"),
            format!(
                "def handler_{i}(request):\n    return Response(status={})\n# note {}\n",
                200 + i,
                "x".repeat(i)
            ),
        ));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    write_files(dir.path(), &refs);
    let mut late_nul = "searchable text before a NUL\n".repeat(400).into_bytes();
    late_nul.push(0);
    late_nul.extend_from_slice(b"after the NUL: renderPage\n");
    std::fs::write(dir.path().join("src/late_nul.dat"), late_nul).unwrap();
    dir
}

/// A tiny deterministic generator (xorshift), so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn patterns(root: &Path, count: usize) -> Vec<(String, bool, Option<bool>)> {
    let texts: Vec<String> = support::walk(root)
        .into_iter()
        .filter_map(|p| std::fs::read(&p).ok())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .collect();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut out = Vec::new();
    while out.len() < count {
        let text = &texts[rng.below(texts.len())];
        let chars: Vec<char> = text.chars().collect();
        let start = rng.below(chars.len().max(1));
        let len = 1 + rng.below(12);
        let mut piece: String = chars.iter().skip(start).take(len).collect();
        if piece.trim().is_empty() {
            continue;
        }
        if rng.below(3) == 0 {
            piece = piece
                .chars()
                .map(|c| {
                    if rng.below(2) == 0 {
                        c.to_ascii_uppercase()
                    } else {
                        c.to_ascii_lowercase()
                    }
                })
                .collect();
        }
        let case = [None, Some(true), Some(false)][rng.below(3)];
        match rng.below(4) {
            0 | 1 => out.push((piece, false, case)),
            2 => out.push((regex::escape(&piece), true, case)),
            _ => {
                let escaped = regex::escape(&piece);
                let decorated = match rng.below(5) {
                    0 => format!("{escaped}\\w*"),
                    1 => format!("(?:{escaped})+x?"),
                    2 => format!("{escaped}|zzqq"),
                    3 => format!("^.*{escaped}"),
                    _ => format!("[a-z]{escaped}.?"),
                };
                out.push((decorated, true, case));
            }
        }
    }
    out.push(("k".into(), false, Some(false)));
    out.push(("STAR".into(), false, None));
    out.push(("star".into(), false, Some(false)));
    out.push(("300k".into(), false, Some(false)));
    out.push(("café".into(), false, Some(false)));
    out.push(("needle".into(), false, None));
    out.push(("renderPage".into(), false, None));
    out
}

#[test]
fn search_project_finds_the_same_with_and_without_the_index() {
    let root = search_tree();
    let with = Env::new();
    let without = Env::new();
    let cap = with.home.path().join("index.toml");
    std::fs::write(
        &cap,
        "[index]\nmax_file_bytes = 4096\nexclude = [\"vendor/**\"]\n",
    )
    .unwrap();
    let off = without.home.path().join("off.toml");
    std::fs::write(&off, "[index]\nenabled = false\n").unwrap();
    let out = with
        .cmd()
        .arg("--config")
        .arg(&cap)
        .args(["index", "build", "--json", "--root"])
        .arg(root.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // Changed after the build: read again, never skipped.
    std::fs::write(
        root.path().join("gen/m3.py"),
        "def handler_3(request):\n    return renamed_after_build\n",
    )
    .unwrap();
    let search = |env: &Env, config: &Path, args: &str| {
        let out = env
            .cmd()
            .arg("--config")
            .arg(config)
            .args(["tool", "search_project", args, "--root"])
            .arg(root.path())
            .output()
            .unwrap();
        support::stdout(&out)
    };
    let mut matched = 0;
    for (query, regex, case) in patterns(root.path(), 300) {
        let mut args = serde_json::json!({"query": query, "regex": regex, "limit": 50});
        if let Some(c) = case {
            args["case_sensitive"] = c.into();
        }
        let args = args.to_string();
        let a = search(&with, &cap, &args);
        let b = search(&without, &off, &args);
        assert_eq!(a, b, "{args}");
        if a.contains("\"file_path\"") {
            matched += 1;
        }
    }
    assert!(matched > 150, "only {matched} patterns matched anything");
}

#[test]
fn with_an_index_search_project_opens_only_the_files_that_can_match() {
    if !support::strace::available() {
        return;
    }
    let root = search_tree();
    let env = Env::new();
    let opened = |env: &Env| {
        let log = env.home.path().join("strace.log");
        let out = support::strace::command(
            env,
            &[
                "-f",
                "-e",
                "trace=openat,openat2",
                "-o",
                log.to_str().unwrap(),
            ],
        )
        .args([
            "tool",
            "search_project",
            r#"{"query": "handler_17"}"#,
            "--root",
        ])
        .arg(root.path())
        .output()
        .unwrap();
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        assert!(support::stdout(&out).contains("gen/m17.py"));
        let log = std::fs::read_to_string(&log).unwrap();
        log.lines()
            .filter(|l| l.contains("gen/m") && l.contains(".py\""))
            .count()
    };
    let before = opened(&env);
    assert!(
        before >= 30,
        "without an index every file is read: {before}"
    );
    assert_eq!(code(&index(&env, root.path(), "build")), 0);
    let after = opened(&env);
    assert!(
        after <= 2,
        "with one, only the files that can match: {after}"
    );
}

/// A model2vec-format model small enough to write here: a WordPiece
/// vocabulary where `remove`/`delete` share a meaning, as do
/// `entry`/`item`/`record` and `parse`/`config`.
fn tiny_model(dir: &Path) {
    let words: &[(&str, [f32; 4])] = &[
        ("[UNK]", [0.0, 0.0, 0.0, 0.0]),
        ("[PAD]", [0.0, 0.0, 0.0, 0.0]),
        ("remove", [1.0, 0.0, 0.0, 0.0]),
        ("delete", [1.0, 0.0, 0.0, 0.0]),
        ("entry", [0.0, 1.0, 0.0, 0.0]),
        ("item", [0.0, 1.0, 0.0, 0.0]),
        ("record", [0.0, 1.0, 0.0, 0.0]),
        ("parse", [0.0, 0.0, 1.0, 0.0]),
        ("config", [0.0, 0.0, 1.0, 0.0]),
        ("render", [0.0, 0.0, 0.0, 1.0]),
        ("page", [0.0, 0.0, 0.0, 1.0]),
    ];
    let vocab: serde_json::Map<String, Value> = words
        .iter()
        .enumerate()
        .map(|(i, (w, _))| (w.to_string(), Value::from(i)))
        .collect();
    let tokenizer = serde_json::json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
        "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": null, "decoder": null,
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": vocab}
    });
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("tokenizer.json"), tokenizer.to_string()).unwrap();
    std::fs::write(dir.join("config.json"), r#"{"normalize": true}"#).unwrap();
    let data: Vec<u8> = words
        .iter()
        .flat_map(|(_, v)| v.iter().flat_map(|x| x.to_le_bytes()))
        .collect();
    let mut header = serde_json::json!({"embeddings": {"dtype": "F32", "shape": [words.len(), 4], "data_offsets": [0, data.len()]}}).to_string();
    while !header.len().is_multiple_of(8) {
        header.push(' ');
    }
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend_from_slice(header.as_bytes());
    file.extend_from_slice(&data);
    std::fs::write(dir.join("model.safetensors"), file).unwrap();
}

#[test]
fn a_local_embedding_model_finds_by_meaning_and_nothing_is_fetched() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    write_files(
        root.path(),
        &[
            (
                "src/store.rs",
                "pub fn delete_item(id: u32) {\n    // drops the stored record\n}\n",
            ),
            ("src/config.rs", "pub fn parse_config(text: &str) {}\n"),
            ("src/page.rs", "pub fn render_page() {}\n"),
        ],
    );
    let model = env.home.path().join("tiny-model");
    tiny_model(&model);
    let with = env.home.path().join("with.toml");
    std::fs::write(
        &with,
        format!("[index]\nembedding_model = \"{}\"\n", model.display()),
    )
    .unwrap();
    let search = |config: &Path, query: &str| {
        let out = env
            .cmd()
            .arg("--config")
            .arg(config)
            .args([
                "tool",
                "code_search",
                &serde_json::json!({"query": query}).to_string(),
                "--root",
            ])
            .arg(root.path())
            .output()
            .unwrap();
        (code(&out), json_of(&out))
    };
    // Off by default: no word of the query is in any file.
    let plain = env.home.path().join("plain.toml");
    std::fs::write(&plain, "").unwrap();
    let (c, v) = search(&plain, "remove entry");
    assert_eq!(c, 0, "{v}");
    assert_eq!(results(&v), Vec::<String>::new(), "{v}");
    // With the model: by meaning, and said so.
    let (c, v) = search(&with, "remove entry");
    assert_eq!(c, 0, "{v}");
    assert_eq!(results(&v)[0], "src/store.rs", "{v}");
    let why = v["results"][0]["why"].to_string();
    assert!(why.contains("close in meaning"), "{why}");
    // The words still lead where they match.
    let (_, v) = search(&with, "render page");
    assert_eq!(results(&v)[0], "src/page.rs", "{v}");
    // A model folder that is not there: a clear error, nothing fetched.
    let gone = env.home.path().join("gone.toml");
    std::fs::write(&gone, "[index]\nembedding_model = \"/nonexistent/model\"\n").unwrap();
    let (c, v) = search(&gone, "remove entry");
    assert_eq!(c, 1, "{v}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("embedding_model") && message.contains("/nonexistent/model"),
        "{message}"
    );
}

#[test]
fn a_build_apart_says_how_far_it_got() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    for d in 0..30 {
        for f in 0..80 {
            let path = root.path().join(format!("m{d}/f{f}.rs"));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(
                path,
                format!("pub fn work_{d}_{f}() {{}}\n{}", "// filler\n".repeat(200)),
            )
            .unwrap();
        }
    }
    let out = env
        .cmd()
        .args(["index", "build", "--json", "--progress", "--root"])
        .arg(root.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json_of(&out)["files"], 2400);
    let lines: Vec<Value> = stderr(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not progress: {l}")))
        .collect();
    assert!(!lines.is_empty(), "no progress said");
    assert!(
        lines
            .iter()
            .all(|l| l["total"] == 2400 && l["done"].as_u64().unwrap() < 2400),
        "{lines:?}"
    );
}
