//! The store on a real PostgreSQL (a private cluster per test): every
//! command works from the database alone, with the local state home wiped;
//! two processes append to one audit chain; a refused password, a server
//! that goes away mid-job, and the password never shown.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::json;
use support::jobs::{KEY, config, project, sse};
use support::llm_server::{LlmServer, Reply, openai};
use support::pg::{Cluster, PASSWORD};
use support::{Env, code, stderr, stdout};

/// `agent-tui` for `env` with the store on `cluster` ($AGENT_TUI_DB_PASSWORD
/// holds the password, as `password_env` names it).
fn cmd(env: &Env, cfg: &Path, cluster: &Cluster, password: &str) -> Command {
    let mut cmd = env.cmd();
    cmd.env("TEST_LLM_KEY", KEY)
        .env("AGENT_TUI_DATABASE_URL", cluster.url())
        .env("AGENT_TUI_DB_PASSWORD", password)
        .arg("--config")
        .arg(cfg);
    cmd
}

/// The config of `support::jobs::config` with `[storage] password_env`.
fn pg_config(env: &Env, url: &str) -> std::path::PathBuf {
    let cfg = config(env, "openai", url, "");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str("\n[storage]\npassword_env = \"AGENT_TUI_DB_PASSWORD\"\n");
    std::fs::write(&cfg, text).unwrap();
    cfg
}

#[test]
fn every_command_works_from_postgresql_alone() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let edits = json!({"edits": [{"file_path": "src/greet.rs", "operation": "replace",
        "start_line": 2, "end_line": 2, "new_text": "    println!(\"hi\");\n"}]})
    .to_string();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "propose_edits", &edits)])),
        sse(openai::text(&["Proposed."])),
        sse(openai::text(&["It says hi now."])),
    ]);
    let env = Env::new();
    let root = project();
    let cfg = pg_config(&env, &server.url());
    let run = |args: &[&str]| {
        let out = cmd(&env, &cfg, &cluster, PASSWORD)
            .args(args)
            .arg("--root")
            .arg(root.path())
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
        stdout(&out)
    };
    run(&["exec", "--apply", "all", "change the greeting"]);
    let greet = root.path().join("src/greet.rs");
    assert!(std::fs::read_to_string(&greet).unwrap().contains("hi"));
    // A host keeps nothing locally that another host needs.
    let state = env.home.path().join("state");
    if state.exists() {
        std::fs::remove_dir_all(&state).unwrap();
    }
    let sessions = run(&["sessions", "list", "--json"]);
    let sessions: serde_json::Value = serde_json::from_str(&sessions).unwrap();
    assert_eq!(sessions.as_array().unwrap().len(), 1, "{sessions}");
    run(&["exec", "--continue", "--mode", "ask", "what does it say?"]);
    let sent = server.requests()[2].raw_body.clone();
    assert!(sent.contains("change the greeting"), "{sent}");
    let checkpoints = run(&["checkpoints", "list", "--json"]);
    let checkpoints: serde_json::Value = serde_json::from_str(&checkpoints).unwrap();
    let cp = checkpoints[0]["checkpoint_id"]
        .as_str()
        .unwrap()
        .to_string();
    run(&["rollback", &cp]);
    assert!(std::fs::read_to_string(&greet).unwrap().contains("hello"));
    assert!(run(&["audit", "verify"]).contains("intact"));
    let check = cmd(&env, &cfg, &cluster, PASSWORD)
        .args(["store", "check"])
        .output()
        .unwrap();
    assert_eq!(code(&check), 0, "{}", stdout(&check));
    // doctor names the store, never its password.
    let doctor = cmd(&env, &cfg, &cluster, PASSWORD)
        .args(["doctor"])
        .output()
        .unwrap();
    let text = stdout(&doctor) + &stderr(&doctor);
    assert!(
        text.contains(&format!("postgresql at {}", cluster.url()))
            && text.contains("schema version 10"),
        "{text}"
    );
    assert!(!text.contains(PASSWORD), "{text}");
    // With no [storage] table the password comes from its default
    // variable, $AGENT_TUI_DB_PASSWORD (README's several-hosts setup); a
    // wrong one is refused in the server's words, with where it came from.
    let plain = config(&env, "openai", &server.url(), "");
    let out = cmd(&env, &plain, &cluster, PASSWORD)
        .args(["sessions", "list", "--root"])
        .arg(root.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = cmd(&env, &plain, &cluster, "wrong")
        .args(["sessions", "list", "--root"])
        .arg(root.path())
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(code(&out), 2, "{err}");
    assert!(
        err.contains("password authentication failed") && err.contains("password_env"),
        "{err}"
    );
    assert!(!err.contains(" at line "), "{err}");
    // Backups of PostgreSQL are pg_dump's job.
    let backup = cmd(&env, &cfg, &cluster, PASSWORD)
        .args(["store", "backup"])
        .arg(env.home.path().join("b.db"))
        .output()
        .unwrap();
    assert_eq!(code(&backup), 2);
    assert!(stderr(&backup).contains("pg_dump"), "{}", stderr(&backup));
}

