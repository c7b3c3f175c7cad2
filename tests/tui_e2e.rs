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
use support::tmux::Tmux;

fn read(root: &Path, p: &str) -> String {
    std::fs::read_to_string(root.join(p)).unwrap()
}

/// Runs the installed-style binary in a fresh tmux server (120x36) on `root`,
/// with a clean environment: only the test key, state and config dirs.
fn start_tui(env: &Env, cfg: &Path, root: &Path, name: &str) -> Tmux {
    start_tui_with(env, cfg, root, name, "")
}

/// `start_tui` with more arguments after the root (`--resume` ...).
fn start_tui_with(env: &Env, cfg: &Path, root: &Path, name: &str, extra: &str) -> Tmux {
    support::tmux::start_agent(env, cfg, root, name, extra)
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
    tmux.wait_for("Applied 1 hunk to a.txt");
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

    tmux.quit();
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
    let tmux = Tmux::start("term", &command, (100, 30));
    tmux.wait_for("agent ›");
    // While the TUI runs the terminal is raw.
    assert!(tmux.stty().contains("-icanon"), "raw while running");
    // The pane runs `sh`, whose child is the TUI.
    let shell = tmux.pane("#{pane_pid}");
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
    tmux.wait_for("Applied 1 hunk to a.txt");
    assert_eq!(read(root, "a.txt"), "alpha\nBeta (mine)\ndelta\ngamma\n");
    // The session remembers who wrote the hunk.
    // (The TUI records as it goes, without waiting: give it a moment.)
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !env.session_text().contains(r#""origin":"user""#) {
        assert!(
            std::time::Instant::now() < deadline,
            "{}",
            env.session_text()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let audit = env.audit_records();
    assert!(
        audit
            .iter()
            .any(|r| r["action"] == "edit_hunk" && r["target"] == "h_1" && r["approved"] == true),
        "{audit:?}"
    );
}

/// Run by `a_panic_in_any_thread_restores_the_terminal` inside tmux: takes
/// the terminal as the TUI does, then a background thread panics once the
/// parent has looked at the terminal.
#[test]
#[ignore = "run inside tmux by a_panic_in_any_thread_restores_the_terminal"]
fn panicking_child() {
    let go = std::env::var("AGENT_TUI_TEST_GO").unwrap();
    let mut terminal = agent_tui::tui::terminal::enter().unwrap();
    terminal
        .draw(|f| f.render_widget(ratatui::widgets::Paragraph::new("child running"), f.area()))
        .unwrap();
    while !Path::new(&go).exists() {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = std::thread::spawn(|| panic!("boom in a background thread")).join();
    // The hook ends the process; getting here means it did not.
    std::thread::sleep(Duration::from_secs(30));
}

/// A panic, even off the UI thread, gives the terminal back (cooked mode,
/// main screen, no mouse capture), shows the panic and exits with 101.
#[test]
fn a_panic_in_any_thread_restores_the_terminal() {
    let env = Env::new();
    let out = env.home.path().join("after.txt");
    let go = env.home.path().join("go");
    let command = format!(
        "sh -c 'AGENT_TUI_TEST_GO={go} {exe} --ignored --exact panicking_child --nocapture --test-threads=1; echo exit=$? > {out}; stty -a >> {out}; sleep 30'",
        go = go.display(),
        exe = std::env::current_exe().unwrap().display(),
        out = out.display(),
    );
    let tmux = Tmux::start("panic", &command, (100, 30));
    tmux.wait_for("child running");
    assert!(tmux.stty().contains("-icanon"), "raw while running");
    assert_eq!(
        tmux.pane("#{alternate_on} #{mouse_any_flag}"),
        "1 1",
        "alternate screen and mouse capture while running"
    );

    std::fs::write(&go, "").unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !std::fs::read_to_string(&out).is_ok_and(|s| s.contains("speed")) {
        assert!(
            Instant::now() < deadline,
            "the process did not end; screen:\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let after = std::fs::read_to_string(&out).unwrap();
    assert!(after.starts_with("exit=101"), "{after}");
    assert!(
        after.contains(" icanon") && after.contains(" echo "),
        "cooked mode again:\n{after}"
    );
    assert_eq!(tmux.pane("#{alternate_on} #{mouse_any_flag}"), "0 0");
    tmux.wait_for("boom in a background thread");
}

/// A command the model wants to run waits for the user: the dialog shows
/// it, `y` allows it once, the model gets its output; `n` denies the next.
#[test]
fn the_user_approves_one_command_and_denies_another() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let first = json!({"command": "sh -c 'echo approved > made.txt; echo wrote it'"}).to_string();
    let second = json!({"command": "touch denied.txt"}).to_string();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "run_command", &first)])),
        sse(openai::tool_calls(&[("c2", "run_command", &second)])),
        sse(openai::text(&["Ran one, skipped one."])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let tmux = start_tui(&env, &cfg, root, "approve");
    tmux.wait_for("agent ›");
    tmux.keys(&["run things", "Enter"]);
    let s = tmux.wait_for("Allow this command?");
    assert!(
        s.contains("echo approved > made.txt") && s.contains("waiting for you"),
        "{s}"
    );
    assert!(
        !root.join("made.txt").exists(),
        "nothing runs before approval"
    );
    tmux.keys(&["y"]);
    tmux.wait_for("touch denied.txt");
    assert_eq!(read(root, "made.txt"), "approved\n");
    tmux.keys(&["n"]);
    tmux.wait_for("Ran one, skipped one.");
    assert!(!root.join("denied.txt").exists());
    let requests = server.requests();
    let results: Vec<String> = requests[1..]
        .iter()
        .map(|r| r.body["messages"].to_string())
        .collect();
    assert!(results[0].contains("wrote it"), "{}", results[0]);
    assert!(
        results[1].contains("the user did not allow"),
        "{}",
        results[1]
    );
}

/// A markdown answer streamed slowly into the real binary reads as a
/// document: no markdown syntax left, words whole, code behind its gutter,
/// a table in columns; a narrower terminal re-flows it; `Y` in the chat puts
/// the code block on the clipboard through OSC 52 (tmux keeps it as a buffer).
#[test]
fn a_streamed_markdown_answer_renders_reflows_and_copies() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("a.txt"), "alpha\n").unwrap();
    let answer = "# Plan\n\nThe change **strongly** matters: wrap extraordinarily long sentences at word boundaries so that nothing is ever cut in the middle of a word.\n\n1. Read the file\n2. Edit `a.txt`\n\n```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n\n| step | cost |\n|------|-----:|\n| read | 1 |\n| edit | 20 |\n";
    let pieces: Vec<String> = answer
        .as_bytes()
        .chunks(9)
        .map(|c| String::from_utf8(c.to_vec()).unwrap())
        .collect();
    let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let server = LlmServer::start(vec![support::llm_server::Reply::Slow {
        events: openai::text(&pieces),
        delay_ms: 15,
    }]);
    let cfg = config(&env, "openai", &server.url(), "");
    let tmux = start_tui(&env, &cfg, root, "md");
    tmux.cmd()
        .args(["set-option", "-g", "set-clipboard", "on"])
        .status()
        .unwrap();
    tmux.wait_for("agent ›");
    tmux.keys(&["explain the plan", "Enter"]);
    tmux.wait_for(" done ");
    let s = tmux.wait_for("edit │   20");
    for raw in ["# Plan", "**", "```", "|------|", "`a.txt`"] {
        assert!(!s.contains(raw), "raw markdown {raw:?} on screen:\n{s}");
    }
    assert!(s.contains("▎ fn main() {"), "{s}");
    assert!(s.contains("1. Read the file"), "{s}");
    assert!(s.contains("step │ cost"), "{s}");
    for w in ["strongly", "matters:", "extraordinarily", "boundaries"] {
        assert!(s.contains(w), "{w:?} split or missing:\n{s}");
    }

    // Narrower: the same words, re-flowed.
    tmux.cmd()
        .args(["resize-window", "-t", "e2e", "-x", "72", "-y", "36"])
        .status()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let narrow = loop {
        let n = tmux.screen();
        if n.lines().all(|l| l.chars().count() <= 72) && n.contains("extraordinarily") {
            break n;
        }
        assert!(Instant::now() < deadline, "no re-flow:\n{n}");
        std::thread::sleep(Duration::from_millis(50));
    };
    for w in ["strongly", "extraordinarily", "boundaries"] {
        assert!(narrow.contains(w), "{w:?} split after resize:\n{narrow}");
    }

    // Copy the code block from the chat.
    tmux.keys(&["BTab"]);
    tmux.wait_for("└ y copy · Y copy code");
    tmux.keys(&["Y"]);
    tmux.wait_for("copied the code");
    let buffer = tmux.cmd().args(["show-buffer"]).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&buffer.stdout),
        "fn main() {\n    println!(\"hi\");\n}"
    );
}

