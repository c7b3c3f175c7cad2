//! The real binary in a real terminal (tmux provides the pseudo-terminal)
//! against a loopback LLM server: ask in Agent mode, review (accept one hunk,
//! reject another), apply, check the disk, Ctrl+Z hard rollback, check again.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use support::Env;
use support::jobs::{KEY, config, sse};
use support::llm_server::{LlmServer, openai};

struct Tmux {
    socket: String,
}

impl Tmux {
    fn cmd(&self) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.socket]);
        c
    }

    fn keys(&self, keys: &[&str]) {
        let ok = self
            .cmd()
            .args(["send-keys", "-t", "e2e"])
            .args(keys)
            .status()
            .unwrap();
        assert!(ok.success());
    }

    fn screen(&self) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-t", "e2e"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until the screen shows `text`.
    fn wait_for(&self, text: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let s = self.screen();
            if s.contains(text) {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {text:?}; screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").status();
    }
}

fn read(root: &Path, p: &str) -> String {
    std::fs::read_to_string(root.join(p)).unwrap()
}

/// Runs the installed-style binary in a fresh tmux server (120x36) on `root`,
/// with a clean environment: only the test key, state and config dirs.
fn start_tui(env: &Env, cfg: &Path, root: &Path, name: &str) -> Tmux {
    let home = env.home.path();
    let command = format!(
        "env -i PATH=/usr/bin:/bin HOME={h} TERM=xterm-256color AGENT_TUI_HOME={h}/state XDG_CONFIG_HOME={h}/config TEST_LLM_KEY={KEY} {bin} --config {cfg} {root}",
        h = home.display(),
        bin = env!("CARGO_BIN_EXE_agent-tui"),
        cfg = cfg.display(),
        root = root.display(),
    );
    let tmux = Tmux {
        socket: format!("agent-tui-{name}-{}", std::process::id()),
    };
    let started = tmux
        .cmd()
        .args([
            "new-session",
            "-d",
            "-s",
            "e2e",
            "-x",
            "120",
            "-y",
            "36",
            &command,
        ])
        .status()
        .unwrap();
    assert!(started.success());
    tmux
}