#[test]
fn two_processes_append_to_one_audit_chain() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let server = LlmServer::start(
        (0..16)
            .map(|_| sse(openai::text(&["Done."])))
            .collect::<Vec<Reply>>(),
    );
    let env = Env::new();
    let root = project();
    let cfg = pg_config(&env, &server.url());
    let spawn = |i: usize| {
        cmd(&env, &cfg, &cluster, PASSWORD)
            .args(["exec", "--mode", "ask", "--root"])
            .arg(root.path())
            .arg(format!("question {i}"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    // Two at a time, eight rounds: every round two writers race for the head.
    for round in 0..8 {
        let (a, b) = (spawn(2 * round), spawn(2 * round + 1));
        for child in [a, b] {
            let out = child.wait_with_output().unwrap();
            assert_eq!(code(&out), 0, "{}", stderr(&out));
        }
    }
    let verify = cmd(&env, &cfg, &cluster, PASSWORD)
        .args(["audit", "verify", "--root"])
        .arg(root.path())
        .output()
        .unwrap();
    assert_eq!(code(&verify), 0, "{}", stdout(&verify));
    assert!(
        stdout(&verify).contains("16 records"),
        "{}",
        stdout(&verify)
    );
}

#[test]
fn a_refused_password_and_a_vanished_server_are_clear_and_lose_nothing() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let env = Env::new();
    let root = project();
    // A wrong password: exit 2, the store named, no password printed.
    let server = LlmServer::start(vec![sse(openai::text(&["First."]))]);
    let cfg = pg_config(&env, &server.url());
    let out = cmd(&env, &cfg, &cluster, "wrong-password")
        .args(["sessions", "list", "--root"])
        .arg(root.path())
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(code(&out), 2, "{err}");
    assert!(
        err.contains(&cluster.url()) && err.contains("password"),
        "{err}"
    );
    assert!(
        !err.contains("wrong-password") && !err.contains(PASSWORD),
        "{err}"
    );

    // One job stored; then the server goes away while the next job runs.
    let out = cmd(&env, &cfg, &cluster, PASSWORD)
        .args(["exec", "--mode", "ask", "--root"])
        .arg(root.path())
        .arg("first question")
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let slow = LlmServer::start(vec![Reply::Slow {
        events: openai::text(&["Second ", "answer ", "arrives ", "slowly."]),
        delay_ms: 400,
    }]);
    let cfg2 = pg_config(&env, &slow.url());
    let child = cmd(&env, &cfg2, &cluster, PASSWORD)
        .args(["exec", "--mode", "ask", "--root"])
        .arg(root.path())
        .arg("second question")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(600));
    cluster.stop();
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(code(&out), 2, "{err}");
    assert!(err.contains(&cluster.url()), "{err}");
    // The server is back: what was stored before is all there.
    cluster.restart();
    let out = cmd(&env, &cfg, &cluster, PASSWORD)
        .args(["sessions", "list", "--json", "--root"])
        .arg(root.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("first question"), "{}", stdout(&out));
    let check = cmd(&env, &cfg, &cluster, PASSWORD)
        .args(["store", "check"])
        .output()
        .unwrap();
    assert_eq!(code(&check), 0, "{}", stdout(&check));
}
