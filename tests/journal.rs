//! Atomic multi-file apply and rollback (issue 13): the real binary is
//! killed (SIGKILL) or has a write fail (EIO) at an exact rename with
//! strace's fault injection; the next start settles what it left.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use support::jobs::{config_with, sse};
use support::llm_server::{LlmServer, openai};
use support::{Env, code, stderr, stdout, write_files};

const OLD: [(&str, &str); 3] = [
    ("a.txt", "one\ntwo\n"),
    ("b.txt", "three\nfour\n"),
    ("sub/c.txt", "five\nsix\n"),
];
const NEW: [(&str, &str); 3] = [
    ("a.txt", "one\nTWO\n"),
    ("b.txt", "three\nFOUR\n"),
    ("sub/c.txt", "five\nSIX\n"),
];

/// With strace here: a fresh state home and a project with a pending
/// proposal (`None`, the test skipped, without strace).
fn arena() -> Option<(Env, tempfile::TempDir, std::path::PathBuf)> {
    if !support::strace::available() {
        return None;
    }
    let env = Env::new();
    let (dir, root) = proposed(&env);
    Some((env, dir, root))
}

/// A project whose three files have a pending proposal (one edit each).
fn proposed(env: &Env) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    write_files(&root, &OLD);
    let edits: Vec<Value> = NEW
        .iter()
        .map(|(path, text)| {
            json!({"file_path": path, "operation": "replace", "start_line": 2, "end_line": 2,
                   "new_text": text.lines().nth(1).unwrap().to_string() + "\n"})
        })
        .collect();
    propose_in(env, &root, &Value::Array(edits), &[]);
    (dir, root)
}

/// A job in `root` (with `extra` arguments) whose model proposes `edits`.
fn propose_in(env: &Env, root: &Path, edits: &Value, extra: &[&str]) {
    let llm = LlmServer::start(vec![
        sse(openai::tool_calls(&[(
            "c1",
            "propose_edits",
            &json!({ "edits": edits }).to_string(),
        )])),
        sse(openai::text(&["proposed"])),
    ]);
    let cfg = config_with(env, "openai", &llm.url(), "", support::jobs::NO_RETRY);
    let out = env
        .cmd()
        .args(["--config", cfg.to_str().unwrap(), "exec", "edit", "--root"])
        .arg(root)
        .args(extra)
        .env("TEST_LLM_KEY", support::jobs::KEY)
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

fn contents(root: &Path) -> Vec<String> {
    OLD.iter()
        .map(|(p, _)| std::fs::read_to_string(root.join(p)).unwrap())
        .collect()
}

fn texts(files: &[(&str, &str)]) -> Vec<String> {
    files.iter().map(|(_, t)| t.to_string()).collect()
}

/// Runs `args` under strace with `inject` (e.g. `signal=SIGKILL:when=2`)
/// on every rename syscall.
fn injected(env: &Env, inject: &str, args: &[&str], root: &Path) -> std::process::Output {
    let rule = format!("inject=rename,renameat,renameat2:{inject}");
    support::strace::command(env, &["-f", "-qq", "-o", "/dev/null", "-e", &rule])
        .args(args)
        .arg("--root")
        .arg(root)
        .output()
        .unwrap()
}

/// `review --accept-all --apply` with `inject` on its renames.
fn apply_injected(env: &Env, inject: &str, root: &Path) -> std::process::Output {
    injected(env, inject, &["review", "--accept-all", "--apply"], root)
}

fn checkpoints(env: &Env, root: &Path) -> (Vec<Value>, String) {
    let out = env
        .cmd()
        .args(["checkpoints", "--json", "--root"])
        .arg(root)
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let list: Value = serde_json::from_str(&stdout(&out)).unwrap();
    (list.as_array().unwrap().clone(), stderr(&out))
}

#[test]
fn a_kill_mid_apply_is_undone_at_the_next_start_and_the_review_stays() {
    let Some((env, _dir, root)) = arena() else {
        return;
    };
    // Killed as it makes its second rename: one file new, two old.
    let out = apply_injected(&env, "signal=SIGKILL:when=2", &root);
    assert_ne!(code(&out), 0);
    let now = contents(&root);
    assert_eq!(now.iter().filter(|t| texts(&NEW).contains(t)).count(), 1);

    // The next start settles it before anything else, and says so.
    let (list, said) = checkpoints(&env, &root);
    assert!(said.contains("recovered: an interrupted apply"), "{said}");
    assert!(said.contains("was undone: restored a.txt"), "{said}");
    assert_eq!(contents(&root), texts(&OLD));
    assert!(
        list.is_empty(),
        "the undone apply left no checkpoint: {list:?}"
    );
    let log = std::fs::read_to_string(env.home.path().join("state/logs/agent-tui.log"))
        .unwrap_or_else(|_| {
            let dirs: Vec<_> = support::walk(env.home.path());
            panic!("no log among {dirs:?}")
        });
    assert!(log.contains("recovered: an interrupted apply"), "{log}");
    assert!(
        support::walk(&root)
            .iter()
            .all(|p| !p.to_string_lossy().contains(".agent-tui-")),
        "temp files left"
    );
    // Settled once: the next start has nothing to say.
    let (_, said) = checkpoints(&env, &root);
    assert!(!said.contains("recovered"), "{said}");
    // The audit log has it.
    let recovered: Vec<Value> = env
        .audit_records()
        .into_iter()
        .filter(|r| r["action"] == "apply.recovered")
        .collect();
    assert_eq!(recovered.len(), 1, "{recovered:?}");
    assert!(
        recovered[0]["outcome"]
            .as_str()
            .unwrap()
            .contains("was undone"),
        "{recovered:?}"
    );

    // The review is still pending, and applies whole.
    let out = env
        .cmd()
        .args(["review", "--accept-all", "--apply", "--root"])
        .arg(&root)
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(contents(&root), texts(&NEW));
    let out = env
        .cmd()
        .args(["audit", "verify", "--root"])
        .arg(&root)
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stdout(&out));
}

