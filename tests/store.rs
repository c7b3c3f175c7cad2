//! The SQLite store from outside: several processes at once, kill -9 while
//! writing, a store from a newer release, a damaged file, bad URLs, backup.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::jobs::{KEY, config, sse};
use support::llm_server::{LlmServer, Reply, openai};
use support::{Env, code, stderr, stdout};

fn texts(n: usize) -> Vec<Reply> {
    (0..n).map(|_| sse(openai::text(&["All done."]))).collect()
}

fn exec_cmd(env: &Env, cfg: &Path, root: &Path, prompt: &str) -> Command {
    let mut cmd = env.cmd();
    cmd.env("TEST_LLM_KEY", KEY)
        .arg("--config")
        .arg(cfg)
        .args(["exec", "--json", "--mode", "ask", "--root"])
        .arg(root)
        .arg(prompt)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// A file's bytes, short enough to show in a failed assertion.
fn sha(path: &Path) -> String {
    agent_tui::workspace::sha256_hex(&std::fs::read(path).unwrap())
}

/// The job ids a run reports completed.
fn completed_jobs(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "job.completed")
        .map(|e| e["job_id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn eight_processes_share_one_home_and_every_job_is_recorded() {
    let server = LlmServer::start(texts(8));
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    let cfg = config(&env, "openai", &server.url(), "");
    let children: Vec<Child> = (0..8)
        .map(|i| {
            exec_cmd(&env, &cfg, root.path(), &format!("question {i}"))
                .spawn()
                .unwrap()
        })
        .collect();
    let mut jobs = Vec::new();
    for child in children {
        let out = child.wait_with_output().unwrap();
        let err = stderr(&out);
        assert_eq!(code(&out), 0, "{err}");
        assert!(!err.contains("locked"), "{err}");
        jobs.extend(completed_jobs(&stdout(&out)));
    }
    assert_eq!(jobs.len(), 8);
    let db = env.state_db();
    let stored = support::db::column(&db, "SELECT job_id FROM jobs WHERE status = 'completed'");
    for job in &jobs {
        assert!(stored.contains(job), "{job} missing from {stored:?}");
    }
    let sessions = support::db::column(&db, "SELECT session_id FROM sessions");
    assert_eq!(sessions.len(), 8);
    // Eight writers, one audit chain, still valid.
    let verify = env
        .cmd()
        .args(["audit", "verify", "--root"])
        .arg(root.path())
        .output()
        .unwrap();
    assert_eq!(code(&verify), 0, "{}", stdout(&verify));
    assert!(stdout(&verify).contains("8 records"), "{}", stdout(&verify));
    let check = env.cmd().args(["store", "check"]).output().unwrap();
    assert_eq!(code(&check), 0, "{}", stdout(&check));
}

#[test]
fn kill_9_while_writing_loses_no_completed_job() {
    let server = LlmServer::start(texts(200));
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    let cfg = config(&env, "openai", &server.url(), "");
    let mut completed = Vec::new();
    let mut killed = 0;
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    for round in 0..10 {
        let mut children: Vec<(Child, Duration)> = (0..4)
            .map(|i| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let child = exec_cmd(&env, &cfg, root.path(), &format!("q{round}.{i}"))
                    .spawn()
                    .unwrap();
                (child, Duration::from_millis(seed % 250))
            })
            .collect();
        let start = Instant::now();
        for (child, at) in &mut children {
            if let Some(wait) = at.checked_sub(start.elapsed()) {
                std::thread::sleep(wait);
            }
            if child.try_wait().unwrap().is_none() {
                let _ = child.kill();
                killed += 1;
            }
        }
        for (child, _) in children {
            let out = child.wait_with_output().unwrap();
            if code(&out) == 0 {
                completed.extend(completed_jobs(&stdout(&out)));
            }
        }
    }
    assert!(killed > 0, "no process was killed mid-run");
    assert!(!completed.is_empty(), "no process finished");
    let check = env.cmd().args(["store", "check"]).output().unwrap();
    assert_eq!(code(&check), 0, "{}{}", stdout(&check), stderr(&check));
    let stored = support::db::column(
        &env.state_db(),
        "SELECT job_id FROM jobs WHERE status = 'completed'",
    );
    for job in &completed {
        assert!(stored.contains(job), "{job} missing");
    }
    // The store still takes new work.
    let again = exec_cmd(&env, &cfg, root.path(), "after the storm")
        .output()
        .unwrap();
    assert_eq!(code(&again), 0, "{}", stderr(&again));
}

/// `agent-tui sessions list --root ROOT`.
fn sessions_list(env: &Env, root: &std::path::Path) -> std::process::Output {
    env.cmd()
        .args(["sessions", "list", "--root"])
        .arg(root)
        .output()
        .unwrap()
}

#[test]
fn a_store_of_the_previous_schema_is_migrated_on_open() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    let list = |env: &Env| sessions_list(env, root.path());
    assert_eq!(code(&list(&env)), 0);
    // Back to what schema 1 had: no file index, no journal, no leases.
    let db = env.state_db();
    support::db::exec(&db, "DROP TABLE journal");
    support::db::exec(&db, "DROP TABLE file_index");
    support::db::exec(&db, "DROP INDEX session_records_by_job");
    support::db::exec(&db, "DROP INDEX jobs_by_job");
    support::db::exec(&db, "ALTER TABLE sessions DROP COLUMN owner");
    support::db::exec(&db, "ALTER TABLE sessions DROP COLUMN lease_until");
    support::db::exec(&db, "DROP INDEX audit_by_user");
    support::db::exec(&db, "ALTER TABLE audit DROP COLUMN user_name");
    for table in [
        "server_tokens",
        "server_sessions",
        "server_jobs",
        "server_hosts",
        "server_relay",
        "server_rates",
        "server_idempotency",
        "audit_heads",
        "web_cache",
        "images",
        "hook_trust",
    ] {
        support::db::exec(&db, &format!("DROP TABLE {table}"));
    }
    support::db::exec(
        &db,
        "UPDATE store_meta SET value = '1' WHERE key = 'schema_version'",
    );
    assert_eq!(code(&list(&env)), 0);
    let out = env
        .cmd()
        .args(["store", "check", "--json"])
        .output()
        .unwrap();
    let check: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(check["schema_version"], 10, "{check}");
    assert_eq!(
        support::db::column(&db, "SELECT COUNT(*) FROM file_index"),
        ["0"]
    );
}