/// The TUI and `exec` runs use one state home at once: every job of each is
/// stored, none meets "database is locked".
#[test]
fn the_tui_and_exec_runs_share_one_store() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let server = LlmServer::start((0..4).map(|_| sse(openai::text(&["Answered."]))).collect());
    let cfg = config(&env, "openai", &server.url(), "");
    let tmux = start_tui(&env, &cfg, root, "shared");
    tmux.wait_for("agent ›");
    tmux.keys(&["hello from the terminal", "Enter"]);
    let runs: Vec<_> = (0..3)
        .map(|i| {
            env.cmd()
                .env("TEST_LLM_KEY", KEY)
                .arg("--config")
                .arg(&cfg)
                .args(["exec", "--mode", "ask", "--root"])
                .arg(root)
                .arg(format!("hello from exec {i}"))
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for run in runs {
        let out = run.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(!err.contains("locked"), "{err}");
    }
    tmux.wait_for("Answered.");
    // The TUI records as it goes: its session joins the three of exec.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let prompts = support::db::column(&env.state_db(), "SELECT prompt FROM jobs");
        if prompts.len() == 4 {
            assert!(
                prompts.iter().any(|p| p == "hello from the terminal"),
                "{prompts:?}"
            );
            break;
        }
        assert!(Instant::now() < deadline, "{prompts:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The git changes of one model turn come as one dialog in a real
/// terminal: both calls listed, one `y` runs both, and the commit exists.
#[test]
fn one_dialog_allows_a_turns_git_add_and_commit() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["config", "user.name", "T"]);
    git(&["config", "user.email", "t@example.test"]);
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "start"]);
    std::fs::write(root.join("a.txt"), "two\n").unwrap();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[
            ("c1", "git_add", &json!({"paths": ["a.txt"]}).to_string()),
            (
                "c2",
                "git_commit",
                &json!({"message": "bump a"}).to_string(),
            ),
        ])),
        sse(openai::text(&["Committed."])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let tmux = start_tui(&env, &cfg, root, "gitbatch");
    tmux.wait_for("agent ›");
    tmux.keys(&["commit it", "Enter"]);
    let s = tmux.wait_for("Allow these commands?");
    assert!(
        s.contains("git add a.txt")
            && s.contains("git commit -m \"bump a\"")
            && s.contains("2 calls"),
        "{s}"
    );
    tmux.keys(&["y"]);
    tmux.wait_for("Committed.");
    assert_eq!(git(&["log", "-1", "--format=%s"]), "bump a");
    assert_eq!(git(&["status", "--porcelain"]), "");
}