#[test]
fn doctor_and_exec_report_the_recovery_first() {
    let Some((env, _dir, root)) = arena() else {
        return;
    };
    let crash = |when: &str| apply_injected(&env, &format!("signal=SIGKILL:when={when}"), &root);
    let llm = LlmServer::start(vec![sse(openai::text(&["hello"]))]);
    let cfg = config_with(&env, "openai", &llm.url(), "", support::jobs::NO_RETRY);
    let doctor = || {
        let out = env
            .cmd()
            .args(["--config", cfg.to_str().unwrap(), "doctor", "--root"])
            .arg(&root)
            .output()
            .unwrap();
        stdout(&out)
    };
    // doctor is the start that settles it, and says what it did.
    crash("2");
    let said = doctor();
    assert!(
        said.lines().any(|l| l.starts_with("recovery")
            && l.contains("an interrupted apply")
            && l.contains("was undone: restored a.txt")),
        "{said}"
    );
    assert!(doctor().contains("no interrupted apply or rollback"));

    // exec: `recovery.completed` is its first event.
    crash("3");
    let out = env
        .cmd()
        .args([
            "--config",
            cfg.to_str().unwrap(),
            "exec",
            "--json",
            "hi",
            "--root",
        ])
        .arg(&root)
        .env("TEST_LLM_KEY", support::jobs::KEY)
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let first: Value = serde_json::from_str(stdout(&out).lines().next().unwrap()).unwrap();
    assert_eq!(first["type"], "recovery.completed", "{first}");
    assert_eq!(first["data"]["operation"], "apply");
    assert_eq!(first["data"]["outcome"], "undone");
    assert_eq!(first["data"]["restored"], json!(["a.txt", "b.txt"]));
    assert_eq!(contents(&root), texts(&OLD));
}

#[test]
fn a_write_failing_mid_apply_changes_nothing() {
    let Some((env, _dir, root)) = arena() else {
        return;
    };
    // The second rename fails with EIO: the first file is put back.
    let out = apply_injected(&env, "error=EIO:when=2", &root);
    assert_ne!(code(&out), 0);
    assert!(
        stderr(&out).contains("nothing was changed"),
        "{}",
        stderr(&out)
    );
    assert_eq!(contents(&root), texts(&OLD));
    let (list, said) = checkpoints(&env, &root);
    assert!(list.is_empty(), "{list:?}");
    assert!(!said.contains("recovered"), "{said}");
}

#[test]
fn a_kill_mid_rollback_is_undone_and_the_apply_stands() {
    let Some((env, _dir, root)) = arena() else {
        return;
    };
    let out = env
        .cmd()
        .args(["review", "--accept-all", "--apply", "--root"])
        .arg(&root)
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let (list, _) = checkpoints(&env, &root);
    let id = list[0]["checkpoint_id"].as_str().unwrap().to_string();
    let out = injected(&env, "signal=SIGKILL:when=2", &["rollback", &id], &root);
    assert_ne!(code(&out), 0);
    assert_ne!(contents(&root), texts(&NEW));
    let (list, said) = checkpoints(&env, &root);
    assert!(said.contains("an interrupted rollback"), "{said}");
    assert!(said.contains("was undone"), "{said}");
    assert_eq!(contents(&root), texts(&NEW));
    assert_eq!(list.len(), 1, "only the apply's checkpoint: {list:?}");
    // And the rollback, run again, goes through whole.
    let out = env
        .cmd()
        .args(["rollback", &id, "--root"])
        .arg(&root)
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(contents(&root), texts(&OLD));
}