#[test]
fn a_store_from_a_newer_release_is_refused_untouched() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    let list = |env: &Env| sessions_list(env, root.path());
    assert_eq!(code(&list(&env)), 0);
    let db = env.state_db();
    support::db::exec(
        &db,
        "UPDATE store_meta SET value = '99' WHERE key = 'schema_version'",
    );
    let before = sha(&db);
    for args in [
        vec!["sessions", "list"],
        vec!["store", "check"],
        vec!["exec", "hello"],
    ] {
        let out = env
            .cmd()
            .args(&args)
            .arg("--root")
            .arg(root.path())
            .output();
        let out = match args[0] {
            "store" => env.cmd().args(&args).output().unwrap(),
            _ => out.unwrap(),
        };
        let err = stderr(&out);
        assert_eq!(code(&out), 2, "{args:?}: {err}");
        assert!(
            err.contains("version 99")
                && err.contains("version 10")
                && err.contains(&db.display().to_string()),
            "{err}"
        );
    }
    assert_eq!(sha(&db), before, "nothing written");
    assert!(
        !db.with_extension("db-wal").exists()
            || std::fs::metadata(db.with_extension("db-wal"))
                .unwrap()
                .len()
                == 0
    );
}

#[test]
fn a_damaged_store_is_named_and_left_alone() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    let state = env.home.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let db = state.join("state.db");
    std::fs::write(&db, b"this is not a database, just text that got here").unwrap();
    let out = env
        .cmd()
        .args(["sessions", "list", "--root"])
        .arg(root.path())
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(code(&out), 2, "{err}");
    assert!(
        err.contains(&db.display().to_string()) && err.contains("damaged"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&db).unwrap(),
        b"this is not a database, just text that got here"
    );
    // A real database with a damaged page: the integrity check finds it.
    let env = Env::new();
    let server = LlmServer::start(texts(1));
    let cfg = config(&env, "openai", &server.url(), "");
    let run = exec_cmd(&env, &cfg, root.path(), "hello").output().unwrap();
    assert_eq!(code(&run), 0);
    let db = env.state_db();
    let mut bytes = std::fs::read(&db).unwrap();
    let page = 4096;
    assert!(bytes.len() > 3 * page);
    for b in &mut bytes[2 * page..3 * page] {
        *b = 0xA5;
    }
    std::fs::write(&db, &bytes).unwrap();
    let out = env.cmd().args(["store", "check"]).output().unwrap();
    assert_ne!(code(&out), 0, "{}", stdout(&out));
    let said = stdout(&out) + &stderr(&out);
    assert!(said.contains(&db.display().to_string()), "{said}");
}