/// What an allowed command changes is a checkpoint in a real terminal too:
/// the transcript names it and Ctrl+Z puts the file back.
#[test]
fn ctrl_z_undoes_what_a_command_changed() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("a.txt"), "before\n").unwrap();
    std::fs::write(root.join("gen.sh"), "echo generated > a.txt\n").unwrap();
    let args = json!({"command": "sh gen.sh"}).to_string();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "run_command", &args)])),
        sse(openai::text(&["Generated."])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let tmux = start_tui(&env, &cfg, root, "execundo");
    tmux.wait_for("agent ›");
    tmux.keys(&["generate", "Enter"]);
    tmux.wait_for("Allow this command?");
    tmux.keys(&["y"]);
    tmux.wait_for("The command changed a.txt; checkpoint");
    tmux.wait_for("Generated.");
    assert_eq!(read(root, "a.txt"), "generated\n");
    tmux.keys(&["C-z"]);
    tmux.wait_for("a: roll back all (hard)");
    tmux.keys(&["a"]);
    tmux.wait_for("Rolled back");
    assert_eq!(read(root, "a.txt"), "before\n");
}

/// An MCP tool call in a real terminal: the dialog names the server, the
/// tool and its arguments; the status bar shows the server running.
#[test]
fn an_mcp_call_is_approved_in_a_dialog_that_names_the_server() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp/fake_server.py");
    let args = json!({"text": "from the model"}).to_string();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "mcp__fake__echo", &args)])),
        sse(openai::text(&["Echoed."])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str(&format!(
        "\n[mcp_servers.fake]\ncommand = \"python3\"\nargs = [{:?}]\n",
        fake.display().to_string()
    ));
    std::fs::write(&cfg, text).unwrap();
    let tmux = start_tui(&env, &cfg, root, "mcpdialog");
    let s = tmux.wait_for("agent ›");
    assert!(!s.contains("mcp"), "no server starts with the TUI: {s}");
    tmux.keys(&["echo something", "Enter"]);
    let s = tmux.wait_for("Allow this command?");
    assert!(
        s.contains("MCP server fake · tool echo") && s.contains("from the model"),
        "{s}"
    );
    assert!(s.contains("mcp ●fake"), "{s}");
    tmux.keys(&["y"]);
    tmux.wait_for("Echoed.");
    let results = server.requests()[1].body["messages"].to_string();
    assert!(results.contains("echo: from the model"), "{results}");
}

#[test]
fn a_session_picked_at_start_is_restored_and_goes_on() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("a.txt"), "alpha\n").unwrap();
    let llm = LlmServer::start(vec![
        sse(openai::text(&["The first answer."])),
        sse(openai::text(&["The second answer."])),
        sse(openai::text(&["Going on from the first."])),
    ]);
    let cfg = config(&env, "openai", &llm.url(), "");
    for prompt in ["first question", "second question"] {
        let out = env
            .cmd()
            .env("TEST_LLM_KEY", KEY)
            .args([
                "--config",
                cfg.to_str().unwrap(),
                "exec",
                "--mode",
                "ask",
                "--root",
            ])
            .arg(root)
            .arg(prompt)
            .output()
            .unwrap();
        assert!(out.status.success());
    }
    let t = start_tui_with(&env, &cfg, root, "picker", "--resume");
    // The picker lists the newest first; the older one is picked.
    t.wait_for("second question");
    t.keys(&["Down", "Enter"]);
    // Read off the UI task, then shown, and the engine goes on with it.
    let s = t.wait_for("The first answer.");
    assert!(
        s.contains("first question") && !s.contains("The second answer."),
        "{s}"
    );
    t.keys(&["and then?", "Enter"]);
    t.wait_for("Going on from the first.");
}

