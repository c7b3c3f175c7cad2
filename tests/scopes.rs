//! Scopes (SPEC 14, issue 15) through the binary: folders added beside the
//! agent root with `--add-dir DIR[:rw]` or `[workspace] extra_roots`, read
//! and searched as `@name/…`, read-only unless `:rw`; hostile paths through
//! `@scope/` prefixes; edits, checkpoints and rollback in a `:rw` scope.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use support::jobs::{config, exec, sse};
use support::llm_server::{LlmServer, openai};
use support::{Env, code, json_of, stderr, stdout, write_files};

/// `base/proj` (the agent root), `base/docs` (to read), `base/lib` (to
/// write), `base/outside` (never reachable) with a link to it from docs.
struct Arena {
    _dir: tempfile::TempDir,
    base: PathBuf,
}

impl Arena {
    fn new() -> Arena {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        write_files(
            &base,
            &[
                ("proj/src/main.rs", "fn main() {}\n"),
                ("docs/guide/intro.md", "# Intro\nthe needle is here\n"),
                ("lib/lib.rs", "pub fn one() -> u32 {\n    1\n}\n"),
                ("outside/secret.txt", "SECRET-OUTSIDE\n"),
            ],
        );
        std::os::unix::fs::symlink(base.join("outside"), base.join("docs/out")).unwrap();
        Arena { _dir: dir, base }
    }

    fn root(&self) -> PathBuf {
        self.base.join("proj")
    }

    fn dirs(&self) -> Vec<String> {
        vec![
            "--add-dir".into(),
            self.base.join("docs").display().to_string(),
            "--add-dir".into(),
            format!("{}:rw", self.base.join("lib").display()),
        ]
    }

    fn tool(&self, env: &Env, name: &str, args: &str, extra: &[String]) -> (i32, Value) {
        let out = env
            .cmd()
            .args(["tool", name, args, "--root"])
            .arg(self.root())
            .args(extra)
            .output()
            .unwrap();
        (code(&out), json_of(&out))
    }
}

fn error_of(v: &Value) -> (&str, &str) {
    (
        v["error"]["code"].as_str().unwrap_or_default(),
        v["error"]["message"].as_str().unwrap_or_default(),
    )
}