/// The library's side of an apply of OLD -> NEW: a project, a store, and
/// the changes (no binary, no strace).
struct Library {
    dir: tempfile::TempDir,
    ws: agent_tui::workspace::Workspace,
    _state: tempfile::TempDir,
    checkpoints: agent_tui::checkpoint::CheckpointStore,
    changes: Vec<agent_tui::checkpoint::FileChange>,
}

fn library() -> Library {
    use agent_tui::checkpoint::{CheckpointStore, FileChange};
    use agent_tui::store::{Store, Target};
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &OLD);
    let ws = agent_tui::workspace::Workspace::open(dir.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let store = Store::open_target(&Target::Sqlite(state.path().join("state.db"))).unwrap();
    let checkpoints = CheckpointStore::new(&store.root(ws.root()));
    let changes: Vec<FileChange> = OLD
        .iter()
        .zip(NEW)
        .map(|((path, old), (_, new))| FileChange {
            file_path: path.to_string(),
            abs: ws.root().join(path),
            before: Some(old.as_bytes().to_vec()),
            after: Some(new.as_bytes().to_vec()),
            regions: Vec::new(),
            before_mode: None,
            after_mode: None,
        })
        .collect();
    Library {
        dir,
        ws,
        _state: state,
        checkpoints,
        changes,
    }
}

#[test]
fn an_operation_that_wrote_every_file_before_dying_stands() {
    use agent_tui::checkpoint::{CheckpointKind, FileChange, Settled, recover};
    let Library {
        dir,
        ws,
        _state,
        checkpoints,
        changes,
    } = library();
    let cp = checkpoints
        .record(&ws, None, "j1", CheckpointKind::Apply, None, &changes)
        .unwrap();
    // Every file written, the journal never closed (the process died).
    write_files(dir.path(), &NEW);
    let settled = recover(&ws, &checkpoints).unwrap();
    assert_eq!(settled.len(), 1);
    assert_eq!(settled[0].outcome, Settled::Finished);
    assert_eq!(settled[0].checkpoint_id, cp.checkpoint_id);
    assert_eq!(contents(dir.path()), texts(&NEW));
    assert!(checkpoints.get(&cp.checkpoint_id).unwrap().is_some());
    assert!(recover(&ws, &checkpoints).unwrap().is_empty());

    // A file changed by someone else since is left as found, the rest undone.
    // Going back (new -> old) for a and b: a is written, b edited by hand.
    let back: Vec<FileChange> = changes[..2]
        .iter()
        .cloned()
        .map(|mut c| {
            std::mem::swap(&mut c.before, &mut c.after);
            c
        })
        .collect();
    let cp = checkpoints
        .record(&ws, None, "j2", CheckpointKind::Rollback, None, &back)
        .unwrap();
    write_files(
        dir.path(),
        &[("a.txt", "one\ntwo\n"), ("b.txt", "edited by hand\n")],
    );
    let settled = recover(&ws, &checkpoints).unwrap();
    assert_eq!(settled[0].outcome, Settled::Undone);
    assert_eq!(settled[0].restored, ["a.txt"]);
    assert_eq!(settled[0].left_alone[0].file_path, "b.txt");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        NEW[0].1
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("b.txt")).unwrap(),
        "edited by hand\n"
    );
    assert!(checkpoints.get(&cp.checkpoint_id).unwrap().is_none());
}

#[test]
fn a_live_apply_is_waited_for_never_taken_for_an_interrupted_one() {
    use agent_tui::checkpoint::{CheckpointKind, recover};
    let Library {
        dir,
        ws,
        _state,
        checkpoints,
        changes,
    } = library();
    // An apply under way: the root's lock held, its journal entry open.
    let lock = checkpoints.lock(&ws).unwrap();
    let cp = checkpoints
        .record(&ws, None, "j1", CheckpointKind::Apply, None, &changes)
        .unwrap();
    // Another start meanwhile (a second process would do the same).
    let (ws2, store2) = (ws.clone(), checkpoints.clone());
    let starting = std::thread::spawn(move || recover(&ws2, &store2).unwrap());
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        !starting.is_finished(),
        "recovery went ahead of a live apply"
    );
    checkpoints.write_journaled(&ws, &cp, &changes).unwrap();
    drop(lock);
    assert!(
        starting.join().unwrap().is_empty(),
        "nothing was interrupted"
    );
    assert_eq!(contents(dir.path()), texts(&NEW));
    assert!(checkpoints.get(&cp.checkpoint_id).unwrap().is_some());
}

