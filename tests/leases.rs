//! Ready for several processes and hosts: two `agent-tui` processes on one
//! SQLite home, and two on one PostgreSQL store, never drive one session
//! at once (the second is told who does, and goes on once it is free); two
//! stores on one PostgreSQL never write one root at once (the second waits
//! for the first's advisory lock).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::jobs::{KEY, config, project, sse};
use support::llm_server::{LlmServer, Reply, openai};
use support::pg::{Cluster, PASSWORD};
use support::{Env, code, stderr, stdout};

/// A slow first answer (about 2 s), then quick ones.
fn server() -> LlmServer {
    let words: Vec<String> = (0..40).map(|i| format!("w{i} ")).collect();
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    LlmServer::start(vec![
        Reply::Slow {
            events: openai::text(&refs),
            delay_ms: 50,
        },
        sse(openai::text(&["Second."])),
        sse(openai::text(&["Third."])),
    ])
}

/// `agent-tui exec` in ask mode on `root` with `args`, as `base` builds it.
fn exec(base: &dyn Fn() -> Command, root: &Path, args: &[&str]) -> Command {
    let mut cmd = base();
    cmd.args(["exec", "--mode", "ask", "--root"])
        .arg(root)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// The one session of `root`, once a process has made it.
fn the_session(base: &dyn Fn() -> Command, root: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let out = base()
            .args(["sessions", "list", "--json", "--root"])
            .arg(root)
            .output()
            .unwrap();
        let list: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap_or_default();
        if let Some(id) = list[0]["session_id"].as_str() {
            return id.to_string();
        }
        assert!(Instant::now() < deadline, "no session: {}", stderr(&out));
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One process drives a session while another asks for it: refused with
/// the driver named; once the first is done, the second goes on.
fn one_driver_at_a_time(base: &dyn Fn() -> Command, root: &Path) {
    let first = exec(base, root, &["slow question"]).spawn().unwrap();
    let session = the_session(base, root);
    let refused = exec(base, root, &["--session", &session, "me too"])
        .output()
        .unwrap();
    let err = stderr(&refused);
    assert_eq!(code(&refused), 1, "{err}");
    assert!(
        err.contains(&format!(
            "session {session} is in use by another agent-tui (pid {}",
            first.id()
        )),
        "{err}"
    );
    let first = first.wait_with_output().unwrap();
    assert_eq!(code(&first), 0, "{}", stderr(&first));
    // The first let it go as it ended: the session is free at once.
    let then = exec(base, root, &["--session", &session, "now me"])
        .output()
        .unwrap();
    assert_eq!(code(&then), 0, "{}", stderr(&then));
    assert!(stdout(&then).contains("Second."), "{}", stdout(&then));
    let listed = base()
        .args(["sessions", "show", &session, "--json", "--root"])
        .arg(root)
        .output()
        .unwrap();
    let shown: serde_json::Value = serde_json::from_str(&stdout(&listed)).unwrap();
    let prompts: Vec<&str> = shown["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["prompt"].as_str().unwrap())
        .collect();
    assert_eq!(
        prompts,
        ["slow question", "now me"],
        "the refused job left nothing"
    );
}

#[test]
fn two_processes_on_one_sqlite_home_never_drive_one_session_at_once() {
    let env = Env::new();
    let root = project();
    let llm = server();
    let cfg = config(&env, "openai", &llm.url(), "");
    let base = || {
        let mut cmd = env.cmd();
        cmd.env("TEST_LLM_KEY", KEY).arg("--config").arg(&cfg);
        cmd
    };
    one_driver_at_a_time(&base, root.path());
}

#[test]
fn two_processes_on_one_postgresql_store_never_drive_one_session_at_once() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let env = Env::new();
    let root = project();
    let llm = server();
    let cfg = config(&env, "openai", &llm.url(), "");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str("\n[storage]\npassword_env = \"AGENT_TUI_DB_PASSWORD\"\n");
    std::fs::write(&cfg, text).unwrap();
    let base = || {
        let mut cmd = env.cmd();
        cmd.env("TEST_LLM_KEY", KEY)
            .env("AGENT_TUI_DATABASE_URL", cluster.url())
            .env("AGENT_TUI_DB_PASSWORD", PASSWORD)
            .arg("--config")
            .arg(&cfg);
        cmd
    };
    one_driver_at_a_time(&base, root.path());
}

/// `a` holds `root`'s write lock: `b` waits until it is let go.
fn the_second_writer_waits(a: &agent_tui::store::Store, b: agent_tui::store::Store) {
    let root = Path::new("/srv/shared/project");
    let held = a.root(root).lock().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let _lock = b.root(root).lock().unwrap();
        tx.send(Instant::now()).unwrap();
    });
    assert!(
        rx.recv_timeout(Duration::from_millis(500)).is_err(),
        "the second host waits for the first"
    );
    let released = Instant::now();
    drop(held);
    let got = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert!(got >= released);
    waiter.join().unwrap();
    // Another root is not held up by it.
    let other = a.root(Path::new("/srv/shared/other")).lock();
    assert!(other.is_ok());
}

#[test]
fn two_stores_on_one_postgresql_never_write_one_root_at_once() {
    use agent_tui::store::{Store, Target};
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let target = Target::Postgres {
        url: cluster.url(),
        password: Some(PASSWORD.to_string()),
    };
    // Two hosts: two stores, nothing shared but the database (no lock files).
    let a = Store::open_target(&target).unwrap();
    the_second_writer_waits(&a, Store::open_target(&target).unwrap());
}

#[test]
fn two_stores_on_one_sqlite_home_never_write_one_root_at_once() {
    use agent_tui::store::{Store, Target};
    let home = tempfile::tempdir().unwrap();
    let target = Target::Sqlite(home.path().join("state.db"));
    // Two processes' handles: each its own pool and lock files.
    let a = Store::open_target(&target).unwrap();
    the_second_writer_waits(&a, Store::open_target(&target).unwrap());
}