#[test]
fn list_scopes_and_every_read_tool_span_the_scopes() {
    let env = Env::new();
    let a = Arena::new();
    let dirs = a.dirs();
    let (c, scopes) = a.tool(&env, "list_scopes", "{}", &dirs);
    assert_eq!(c, 0);
    assert_eq!(
        scopes["scopes"],
        json!([
            {"id": "@root", "path": a.root().display().to_string(), "access": "read_write", "primary": true},
            {"id": "@docs", "path": a.base.join("docs").display().to_string(), "access": "read_only", "primary": false},
            {"id": "@lib", "path": a.base.join("lib").display().to_string(), "access": "read_write", "primary": false},
        ])
    );
    let (c, listed) = a.tool(&env, "list_files", "{}", &dirs);
    assert_eq!(c, 0);
    let paths: Vec<&str> = listed["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "src",
            "src/main.rs",
            "@docs/guide",
            "@docs/guide/intro.md",
            "@docs/out",
            "@lib/lib.rs"
        ]
    );
    let (_, under) = a.tool(&env, "list_files", r#"{"prefix": "@docs/gu"}"#, &dirs);
    assert_eq!(under["files"][0]["path"], "@docs/guide");
    let (c, found) = a.tool(&env, "search_project", r#"{"query": "needle"}"#, &dirs);
    assert_eq!(c, 0);
    assert_eq!(found["results"][0]["file_path"], "@docs/guide/intro.md");
    let (c, read) = a.tool(
        &env,
        "read_file",
        r#"{"file_path": "@docs/guide/intro.md"}"#,
        &dirs,
    );
    assert_eq!(c, 0, "{read}");
    assert_eq!(read["file_path"], "@docs/guide/intro.md");
    assert!(read["content"].as_str().unwrap().contains("needle"));
    // Without the flag there is one scope and no `@docs`.
    let (_, alone) = a.tool(&env, "list_scopes", "{}", &[]);
    assert_eq!(alone["scopes"].as_array().unwrap().len(), 1);
}

#[test]
fn hostile_and_wrong_scoped_paths_get_their_own_error_codes() {
    let env = Env::new();
    let a = Arena::new();
    let dirs = a.dirs();
    let read = |path: &str| {
        let (c, v) = a.tool(
            &env,
            "read_file",
            &json!({ "file_path": path }).to_string(),
            &dirs,
        );
        assert_eq!(c, 1, "{path}: {v}");
        let (code, message) = error_of(&v);
        (code.to_string(), message.to_string())
    };
    for escape in ["@docs/../..", "@docs/../outside/secret.txt", "@lib/../../x"] {
        let (code, message) = read(escape);
        assert_eq!(code, "outside_root", "{escape}: {message}");
        assert!(message.contains("leaves the scope"), "{message}");
    }
    let (code, message) = read("@docs/out/secret.txt");
    assert_eq!(code, "outside_root");
    assert!(
        message.contains("outside the scope `@docs`"),
        "a link leaving a scope: {message}"
    );
    let (code, message) = read("@nope/x.md");
    assert_eq!(code, "unknown_scope");
    assert!(
        message.contains("`@root`, `@docs`, `@lib`") && message.contains("list_scopes"),
        "{message}"
    );
    let (code, message) = read("@docs/guide/intor.md");
    assert_eq!(code, "not_found");
    assert!(
        message.contains("`@docs/guide/intro.md`") && message.contains("list_scopes"),
        "close matches across scopes: {message}"
    );
    let abs = a.base.join("lib/lib.rs").display().to_string();
    let (code, message) = read(&abs);
    assert_eq!(code, "outside_root");
    assert!(message.contains("use `@lib/lib.rs`"), "{message}");
    let (code, _) = read(&a.base.join("outside/secret.txt").display().to_string());
    assert_eq!(code, "outside_root");
    // Nothing of the outside folder leaked through a listing or a search.
    let (_, all) = a.tool(&env, "list_files", "{}", &dirs);
    let (_, hits) = a.tool(&env, "search_project", r#"{"query": "SECRET"}"#, &dirs);
    assert!(!all.to_string().contains("secret.txt"), "{all}");
    assert_eq!(hits["results"], json!([]));
}

#[test]
fn bad_added_folders_are_usage_errors() {
    let env = Env::new();
    let a = Arena::new();
    let run = |extra: &[&str]| {
        let out = env
            .cmd()
            .args(["tool", "list_scopes", "{}", "--root"])
            .arg(a.root())
            .args(extra)
            .output()
            .unwrap();
        (code(&out), stderr(&out))
    };
    let missing = a.base.join("nope").display().to_string();
    let (c, err) = run(&["--add-dir", &missing]);
    assert_eq!(c, 2);
    assert!(
        err.contains("added folder") && err.contains("does not exist"),
        "{err}"
    );
    let file = a.base.join("lib/lib.rs").display().to_string();
    let (c, err) = run(&["--add-dir", &file]);
    assert_eq!(c, 2);
    assert!(err.contains("is not a directory"), "{err}");
    let (c, err) = run(&["--add-dir", ":rw"]);
    assert_eq!(c, 2);
    assert!(err.contains("names no folder"), "{err}");
    // Git internals stay off limits, even added by hand.
    std::fs::create_dir_all(a.root().join(".git/hooks")).unwrap();
    let git = a.root().join(".git/hooks").display().to_string();
    let (c, err) = run(&["--add-dir", &git]);
    assert_eq!(c, 2);
    assert!(err.contains("inside `.git/`"), "{err}");
}

#[test]
fn config_extra_roots_are_relative_to_the_root_and_names_repeat_with_suffixes() {
    let env = Env::new();
    let a = Arena::new();
    write_files(&a.base, &[("other/docs/x.md", "x\n")]);
    let cfg = env.home.path().join("scopes.toml");
    std::fs::write(
        &cfg,
        "[workspace]\nextra_roots = [\"../docs\", \"../other/docs:rw\"]\n",
    )
    .unwrap();
    let out = env
        .cmd()
        .arg("--config")
        .arg(&cfg)
        .args(["tool", "list_scopes", "{}", "--root"])
        .arg(a.root())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v = json_of(&out);
    let ids: Vec<(&str, &str)> = v["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["id"].as_str().unwrap(), s["access"].as_str().unwrap()))
        .collect();
    assert_eq!(
        ids,
        [
            ("@root", "read_write"),
            ("@docs", "read_only"),
            ("@docs-2", "read_write")
        ]
    );
}

/// A model that proposes `edits` in its first turn, then answers.
fn propose(
    env: &Env,
    root: &Path,
    edits: Value,
    extra: &[String],
) -> (support::jobs::Run, LlmServer) {
    let args = json!({ "edits": edits }).to_string();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "propose_edits", &args)])),
        sse(openai::text(&["done"])),
    ]);
    let cfg = config(env, "openai", &server.url(), "");
    let mut args: Vec<&str> = vec!["--json"];
    args.extend(extra.iter().map(String::as_str));
    args.push("change it");
    (exec(env, &cfg, root, &args), server)
}