/// Issue 15: scopes in the tree, and Ctrl+O opens another folder as the
/// agent root in place (recent roots offered, Tab completes the path); the
/// prompt, tools, tree, status and sessions follow the new root.
#[test]
fn ctrl_o_opens_another_root_in_place_and_the_tree_shows_scopes() {
    let env = Env::new();
    let base = tempfile::tempdir().unwrap();
    let base = base.path().canonicalize().unwrap();
    let first = base.join("first-proj");
    let second = base.join("second-proj");
    let docs = base.join("docs");
    for (dir, file) in [(&first, "a.txt"), (&second, "b.txt"), (&docs, "guide.md")] {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(file), "text\n").unwrap();
    }
    let server = LlmServer::start(vec![sse(openai::text(&["Hello from the second root."]))]);
    let cfg = config(&env, "openai", &server.url(), "");
    let tmux = start_tui_with(
        &env,
        &cfg,
        &first,
        "open-root",
        &format!("--add-dir {}", docs.display()),
    );
    tmux.wait_for("@docs read-only");
    // The root's files come with the folder's own load.
    let s = tmux.wait_for("a.txt");
    assert!(s.contains("@root") && s.contains("@docs read-only"), "{s}");

    tmux.keys(&["C-o"]);
    let s = tmux.wait_for("Open a folder as the agent root");
    // The root it started in is the first recent one.
    tmux.wait_for(&format!("  {}", first.display()));
    assert!(s.contains("Tab: complete"), "{s}");
    // A folder that is not there: the dialog says so and stays.
    tmux.keys(&["-l", &format!("{}/no-such-folder", base.display())]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("does not exist");
    tmux.keys(&["Escape"]);
    tmux.keys(&["C-o"]);
    tmux.wait_for(&format!("  {}", first.display()));
    // Tab completes the one folder that starts with `sec`.
    tmux.keys(&["-l", &format!("{}/sec", base.display())]);
    tmux.keys(&["Tab"]);
    tmux.wait_for(&format!("> {}/", second.display()));
    tmux.keys(&["Enter"]);
    let s = tmux.wait_for("as the agent root: a new session.");
    assert!(
        s.contains("b.txt") && !s.contains("a.txt"),
        "the tree follows: {s}"
    );
    assert!(s.contains(&second.display().to_string()), "{s}");

    tmux.keys(&["-l", "hello"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Hello from the second root.");
    let system = server.requests()[0].body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        system.contains(&format!("The agent root is `{}`", second.display())),
        "the prompt follows: {system}"
    );

    // Both roots are recent now, the newest first.
    tmux.keys(&["C-o"]);
    tmux.wait_for("Open a folder as the agent root");
    let s = tmux.wait_for(&format!("  {}", first.display()));
    let (at_second, at_first) = (
        s.find(&format!("  {}", second.display())),
        s.find(&format!("  {}", first.display())),
    );
    assert!(
        matches!((at_second, at_first), (Some(a), Some(b)) if a < b),
        "{s}"
    );
    // Back to the first root (no sessions: straight in), then to the
    // second again: its session is offered and resumed.
    tmux.keys(&["Down", "Down", "Enter"]);
    let s = tmux.wait_for(&format!(
        "Opened {} as the agent root: a new session.",
        first.display()
    ));
    assert!(s.contains("a.txt") && !s.contains("Hello from"), "{s}");
    tmux.keys(&["C-o"]);
    tmux.wait_for(&format!("  {}", first.display()));
    // Typed: the order of the recent roots is written off the UI's way
    // and may not have caught up with the root just opened.
    tmux.keys(&["-l", &second.display().to_string()]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Resume a session");
    tmux.keys(&["Enter"]);
    let s = tmux.wait_for("Hello from the second root.");
    assert!(s.contains("you › hello") && s.contains("b.txt"), "{s}");
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    // The job was recorded in the second root's sessions, not the first's.
    let sessions = |root: &Path| {
        let out = env
            .cmd()
            .args(["sessions", "list", "--json", "--root"])
            .arg(root)
            .output()
            .unwrap();
        support::json_of(&out).as_array().map_or(0, Vec::len)
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while sessions(&second) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(sessions(&second), 1);
    assert_eq!(sessions(&first), 0);
}

/// `v` verifies the accepted hunk in a scratch copy (the failing test is
/// named beside the hunks), Ctrl+S after the failure asks once more, `f`
/// sends the failure to the model, whose second proposal opens in the
/// review, verifies clean and is applied.
#[test]
fn v_verifies_the_hunks_and_f_sends_the_failure_back() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let calc = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n";
    std::fs::write(root.join("calc.py"), calc).unwrap();
    std::fs::write(
        root.join("test_calc.py"),
        "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
    )
    .unwrap();
    std::fs::write(root.join("pytest.ini"), "[pytest]\n").unwrap();
    let edit = |new: &str| {
        json!({"edits": [{"file_path": "calc.py", "operation": "replace", "start_line": 6,
            "end_line": 6, "old_text": "    return a * b", "new_text": new}]})
        .to_string()
    };
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[(
            "c1",
            "propose_edits",
            &edit("    return a ** b\n"),
        )])),
        sse(openai::text(&["Changed mul."])),
        sse(openai::tool_calls(&[(
            "c2",
            "propose_edits",
            &edit("    return b * a\n"),
        )])),
        sse(openai::text(&["Fixed mul."])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let tmux = start_tui(&env, &cfg, root, "verify");
    tmux.wait_for("test test-model ● online");
    tmux.keys(&["rewrite mul", "Enter"]);
    tmux.wait_for("calc.py · h_1 [pending]");
    tmux.keys(&["y"]);
    tmux.wait_for("calc.py · h_1 [accepted]");
    tmux.keys(&["v"]);
    let s = tmux.wait_for("✗ failed in");
    assert!(
        s.contains("test_mul") && s.contains("verify `pytest -q`"),
        "{s}"
    );
    assert!(s.contains("f: send it to the model"), "{s}");

    // Applying after the failure asks once more; nothing is written.
    tmux.keys(&["C-s"]);
    tmux.wait_for("Ctrl+S again applies them anyway");
    assert_eq!(read(root, "calc.py"), calc);

    // The failure goes to the model; its second proposal is reviewed.
    tmux.keys(&["f"]);
    let s = tmux.wait_for("+    return b * a");
    assert!(s.contains("[pending]"), "{s}");
    let told = server.requests()[2].body["messages"].to_string();
    assert!(
        told.contains("[agent-tui: verify]") && told.contains("test_mul"),
        "{told}"
    );
    tmux.keys(&["y"]);
    tmux.keys(&["v"]);
    tmux.wait_for("✓ passed in");
    tmux.keys(&["C-s"]);
    tmux.wait_for("Applied 1 hunk to calc.py");
    assert!(read(root, "calc.py").contains("return b * a"));
}

/// `[verify] auto`: accepting a hunk verifies it without a key; Esc stops
/// a verify that hangs (its copy removed) and leaves the review open.
#[test]
fn auto_verifies_on_a_decision_and_esc_stops_a_hung_check() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("notes.txt"), "one\ntwo\n").unwrap();
    let edits = json!({"edits": [{"file_path": "notes.txt", "operation": "replace",
        "start_line": 1, "end_line": 1, "new_text": "ONE\n"}]})
    .to_string();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "propose_edits", &edits)])),
        sse(openai::text(&["Done."])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(
        &cfg,
        format!(
            "{text}\n[verify]\ncommand = \"grep -q ONE notes.txt && sleep 600\"\nauto = true\n"
        ),
    )
    .unwrap();
    let tmux = start_tui(&env, &cfg, root, "autoverify");
    tmux.wait_for("test test-model ● online");
    tmux.keys(&["shout", "Enter"]);
    tmux.wait_for("notes.txt · h_1 [pending]");
    // The copies in the two places a verify makes them.
    let places = [
        env.home.path().join("state/verify/scratch"),
        std::path::PathBuf::from(format!(
            "/dev/shm/agent-tui-{}",
            std::fs::metadata(env.home.path()).map_or(0, |m| {
                use std::os::unix::fs::MetadataExt;
                m.uid()
            })
        )),
    ];
    let copies = || -> std::collections::BTreeSet<std::path::PathBuf> {
        places
            .iter()
            .flat_map(|d| std::fs::read_dir(d).into_iter().flatten())
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect()
    };
    let before = copies();
    tmux.keys(&["y"]);
    tmux.wait_for("verify: running (Esc stops it)");
    // The copy is made just after the verify starts.
    let deadline = Instant::now() + Duration::from_secs(5);
    let ours = loop {
        let new: Vec<_> = copies().difference(&before).cloned().collect();
        if !new.is_empty() || Instant::now() > deadline {
            break new;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // (Another test's verify may make one meanwhile: all are gone after.)
    assert!(!ours.is_empty(), "a copy while the check runs");
    tmux.keys(&["Escape"]);
    let s = tmux.wait_for("✗ cancelled in");
    assert!(
        s.contains("notes.txt · h_1 [accepted]"),
        "the review stays: {s}"
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while ours.iter().any(|p| p.exists()) {
        assert!(Instant::now() < deadline, "the copy is removed");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(read(root, "notes.txt"), "one\ntwo\n");
}

/// A hunk taller than the pane scrolls (PgDn, Ctrl+D) and its border says
/// where it is; a line wider than the pane goes on under `┆`; the file the
/// apply made shows in the tree, badged ✓.
#[test]
fn a_tall_wide_hunk_is_read_to_its_end_and_its_new_file_shows_in_the_tree() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("a.txt"), "alpha\n").unwrap();
    let mut text: String = (0..120).map(|i| format!("filler {i}\n")).collect();
    text.push_str(&format!("{}TAIL-END\n", "w".repeat(150)));
    let edits = json!({"edits": [
        {"file_path": "made.txt", "operation": "create", "new_text": text}
    ]})
    .to_string();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "propose_edits", &edits)])),
        sse(openai::text(&["One new file for your review."])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let tmux = start_tui(&env, &cfg, root, "e2e-tall");
    tmux.wait_for("test test-model ● online");
    tmux.keys(&["make the file", "Enter"]);
    tmux.wait_for("lines 1-33 of 122 ↓");
    tmux.keys(&["PageDown"]);
    tmux.wait_for("lines 32-64 of 122 ↑↓");
    for _ in 0..4 {
        tmux.keys(&["C-d"]);
    }
    let s = tmux.wait_for("of 122 ↑ ");
    assert!(
        s.contains("filler 119") && s.contains("┆") && s.contains("TAIL-END"),
        "{s}"
    );
    tmux.keys(&["y"]);
    tmux.keys(&["C-s"]);
    let s = tmux.wait_for("made.txt ✓");
    assert!(s.contains("Applied 1 hunk to made.txt"), "{s}");
}