#[test]
fn ask_review_apply_and_roll_back_in_a_real_terminal() {
    assert!(
        Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success()),
        "this test needs tmux (apt-get install tmux); .ci/run installs it"
    );
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("a.txt"), "alpha\nbeta\ngamma\n").unwrap();
    std::fs::write(root.join("b.txt"), "one\ntwo\n").unwrap();
    let edits = json!({"edits": [
        {"file_path": "a.txt", "operation": "replace", "start_line": 2, "end_line": 2, "new_text": "BETA\n"},
        {"file_path": "b.txt", "operation": "replace", "start_line": 1, "end_line": 1, "new_text": "ONE\n"}
    ]})
    .to_string();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "propose_edits", &edits)])),
        sse(openai::text(&["Two edits are ready for your review."])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let tmux = start_tui(&env, &cfg, root, "e2e");
    tmux.wait_for("agent ›");
    tmux.wait_for("test test-model ● online");

    tmux.keys(&["make the edits", "Enter"]);
    let s = tmux.wait_for("a.txt · h_1 [pending]");
    assert!(s.contains("+BETA") && s.contains("review 0/2"), "{s}");
    assert_eq!(
        read(root, "a.txt"),
        "alpha\nbeta\ngamma\n",
        "nothing written before apply"
    );

    tmux.keys(&["y"]);
    tmux.wait_for("b.txt · h_2 [pending]");
    tmux.keys(&["n"]);
    tmux.wait_for("b.txt · h_2 [rejected]");
    tmux.keys(&["C-s"]);
    tmux.wait_for("Applied 1 hunk(s) to a.txt");
    assert_eq!(read(root, "a.txt"), "alpha\nBETA\ngamma\n");
    assert_eq!(
        read(root, "b.txt"),
        "one\ntwo\n",
        "rejected hunk not written"
    );

    tmux.keys(&["C-z"]);
    tmux.wait_for("a: roll back all (hard)");
    tmux.keys(&["a"]);
    tmux.wait_for("Rolled back");
    assert_eq!(read(root, "a.txt"), "alpha\nbeta\ngamma\n");

    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    let deadline = Instant::now() + Duration::from_secs(5);
    while tmux
        .cmd()
        .args(["has-session", "-t", "e2e"])
        .status()
        .is_ok_and(|s| s.success())
    {
        assert!(Instant::now() < deadline, "Ctrl+C twice did not quit");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// SIGTERM ends the TUI cleanly: raw mode is off again afterwards (checked
/// with `stty` in the same terminal).
#[test]
fn sigterm_restores_the_terminal() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let out = env.home.path().join("stty.txt");
    let home = env.home.path();
    let command = format!(
        "sh -c 'env -i PATH=/usr/bin:/bin HOME={h} TERM=xterm-256color AGENT_TUI_HOME={h}/state {bin} {root}; echo exit=$? > {out}; stty -a >> {out}; sleep 30'",
        h = home.display(),
        bin = env!("CARGO_BIN_EXE_agent-tui"),
        root = root.display(),
        out = out.display(),
    );
    let tmux = Tmux {
        socket: format!("agent-tui-term-{}", std::process::id()),
    };
    assert!(
        tmux.cmd()
            .args([
                "new-session",
                "-d",
                "-s",
                "e2e",
                "-x",
                "100",
                "-y",
                "30",
                &command
            ])
            .status()
            .unwrap()
            .success()
    );
    tmux.wait_for("agent ›");
    // While the TUI runs the terminal is raw.
    let pane_tty = tmux
        .cmd()
        .args(["display", "-p", "-t", "e2e", "#{pane_tty}"])
        .output()
        .unwrap();
    let tty = String::from_utf8_lossy(&pane_tty.stdout).trim().to_string();
    let during = Command::new("stty")
        .args(["-a", "-F", &tty])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&during.stdout).contains("-icanon"),
        "raw while running"
    );
    // The pane runs `sh`, whose child is the TUI.
    let shell = tmux
        .cmd()
        .args(["display", "-p", "-t", "e2e", "#{pane_pid}"])
        .output()
        .unwrap();
    let shell = String::from_utf8_lossy(&shell.stdout).trim().to_string();
    let pids = Command::new("pgrep").args(["-P", &shell]).output().unwrap();
    let pid = String::from_utf8_lossy(&pids.stdout)
        .lines()
        .next()
        .unwrap()
        .to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while !std::fs::read_to_string(&out).is_ok_and(|s| s.contains("speed")) {
        assert!(Instant::now() < deadline, "the TUI did not end on SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    }
    let after = std::fs::read_to_string(&out).unwrap();
    assert!(after.starts_with("exit=0"), "{after}");
    assert!(
        after.contains(" icanon") && after.contains(" echo "),
        "cooked mode again:\n{after}"
    );
}

/// `e` in the review: the reviewer rewrites a hunk in the in-app editor,
/// Ctrl+S keeps it (accepted, `origin: "user"` in the session), and the
/// apply writes the reviewer's text, not the model's.
#[test]
fn a_hunk_edited_in_the_review_is_what_gets_written() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("a.txt"), "alpha\nbeta\ngamma\n").unwrap();
    let edits = json!({"edits": [
        {"file_path": "a.txt", "operation": "replace", "start_line": 2, "end_line": 2, "new_text": "BETA\n"}
    ]})
    .to_string();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "propose_edits", &edits)])),
        sse(openai::text(&["One edit is ready."])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let tmux = start_tui(&env, &cfg, root, "edit");
    tmux.wait_for("agent ›");
    tmux.keys(&["make the edit", "Enter"]);
    tmux.wait_for("a.txt · h_1 [pending]");
    tmux.keys(&["e"]);
    tmux.wait_for("edit h_1 · a.txt");
    // Replace "BETA" with two lines of our own.
    tmux.keys(&["End", "BSpace", "BSpace", "BSpace", "BSpace"]);
    tmux.keys(&["-l", "Beta (mine)"]);
    tmux.keys(&["Enter"]);
    tmux.keys(&["-l", "delta"]);
    tmux.wait_for("delta");
    tmux.keys(&["C-s"]);
    let s = tmux.wait_for("[accepted · edited by you]");
    assert!(s.contains("+Beta (mine)") && s.contains("+delta"), "{s}");
    assert_eq!(
        read(root, "a.txt"),
        "alpha\nbeta\ngamma\n",
        "nothing written yet"
    );
    tmux.keys(&["C-s"]);
    tmux.wait_for("Applied 1 hunk(s) to a.txt");
    assert_eq!(read(root, "a.txt"), "alpha\nBeta (mine)\ndelta\ngamma\n");
    // The session remembers who wrote the hunk.
    let sessions = walk(&env.home.path().join("state"));
    assert!(
        sessions
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .any(|p| std::fs::read_to_string(p)
                .unwrap()
                .contains(r#""origin":"user""#)),
        "{sessions:?}"
    );
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
