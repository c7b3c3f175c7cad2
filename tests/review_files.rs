//! Apply on every file shape: CRLF, BOM, no final newline, empty files,
//! permissions, new files in new directories, a 1 MB file with 500 hunks,
//! and kill -9 in the middle of an apply (each file old or new, never torn).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use agent_tui::config::Limits;
use agent_tui::review::{
    EditOperation, EditRequest, build_bundle, plan_apply, validate_edits, write_plans,
};
use agent_tui::workspace::Workspace;
use serde_json::json;
use support::Env;
use support::jobs::{config, exec, sse};
use support::llm_server::{LlmServer, Reply, Split, openai};

fn edit(
    path: &str,
    op: EditOperation,
    start: usize,
    end: Option<usize>,
    new: Option<&str>,
) -> EditRequest {
    EditRequest {
        file_path: path.into(),
        operation: op,
        start_line: (op != EditOperation::Create).then_some(start),
        end_line: end,
        old_text: None,
        new_text: new.map(Into::into),
        rationale: None,
    }
}

/// Proposes `edits` on a root holding `files`, accepts all, applies; returns the root.
fn apply_all(files: &[(&str, &[u8])], edits: &[EditRequest]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (p, bytes) in files {
        let path = dir.path().join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    let ws = Workspace::open(dir.path()).unwrap();
    let proposed = validate_edits(&ws, edits, &[], &mut 1).unwrap();
    let mut bundle = build_bundle(&ws, "j", &proposed, &Limits::default(), None, &mut 1).unwrap();
    bundle.decide(&[], &[], true);
    write_plans(&ws, &plan_apply(&ws, &bundle, &proposed).unwrap()).unwrap();
    dir
}

fn bytes(root: &Path, p: &str) -> Vec<u8> {
    std::fs::read(root.join(p)).unwrap()
}

#[test]
fn crlf_and_bom_are_kept() {
    let root = apply_all(
        &[("w.txt", b"\xEF\xBB\xBFone\r\ntwo\r\nthree\r\n")],
        &[
            edit("w.txt", EditOperation::Replace, 2, Some(2), Some("TWO\n")),
            edit(
                "w.txt",
                EditOperation::Insert,
                4,
                None,
                Some("four\nfive\n"),
            ),
        ],
    );
    assert_eq!(
        bytes(root.path(), "w.txt"),
        b"\xEF\xBB\xBFone\r\nTWO\r\nthree\r\nfour\r\nfive\r\n"
    );
}

#[test]
fn no_final_newline_is_kept_unless_text_is_added_after_it() {
    let root = apply_all(
        &[
            ("a.txt", b"one\ntwo"),
            ("b.txt", b"one\ntwo"),
            ("c.txt", b"x\ny\nz"),
        ],
        &[
            edit("a.txt", EditOperation::Replace, 2, Some(2), Some("TWO")),
            edit("b.txt", EditOperation::Insert, 3, None, Some("three\n")),
            edit("c.txt", EditOperation::Replace, 1, Some(1), Some("X\n")),
        ],
    );
    assert_eq!(bytes(root.path(), "a.txt"), b"one\nTWO");
    assert_eq!(bytes(root.path(), "b.txt"), b"one\ntwo\nthree\n");
    assert_eq!(bytes(root.path(), "c.txt"), b"X\ny\nz");
}

#[test]
fn empty_files_new_files_and_deletes() {
    let root = apply_all(
        &[("empty.txt", b""), ("d.txt", b"a\nb\nc\n")],
        &[
            edit("empty.txt", EditOperation::Insert, 1, None, Some("first\n")),
            edit("d.txt", EditOperation::Delete, 1, Some(3), None),
            edit(
                "deep/er/new.rs",
                EditOperation::Create,
                0,
                None,
                Some("fn x() {}\n"),
            ),
        ],
    );
    assert_eq!(bytes(root.path(), "empty.txt"), b"first\n");
    assert_eq!(bytes(root.path(), "d.txt"), b"");
    assert_eq!(bytes(root.path(), "deep/er/new.rs"), b"fn x() {}\n");
    let mode = std::fs::metadata(root.path().join("deep/er/new.rs"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o644);
}

#[test]
fn permissions_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("run.sh");
    std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o751)).unwrap();
    let ws = Workspace::open(dir.path()).unwrap();
    let proposed = validate_edits(
        &ws,
        &[edit(
            "run.sh",
            EditOperation::Replace,
            2,
            Some(2),
            Some("echo bye\n"),
        )],
        &[],
        &mut 1,
    )
    .unwrap();
    let mut bundle = build_bundle(&ws, "j", &proposed, &Limits::default(), None, &mut 1).unwrap();
    bundle.decide(&[], &[], true);
    write_plans(&ws, &plan_apply(&ws, &bundle, &proposed).unwrap()).unwrap();
    assert_eq!(
        std::fs::read_to_string(&script).unwrap(),
        "#!/bin/sh\necho bye\n"
    );
    assert_eq!(
        std::fs::metadata(&script).unwrap().permissions().mode() & 0o777,
        0o751
    );
}