fn tool_result(run: &support::jobs::Run) -> Value {
    run.events()
        .iter()
        .find(|e| e["type"] == "tool.call.completed" || e["type"] == "tool.call.failed")
        .map(|e| e["data"].clone())
        .unwrap()
}

#[test]
fn edits_to_a_read_only_scope_are_refused_naming_it() {
    let env = Env::new();
    let a = Arena::new();
    let (run, server) = propose(
        &env,
        &a.root(),
        json!([{"file_path": "@docs/guide/intro.md", "operation": "replace",
                "start_line": 1, "end_line": 1, "new_text": "# Changed\n"}]),
        &a.dirs(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let data = tool_result(&run);
    let text = data.to_string();
    assert!(text.contains("read_only_scope"), "{text}");
    assert!(text.contains("read-only scope `@docs`"), "{text}");
    assert_eq!(
        std::fs::read_to_string(a.base.join("docs/guide/intro.md")).unwrap(),
        "# Intro\nthe needle is here\n"
    );
    // The model was told about the scopes and offered list_scopes.
    let first = &server.requests()[0].body;
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("`@docs`") && system.contains("read-only"),
        "{system}"
    );
    assert!(
        system.contains("`@lib`") && system.contains("read-write"),
        "{system}"
    );
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"list_scopes"), "{tools:?}");
}