#[test]
fn storage_urls_are_checked_and_passwords_never_written_in_them() {
    let env = Env::new();
    let cfg = env.home.path().join("config.toml");
    for (url, says) in [
        ("mysql://db/x", "storage.url"),
        ("postgres://agent:hunter2@db/x", "password_env"),
        ("postgres://agent@db/x?password=hunter2", "password_env"),
    ] {
        std::fs::write(&cfg, format!("[storage]\nurl = \"{url}\"\n")).unwrap();
        let out = env
            .cmd()
            .arg("--config")
            .arg(&cfg)
            .args(["sessions", "list"])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(code(&out), 2, "{err}");
        assert!(err.contains(says), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
    }
    // `sessions list` with the store named by the environment or by `cfg`:
    // exit 2 and what it said.
    let refused = |url: Option<&str>| {
        let mut cmd = env.cmd();
        match url {
            Some(url) => cmd.env("AGENT_TUI_DATABASE_URL", url),
            None => cmd.arg("--config").arg(&cfg),
        };
        let out = cmd.args(["sessions", "list"]).output().unwrap();
        assert_eq!(code(&out), 2, "{}", stderr(&out));
        stderr(&out)
    };
    // The environment variable wins over the file, and is checked the same way.
    for url in [
        "postgres://agent:hunter2@db/x",
        "postgres://agent@db/x?sslpassword=hunter2",
    ] {
        let err = refused(Some(url));
        assert!(
            err.contains("AGENT_TUI_DATABASE_URL") && !err.contains("hunter2"),
            "{err}"
        );
    }
    // A password variable that is not set is named.
    std::fs::write(
        &cfg,
        "[storage]\nurl = \"postgres://agent@127.0.0.1:9/x\"\npassword_env = \"NO_SUCH_PW\"\n",
    )
    .unwrap();
    let err = refused(None);
    assert!(err.contains("$NO_SUCH_PW"), "{err}");
    // Nothing listens on port 9: a clear error naming the store.
    let err = refused(Some("postgres://agent@127.0.0.1:9/x"));
    assert!(
        err.contains("store postgres://agent@127.0.0.1:9/x: cannot open it"),
        "{err}"
    );
}

#[test]
fn backup_is_a_working_copy_and_the_store_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let server = LlmServer::start(texts(1));
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    let cfg = config(&env, "openai", &server.url(), "");
    // doctor names the store without creating it, then what it holds.
    let doctor = || {
        let out = env
            .cmd()
            .arg("--config")
            .arg(&cfg)
            .arg("doctor")
            .output()
            .unwrap();
        stdout(&out)
    };
    let db = env.state_db().display().to_string();
    let said = doctor();
    assert!(
        said.contains(&format!("sqlite at {db} (created on first use)")),
        "{said}"
    );
    assert!(!env.state_db().exists());
    assert_eq!(
        code(&exec_cmd(&env, &cfg, root.path(), "hi").output().unwrap()),
        0
    );
    let said = doctor();
    assert!(
        said.contains(&format!("sqlite at {db} (schema version 10, ")),
        "{said}"
    );
    let check = env
        .cmd()
        .args(["store", "check", "--json"])
        .output()
        .unwrap();
    assert_eq!(code(&check), 0);
    let check: serde_json::Value = serde_json::from_str(&stdout(&check)).unwrap();
    assert_eq!(
        (
            &check["ok"],
            &check["kind"],
            &check["sessions"],
            &check["schema_version"]
        ),
        (&json!(true), &json!("sqlite"), &json!(1), &json!(10)),
        "{check}"
    );
    assert!(check["audit_records"].as_u64().unwrap() >= 1, "{check}");
    let mode = std::fs::metadata(env.state_db())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o077, 0, "state.db is readable by others: {mode:o}");
    let copy = env.home.path().join("backup.db");
    let backup = || {
        env.cmd()
            .arg("store")
            .arg("backup")
            .arg(&copy)
            .output()
            .unwrap()
    };
    let out = backup();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("backed up"), "{}", stdout(&out));
    let mode = std::fs::metadata(&copy).unwrap().permissions().mode();
    assert_eq!(mode & 0o077, 0, "the copy is readable by others: {mode:o}");
    let left: Vec<_> = std::fs::read_dir(env.home.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(".agent-tui-backup")
        })
        .collect();
    assert!(left.is_empty(), "the private folder is removed");
    // The copy is a store of its own with the same sessions.
    let list = |url: Option<&Path>| {
        let mut cmd = env.cmd();
        if let Some(p) = url {
            cmd.env("AGENT_TUI_DATABASE_URL", format!("sqlite:{}", p.display()));
        }
        let out = cmd
            .args(["sessions", "list", "--json", "--root"])
            .arg(root.path())
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        stdout(&out)
    };
    assert_eq!(list(Some(&copy)), list(None));
    // It never overwrites.
    let out = backup();
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("already exists"), "{}", stderr(&out));
}