/// Ctrl+C twice, and the TUI is gone.
fn quit(tmux: &Tmux) {
    tmux.quit();
}

/// Issue 3: an instruction sent over a review with an accepted hunk not
/// applied asks once; sent anyway, the new review takes the screen, and
/// once it is applied the earlier one is said and Ctrl+R opens it with its
/// decision, ready to apply.
#[test]
fn a_review_left_for_a_new_instruction_is_reached_again_with_ctrl_r() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("a.txt"), "alpha\nbeta\ngamma\n").unwrap();
    std::fs::write(root.join("b.txt"), "one\ntwo\n").unwrap();
    let edit = |file: &str, text: &str| {
        json!({"edits": [{"file_path": file, "operation": "replace", "start_line": 1,
                          "end_line": 1, "new_text": text}]})
        .to_string()
    };
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[(
            "c1",
            "propose_edits",
            &edit("a.txt", "ALPHA\n"),
        )])),
        sse(openai::text(&["The a edit is ready."])),
        sse(openai::tool_calls(&[(
            "c2",
            "propose_edits",
            &edit("b.txt", "ONE\n"),
        )])),
        sse(openai::text(&["The b edit is ready."])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let tmux = start_tui(&env, &cfg, root, "e2e-left");
    tmux.wait_for("test test-model ● online");
    tmux.keys(&["edit a", "Enter"]);
    tmux.wait_for("a.txt · h_1 [pending]");
    tmux.keys(&["y"]);
    tmux.wait_for("a.txt · h_1 [accepted]");
    // The review opens before the job's end is in: wait for that.
    tmux.wait_for(" awaiting review ");
    tmux.keys(&["Escape"]);
    // Typed at once after Esc, "e" could be read as Alt+E: the review
    // closes first.
    tmux.wait_for("┌ chat ");
    tmux.keys(&["-l", "edit b"]);
    tmux.keys(&["Enter"]);
    let s = tmux.wait_for("The review of a.txt has 1 hunk not applied (1 accepted)");
    assert!(
        s.contains("agent › ") && s.contains("edit b"),
        "the text stays: {s}"
    );
    tmux.keys(&["Enter"]);
    tmux.wait_for("b.txt · h_1 [pending]");
    tmux.keys(&["y"]);
    tmux.keys(&["C-s"]);
    tmux.wait_for("Applied 1 hunk to b.txt");
    tmux.wait_for("The review of a.txt is still pending");
    assert_eq!(read(root, "a.txt"), "alpha\nbeta\ngamma\n");
    tmux.keys(&["C-r"]);
    let s = tmux.wait_for("a.txt · h_1 [accepted]");
    assert!(s.contains("review 1/1"), "{s}");
    tmux.keys(&["C-s"]);
    tmux.wait_for("Applied 1 hunk to a.txt");
    assert_eq!(read(root, "a.txt"), "ALPHA\nbeta\ngamma\n");
    assert_eq!(read(root, "b.txt"), "ONE\ntwo\n");
}

