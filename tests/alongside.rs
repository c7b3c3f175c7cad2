//! Working alongside the agent (SPEC 19), through the real binary: a steer
//! typed while a job runs reaches the model's next request, in a real
//! terminal (tmux) and over real HTTP, and shows as `user.steer`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;

use serde_json::json;
use support::Env;
use support::jobs::{config, project, sse};
use support::llm_server::{LlmServer, Reply, openai};
use support::serve::{Client, error_code, rt, serve};
use support::tmux::Tmux;

/// An answer streamed slowly (about 3 s), so a person can type meanwhile.
fn slow_answer() -> Reply {
    let words: Vec<String> = (0..12).map(|i| format!("step{i} ")).collect();
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    Reply::Slow {
        events: openai::text(&refs),
        delay_ms: 250,
    }
}

fn start_tui(env: &Env, cfg: &Path, root: &Path, name: &str) -> Tmux {
    support::tmux::start_agent(env, cfg, root, name, "")
}

/// The model's messages in recorded request `i`, as one string.
fn messages(server: &LlmServer, i: usize) -> String {
    server.requests()[i].body["messages"].to_string()
}

#[test]
fn a_steer_typed_while_a_job_runs_reaches_its_next_request() {
    let env = Env::new();
    let dir = project();
    let server = LlmServer::start(vec![
        slow_answer(),
        sse(openai::text(&["Also covered the README."])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let tmux = start_tui(&env, &cfg, dir.path(), "steer");
    tmux.wait_for("F1 help");
    tmux.keys(&["-l", "summarize the project"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("step1");
    // Typed while the answer streams: Enter steers, nothing is refused.
    tmux.keys(&["-l", "also mention the README"]);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("Also covered the README.");
    assert!(screen.contains("you ↳ also mention the README"), "{screen}");
    assert!(!screen.contains("A job is running"), "{screen}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "the steer asked the model once more");
    let second = messages(&server, 1);
    assert!(second.contains("also mention the README"), "{second}");
    // The first answer is kept before it.
    assert!(second.contains("step11"), "{second}");
    assert!(!messages(&server, 0).contains("README"));
}

#[test]
fn a_steer_over_http_reaches_the_running_job_and_is_an_event() {
    let env = Env::new();
    let dir = project();
    let server = LlmServer::start(vec![
        slow_answer(),
        sse(openai::text(&["Checked the tests as well."])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let srv = serve(&env, &cfg, dir.path());
    let c = Client::new(&srv.base, srv.token.as_deref().unwrap());
    rt().block_on(async {
        let (_, job) = c.session_and_run("look around", "ask").await;
        // Streamed text is not stored: its start is. The steer must come
        // while the answer streams (3 s of it), not before the first
        // request, which would carry it already.
        c.wait_event(&job, 20, |e| e["type"] == "job.started").await;
        let asked = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !server.requests().iter().any(|r| r.is_model_call())
            && std::time::Instant::now() < asked
        {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let path = format!("/api/v1/agent/jobs/{job}/steer");
        let (status, body) = c.post(&path, json!({"text": ""})).await;
        assert_eq!(status, 400, "{body}");
        let (status, body) = c.post(&path, json!({"txt": "typo"})).await;
        assert_eq!(status, 400, "{body}");
        let (status, body) = c.post(&path, json!({"text": "and check the tests"})).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["status"], "steered", "{body}");
        let steer = c.wait_event(&job, 20, |e| e["type"] == "user.steer").await;
        assert_eq!(steer["data"]["text"], "and check the tests", "{steer}");
        let done = c
            .wait_event(&job, 20, |e| e["type"] == "job.completed")
            .await;
        assert_eq!(
            done["data"]["answer"], "Checked the tests as well.",
            "{done}"
        );
        // A job that ended takes no steer: a conflict that says what to do.
        let (status, body) = c.post(&path, json!({"text": "too late"})).await;
        assert_eq!(status, 409, "{body}");
        assert_eq!(error_code(&body), "conflict", "{body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("new instruction"),
            "{body}"
        );
        let (status, body) = c
            .post("/api/v1/agent/jobs/job_nope/steer", json!({"text": "x"}))
            .await;
        assert_eq!(status, 404, "{body}");
    });
    let second = messages(&server, 1);
    assert!(second.contains("and check the tests"), "{second}");
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn a_message_queued_while_a_job_runs_runs_next_and_can_be_taken_back() {
    let env = Env::new();
    let dir = project();
    let server = LlmServer::start(vec![
        slow_answer(),
        sse(openai::text(&["Second one done."])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let tmux = start_tui(&env, &cfg, dir.path(), "queue");
    tmux.wait_for("F1 help");
    tmux.keys(&["-l", "first task"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("step1");
    tmux.keys(&["-l", "second task"]);
    tmux.keys(&["C-q"]);
    tmux.wait_for("queued 1 › second task");
    tmux.keys(&["-l", "third task"]);
    tmux.keys(&["C-q"]);
    tmux.wait_for("queued 2 › third task");
    // Taken back before it starts: in the input again, out of the queue.
    tmux.keys(&["M-Up"]);
    let screen = tmux.wait_for("Taken back from the queue");
    assert!(!screen.contains("queued 2 ›"), "{screen}");
    assert!(screen.contains("third task"), "{screen}");
    tmux.keys(&["C-u"]);
    let screen = tmux.wait_for("Second one done.");
    assert!(screen.contains("you › second task"), "{screen}");
    assert!(!screen.contains("queued 1 ›"), "{screen}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "the taken-back message never ran");
    let first = messages(&server, 0);
    assert!(!first.contains("second task"), "{first}");
    let second = messages(&server, 1);
    assert!(
        second.contains("first task") && second.contains("step11"),
        "{second}"
    );
    assert!(
        second.contains("second task") && !second.contains("third task"),
        "{second}"
    );
}

#[test]
fn a_queued_message_outlives_a_crash_and_runs_when_the_session_goes_on() {
    let env = Env::new();
    let dir = project();
    let words: Vec<String> = (0..60).map(|i| format!("slow{i} ")).collect();
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    let server = LlmServer::start(vec![
        Reply::Slow {
            events: openai::text(&refs),
            delay_ms: 200,
        },
        sse(openai::text(&["Queued one done."])),
        sse(openai::text(&["New one done."])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let tmux = start_tui(&env, &cfg, dir.path(), "queue-crash");
    tmux.wait_for("F1 help");
    tmux.keys(&["-l", "long task"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("slow1");
    tmux.keys(&["-l", "after the crash"]);
    tmux.keys(&["C-q"]);
    tmux.wait_for("queued 1 › after the crash");
    // Recorded before it is shown: the process dies without a word.
    std::thread::sleep(std::time::Duration::from_millis(300));
    // The pane's shell may have agent-tui as its child, or be it.
    let pane = tmux.pane("#{pane_pid}").trim().to_string();
    let children = std::process::Command::new("pgrep")
        .args(["-P", &pane])
        .output()
        .unwrap();
    let children = String::from_utf8_lossy(&children.stdout).to_string();
    for pid in children.split_whitespace().chain([pane.as_str()]) {
        let _ = std::process::Command::new("kill")
            .args(["-9", pid])
            .status();
    }
    drop(tmux);
    let tmux = support::tmux::start_agent(&env, &cfg, dir.path(), "queue-crash-2", "--continue");
    let screen = tmux.wait_for("queued 1 › after the crash");
    assert!(screen.contains("long task"), "{screen}");
    // The session goes on: what was queued runs first, then the new one.
    tmux.keys(&["-l", "a new one"]);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("New one done.");
    assert!(screen.contains("Queued one done."), "{screen}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{}", requests.len());
    assert!(messages(&server, 1).contains("after the crash"));
    let third = messages(&server, 2);
    assert!(
        third.contains("a new one") && third.contains("Queued one done."),
        "{third}"
    );
}

#[test]
fn over_http_a_run_for_a_busy_session_waits_its_turn() {
    let env = Env::new();
    let dir = project();
    let server = LlmServer::start(vec![
        slow_answer(),
        sse(openai::text(&["The queued run answered."])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let srv = serve(&env, &cfg, dir.path());
    let c = Client::new(&srv.base, srv.token.as_deref().unwrap());
    rt().block_on(async {
        let (session, first) = c.session_and_run("the first run", "ask").await;
        c.wait_event(&first, 20, |e| e["type"] == "job.started").await;
        let run = |instruction: &str| {
            json!({"session_id": session, "instruction": instruction, "mode": "ask"})
        };
        let (status, body) = c.post("/api/v1/agent/run", run("the second run")).await;
        assert_eq!(status, 202, "{body}");
        assert_eq!(body["status"], "queued", "{body}");
        let second = body["job_id"].as_str().unwrap().to_string();
        let queued = c
            .wait_event(&second, 20, |e| e["type"] == "job.queued")
            .await;
        assert_eq!(queued["data"]["prompt"], "the second run", "{queued}");
        let (_, snap) = c.get(&format!("/api/v1/agent/jobs/{second}")).await;
        assert_eq!(snap["status"], "queued", "{snap}");
        // A third, cancelled while it waits: it never reaches the model.
        let (_, body) = c.post("/api/v1/agent/run", run("the third run")).await;
        let third = body["job_id"].as_str().unwrap().to_string();
        c.wait_event(&third, 20, |e| e["type"] == "job.queued").await;
        let (status, body) = c
            .post(&format!("/api/v1/agent/jobs/{third}/cancel"), json!({}))
            .await;
        assert!(status.is_success(), "{status} {body}");
        c.wait_event(&third, 20, |e| e["type"] == "job.cancelled")
            .await;
        let done = c
            .wait_event(&second, 20, |e| e["type"] == "job.completed")
            .await;
        assert_eq!(done["data"]["answer"], "The queued run answered.", "{done}");
        let (_, first_snap) = c.get(&format!("/api/v1/agent/jobs/{first}")).await;
        assert_eq!(first_snap["status"], "completed", "{first_snap}");
    });
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let second = messages(&server, 1);
    assert!(
        second.contains("the first run") && second.contains("step11"),
        "{second}"
    );
    assert!(
        second.contains("the second run") && !second.contains("the third run"),
        "{second}"
    );
}

/// Bytes the pane's program wrote, as tmux's `pipe-pane` saved them.
fn raw(path: &Path) -> String {
    String::from_utf8_lossy(&std::fs::read(path).unwrap_or_default()).into_owned()
}

#[test]
fn a_wait_rings_the_terminal_only_when_it_is_not_focused_and_runs_the_command() {
    let env = Env::new();
    let dir = project();
    let asks = |q: &str| {
        sse(openai::tool_calls(&[(
            "c1",
            "clarify_user",
            &json!({ "question": q }).to_string(),
        )]))
    };
    let server = LlmServer::start(vec![
        asks("Which greeting, while you watch?"),
        sse(openai::text(&["Hola it is."])),
        asks("Which file, while you are away?"),
        sse(openai::text(&["main.rs it is."])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let told = env.home.path().join("told.jsonl");
    support::serve::add_config(
        &cfg,
        &format!(
            "[notify]\ncommand = [\"sh\", \"-c\", \"cat >> {}; echo >> {}\"]\n",
            told.display(),
            told.display()
        ),
    );
    let tmux = start_tui(&env, &cfg, dir.path(), "notify");
    let bytes = env.home.path().join("pane.raw");
    let piped = tmux
        .cmd()
        .args(["pipe-pane", "-o", "-t", "e2e"])
        .arg(format!("cat >> {}", bytes.display()))
        .status()
        .unwrap();
    assert!(piped.success());
    tmux.wait_for("F1 help");
    // Focused (as a terminal is until it says otherwise): no bell.
    tmux.keys(&["-l", "greet"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Which greeting, while you watch?");
    tmux.keys(&["-l", "hola"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Hola it is.");
    let before = raw(&bytes);
    assert!(
        before.contains("\x1b[?1004h"),
        "focus reporting is asked for"
    );
    assert!(
        !before.contains('\x07') && !before.contains("\x1b]9;"),
        "{before:?}"
    );
    assert!(!told.exists());
    // The terminal loses focus (the sequence focus reporting sends).
    tmux.cmd()
        .args(["send-keys", "-t", "e2e", "-H", "1b", "5b", "4f"])
        .status()
        .unwrap();
    tmux.keys(&["-l", "which file"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Which file, while you are away?");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !told.exists() || !raw(&told).contains('\n') {
        assert!(
            std::time::Instant::now() < deadline,
            "the command never ran"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let after = raw(&bytes);
    let rung = &after[before.len()..];
    assert!(rung.contains('\x07'), "{rung:?}");
    assert!(
        rung.contains("\x1b]9;agent-tui: asks: Which file, while you are away?\x07"),
        "{rung:?}"
    );
    assert!(
        rung.contains("\x1b]777;notify;agent-tui;asks: Which file, while you are away?\x07"),
        "{rung:?}"
    );
    let line = raw(&told);
    let sent: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(sent["type"], "clarification", "{sent}");
    assert_eq!(
        sent["text"], "asks: Which file, while you are away?",
        "{sent}"
    );
    assert_eq!(sent["root"], dir.path().display().to_string(), "{sent}");
    assert!(
        sent["session_id"].as_str().unwrap().starts_with("s_"),
        "{sent}"
    );
    assert!(sent["job_id"].as_str().is_some(), "{sent}");
    tmux.keys(&["-l", "main"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("main.rs it is.");
}

/// The tool names offered in recorded request `i`.
fn tools_offered(server: &LlmServer, i: usize) -> Vec<String> {
    server.requests()[i].body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// A project with commands in this product's folder and in Claude Code's,
/// and one in the user's config folder.
fn with_commands(env: &Env, root: &Path) {
    support::write_files(
        root,
        &[
            (
                ".agent-tui/commands/explain.md",
                "---\ndescription: Explain a file briefly\nmode: ask\n---\nExplain $ARGUMENTS in two sentences.\n",
            ),
            (
                ".claude/commands/review.md",
                "Review $1 for bugs, then $2.\n",
            ),
            (
                ".gemini/commands/fixup.toml",
                "description = \"Fix it\"\nprompt = \"Fix {{args}} now.\"\n",
            ),
        ],
    );
    support::write_files(
        &env.home.path().join("config/agent-tui/commands"),
        &[
            (
                "explain.md",
                "The user's own explain, shadowed by the project's.\n",
            ),
            ("standup.md", "Summarize what changed today.\n"),
        ],
    );
}

#[test]
fn custom_commands_expand_in_the_tui_with_their_mode_and_unknown_ones_are_named() {
    let env = Env::new();
    let dir = project();
    with_commands(&env, dir.path());
    let server = LlmServer::start(vec![
        sse(openai::text(&["Explained."])),
        sse(openai::text(&["Reviewed."])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let tmux = start_tui(&env, &cfg, dir.path(), "commands");
    tmux.wait_for("F1 help");
    tmux.keys(&["-l", "/"]);
    tmux.wait_for("Explain a file briefly (ask mode)");
    // Each waited for: a capture can fall between the writes of one frame.
    for name in ["/review", "/fixup", "/standup", "/compact"] {
        tmux.wait_for(name);
    }
    tmux.keys(&["-l", "expl"]);
    tmux.keys(&["Tab"]);
    tmux.keys(&["-l", "src/main.rs"]);
    tmux.wait_for("/explain src/main.rs");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Explained.");
    let first = messages(&server, 0);
    assert!(
        first.contains("Explain src/main.rs in two sentences."),
        "{first}"
    );
    // An ask command gets no write tool, whatever the session's mode.
    let offered = tools_offered(&server, 0);
    assert!(offered.iter().any(|t| t == "read_file"), "{offered:?}");
    assert!(!offered.iter().any(|t| t == "propose_edits"), "{offered:?}");
    tmux.keys(&["-l", "/review src/main.rs the tests"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Reviewed.");
    let second = messages(&server, 1);
    assert!(
        second.contains("Review src/main.rs for bugs, then the."),
        "{second}"
    );
    assert!(
        tools_offered(&server, 1)
            .iter()
            .any(|t| t == "propose_edits")
    );
    tmux.keys(&["-l", "/reveiw x"]);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("did you mean /review?");
    assert!(screen.contains("no command /reveiw"), "{screen}");
    assert_eq!(server.requests().len(), 2, "nothing was sent for it");
}

#[test]
fn custom_commands_expand_in_exec_and_in_a_server_run() {
    let env = Env::new();
    let dir = project();
    with_commands(&env, dir.path());
    let server = LlmServer::start(vec![
        sse(openai::text(&["Done."])),
        sse(openai::text(&["Stood up."])),
        sse(openai::text(&["Fixed."])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let run = support::jobs::exec(&env, &cfg, dir.path(), &["/explain src/main.rs"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(messages(&server, 0).contains("Explain src/main.rs in two sentences."));
    let run = support::jobs::exec(&env, &cfg, dir.path(), &["/standup"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(messages(&server, 1).contains("Summarize what changed today."));
    let run = support::jobs::exec(&env, &cfg, dir.path(), &["/stand-up"]);
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("did you mean /standup?"),
        "{}",
        run.stderr
    );
    let srv = serve(&env, &cfg, dir.path());
    let c = Client::new(&srv.base, srv.token.as_deref().unwrap());
    rt().block_on(async {
        let (session, job) = c.session_and_run("/fixup the parser", "ask").await;
        let done = c
            .wait_event(&job, 20, |e| e["type"] == "job.completed")
            .await;
        assert_eq!(done["data"]["answer"], "Fixed.", "{done}");
        let (status, body) = c
            .post(
                "/api/v1/agent/run",
                json!({"session_id": session, "instruction": "/fixpu x"}),
            )
            .await;
        assert_eq!(status, 400, "{body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("/fixup"),
            "{body}"
        );
    });
    assert!(messages(&server, 2).contains("Fix the parser now."));
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn the_status_bar_shows_the_sessions_cost_when_prices_are_set() {
    let env = Env::new();
    let dir = project();
    let server = LlmServer::start(vec![
        sse(openai::text(&["One."])),
        sse(openai::text(&["Two."])),
    ]);
    let priced = "price_input_per_mtok = 2000.0\nprice_output_per_mtok = 8000.0";
    let cfg = config(&env, "openai", &server.url(), priced);
    let tmux = start_tui(&env, &cfg, dir.path(), "cost");
    let screen = tmux.wait_for("F1 help");
    assert!(screen.contains("$0.000000"), "{screen}");
    tmux.keys(&["-l", "first"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("One.");
    let usage = &server.requests()[0];
    assert!(usage.body["stream_options"]["include_usage"] == true);
    tmux.keys(&["-l", "second"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Two.");
    // Each job: 11 tokens in at 2000 $/M, 7 out at 8000 $/M (the mock's usage).
    tmux.wait_for("$0.156");
    let unpriced = Env::new();
    let server = LlmServer::start(vec![]);
    let cfg = config(&unpriced, "openai", &server.url(), "");
    let tmux = start_tui(&unpriced, &cfg, dir.path(), "no-cost");
    let screen = tmux.wait_for("F1 help");
    assert!(!screen.contains('$'), "{screen}");
}

#[test]
fn memory_files_come_as_spec_19_says_and_memory_lists_them() {
    let env = Env::new();
    let dir = project();
    support::write_files(
        dir.path(),
        &[
            ("CLAUDE.md", "ROOT-RULE: answer in English.\n"),
            ("web/AGENTS.md", "NESTED-RULE: web code uses tabs.\n"),
            ("web/app.js", "console.log('hi');\n"),
            ("docs/CLAUDE.md", "DOCS-RULE: short lines.\n"),
            (
                "docs/AGENTS.md",
                "DOCS-AGENTS-RULE: wins over CLAUDE.md here.\n",
            ),
        ],
    );
    // No AGENTS.md at the root: its CLAUDE.md stands in.
    let _ = std::fs::remove_file(dir.path().join("AGENTS.md"));
    support::write_files(
        &env.home.path().join("config/agent-tui"),
        &[("AGENTS.md", "USER-RULE: call me Sam.\n")],
    );
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[(
            "r1",
            "read_file",
            r#"{"file_path": "src/main.rs"}"#,
        )])),
        sse(openai::tool_calls(&[(
            "r2",
            "read_file",
            r#"{"file_path": "web/app.js"}"#,
        )])),
        sse(openai::text(&["Read them."])),
        sse(openai::tool_calls(&[(
            "r3",
            "read_file",
            r#"{"file_path": "web/app.js"}"#,
        )])),
        sse(openai::text(&["Again."])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let tmux = start_tui(&env, &cfg, dir.path(), "memory");
    tmux.wait_for("F1 help");
    tmux.keys(&["-l", "look at the code"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Read them.");
    let body = |i: usize| server.requests()[i].body.to_string();
    // The root's CLAUDE.md stands in for a missing AGENTS.md; the user's own file too.
    assert!(body(0).contains("ROOT-RULE") && body(0).contains("USER-RULE"));
    assert!(
        body(0).contains("CLAUDE.md at the agent root"),
        "{}",
        body(0)
    );
    // The nested file only once a file under it was read.
    assert!(!body(0).contains("NESTED-RULE") && !body(1).contains("NESTED-RULE"));
    assert!(body(2).contains("NESTED-RULE"), "{}", body(2));
    assert!(!body(2).contains("DOCS"), "docs/ was never touched");
    // A later job does not get it a second time.
    tmux.keys(&["-l", "once more"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Again.");
    assert_eq!(body(4).matches("NESTED-RULE").count(), 1, "{}", body(4));
    tmux.keys(&["-l", "/memory"]);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("Memory files the model is given:");
    for line in [
        "CLAUDE.md ·",
        "agent-tui/AGENTS.md ·",
        "docs/AGENTS.md · 14 tokens · with the first read or edit",
        "web/AGENTS.md ·",
    ] {
        assert!(screen.contains(line), "{line}: {screen}");
    }
}