#[test]
fn sessions_go_only_by_age_and_only_when_asked() {
    let server = LlmServer::start(texts(5));
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    let cfg = config(&env, "openai", &server.url(), "");
    for i in 0..3 {
        let out = exec_cmd(&env, &cfg, root.path(), &format!("q{i}"))
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    let db = env.state_db();
    let ids = support::db::column(&db, "SELECT session_id FROM sessions ORDER BY created_at");
    // Two sessions idle for years; one of them still awaits review.
    support::db::exec(
        &db,
        &format!(
            "UPDATE sessions SET updated_at = '2020-01-01T00:00:00.000Z'
             WHERE session_id IN ('{}', '{}');
             UPDATE sessions SET pending_review = 1 WHERE session_id = '{}'",
            ids[0], ids[1], ids[1]
        ),
    );
    // Without max_age_days nothing goes.
    let out = exec_cmd(&env, &cfg, root.path(), "q3").output().unwrap();
    assert_eq!(code(&out), 0);
    assert_eq!(
        support::db::column(&db, "SELECT session_id FROM sessions").len(),
        4
    );
    // With it, only the old session without a pending review goes.
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str("\n[sessions]\nmax_age_days = 30\n");
    std::fs::write(&cfg, text).unwrap();
    let out = exec_cmd(&env, &cfg, root.path(), "q4").output().unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let left = support::db::column(&db, "SELECT session_id FROM sessions");
    assert_eq!(left.len(), 4, "{left:?}");
    assert!(
        !left.contains(&ids[0]) && left.contains(&ids[1]),
        "{left:?}"
    );
    // Its records went with it.
    let orphans = support::db::column(
        &db,
        &format!(
            "SELECT COUNT(*) FROM session_records WHERE session_id = '{}'",
            ids[0]
        ),
    );
    assert_eq!(orphans, ["0"]);
}

#[test]
fn store_check_names_a_checkpoint_whose_bytes_are_gone() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("a.txt"), "precious\n").unwrap();
    let out = env
        .cmd()
        .args([
            "tool",
            "run_command",
            r#"{"command": "rm a.txt"}"#,
            "--root",
        ])
        .arg(root.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let checked = env.cmd().args(["store", "check"]).output().unwrap();
    assert_eq!(code(&checked), 0, "{}", stdout(&checked));
    let db = env.state_db();
    support::db::exec(&db, "DELETE FROM checkpoint_snapshots");
    support::db::exec(&db, "DELETE FROM snapshots");
    let checked = env.cmd().args(["store", "check"]).output().unwrap();
    assert_eq!(code(&checked), 1, "{}", stdout(&checked));
    assert!(
        stdout(&checked).contains("lacks the stored bytes of a.txt"),
        "{}",
        stdout(&checked)
    );
}

#[test]
fn a_truncated_store_is_named_damaged_at_once() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    assert_eq!(code(&sessions_list(&env, root.path())), 0);
    let db = env.state_db();
    let head = std::fs::read(&db).unwrap()[..4096].to_vec();
    std::fs::write(&db, head).unwrap();
    let started = std::time::Instant::now();
    let out = env.cmd().args(["store", "check"]).output().unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "it waited"
    );
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(code(&out), 1, "{said}");
    assert!(
        said.contains("damaged") && said.contains("restore a backup"),
        "{said}"
    );
}
