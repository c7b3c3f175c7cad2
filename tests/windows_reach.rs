//! What must hold on every system agent-tui builds for, through the
//! binary: run here on Linux and, built for `x86_64-pc-windows-gnu`, under
//! Wine (`tests/windows/run`): a malformed config is a clear error, the
//! store checks clean, hostile paths (Windows' own spellings included)
//! never reach a file outside the root, and a job's edit is proposed,
//! decided per hunk, applied and rolled back against the loopback model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;

use serde_json::{Value, json};
use support::jobs::{config, exec, sse};
use support::llm_server::{LlmServer, openai};
use support::{Env, code, json_of, stderr, stdout, write_files};

const MAIN: &str = "fn main() {\n    println!(\"one\");\n    println!(\"two\");\n}\n";
const SECRET: &str = "TOP SECRET outside the root";

/// `base/root` (the agent root) beside `base/outside/secret.txt`.
fn fixture() -> tempfile::TempDir {
    let base = tempfile::tempdir().unwrap();
    write_files(
        base.path(),
        &[
            ("root/src/main.rs", MAIN),
            ("root/notes.txt", "first\nsecond\n"),
            ("root/.git/config", "[core]\n"),
            ("outside/secret.txt", SECRET),
        ],
    );
    base
}

#[test]
fn a_malformed_config_is_a_clear_error_and_the_store_checks_clean() {
    let env = Env::new();
    let cfg = env.home.path().join("bad.toml");
    std::fs::write(&cfg, "provider = [unclosed\n").unwrap();
    let out = env
        .cmd()
        .arg("--config")
        .arg(&cfg)
        .arg("doctor")
        .output()
        .unwrap();
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert_ne!(code(&out), 0, "{said}");
    assert!(said.contains("bad.toml"), "{said}");
    // A fresh store, then its check.
    let out = env.cmd().args(["store", "check"]).output().unwrap();
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    // doctor says how commands run: on Windows, plainly unconfined.
    let out = env.cmd().arg("doctor").output().unwrap();
    let said = stdout(&out);
    let line = said
        .lines()
        .find(|l| l.starts_with("commands"))
        .unwrap_or_else(|| panic!("{said}"));
    if cfg!(windows) {
        assert!(
            line.contains("unconfined") && line.contains("every command is asked for"),
            "{line}"
        );
    } else {
        assert!(
            line.contains("Landlock") || line.contains("Seatbelt"),
            "{line}"
        );
    }
}

#[test]
fn hostile_paths_never_reach_outside_the_root() {
    let env = Env::new();
    let base = fixture();
    let root = base.path().join("root");
    let cases = support::hostile::windows_cases();
    assert!(cases.len() >= 40, "{}", cases.len());
    let mut wrong = Vec::new();
    for (path, want) in &cases {
        for tool in ["read_file", "list_files"] {
            let key = if tool == "read_file" {
                "file_path"
            } else {
                "prefix"
            };
            let (c, out) = env.tool(&root, tool, &json!({ key: path }).to_string());
            let text = out.to_string();
            assert!(
                !text.contains("TOP SECRET"),
                "{tool} {path:?} escaped: {text}"
            );
            if tool == "read_file" {
                assert_ne!(c, 0, "{path:?} read: {text}");
            }
            let got = out["error"]["code"].as_str().unwrap_or("");
            if cfg!(windows) && tool == "read_file" && got != *want {
                wrong.push(format!("{path:?}: {got} ({text})"));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    // The plain spellings still work, with either separator.
    let (c, out) = env.tool(&root, "read_file", r#"{"file_path": "src\\main.rs"}"#);
    assert_eq!(c, 0, "{out}");
    assert!(out.to_string().contains("println"), "{out}");
}

/// A model turn that proposes two edits, then one that answers.
fn propose_then_answer() -> Vec<support::llm_server::Reply> {
    let edits = json!([
        {"file_path": "src/main.rs", "operation": "replace", "start_line": 2, "end_line": 2,
         "old_text": "    println!(\"one\");", "new_text": "    println!(\"uno\");\n"},
        {"file_path": "notes.txt", "operation": "replace", "start_line": 2, "end_line": 2,
         "new_text": "segundo\n"}
    ]);
    let args = json!({ "edits": edits }).to_string();
    vec![
        sse(openai::tool_calls(&[("c1", "propose_edits", &args)])),
        sse(openai::text(&["I proposed the changes."])),
    ]
}

fn cli(env: &Env, root: &Path, args: &[&str]) -> (i32, String, String) {
    env.run_in(root, args)
}

#[test]
fn an_edit_is_reviewed_per_hunk_applied_and_rolled_back() {
    let env = Env::new();
    let base = fixture();
    let root = base.path().join("root");
    let server = LlmServer::start(propose_then_answer());
    let cfg = config(&env, "openai", &server.url(), "");
    let run = exec(&env, &cfg, &root, &["--json", "make the changes"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let last = run.events().last().cloned().unwrap();
    assert_eq!(last["data"]["status"], "awaiting_review", "{last}");
    // Nothing written yet.
    assert_eq!(
        std::fs::read_to_string(root.join("src/main.rs")).unwrap(),
        MAIN
    );
    // Accept the code's hunk, reject the notes', apply.
    let (c, out, err) = cli(&env, &root, &["review", "--json"]);
    assert_eq!(c, 0, "{err}");
    let bundle: Value = serde_json::from_str(&out).unwrap();
    let id_of = |file: &str| {
        bundle["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["file_path"] == file)
            .map(|f| f["hunks"][0]["hunk_id"].as_str().unwrap().to_string())
            .unwrap()
    };
    let (main, notes) = (id_of("src/main.rs"), id_of("notes.txt"));
    let (c, _, err) = cli(
        &env,
        &root,
        &["review", "--accept", &main, "--reject", &notes, "--apply"],
    );
    assert_eq!(c, 0, "{err}");
    let now = std::fs::read_to_string(root.join("src/main.rs")).unwrap();
    assert_eq!(now, MAIN.replace("one", "uno"));
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "first\nsecond\n"
    );
    // The checkpoint rolls it back.
    let (c, out, err) = cli(&env, &root, &["checkpoints", "--json"]);
    assert_eq!(c, 0, "{err}");
    let cps: Value = serde_json::from_str(&out).unwrap();
    let cp = cps[0]["checkpoint_id"].as_str().unwrap().to_string();
    let (c, _, err) = cli(&env, &root, &["rollback", &cp]);
    assert_eq!(c, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(root.join("src/main.rs")).unwrap(),
        MAIN
    );
}

#[test]
fn tool_calls_answer_through_the_binary() {
    let env = Env::new();
    let base = fixture();
    let root = base.path().join("root");
    let listed = env.tool_list(&root);
    assert!(
        listed.iter().any(|t| t["name"] == "read_file"),
        "{listed:?}"
    );
    let (c, out) = env.tool(&root, "list_files", "{}");
    assert_eq!(c, 0, "{out}");
    let text = out.to_string();
    assert!(
        text.contains("src/main.rs") && text.contains("notes.txt"),
        "{text}"
    );
    assert!(!text.contains(".git/config"), "{text}");
    let (c, out) = env.tool(&root, "search_project", r#"{"query": "println"}"#);
    assert_eq!(c, 0, "{out}");
    assert!(out.to_string().contains("src/main.rs"), "{out}");
    let _ = json_of;
}
