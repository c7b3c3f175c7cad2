//! `list_files`, `read_file` and `search_project` through the real binary:
//! result shapes of SPEC section 5, `[limits]` defaults and caps, errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;

use serde_json::Value;
use sha2::{Digest, Sha256};
use support::{Env, write_files};

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    k.sort_unstable();
    k
}

fn sha(bytes: &[u8]) -> String {
    let d = Sha256::digest(bytes);
    format!(
        "sha256:{}",
        d.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            ("src/main.rs", "fn main() {\n    println!(\"hello\");\n}\n"),
            ("src/lib.rs", "pub mod util;\n"),
            (
                "src/util.rs",
                "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
            ),
            ("docs/guide.md", "# Guide\n"),
            ("Cargo.toml", "[package]\nname = \"demo\"\n"),
            (".gitignore", "target/\n*.log\n"),
            ("target/debug/out.rs", "fn main() {} // build output\n"),
            ("run.log", "fn main() log line\n"),
            (".hidden/secret.rs", "fn main() {} // hidden\n"),
        ],
    );
    dir
}

fn paths(out: &Value) -> Vec<String> {
    out["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect()
}

fn write_config(env: &Env, text: &str) {
    let path = env.default_config_path();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

// ---------- list_files ----------

#[test]
fn list_files_shape_and_order() {
    let p = project();
    let env = Env::new();
    let (code, out) = env.tool(p.path(), "list_files", "{}");
    assert_eq!(code, 0, "{out}");
    assert_eq!(keys(&out), ["files", "truncated"]);
    assert_eq!(out["truncated"], false);
    let files = out["files"].as_array().unwrap();
    for f in files {
        assert_eq!(keys(f), ["kind", "modified", "path", "size"], "{f}");
        let modified = f["modified"].as_str().unwrap();
        humantime::parse_rfc3339(modified).unwrap_or_else(|e| panic!("{modified}: {e}"));
    }
    let listed = paths(&out);
    assert_eq!(
        listed,
        [
            ".gitignore",
            ".hidden",
            ".hidden/secret.rs",
            "Cargo.toml",
            "docs",
            "docs/guide.md",
            "src",
            "src/lib.rs",
            "src/main.rs",
            "src/util.rs"
        ],
        "sorted, .gitignored entries left out"
    );
    let main = files.iter().find(|f| f["path"] == "src/main.rs").unwrap();
    assert_eq!(main["kind"], "file");
    assert_eq!(main["size"], 37);
    let src = files.iter().find(|f| f["path"] == "src").unwrap();
    assert_eq!(src["kind"], "dir");
}

#[test]
fn list_files_prefix_glob_and_partial_names() {
    let p = project();
    let env = Env::new();
    let (_, out) = env.tool(p.path(), "list_files", r#"{"prefix": "src"}"#);
    assert_eq!(paths(&out), ["src/lib.rs", "src/main.rs", "src/util.rs"]);
    let (_, out) = env.tool(p.path(), "list_files", r#"{"prefix": "src/ma"}"#);
    assert_eq!(paths(&out), ["src/main.rs"]);
    let (_, out) = env.tool(p.path(), "list_files", r#"{"prefix": "src/main.rs"}"#);
    assert_eq!(paths(&out), ["src/main.rs"]);
    let (_, out) = env.tool(p.path(), "list_files", r#"{"glob": "*.rs"}"#);
    assert_eq!(
        paths(&out),
        [
            ".hidden/secret.rs",
            "src/lib.rs",
            "src/main.rs",
            "src/util.rs"
        ]
    );
    let (_, out) = env.tool(
        p.path(),
        "list_files",
        r#"{"glob": "src/*.{rs,md}", "prefix": "src/"}"#,
    );
    assert_eq!(paths(&out).len(), 3);
    let (code, out) = env.tool(p.path(), "list_files", r#"{"prefix": "scr"}"#);
    assert_eq!(code, 1);
    assert_eq!(out["error"]["code"], "not_found");
    assert!(
        out["error"]["message"].as_str().unwrap().contains("`src`"),
        "{out}"
    );
    let (code, out) = env.tool(p.path(), "list_files", r#"{"glob": "src/[a"}"#);
    assert_eq!(code, 1);
    assert!(
        out["error"]["message"].as_str().unwrap().contains("`glob`"),
        "{out}"
    );
}

#[test]
fn list_files_limit_default_and_cap() {
    let p = tempfile::tempdir().unwrap();
    for i in 0..230 {
        std::fs::write(p.path().join(format!("f{i:03}.txt")), "x").unwrap();
    }
    let env = Env::new();
    let (_, out) = env.tool(p.path(), "list_files", "{}");
    assert_eq!(paths(&out).len(), 200, "max_list_files_default");
    assert_eq!(out["truncated"], true);
    let (_, out) = env.tool(p.path(), "list_files", r#"{"limit": 3}"#);
    assert_eq!(paths(&out), ["f000.txt", "f001.txt", "f002.txt"]);
    assert_eq!(out["truncated"], true);
    let (_, out) = env.tool(p.path(), "list_files", r#"{"limit": 230}"#);
    assert_eq!(out["truncated"], false);
    write_config(
        &env,
        "[limits]\nmax_list_files_default = 5\nmax_list_files_cap = 10\n",
    );
    let (_, out) = env.tool(p.path(), "list_files", "{}");
    assert_eq!(paths(&out).len(), 5);
    let (_, out) = env.tool(p.path(), "list_files", r#"{"limit": 100}"#);
    assert_eq!(paths(&out).len(), 10, "capped");
    assert_eq!(out["truncated"], true);
}

// ---------- read_file ----------

#[test]
fn read_file_shape_hash_and_lines() {
    let p = project();
    let env = Env::new();
    let (code, out) = env.tool(p.path(), "read_file", r#"{"file_path": "src/util.rs"}"#);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        keys(&out),
        [
            "content",
            "end_line",
            "file_hash",
            "file_path",
            "start_line",
            "total_lines"
        ]
    );
    let bytes = std::fs::read(p.path().join("src/util.rs")).unwrap();
    assert_eq!(out["file_hash"], sha(&bytes));
    assert_eq!(out["content"], String::from_utf8(bytes).unwrap());
    assert_eq!(
        (out["start_line"].as_u64(), out["end_line"].as_u64()),
        (Some(1), Some(3))
    );
    assert_eq!(out["total_lines"], 3);
    assert_eq!(out["file_path"], "src/util.rs");
    let (_, out) = env.tool(
        p.path(),
        "read_file",
        r#"{"file_path": "./src//util.rs", "start_line": 2, "end_line": 2}"#,
    );
    assert_eq!(out["content"], "    a + b\n");
    assert_eq!(
        (out["start_line"].as_u64(), out["end_line"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(out["file_path"], "src/util.rs");
    let (_, out) = env.tool(
        p.path(),
        "read_file",
        r#"{"file_path": "src/util.rs", "start_line": 2, "end_line": 99}"#,
    );
    assert_eq!(out["end_line"], 3, "clamped to the file");
}

#[test]
fn read_file_limits_bytes_and_lines() {
    let p = tempfile::tempdir().unwrap();
    let text: String = (1..=1000).map(|i| format!("line {i:04}\n")).collect();
    std::fs::write(p.path().join("big.txt"), &text).unwrap();
    let env = Env::new();
    let (_, out) = env.tool(p.path(), "read_file", r#"{"file_path": "big.txt"}"#);
    assert_eq!(out["end_line"], 800, "max_read_lines_default");
    assert_eq!(out["total_lines"], 1000);
    assert_eq!(
        out["file_hash"],
        sha(text.as_bytes()),
        "hash covers the whole file"
    );
    let (_, out) = env.tool(
        p.path(),
        "read_file",
        r#"{"file_path": "big.txt", "max_bytes": 25}"#,
    );
    assert_eq!(
        out["content"], "line 0001\nline 0002\n",
        "whole lines within max_bytes"
    );
    assert_eq!(out["end_line"], 2);
    assert_eq!(out["line_cut"], Value::Null, "whole lines are not cut");
    // One line longer than max_bytes: its head, and said to be only that.
    let (_, out) = env.tool(
        p.path(),
        "read_file",
        r#"{"file_path": "big.txt", "max_bytes": 5}"#,
    );
    assert_eq!(out["content"], "line ");
    assert_eq!(out["line_cut"], true, "{out}");
    assert!(
        out["note"].as_str().unwrap().contains("line 1 is longer"),
        "{out}"
    );
    write_config(
        &env,
        "[limits]\nmax_read_bytes_default = 20\nmax_read_bytes_cap = 40\nmax_read_lines_default = 3\n",
    );
    let (_, out) = env.tool(
        p.path(),
        "read_file",
        r#"{"file_path": "big.txt", "start_line": 10}"#,
    );
    assert_eq!(out["content"], "line 0010\nline 0011\n");
    let (_, out) = env.tool(
        p.path(),
        "read_file",
        r#"{"file_path": "big.txt", "max_bytes": 1000000}"#,
    );
    assert_eq!(out["end_line"], 3, "lines default applies first");
    let (_, out) = env.tool(
        p.path(),
        "read_file",
        r#"{"file_path": "big.txt", "end_line": 900, "max_bytes": 1000000}"#,
    );
    assert_eq!(
        out["content"].as_str().unwrap().len(),
        40,
        "max_bytes capped at 40"
    );
}

#[test]
fn read_file_keeps_crlf_and_strips_bom() {
    let p = tempfile::tempdir().unwrap();
    let crlf = b"one\r\ntwo\r\nthree";
    let bom = b"\xEF\xBB\xBFfirst\nsecond\n";
    std::fs::write(p.path().join("crlf.txt"), crlf).unwrap();
    std::fs::write(p.path().join("bom.txt"), bom).unwrap();
    let env = Env::new();
    let (_, out) = env.tool(p.path(), "read_file", r#"{"file_path": "crlf.txt"}"#);
    assert_eq!(out["content"], "one\r\ntwo\r\nthree");
    assert_eq!(out["total_lines"], 3);
    assert_eq!(out["file_hash"], sha(crlf));
    let (_, out) = env.tool(
        p.path(),
        "read_file",
        r#"{"file_path": "crlf.txt", "start_line": 2, "end_line": 2}"#,
    );
    assert_eq!(out["content"], "two\r\n");
    let (_, out) = env.tool(p.path(), "read_file", r#"{"file_path": "bom.txt"}"#);
    assert_eq!(out["content"], "first\nsecond\n");
    assert_eq!(
        out["file_hash"],
        sha(bom),
        "the hash is of the bytes, BOM included"
    );
}

#[test]
fn read_file_errors_are_actionable() {
    let p = project();
    std::fs::write(
        p.path().join("logo.png"),
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
    )
    .unwrap();
    std::fs::write(p.path().join("latin1.txt"), b"caf\xe9\n").unwrap();
    std::fs::write(p.path().join("empty.txt"), b"").unwrap();
    let env = Env::new();
    let cases: &[(&str, &str, &str)] = &[
        (r#"{"file_path": "logo.png"}"#, "binary_file", "binary"),
        (r#"{"file_path": "latin1.txt"}"#, "not_utf8", "UTF-8"),
        (r#"{"file_path": "src"}"#, "not_a_file", "list_files"),
        (
            r#"{"file_path": "src/mian.rs"}"#,
            "not_found",
            "`src/main.rs`",
        ),
        (
            r#"{"file_path": "src/util.rs", "start_line": 9}"#,
            "out_of_range",
            "3 lines",
        ),
        (
            r#"{"file_path": "src/util.rs", "start_line": 3, "end_line": 2}"#,
            "invalid_arguments",
            "`end_line`",
        ),
        (r#"{"file_path": ""}"#, "invalid_arguments", "`file_path`"),
        (r#"{"start_line": 1}"#, "invalid_arguments", "`file_path`"),
        (
            r#"{"file_path": "a", "start_line": "1"}"#,
            "invalid_arguments",
            "`start_line`",
        ),
        (
            r#"{"file_path": "a", "start_line": 0}"#,
            "invalid_arguments",
            "`start_line`",
        ),
        (
            r#"{"file_path": "a", "path": "b"}"#,
            "invalid_arguments",
            "`path`",
        ),
        (r#"["src/main.rs"]"#, "invalid_arguments", "JSON object"),
        (r#"{"file_path": "#, "invalid_arguments", "not valid JSON"),
    ];
    for (args, code, needle) in cases {
        let (exit, out) = env.tool(p.path(), "read_file", args);
        assert_eq!(exit, 1, "{args}: {out}");
        assert_eq!(keys(&out), ["error"]);
        assert_eq!(keys(&out["error"]), ["code", "message"]);
        assert_eq!(out["error"]["code"], *code, "{args}: {out}");
        let message = out["error"]["message"].as_str().unwrap();
        assert!(message.contains(needle), "{args}: {message}");
    }
    let (code, out) = env.tool(p.path(), "read_file", r#"{"file_path": "empty.txt"}"#);
    assert_eq!(code, 0);
    assert_eq!(
        (out["total_lines"].as_u64(), out["content"].as_str()),
        (Some(0), Some(""))
    );
}

// ---------- search_project ----------

fn search(env: &Env, root: &Path, args: &str) -> Value {
    let (code, out) = env.tool(root, "search_project", args);
    assert_eq!(code, 0, "{args}: {out}");
    out
}

fn hit_paths(out: &Value) -> Vec<String> {
    out["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["file_path"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn search_shape_and_skipping_rules() {
    let p = project();
    std::fs::write(p.path().join("blob.bin"), b"fn main\x00\x01\x02").unwrap();
    let env = Env::new();
    let out = search(&env, p.path(), r#"{"query": "fn main"}"#);
    assert_eq!(keys(&out), ["results", "truncated"]);
    for r in out["results"].as_array().unwrap() {
        assert_eq!(
            keys(r),
            ["end_line", "file_path", "snippet", "start_line"],
            "{r}"
        );
    }
    assert_eq!(
        hit_paths(&out),
        ["src/main.rs"],
        "ignored, hidden and binary files skipped"
    );
    let r = &out["results"][0];
    assert_eq!(
        (r["start_line"].as_u64(), r["end_line"].as_u64()),
        (Some(1), Some(3))
    );
    assert_eq!(r["snippet"], "fn main() {\n    println!(\"hello\");\n}");
}

#[test]
fn search_literal_regex_and_case() {
    let p = tempfile::tempdir().unwrap();
    write_files(p.path(), &[("a.txt", "abc\na.c\nFOO\nfoo\n")]);
    let env = Env::new();
    let lines = |out: &Value| -> Vec<u64> {
        out["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["start_line"].as_u64().unwrap())
            .collect()
    };
    let one_line = r#""glob": "*.txt""#;
    let _ = one_line;
    let out = search(&env, p.path(), r#"{"query": "a.c"}"#);
    assert_eq!(
        out["results"][0]["snippet"], "abc\na.c\nFOO\nfoo",
        "literal match of line 2 with context"
    );
    let out = search(&env, p.path(), r#"{"query": "^a.c$", "regex": true}"#);
    assert_eq!(lines(&out), [1], "regex matches lines 1-2 in one snippet");
    let out = search(&env, p.path(), r#"{"query": "^a.c$"}"#);
    assert!(lines(&out).is_empty(), "literal: no line is ^a.c$");
    // Smart case: lower-case query is insensitive, mixed case is sensitive.
    let out = search(&env, p.path(), r#"{"query": "Foo"}"#);
    assert!(lines(&out).is_empty());
    let out = search(&env, p.path(), r#"{"query": "foo"}"#);
    assert_eq!(lines(&out), [1]);
    let out = search(
        &env,
        p.path(),
        r#"{"query": "foo", "case_sensitive": true}"#,
    );
    assert_eq!(out["results"][0]["end_line"], 4);
    let out = search(
        &env,
        p.path(),
        r#"{"query": "Foo", "case_sensitive": false}"#,
    );
    assert_eq!(lines(&out), [1]);
    let (code, out) = env.tool(
        p.path(),
        "search_project",
        r#"{"query": "(unclosed", "regex": true}"#,
    );
    assert_eq!(code, 1);
    assert_eq!(out["error"]["code"], "invalid_arguments");
    assert!(
        out["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`query`"),
        "{out}"
    );
    let (code, out) = env.tool(p.path(), "search_project", r#"{"query": ""}"#);
    assert_eq!(
        (code, out["error"]["code"].as_str()),
        (1, Some("invalid_arguments"))
    );
}

#[test]
fn search_snippets_context_splitting_and_clipping() {
    let p = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for i in 1..=100 {
        text.push_str(if i == 10 || i == 50 || (60..=90).contains(&i) {
            "needle\n"
        } else {
            "hay\n"
        });
    }
    text.push_str(&"x".repeat(5000));
    text.push_str(" needle\n");
    std::fs::write(p.path().join("h.txt"), text).unwrap();
    let env = Env::new();
    let out = search(&env, p.path(), r#"{"query": "needle"}"#);
    let ranges: Vec<(u64, u64)> = out["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["start_line"].as_u64().unwrap(),
                r["end_line"].as_u64().unwrap(),
            )
        })
        .collect();
    // Two lines of context; a 35-line run is split at max_search_snippet_lines (20).
    assert_eq!(ranges, [(8, 12), (48, 52), (58, 77), (78, 92), (99, 101)]);
    for r in out["results"].as_array().unwrap() {
        let lines = r["snippet"].as_str().unwrap().lines().count() as u64;
        assert_eq!(
            lines,
            r["end_line"].as_u64().unwrap() - r["start_line"].as_u64().unwrap() + 1
        );
    }
    let last = out["results"][4]["snippet"].as_str().unwrap();
    assert!(
        last.len() < 1000 && last.contains('…'),
        "long line clipped: {}",
        last.len()
    );
}

#[test]
fn search_limits_order_and_truncation() {
    let p = tempfile::tempdir().unwrap();
    for i in 0..60 {
        write_files(
            p.path(),
            &[(&format!("d{}/f{i:02}.rs", i % 3), "// TODO fix\n")],
        );
    }
    let env = Env::new();
    let out = search(&env, p.path(), r#"{"query": "todo"}"#);
    let got = hit_paths(&out);
    assert_eq!(got.len(), 20, "max_search_results_default");
    assert_eq!(out["truncated"], true);
    let mut sorted = got.clone();
    sorted.sort();
    assert_eq!(got, sorted, "path order");
    assert_eq!(got[0], "d0/f00.rs");
    let again = search(&env, p.path(), r#"{"query": "todo"}"#);
    assert_eq!(hit_paths(&again), got, "deterministic across runs");
    let out = search(&env, p.path(), r#"{"query": "todo", "limit": 500}"#);
    assert_eq!(hit_paths(&out).len(), 50, "max_search_results_cap");
    let out = search(&env, p.path(), r#"{"query": "todo", "limit": 60}"#);
    assert_eq!(out["truncated"], true);
    let out = search(
        &env,
        p.path(),
        r#"{"query": "todo", "glob": "d1/*.rs", "limit": 50}"#,
    );
    assert_eq!(hit_paths(&out).len(), 20);
    assert_eq!(out["truncated"], false);
    assert!(hit_paths(&out).iter().all(|p| p.starts_with("d1/")));
    write_config(
        &env,
        "[limits]\nmax_search_results_default = 2\nmax_search_results_cap = 3\n",
    );
    assert_eq!(
        hit_paths(&search(&env, p.path(), r#"{"query": "todo"}"#)).len(),
        2
    );
    assert_eq!(
        hit_paths(&search(&env, p.path(), r#"{"query": "todo", "limit": 9}"#)).len(),
        3
    );
}

// ---------- registry ----------

#[test]
fn tool_list_describes_every_tool() {
    let env = Env::new();
    // Outside a git work tree: the built-in tools and the code index's.
    let plain = tempfile::tempdir().unwrap();
    let tools = env.tool_list(plain.path());
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "list_files",
            "read_file",
            "search_project",
            "list_scopes",
            "clarify_user",
            "propose_edits",
            "run_command",
            "code_search",
            "find_symbol",
            "find_references",
            "file_outline",
            "repo_map",
            "web_fetch"
        ]
    );
    for t in &tools {
        let name = t["name"].as_str().unwrap();
        let tier = match name {
            "propose_edits" => "write",
            "run_command" | "web_fetch" => "exec",
            _ => "read",
        };
        // A web page may be read in every mode (asked per [approvals] web).
        let write = tier != "read" && name != "web_fetch";
        assert_eq!(t["tier"], tier);
        let modes = if write {
            serde_json::json!(["agent"])
        } else {
            serde_json::json!(["ask", "plan", "agent"])
        };
        assert_eq!(t["modes"], modes);
        assert_eq!(t["schema"]["type"], "object");
        assert_eq!(t["schema"]["additionalProperties"], false);
        assert!(t["description"].as_str().unwrap().len() > 40);
    }
    // clarify_user belongs to jobs; called directly it says so.
    let p = project();
    let (code, out) = env.tool(p.path(), "clarify_user", r#"{"question": "?"}"#);
    assert_eq!(code, 1);
    assert_eq!(out["error"]["code"], "needs_job");
    let read = &tools[1]["schema"];
    assert_eq!(read["required"], serde_json::json!(["file_path"]));
}

#[test]
fn unknown_tool_is_a_json_error_with_a_suggestion() {
    let p = project();
    let env = Env::new();
    let (code, out) = env.tool(p.path(), "serch_project", "{}");
    assert_eq!(code, 1);
    assert_eq!(out["error"]["code"], "unknown_tool");
    assert!(
        out["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`search_project`"),
        "{out}"
    );
}

#[test]
fn arguments_can_come_from_stdin() {
    use std::io::Write;
    let p = project();
    let env = Env::new();
    let mut child = env
        .cmd()
        .args(["tool", "read_file", "-", "--root"])
        .arg(p.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"file_path": "src/lib.rs"}"#)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(support::json_of(&out)["content"], "pub mod util;\n");
}

#[test]
fn search_with_a_small_limit_is_a_prefix_of_a_large_one() {
    // The parallel search skips files that sort after everything it already
    // holds; that must never change which results come first.
    let p = tempfile::tempdir().unwrap();
    for i in 0..40 {
        let body: String = (0..(i % 4 + 1))
            .map(|k| format!("hit {k}\n\n\n\n\n\n"))
            .collect();
        write_files(
            p.path(),
            &[(&format!("m{}/n{:02}.txt", i % 5, 40 - i), &body)],
        );
    }
    let env = Env::new();
    let full = search(&env, p.path(), r#"{"query": "hit", "limit": 50}"#);
    for limit in [1, 3, 7, 20] {
        let part = search(
            &env,
            p.path(),
            &format!(r#"{{"query": "hit", "limit": {limit}}}"#),
        );
        let want: Vec<Value> = full["results"].as_array().unwrap()[..limit].to_vec();
        assert_eq!(part["results"].as_array().unwrap(), &want, "limit {limit}");
        assert_eq!(part["truncated"], true);
    }
}

// ---------- a root its parent repository ignores ----------

/// A folder opened under a parent repository's ignored `build/` (a checkout
/// in `target/`, a vendored copy): the parent's rules do not hide the whole
/// root, its own rules and those below it still apply.
#[test]
fn a_root_that_a_parent_repository_ignores_is_still_walked_and_searched() {
    let outer = tempfile::tempdir().unwrap();
    std::fs::create_dir(outer.path().join(".git")).unwrap();
    write_files(
        outer.path(),
        &[
            (".gitignore", "/build\n*.tmp\n"),
            ("build/proj/.gitignore", "*.log\n"),
            ("build/proj/src/a.rs", "fn needle() {}\n"),
            ("build/proj/src/.ignore", "skip.rs\n"),
            (
                "build/proj/src/skip.rs",
                "fn needle() {} // ignored below\n",
            ),
            ("build/proj/run.log", "needle in a log\n"),
            ("build/proj/notes.tmp", "needle\n"),
        ],
    );
    let root = outer.path().join("build/proj");
    let env = Env::new();
    let (code, out) = env.tool(&root, "list_files", "{}");
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        paths(&out),
        [".gitignore", "notes.tmp", "src", "src/.ignore", "src/a.rs"]
    );
    let out = search(&env, &root, r#"{"query": "needle"}"#);
    assert_eq!(hit_paths(&out), ["notes.tmp", "src/a.rs"], "{out}");
}
