//! The committed state home of the file-based store (tests/fixtures/state-v1)
//! reads as it was written: sessions, the pending review, checkpoints and the
//! audit chain. The store's upgrade will import exactly these files.
//! Sessions stay until `sessions delete` (or `max_age_days`); the old
//! count-eviction settings are refused with what replaced them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;

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

#[test]
fn the_v1_fixture_reads_as_written() {
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
    let sessions = run(&["sessions", "list"]);
    assert!(
        sessions.contains("s_1795435872765_a685") && sessions.contains("2 job(s)"),
        "{sessions}"
    );
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
    assert!(run(&["audit", "verify"]).contains("audit log intact: 8 record(s)"));
    let review = run(&["review"]);
    assert!(
        review.contains("b.txt") && review.contains("+TWO"),
        "{review}"
    );

    // Sessions stay until deleted; deleting one leaves the others.
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