/// Issue 5: `--continue` shows each instruction in the user's words with
/// its pins (not the marker the model reads), the tool lines and the apply
/// notice, and pins the last instruction's files again: the next
/// instruction carries them.
#[test]
fn continue_brings_back_pins_tool_lines_and_notices() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("README.md"), "# hi\n").unwrap();
    let edits = json!({"edits": [{"file_path": "README.md", "operation": "replace",
        "start_line": 1, "end_line": 1, "new_text": "# hello\n"}]})
    .to_string();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "list_files", "{}")])),
        sse(openai::text(&["Listed them."])),
        sse(openai::tool_calls(&[("c2", "propose_edits", &edits)])),
        sse(openai::text(&["Ready."])),
        sse(openai::text(&["Third answer."])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let tmux = start_tui(&env, &cfg, root, "e2e-pins");
    tmux.wait_for("test test-model ● online");
    tmux.wait_for("README.md");
    tmux.keys(&["Tab"]);
    tmux.keys(&["p"]);
    tmux.wait_for("· pinned: README.md");
    tmux.keys(&["Tab", "Tab"]);
    tmux.keys(&["-l", "first"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Listed them.");
    // The answer shows before the job's end is in: wait for that.
    tmux.wait_for(" done ");
    tmux.keys(&["-l", "second"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("README.md · h_1 [pending]");
    tmux.keys(&["y"]);
    tmux.keys(&["C-s"]);
    tmux.wait_for("Applied 1 hunk to README.md");
    quit(&tmux);
    drop(tmux);

    let tmux = start_tui_with(&env, &cfg, root, "e2e-pins2", "--continue");
    let s = tmux.wait_for("Applied 1 hunk to README.md");
    assert!(!s.contains("[Pinned context"), "{s}");
    assert!(
        s.contains("you › first") && s.contains("you › second"),
        "{s}"
    );
    assert!(s.contains("      pinned: README.md"), "{s}");
    assert!(
        s.contains("✓ list_files") && s.contains("✓ propose_edits"),
        "{s}"
    );
    assert!(
        s.contains("agent › · pinned: README.md"),
        "the pin is back: {s}"
    );
    tmux.keys(&["-l", "third"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Third answer.");
    let last = server.requests().last().unwrap().body["messages"].to_string();
    assert!(
        last.contains("third") && last.contains("[Pinned context") && last.contains("README.md]"),
        "{last}"
    );
}

/// Issue 7: Ctrl+O from a resumed session that is not the folder's newest
/// names it (`--resume ID`); `--continue` would open the newest.
#[test]
fn ctrl_o_names_the_session_of_the_review_it_leaves() {
    let env = Env::new();
    let base = tempfile::tempdir().unwrap();
    let base = base.path().canonicalize().unwrap();
    let (root, other) = (base.join("proj"), base.join("proj2"));
    for dir in [&root, &other] {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("a.txt"), "alpha\n").unwrap();
    }
    let edits = json!({"edits": [{"file_path": "a.txt", "operation": "replace",
        "start_line": 1, "end_line": 1, "new_text": "ALPHA\n"}]})
    .to_string();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "propose_edits", &edits)])),
        sse(openai::text(&["Ready."])),
        sse(openai::text(&["Just prose."])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    for (mode, prompt) in [("agent", "edit a"), ("ask", "second session")] {
        let run = support::jobs::exec(&env, &cfg, &root, &["--mode", mode, prompt]);
        assert!(run.stderr.is_empty() || run.code == 0, "{}", run.stderr);
    }
    let out = env
        .cmd()
        .args(["sessions", "list", "--json", "--root"])
        .arg(&root)
        .output()
        .unwrap();
    let sessions = support::json_of(&out);
    let with_review = sessions
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["pending_review"] == json!(true))
        .unwrap_or_else(|| panic!("{sessions}"))["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let home = env.home.path();
    let command = format!(
        "env -i PATH=/usr/bin:/bin HOME={h} TERM=xterm-256color AGENT_TUI_HOME={h}/state XDG_CONFIG_HOME={h}/config TEST_LLM_KEY={KEY} {bin} --config {cfg} {root} --resume",
        h = home.display(),
        bin = env!("CARGO_BIN_EXE_agent-tui"),
        cfg = cfg.display(),
        root = root.display(),
    );
    // Wide enough for the note on one row.
    let tmux = Tmux::start("e2e-left-root", &command, (250, 30));
    tmux.wait_for("second session");
    tmux.keys(&["Down", "Enter"]);
    tmux.wait_for("A review is pending: Ctrl+R opens it.");
    tmux.keys(&["C-o"]);
    tmux.wait_for("Open a folder as the agent root");
    tmux.keys(&["-l", &other.display().to_string()]);
    tmux.keys(&["Enter"]);
    let s = tmux.wait_for("stays there");
    let note = format!(
        "The review pending in {} stays there (agent-tui --resume {with_review} in that folder).",
        root.display()
    );
    assert!(s.contains(&note), "{note}\n{s}");
}

/// Presses Escape and waits until the finder is gone, so the keys sent next
/// are not read together with the Escape as one Alt chord.
fn close_finder(tmux: &Tmux) {
    tmux.keys(&["Escape"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while tmux.screen().contains("Find a file or a symbol") {
        assert!(Instant::now() < deadline, "{}", tmux.screen());
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn ctrl_p_finds_a_symbol_and_the_status_bar_shows_the_index() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    let mut body = String::from("//! Permissions.\n");
    for i in 0..40 {
        body.push_str(&format!("pub fn filler_{i}() {{}}\n"));
    }
    body.push_str(
        "pub fn check_write_access(path: &str) -> bool {\n    path.starts_with(\"/tmp\")\n}\n",
    );
    body.push_str("pub struct PermissionSet;\npub trait Guarded {}\n");
    std::fs::create_dir_all(root.path().join("src")).unwrap();
    std::fs::write(root.path().join("src/perms.rs"), &body).unwrap();
    std::fs::write(root.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(root.path().join("README.md"), "# demo\n").unwrap();
    let server = LlmServer::start(vec![sse(openai::text(&["ok"]))]);
    let cfg = config(&env, "openai", &server.url(), "");
    let tmux = start_tui(&env, &cfg, root.path(), "ctrl-p");
    // Built in the background at start; the status bar says so.
    tmux.wait_for("index 3 files");

    tmux.keys(&["C-p"]);
    tmux.wait_for("Find a file or a symbol");
    tmux.keys(&["-l", "chkwrite"]);
    let s = tmux.wait_for("check_write_access");
    assert!(s.contains("src/perms.rs:42"), "{s}");
    // Kinds as Rust names them: fn, struct, trait (not function, class,
    // interface).
    assert!(s.contains("fn        check_write_access"), "{s}");
    for (typed, row) in [
        ("permissionset", "struct    PermissionSet"),
        ("guarded", "trait     Guarded"),
        ("chkwrite", "fn        check_write_access"),
    ] {
        close_finder(&tmux);
        tmux.keys(&["C-p"]);
        tmux.wait_for("Find a file or a symbol");
        tmux.keys(&["-l", typed]);
        tmux.wait_for(row);
    }
    tmux.keys(&["Enter"]);
    // The preview opens at the symbol: its line is on screen, the first
    // lines of the file are not.
    let s = tmux.wait_for("pub fn check_write_access(path: &str) -> bool {");
    assert!(!s.contains("filler_0()"), "{s}");
    tmux.keys(&["Escape"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while tmux.screen().contains("pub fn check_write_access") {
        assert!(Instant::now() < deadline, "{}", tmux.screen());
        std::thread::sleep(Duration::from_millis(50));
    }

    // A file by a fuzzy name.
    tmux.keys(&["C-p"]);
    tmux.wait_for("Find a file or a symbol");
    tmux.keys(&["-l", "readme"]);
    tmux.wait_for("> readme");
    let deadline = Instant::now() + Duration::from_secs(10);
    // Only the answer for the whole text: one row.
    while tmux.screen().contains("src/main.rs") {
        assert!(Instant::now() < deadline, "{}", tmux.screen());
        std::thread::sleep(Duration::from_millis(50));
    }
    tmux.wait_for("file      README.md");
    // Escape and the next letters in one write would read as Alt+letter.
    close_finder(&tmux);

    // `@` completes a symbol's name to where it is defined.
    tmux.keys(&["-l", "look at @check_write"]);
    tmux.keys(&["Tab"]);
    tmux.wait_for("look at @src/perms.rs:42");

    // An edit made outside is found by the next search, as the model's
    // tools find it.
    tmux.keys(&["C-u"]);
    std::fs::write(
        root.path().join("src/late.rs"),
        "pub fn arrived_while_open() {}\n",
    )
    .unwrap();
    tmux.keys(&["C-p"]);
    tmux.wait_for("Find a file or a symbol");
    tmux.keys(&["-l", "arrivedwhile"]);
    tmux.wait_for("src/late.rs:1");
}

/// The text of the help entry whose key label starts at `x` of row `y`
/// (`lead` columns with its space): the label's row and those below it
/// whose label column is blank, each read up to the column's gap (two spaces) or the border.
fn help_entry(rows: &[Vec<char>], y: usize, x: usize, lead: usize) -> (String, usize) {
    let part = |row: &Vec<char>| -> String {
        let text: String = row.iter().skip(x + lead).collect();
        let text = text.split("  ").next().unwrap_or_default();
        text.split('│')
            .next()
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    let mut text = part(&rows[y]);
    let mut used = 1;
    for row in &rows[y + 1..] {
        let label: String = row.iter().skip(x).take(lead).collect();
        let more = part(row);
        if !label.trim().is_empty() || more.is_empty() {
            break;
        }
        text.push(' ');
        text.push_str(&more);
        used += 1;
    }
    (text, used)
}

/// F1 at 80x24 (one column) and 200x50 (three): every key whose entry is
/// on the first page reads its whole description, wrapped under itself,
/// never cut at the column's edge nor running into the next column.
#[test]
fn the_help_overlay_wraps_each_description_inside_its_column() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("a.txt"), "a\n").unwrap();
    let server = LlmServer::start(vec![]);
    let cfg = config(&env, "openai", &server.url(), "");
    let keymap = agent_tui::tui::KeyMap::from_config(&Default::default()).unwrap();
    let sections = keymap.help_sections();
    let titles: Vec<&str> = sections.iter().map(|(t, _)| *t).collect();
    let entries: Vec<(String, &str)> = sections.into_iter().flat_map(|(_, k)| k).collect();
    for (size, name) in [((80, 24), "help-80"), ((200, 50), "help-200")] {
        let tmux = support::tmux::start_agent_sized(&env, &cfg, root.path(), name, "", size);
        tmux.wait_for("agent ›");
        tmux.keys(&["F1"]);
        tmux.wait_for(" Keys ");
        // The whole overlay: its bottom border is drawn last.
        let screen = tmux.wait_for("keys close");
        let rows: Vec<Vec<char>> = screen.lines().map(|l| l.chars().collect()).collect();
        // The overlay's bottom border (its title names the keys that close it).
        let bottom = rows
            .iter()
            .rposition(|r| r.iter().collect::<String>().contains("keys close"))
            .unwrap();
        // Where columns start: where section headings do.
        let mut starts: Vec<usize> = Vec::new();
        for row in &rows {
            let text: String = row.iter().collect();
            for title in &titles {
                for (byte, _) in text.match_indices(&format!(" {title} ")) {
                    starts.push(text[..byte].chars().count() + 1);
                }
                for (byte, _) in text.match_indices(&format!("│{title} ")) {
                    starts.push(text[..byte].chars().count() + 1);
                }
            }
        }
        starts.sort_unstable();
        starts.dedup();
        // 200 columns show three; a column that goes on from the one
        // before has no heading of its own to find it by.
        let columns = if size.0 >= 200 { 2 } else { 1 };
        assert!(starts.len() >= columns, "{name}: {starts:?}\n{screen}");
        let mut checked = 0;
        for (label, _) in &entries {
            // A label may stand in several sections, each with its text.
            let texts: Vec<&str> = entries
                .iter()
                .filter(|(l, _)| l == label)
                .map(|(_, h)| *h)
                .collect();
            let lead: Vec<char> = format!("{label:>12} ").chars().collect();
            for (y, row) in rows.iter().enumerate() {
                let Some(x) = starts
                    .iter()
                    .copied()
                    .find(|x| row.get(*x..*x + lead.len()) == Some(lead.as_slice()))
                else {
                    continue;
                };
                let (read, used) = help_entry(&rows, y, x, lead.len());
                // An entry that runs on to the next page is not judged.
                if y + used >= bottom {
                    continue;
                }
                assert!(
                    texts.contains(&read.as_str()),
                    "{name}: {label} reads {read:?}, not one of {texts:?}\n{screen}"
                );
                checked += 1;
            }
        }
        assert!(
            checked >= 10,
            "{name}: only {checked} entries found\n{screen}"
        );
        tmux.quit();
    }
}