#[test]
fn a_one_megabyte_file_with_500_hunks() {
    let mut text = String::new();
    for i in 0..25_000 {
        text.push_str(&format!(
            "line {i:05} of a large file, padded out to be long enough\n"
        ));
    }
    assert!(text.len() > 1_000_000);
    let edits: Vec<EditRequest> = (0..500)
        .map(|k| {
            let line = k * 50 + 10;
            edit(
                "big.txt",
                EditOperation::Replace,
                line,
                Some(line),
                Some(&format!("changed {k}\n")),
            )
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.txt"), &text).unwrap();
    let ws = Workspace::open(dir.path()).unwrap();
    let proposed = validate_edits(&ws, &edits, &[], &mut 1).unwrap();
    let mut bundle = build_bundle(&ws, "j", &proposed, &Limits::default(), None, &mut 1).unwrap();
    assert_eq!(bundle.hunks().count(), 500);
    // Accept the even hunks only.
    let even: Vec<String> = bundle
        .hunks()
        .step_by(2)
        .map(|h| h.hunk_id.clone())
        .collect();
    bundle.decide(&even, &[], false);
    write_plans(&ws, &plan_apply(&ws, &bundle, &proposed).unwrap()).unwrap();
    let after = std::fs::read_to_string(dir.path().join("big.txt")).unwrap();
    let mut expected: Vec<String> = text.lines().map(str::to_string).collect();
    for k in (0..500).step_by(2) {
        expected[k * 50 + 9] = format!("changed {k}");
    }
    assert_eq!(after, expected.join("\n") + "\n");
}

#[test]
fn kill_9_during_apply_leaves_the_bundle_whole_or_untouched() {
    let names: Vec<String> = (0..16).map(|i| format!("f{i:02}.txt")).collect();
    let old: String = (0..4_000).map(|i| format!("old line {i}\n")).collect();
    let edits: Vec<serde_json::Value> = names
        .iter()
        .map(|n| json!({"file_path": n, "operation": "replace", "start_line": 1, "end_line": 4000, "new_text": old.replace("old", "new")}))
        .collect();
    let args = json!({ "edits": edits }).to_string();
    let new = old.replace("old", "new");
    // First a full apply to learn how long one takes, then kills spread over it.
    let mut full = std::time::Duration::ZERO;
    for round in 0..8u32 {
        let delay_ms = (full * round / 8).as_millis() as u64;
        let env = Env::new();
        let dir = tempfile::tempdir().unwrap();
        for n in &names {
            std::fs::write(dir.path().join(n), &old).unwrap();
        }
        let server = LlmServer::start(vec![
            Reply::Sse {
                events: openai::tool_calls(&[("c1", "propose_edits", &args)]),
                split: Split::EveryNBytes(1 << 16),
            },
            sse(openai::text(&["ok"])),
        ]);
        // The proposal is ~270k tokens: a window that holds it.
        let cfg = config(&env, "openai", &server.url(), "context_window = 2000000");
        assert_eq!(exec(&env, &cfg, dir.path(), &["rewrite"]).code, 0);
        let mut child = env
            .cmd()
            .args(["review", "--accept-all", "--apply", "--root"])
            .arg(dir.path())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        if round > 0 {
            std::thread::sleep(std::time::Duration::from_millis(delay_ms));
            let _ = child.kill();
        }
        let _ = child.wait();
        if round == 0 {
            full = started.elapsed();
        }
        // The next start settles an interrupted apply: all or nothing.
        let out = env
            .cmd()
            .args(["checkpoints", "list", "--root"])
            .arg(dir.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        let mut olds = 0;
        for n in &names {
            let now = std::fs::read_to_string(dir.path().join(n)).unwrap();
            assert!(
                now == old || now == new,
                "{n} is torn after kill at {delay_ms} ms"
            );
            olds += usize::from(now == old);
        }
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{delay_ms} ms: {leftovers:?}");
        assert!(
            olds == 0 || olds == names.len(),
            "{delay_ms} ms: half-applied, {olds} of {} old",
            names.len()
        );
        eprintln!(
            "round {round}, kill at {delay_ms} ms: {olds} of {} files still old",
            names.len()
        );
    }
}
