//! The upgrade from the file-based store: the committed state home of the
//! last file-based release (tests/fixtures/state-v1) is imported into the
//! store on first open, once, with ids, order and audit hashes kept; the
//! old files stay as they were; everything works on the imported data.
//! Sessions stay until `sessions delete` (or `max_age_days`); the old
//! count-eviction settings are refused with what replaced them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;

use support::jobs::{config, sse};
use support::llm_server::{LlmServer, openai};
use support::{Env, code, stdout};

/// The agent root the fixture's state is keyed to.
const ROOT: &str = "/tmp/agent-tui-fixture-v1/root";

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut files: Vec<_> = support::walk(dir)
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn the_v1_fixture_is_imported_once_and_works() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/state-v1");
    copy(&fixture.join("root"), Path::new(ROOT));
    let env = Env::new();
    let home = tempfile::tempdir().unwrap();
    copy(&fixture.join("home"), home.path());
    let run = |args: &[&str]| {
        let out = env
            .cmd()
            .env("AGENT_TUI_HOME", home.path())
            .args(args)
            .args(["--root", ROOT])
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{args:?}: {}", support::stderr(&out));
        stdout(&out)
    };
    let before = snapshot(&home.path().join("roots"));
    let sessions = run(&["sessions", "list"]);
    assert!(
        sessions.contains("s_1795435872765_a685") && sessions.contains("2 jobs"),
        "{sessions}"
    );
    // Imported into the store; the old files are left exactly as they were.
    assert!(home.path().join("state.db").is_file());
    assert_eq!(snapshot(&home.path().join("roots")), before);
    let shown = run(&["sessions", "show", "s_1795435872765_a685", "--json"]);
    let shown: serde_json::Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(shown["created_at"], "2026-11-23T12:11:12.765Z");
    assert_eq!(shown["jobs"][0]["job_id"], "job_0a508d340c1bec5b");
    assert_eq!(shown["jobs"][0]["prompt"], "Rename hello to hi in a.txt");
    assert!(
        sessions.contains("s_1795435872827_f9fd") && sessions.contains("[review pending]"),
        "{sessions}"
    );
    let checkpoints = run(&["checkpoints", "list"]);
    assert!(
        checkpoints.contains("cp_1795435872811_da2e")
            && checkpoints.contains("cp_1795435875875_7ac9"),
        "{checkpoints}"
    );
    assert!(run(&["audit", "verify"]).contains("audit log intact: 8 records"));
    let review = run(&["review"]);
    assert!(
        review.contains("b.txt") && review.contains("+TWO"),
        "{review}"
    );

    // The rollback of the old checkpoint works from the imported snapshots:
    // undoing the recorded rollback puts the applied edit back.
    let a = Path::new(ROOT).join("a.txt");
    let original = std::fs::read_to_string(&a).unwrap();
    run(&["rollback", "cp_1795435875875_7ac9"]);
    let redone = std::fs::read_to_string(&a).unwrap();
    assert_ne!(redone, original);
    assert!(redone.starts_with("hi"), "{redone}");
    // The chain goes on from the imported head and still verifies.
    let verified = run(&["audit", "verify"]);
    assert!(
        !verified.contains(" 8 records") && verified.contains("intact"),
        "{verified}"
    );
    let checked = env
        .cmd()
        .env("AGENT_TUI_HOME", home.path())
        .args(["store", "check"])
        .output()
        .unwrap();
    assert_eq!(code(&checked), 0, "{}", stdout(&checked));

    // --continue goes on with the imported conversation.
    let server = LlmServer::start(vec![sse(openai::text(&["Continued."]))]);
    let cfg = config(&env, "openai", &server.url(), "");
    let out = env
        .cmd()
        .env("AGENT_TUI_HOME", home.path())
        .env("TEST_LLM_KEY", support::jobs::KEY)
        .arg("--config")
        .arg(&cfg)
        .args([
            "exec",
            "--continue",
            "--root",
            ROOT,
            "--mode",
            "ask",
            "and now?",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", support::stderr(&out));
    let sent = server.requests()[0].raw_body.clone();
    // The latest session is the one the rollback above was recorded in
    // (the checkpoint's, a685): its conversation, and the rollback told.
    assert!(sent.contains("Rename hello to hi in a.txt"), "{sent}");
    assert!(
        sent.contains("the user rolled back every change of checkpoint cp_1795435875875_7ac9"),
        "{sent}"
    );
    // The other imported session goes on by its id (f9fd).
    let server = LlmServer::start(vec![sse(openai::text(&["Continued."]))]);
    let cfg = config(&env, "openai", &server.url(), "");
    let out = env
        .cmd()
        .env("AGENT_TUI_HOME", home.path())
        .env("TEST_LLM_KEY", support::jobs::KEY)
        .arg("--config")
        .arg(&cfg)
        .args([
            "exec",
            "--session",
            "s_1795435872827_f9fd",
            "--root",
            ROOT,
            "--mode",
            "ask",
            "and now?",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", support::stderr(&out));
    let sent = server.requests()[0].raw_body.clone();
    assert!(sent.contains("Uppercase line 2 of b.txt"), "{sent}");

    // Sessions stay until deleted; deleting one leaves the others, and the
    // import never runs again (the deleted session does not come back).
    run(&["sessions", "delete", "s_1795435872765_a685"]);
    let sessions = run(&["sessions", "list"]);
    assert!(
        !sessions.contains("s_1795435872765_a685") && sessions.contains("s_1795435872827_f9fd"),
        "{sessions}"
    );
    let out = env
        .cmd()
        .env("AGENT_TUI_HOME", home.path())
        .args(["sessions", "delete", "s_1795435872765_a685", "--root", ROOT])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert!(
        support::stderr(&out).contains("no session s_1795435872765_a685"),
        "{}",
        support::stderr(&out)
    );
}

#[test]
fn count_eviction_settings_are_refused_with_what_replaced_them() {
    let env = Env::new();
    let cfg = env.home.path().join("config.toml");
    std::fs::write(
        &cfg,
        "[sessions]\nmax_sessions = 50\ncompleted_ttl_hours = 720\n",
    )
    .unwrap();
    let out = env
        .cmd()
        .arg("--config")
        .arg(&cfg)
        .args(["doctor"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    let err = support::stderr(&out);
    assert!(
        err.contains("sessions.max_sessions is gone") && err.contains("sessions.max_age_days"),
        "{err}"
    );
    assert!(
        err.contains("sessions.completed_ttl_hours is gone"),
        "{err}"
    );
}
