//! Durability of project writes, seen by the kernel: an apply and a
//! rollback run under strace, and every file they replace is fsync'd
//! before its rename and its folder fsync'd after it (issue 13, point 1).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;

use serde_json::json;
use support::jobs::{config_with, sse};
use support::llm_server::{LlmServer, openai};
use support::{Env, code, write_files};

/// strace, or `None` with the reason printed (CI requires it).
fn traced(env: &Env, args: &[&str], out: &Path) -> i32 {
    let trace = "trace=fsync,fdatasync,rename,renameat,renameat2,unlink,unlinkat";
    let out = out.to_str().unwrap();
    support::strace::command(env, &["-f", "-qq", "-y", "-e", trace, "-o", out])
        .args(args)
        .status()
        .unwrap()
        .code()
        .unwrap_or(-1)
}

fn every_replace_is_synced(trace: &str, root: &Path, files: &[&str]) {
    let lines: Vec<&str> = trace.lines().collect();
    for file in files {
        let target = root.join(file);
        let dir = target.parent().unwrap().display().to_string();
        let target = target.display().to_string();
        let name = Path::new(file).file_name().unwrap().to_str().unwrap();
        // By full path, or (through a folder handle) the folder's fd and the name.
        let at = lines
            .iter()
            .position(|l| {
                l.contains("rename")
                    && (l.contains(&format!("\"{target}\""))
                        || (l.contains(&format!("<{dir}>")) && l.contains(&format!("\"{name}\""))))
            })
            .unwrap_or_else(|| panic!("no rename into {target}:\n{trace}"));
        let temp = lines[at]
            .split('"')
            .find(|part| part.contains(".agent-tui-"))
            .unwrap_or_else(|| panic!("no temp file in {}", lines[at]));
        let temp_name = Path::new(temp).file_name().unwrap().to_str().unwrap();
        assert!(
            lines[..at]
                .iter()
                .any(|l| l.contains("fsync(") && l.contains(temp_name)),
            "{temp_name} was not fsync'd before its rename:\n{trace}"
        );
        assert!(
            lines[at..]
                .iter()
                .any(|l| l.contains("fsync(") && l.contains(&format!("<{dir}>"))),
            "{dir} was not fsync'd after the rename:\n{trace}"
        );
    }
}

#[test]
fn apply_and_rollback_sync_each_file_and_its_folder() {
    if !support::strace::available() {
        return;
    }
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    write_files(
        &root,
        &[
            ("src/main.rs", "fn main() {}\n"),
            ("notes.txt", "one\ntwo\n"),
        ],
    );
    let edits = json!([
        {"file_path": "src/main.rs", "operation": "replace", "start_line": 1, "end_line": 1, "new_text": "fn main() { println!(\"hi\"); }\n"},
        {"file_path": "notes.txt", "operation": "replace", "start_line": 2, "end_line": 2, "new_text": "deux\n"},
        {"file_path": "docs/new.md", "operation": "create", "new_text": "# New\n"}
    ]);
    let llm = LlmServer::start(vec![
        sse(openai::tool_calls(&[(
            "c1",
            "propose_edits",
            &json!({ "edits": edits }).to_string(),
        )])),
        sse(openai::text(&["done"])),
    ]);
    let cfg = config_with(
        &env,
        "openai",
        &llm.url(),
        "",
        "retry_base_delay_ms = 10\nmax_retries = 0",
    );
    let trace = env.home.path().join("apply.trace");
    let c = traced(
        &env,
        &[
            "--config",
            cfg.to_str().unwrap(),
            "exec",
            "--apply",
            "all",
            "edit",
            "--root",
            root.to_str().unwrap(),
        ],
        &trace,
    );
    assert_eq!(c, 0);
    let files = ["src/main.rs", "notes.txt", "docs/new.md"];
    every_replace_is_synced(&std::fs::read_to_string(&trace).unwrap(), &root, &files);

    // The rollback's writes are durable too.
    let out = env
        .cmd()
        .args(["checkpoints", "--json", "--root"])
        .arg(&root)
        .output()
        .unwrap();
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = list[0]["checkpoint_id"].as_str().unwrap().to_string();
    let trace = env.home.path().join("rollback.trace");
    let c = traced(
        &env,
        &["rollback", &id, "--root", root.to_str().unwrap()],
        &trace,
    );
    assert_eq!(c, 0);
    let text = std::fs::read_to_string(&trace).unwrap();
    every_replace_is_synced(&text, &root, &files[..2]);
    // The created file is removed, and its folder synced after.
    let docs = root.join("docs").display().to_string();
    let at = text
        .lines()
        .position(|l| l.contains("unlink") && l.contains("new.md"))
        .unwrap();
    assert!(
        text.lines()
            .skip(at)
            .any(|l| l.contains("fsync(") && l.contains(&format!("<{docs}>"))),
        "{text}"
    );
    assert_eq!(code(&out), 0);
}