/// Issue 15: a bundle across the agent root and a `:rw` scope is one
/// apply. Killed after the root's files and before the scope's, the next
/// start (with the scope) puts the root's back; without the scope it
/// refuses to go on and names the folder it needs.
#[test]
fn a_kill_between_the_root_and_a_scope_is_undone_across_both() {
    if !support::strace::available() {
        return;
    }
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let (root, lib) = (base.join("proj"), base.join("lib"));
    write_files(&root, &OLD[..2]);
    write_files(&lib, &[("c.txt", "five\nsix\n")]);
    let add = format!("{}:rw", lib.display());
    let edits = json!([
        {"file_path": "a.txt", "operation": "replace", "start_line": 2, "end_line": 2, "new_text": "TWO\n"},
        {"file_path": "b.txt", "operation": "replace", "start_line": 2, "end_line": 2, "new_text": "FOUR\n"},
        {"file_path": "@lib/c.txt", "operation": "replace", "start_line": 2, "end_line": 2, "new_text": "SIX\n"}
    ]);
    propose_in(&env, &root, &edits, &["--add-dir", &add]);
    // The root's batch is written first (two renames); killed at the scope's.
    let out = injected(
        &env,
        "signal=SIGKILL:when=3",
        &["review", "--accept-all", "--apply", "--add-dir", &add],
        &root,
    );
    assert_ne!(code(&out), 0);
    let read = |p: &Path| std::fs::read_to_string(p).unwrap();
    assert_eq!(read(&root.join("a.txt")), "one\nTWO\n");
    assert_eq!(read(&lib.join("c.txt")), "five\nsix\n");

    // Without the scope the start cannot settle it: it says what it needs.
    let out = env
        .cmd()
        .args(["checkpoints", "--json", "--root"])
        .arg(&root)
        .output()
        .unwrap();
    assert_ne!(code(&out), 0);
    let err = stderr(&out);
    assert!(
        err.contains(&lib.display().to_string()) && err.contains("--add-dir"),
        "{err}"
    );
    assert_eq!(read(&root.join("a.txt")), "one\nTWO\n", "nothing guessed");

    // With it, the apply is undone in both folders.
    let out = env
        .cmd()
        .args(["checkpoints", "--json", "--add-dir", &add, "--root"])
        .arg(&root)
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stderr(&out).contains("was undone"), "{}", stderr(&out));
    assert_eq!(read(&root.join("a.txt")), "one\ntwo\n");
    assert_eq!(read(&root.join("b.txt")), "three\nfour\n");
    assert_eq!(read(&lib.join("c.txt")), "five\nsix\n");
    assert!(
        support::walk(&lib)
            .iter()
            .all(|p| !p.to_string_lossy().contains(".agent-tui-")),
        "temp files left in the scope"
    );
}

#[test]
fn an_apply_that_died_after_its_last_write_is_taken_as_done() {
    // Killed after its last rename, before the session heard of it: the
    // next start finds every file written ("it stands"), and the review
    // takes that apply as done: not pending, not a conflict on every file.
    let Some((env, _dir, root)) = arena() else {
        return;
    };
    let rule = "inject=rename,renameat,renameat2:delay_exit=4000000:when=3";
    let mut applying =
        support::strace::command(&env, &["-f", "-qq", "-o", "/dev/null", "-e", rule])
            .args(["review", "--accept-all", "--apply", "--root"])
            .arg(&root)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while contents(&root) != texts(&NEW) {
        assert!(
            std::time::Instant::now() < deadline,
            "the files were never written"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // The agent (strace's child) dies where it stands.
    let agent = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .find(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
                c.contains("--apply")
                    && c.contains(&*root.to_string_lossy())
                    && !c.starts_with("strace")
            })
        })
        .expect("the apply runs");
    assert!(
        Command::new("kill")
            .args(["-9", &agent.to_string()])
            .status()
            .unwrap()
            .success()
    );
    let _ = applying.wait();
    let (list, said) = checkpoints(&env, &root);
    assert!(said.contains("had written every file; it stands"), "{said}");
    assert_eq!(list.len(), 1, "{list:?}");
    let out = env
        .cmd()
        .args(["review", "--accept-all", "--apply", "--root"])
        .arg(&root)
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stderr(&out).contains("Applied 3 hunks"), "{}", stderr(&out));
    assert_eq!(contents(&root), texts(&NEW));
    let (list, _) = checkpoints(&env, &root);
    assert_eq!(list.len(), 1, "no second apply: {list:?}");
    let out = env
        .cmd()
        .args(["sessions", "list", "--json", "--root"])
        .arg(&root)
        .output()
        .unwrap();
    let sessions: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(sessions[0]["pending_review"], false, "{sessions}");
}