#[test]
fn a_read_write_scope_is_edited_checkpointed_and_rolled_back_by_its_folder() {
    let env = Env::new();
    let a = Arena::new();
    let root = a.root();
    let dirs = a.dirs();
    let (run, _server) = propose(
        &env,
        &root,
        json!([{"file_path": "@lib/lib.rs", "operation": "replace", "start_line": 2,
                "end_line": 2, "old_text": "    1", "new_text": "    2\n"},
               {"file_path": "src/main.rs", "operation": "replace", "start_line": 1,
                "end_line": 1, "new_text": "fn main() { lib(); }\n"}]),
        &dirs,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let cli = |args: &[&str], extra: &[String]| {
        let out = env
            .cmd()
            .args(args)
            .arg("--root")
            .arg(&root)
            .args(extra)
            .output()
            .unwrap();
        (code(&out), stdout(&out), stderr(&out))
    };
    let (c, bundle, err) = cli(&["review", "--json"], &dirs);
    assert_eq!(c, 0, "{err}");
    let bundle: Value = serde_json::from_str(&bundle).unwrap();
    assert_eq!(bundle["files"][0]["file_path"], "@lib/lib.rs");
    // Another folder named `lib` is not where the review goes: nothing is
    // written, and the error names the folder it was proposed in.
    write_files(
        &a.base,
        &[("other/lib/lib.rs", "pub fn one() -> u32 {\n    1\n}\n")],
    );
    let other = vec![
        "--add-dir".to_string(),
        format!("{}:rw", a.base.join("other/lib").display()),
    ];
    let (c, _, err) = cli(&["review", "--accept-all", "--apply"], &other);
    assert_eq!(c, 3, "{err}");
    let proposed_in = a.base.join("lib").display().to_string();
    assert!(err.contains(&format!("proposed in {proposed_in}")), "{err}");
    let (c, _, err) = cli(&["review", "--apply"], &[]);
    assert_eq!(c, 3, "{err}");
    assert!(
        err.contains(&format!("--add-dir {proposed_in}:rw")),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(a.base.join("other/lib/lib.rs")).unwrap(),
        "pub fn one() -> u32 {\n    1\n}\n"
    );
    let (c, _, err) = cli(&["review", "--accept-all", "--apply"], &dirs);
    assert_eq!(c, 0, "{err}");
    let lib = a.base.join("lib/lib.rs");
    let (one, two) = (
        "pub fn one() -> u32 {\n    1\n}\n",
        "pub fn one() -> u32 {\n    2\n}\n",
    );
    let lib_text = || std::fs::read_to_string(&lib).unwrap();
    assert_eq!(lib_text(), two);
    // The checkpoint names the file by scope and keeps the scope's folder.
    let (_, list, _) = cli(&["checkpoints", "list", "--json"], &[]);
    let list: Value = serde_json::from_str(&list).unwrap();
    let cp = list.as_array().unwrap().last().unwrap().clone();
    let lib_entry = cp["affected_files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["file_path"] == "@lib/lib.rs")
        .unwrap()
        .clone();
    assert_eq!(
        lib_entry["scope_root"],
        a.base.join("lib").display().to_string()
    );
    assert!(env.session_text().contains("@lib/lib.rs"));
    assert!(
        env.audit_records()
            .iter()
            .any(|r| r.to_string().contains("@lib/lib.rs")),
        "the audit log names the scoped path"
    );
    let id = cp["checkpoint_id"].as_str().unwrap();
    // Without the folder as a scope, the rollback says how to reach it.
    let (c, _, err) = cli(&["rollback", id], &[]);
    assert_ne!(c, 0);
    assert!(
        err.contains("not a scope of this run") && err.contains("--add-dir"),
        "{err}"
    );
    assert_eq!(lib_text(), two, "a refused rollback changes nothing");
    // Shown all the same, the file whose folder is not reachable said so.
    let (c, out, err) = cli(&["checkpoints", "show", id], &[]);
    assert_eq!(c, 0, "{err}");
    assert!(out.contains("@lib/lib.rs  (not readable now"), "{out}");
    assert!(
        out.contains("src/main.rs  (now: as the checkpoint left it"),
        "{out}"
    );
    // With the folder under another id (another `lib` comes first), the
    // rollback still finds it by its folder.
    write_files(&a.base, &[("vendor/lib/x.rs", "x\n")]);
    let renamed = vec![
        "--add-dir".to_string(),
        a.base.join("vendor/lib").display().to_string(),
        "--add-dir".to_string(),
        format!("{}:rw", a.base.join("lib").display()),
    ];
    // First only the scope's hunk (a scoped rollback), then the rest.
    let lib_hunk = bundle["files"][0]["hunks"][0]["hunk_id"].as_str().unwrap();
    let (c, _, err) = cli(&["rollback", id, "--hunks", lib_hunk], &renamed);
    assert_eq!(c, 0, "{err}");
    assert_eq!(lib_text(), one);
    assert_eq!(
        std::fs::read_to_string(root.join("src/main.rs")).unwrap(),
        "fn main() { lib(); }\n",
        "the root's hunk stays"
    );
    let (c, _, err) = cli(&["rollback", id], &renamed);
    assert_eq!(c, 0, "{err}");
    assert_eq!(lib_text(), one);
    assert_eq!(
        std::fs::read_to_string(root.join("src/main.rs")).unwrap(),
        "fn main() {}\n"
    );
    assert!(
        std::fs::read_to_string(a.base.join("vendor/lib/x.rs")).unwrap() == "x\n",
        "the other `lib` was not touched"
    );
}

#[test]
fn a_read_only_scope_inside_the_root_guards_its_files() {
    let env = Env::new();
    let a = Arena::new();
    let root = a.root();
    write_files(&root, &[("vendor/sdk/api.rs", "pub fn api() {}\n")]);
    // Relative to the folder agent-tui starts in.
    let out = env
        .cmd()
        .current_dir(&root)
        .args(["tool", "list_files", "{}", "--add-dir", "vendor/sdk"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let listed = json_of(&out).to_string();
    assert!(listed.contains("\"@sdk/api.rs\""), "{listed}");
    assert!(
        !listed.contains("vendor/sdk/api.rs"),
        "listed once, in its own scope: {listed}"
    );
    let dirs = vec![
        "--add-dir".to_string(),
        root.join("vendor/sdk").display().to_string(),
    ];
    let (run, _) = propose(
        &env,
        &root,
        json!([{"file_path": "vendor/sdk/api.rs", "operation": "replace", "start_line": 1,
                "end_line": 1, "new_text": "pub fn api() { todo!() }\n"}]),
        &dirs,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = tool_result(&run).to_string();
    assert!(
        text.contains("read_only_scope") && text.contains("`@sdk`"),
        "{text}"
    );
}

#[test]
fn doctor_lists_the_scopes() {
    let env = Env::new();
    let a = Arena::new();
    let out = env
        .cmd()
        .args(["doctor", "--root"])
        .arg(a.root())
        .args(a.dirs())
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(
        text.contains("@docs") && text.contains("read_only") && text.contains("@lib"),
        "{text}"
    );
}

#[test]
fn commands_git_and_at_named_files_with_scopes() {
    let env = Env::new();
    let a = Arena::new();
    let dirs = a.dirs();
    let docs = a.base.join("docs");
    // A command may run in a scope; it writes only in the agent root.
    let (c, ran) = a.tool(
        &env,
        "run_command",
        r#"{"command": "pwd", "cwd": "@docs"}"#,
        &dirs,
    );
    assert_eq!(c, 0, "{ran}");
    assert_eq!(ran["stdout"], format!("{}\n", docs.display()));
    let (_, wrote) = a.tool(
        &env,
        "run_command",
        r#"{"command": "touch made-here", "cwd": "@docs"}"#,
        &dirs,
    );
    if wrote["confined"] == true {
        assert!(!docs.join("made-here").exists(), "{wrote}");
    }
    // The git tools work on the agent root's repository only.
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(a.root())
        .status()
        .unwrap();
    assert!(git.success());
    let (c, v) = a.tool(
        &env,
        "git_diff",
        r#"{"path": "@docs/guide/intro.md"}"#,
        &dirs,
    );
    assert_eq!(c, 1);
    let (code, message) = error_of(&v);
    assert_eq!(code, "invalid_arguments");
    assert!(message.contains("outside the agent root"), "{message}");
    // A root folder whose name starts with `@` is still the root's.
    write_files(&a.root(), &[("@notes/todo.md", "hi\n")]);
    let (c, v) = a.tool(
        &env,
        "read_file",
        r#"{"file_path": "@notes/todo.md"}"#,
        &dirs,
    );
    assert_eq!(c, 0, "{v}");
    assert_eq!(v["content"], "hi\n");
}
