//! Hooks (SPEC 21), through the real binary: a `tool.before` gate blocks
//! `rm -rf keep` and the model reads why, the same in `exec`, the TUI and
//! `serve`; a gate that outlives its timeout blocks in time and leaves no
//! process; a hook writes nowhere but its folder, reaches no listener and
//! sees no provider key; a project's hooks run nothing until trusted, then
//! their trusted bytes; `job.end` sends a job on at most
//! `max_continuations` times; `hooks test` decides like a job and keeps
//! nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::Env;
use support::jobs::{KEY, config, exec, project, sse};
use support::llm_server::{LlmServer, openai};
use support::serve::add_config;

const NO_RM: &str = r#"
[[hooks.run]]
name = "no-rm"
on = "tool.before"
match = { tool = "run_command", command = "rm -rf*" }
command = ["sh", "-c", "echo 'deleting is not allowed here' >&2; exit 2"]
"#;

/// A model that runs `rm -rf keep`, then answers.
fn rm_then_answer() -> Vec<support::llm_server::Reply> {
    vec![
        sse(openai::tool_calls(&[(
            "c1",
            "run_command",
            &json!({"command": "rm -rf keep"}).to_string(),
        )])),
        sse(openai::text(&["Kept it."])),
    ]
}

fn with_keep(root: &Path) {
    std::fs::create_dir_all(root.join("keep")).unwrap();
    std::fs::write(root.join("keep/data.txt"), "precious\n").unwrap();
}

/// The second model request's messages, as text.
fn second_request(server: &LlmServer) -> String {
    let calls: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.is_model_call())
        .collect();
    assert!(calls.len() >= 2, "{} requests", calls.len());
    calls[1].body["messages"].to_string()
}

/// `agent-tui hooks ARGS` with the test key set: (exit code, stdout, stderr).
fn hooks(env: &Env, cfg: &Path, root: &Path, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["hooks"];
    all.extend_from_slice(args);
    cli(env, cfg, root, &all)
}

#[test]
fn a_gate_blocks_rm_rf_and_the_model_reads_why() {
    let env = Env::new();
    let dir = project();
    with_keep(dir.path());
    let server = LlmServer::start(rm_then_answer());
    let cfg = config(&env, "openai", &server.url(), "");
    add_config(&cfg, NO_RM);
    let run = exec(&env, &cfg, dir.path(), &["clean up"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(dir.path().join("keep/data.txt").exists());
    assert!(
        run.stderr.contains("hook no-rm (tool.before): block"),
        "{}",
        run.stderr
    );
    let asked = second_request(&server);
    assert!(
        asked.contains("hook no-rm blocked this call: deleting is not allowed here"),
        "{asked}"
    );
    let audit = env.audit_records();
    let hook = audit.iter().find(|r| r["action"] == "hook").unwrap();
    assert_eq!(hook["target"], "no-rm (tool.before)");
    let outcome: Value = serde_json::from_str(hook["outcome"].as_str().unwrap()).unwrap();
    assert_eq!(outcome["decision"], "block");
    assert_eq!(outcome["exit_code"], 2);
    assert_eq!(outcome["confined"], true);
}

#[test]
fn a_slow_gate_blocks_at_its_timeout_and_leaves_no_process() {
    let env = Env::new();
    let dir = project();
    let server = LlmServer::start(vec![]);
    let cfg = config(&env, "openai", &server.url(), "");
    let marker = format!("hookmarker{}", std::process::id());
    add_config(
        &cfg,
        &format!(
            "[[hooks.run]]\nname = \"slow\"\non = \"tool.before\"\ntimeout_secs = 1\n\
             command = [\"sh\", \"-c\", \"sleep 30; echo {marker}\"]\n"
        ),
    );
    let input = dir.path().join("call.json");
    std::fs::write(
        &input,
        r#"{"tool": "read_file", "arguments": {"path": "README.md"}}"#,
    )
    .unwrap();
    let started = Instant::now();
    let (code, out, err) = hooks(
        &env,
        &cfg,
        dir.path(),
        &[
            "test",
            "tool.before",
            "--json",
            "--input",
            input.to_str().unwrap(),
        ],
    );
    let took = started.elapsed();
    assert_eq!(code, 1, "{out}{err}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    let said: Value = serde_json::from_str(&out).unwrap();
    let run = &said["runs"][0];
    assert_eq!(run["decision"], "block", "{said}");
    assert_eq!(run["timed_out"], true, "{said}");
    assert!(run["duration_ms"].as_u64().unwrap() < 2000, "{said}");
    assert!(
        run["reason"]
            .as_str()
            .unwrap()
            .contains("did not finish within 1 s"),
        "{said}"
    );
    let left = std::process::Command::new("pgrep")
        .args(["-f", &marker])
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "left: {}",
        String::from_utf8_lossy(&left.stdout)
    );
}

#[test]
fn a_hook_writes_only_in_its_folder_reaches_no_listener_and_sees_no_key() {
    let env = Env::new();
    let dir = project();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = LlmServer::start(vec![]);
    let cfg = config(&env, "openai", &server.url(), "");
    let outside = dir.path().join("written-by-hook");
    let script = format!(
        "cat > /dev/null; \
         touch {out} 2>/dev/null && w=wrote || w=denied; \
         touch \"$TMPDIR/own\" && t=own || t=none; \
         python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 2)' 2>/dev/null && n=connected || n=refused; \
         env | grep -q TEST_LLM_KEY && k=seen || k=absent; \
         printf '{{\"context\": \"root %s, folder %s, net %s, key %s\"}}' $w $t $n $k",
        out = outside.display()
    );
    let def = json!({"name": "probe", "on": "prompt.submit", "command": ["sh", "-c", script]});
    add_config(
        &cfg,
        &format!(
            "[[hooks.run]]\nname = \"probe\"\non = \"prompt.submit\"\ncommand = {}\n",
            def["command"]
        ),
    );
    let (code, out, err) = hooks(&env, &cfg, dir.path(), &["test", "prompt.submit", "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let said: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        said["runs"][0]["context"], "root denied, folder own, net refused, key absent",
        "{said}"
    );
    assert_eq!(said["runs"][0]["confined"], true);
    assert!(!outside.exists());
    drop(listener);
}

#[test]
fn a_hook_writes_its_own_log_where_granted_and_never_in_the_project() {
    let env = Env::new();
    let dir = project();
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("hooks/audit.jsonl");
    let server = LlmServer::start(vec![]);
    let cfg = config(&env, "openai", &server.url(), "");
    let write = format!("cat >> {0}; echo >> {0}", log.display());
    add_config(
        &cfg,
        &format!(
            "[[hooks.run]]\nname = \"audit\"\non = \"prompt.submit\"\n\
             command = [\"sh\", \"-c\", {write:?}]\nwritable = [{:?}]\n",
            log.parent().unwrap().display().to_string()
        ),
    );
    let (code, out, err) = hooks(&env, &cfg, dir.path(), &["test", "prompt.submit", "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let said: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(said["runs"][0]["decision"], "pass", "{said}");
    let logged: Value =
        serde_json::from_str(std::fs::read_to_string(&log).unwrap().trim()).unwrap();
    assert_eq!(logged["hook"]["event"], "prompt.submit", "{logged}");
    // A grant that reaches into the project is refused: the gate fails
    // (and so blocks), naming why.
    let cfg = config(&env, "openai", &server.url(), "");
    add_config(
        &cfg,
        &format!(
            "[[hooks.run]]\nname = \"sneaky\"\non = \"prompt.submit\"\n\
             command = [\"touch\", \"src/new.rs\"]\nwritable = [{:?}]\n",
            dir.path().join("src").display().to_string()
        ),
    );
    let (code, out, err) = hooks(&env, &cfg, dir.path(), &["test", "prompt.submit", "--json"]);
    assert_eq!(code, 1, "{out}{err}");
    let said: Value = serde_json::from_str(&out).unwrap();
    let reason = said["runs"][0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("would let it write in the project"),
        "{said}"
    );
    assert!(!dir.path().join("src/new.rs").exists());
    // A relative folder is a config error.
    add_config(
        &cfg,
        "[[hooks.run]]\nname = \"rel\"\non = \"job.end\"\ncommand = [\"true\"]\nwritable = [\"logs\"]\n",
    );
    let (code, out, err) = hooks(&env, &cfg, dir.path(), &["list"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("writable = \"logs\": an absolute folder"),
        "{err}"
    );
}

#[test]
fn project_hooks_run_only_trusted_and_then_their_trusted_bytes() {
    let env = Env::new();
    let dir = project();
    let server = LlmServer::start(vec![]);
    let cfg = config(&env, "openai", &server.url(), "");
    let hooks_dir = dir.path().join(".agent-tui/hooks");
    std::fs::create_dir_all(&hooks_dir).unwrap();
    let script = hooks_dir.join("say.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\necho '{\"context\": \"first version\"}'\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(
        dir.path().join(".agent-tui/hooks.toml"),
        "[[hooks.run]]\nname = \"say\"\non = \"prompt.submit\"\ncommand = [\".agent-tui/hooks/say.sh\"]\n",
    )
    .unwrap();
    let test = || {
        let (code, out, err) = hooks(&env, &cfg, dir.path(), &["test", "prompt.submit", "--json"]);
        assert_eq!(code, 0, "{out}{err}");
        serde_json::from_str::<Value>(&out).unwrap()
    };
    // Not trusted: listed as such, runs nothing.
    let (_, list, _) = hooks(&env, &cfg, dir.path(), &["list", "--json"]);
    let list: Value = serde_json::from_str(&list).unwrap();
    assert_eq!(list["hooks"][0]["trust"], "untrusted", "{list}");
    assert_eq!(test()["runs"], json!([]));
    let (code, out, err) = hooks(&env, &cfg, dir.path(), &["trust"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("trusted say"), "{out}");
    assert_eq!(test()["runs"][0]["context"], "first version");
    // The script changes: shown as changed, and the trusted bytes still run.
    std::fs::write(
        &script,
        "#!/bin/sh\necho '{\"context\": \"second version\"}'\n",
    )
    .unwrap();
    let (_, list, _) = hooks(&env, &cfg, dir.path(), &["list", "--json"]);
    let list: Value = serde_json::from_str(&list).unwrap();
    assert_eq!(list["hooks"][0]["trust"], "changed", "{list}");
    assert_eq!(list["hooks"][0]["scripts"][0]["changed"], true, "{list}");
    assert_eq!(test()["runs"][0]["context"], "first version");
    let (code, _, _) = hooks(&env, &cfg, dir.path(), &["trust", "say"]);
    assert_eq!(code, 0);
    assert_eq!(test()["runs"][0]["context"], "second version");
}

#[test]
fn job_end_sends_a_job_on_at_most_max_continuations_times() {
    let env = Env::new();
    let dir = project();
    let server = LlmServer::start(vec![
        sse(openai::text(&["One."])),
        sse(openai::text(&["Two."])),
        sse(openai::text(&["Three."])),
        sse(openai::text(&["Never."])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    add_config(
        &cfg,
        "[hooks]\nmax_continuations = 2\n[[hooks.run]]\nname = \"more\"\non = \"job.end\"\n\
         command = [\"sh\", \"-c\", \"echo '{\\\"decision\\\": \\\"continue\\\", \\\"message\\\": \\\"check the tests too\\\"}'\"]\n",
    );
    let run = exec(&env, &cfg, dir.path(), &["--mode", "ask", "do it"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let calls: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.is_model_call())
        .collect();
    assert_eq!(calls.len(), 3, "the first answer and two continuations");
    let last = calls[2].body["messages"].to_string();
    assert!(last.contains("[hook more] check the tests too"), "{last}");
    assert!(last.contains("One.") && last.contains("Two."), "{last}");
    assert!(run.stdout.contains("Three."), "{}", run.stdout);
}

#[test]
fn hooks_test_decides_like_a_job_and_keeps_nothing() {
    let env = Env::new();
    let dir = project();
    with_keep(dir.path());
    let server = LlmServer::start(vec![]);
    let cfg = config(&env, "openai", &server.url(), "");
    add_config(&cfg, NO_RM);
    let input = dir.path().join("call.json");
    std::fs::write(
        &input,
        r#"{"tool": "run_command", "arguments": {"command": "rm -rf keep"}}"#,
    )
    .unwrap();
    let (code, out, _) = hooks(
        &env,
        &cfg,
        dir.path(),
        &["test", "tool.before", "--input", input.to_str().unwrap()],
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("no-rm: block"), "{out}");
    assert!(out.contains("deleting is not allowed here"), "{out}");
    // Another command: no hook matches it.
    std::fs::write(
        &input,
        r#"{"tool": "run_command", "arguments": {"command": "ls keep"}}"#,
    )
    .unwrap();
    let (code, out, _) = hooks(
        &env,
        &cfg,
        dir.path(),
        &["test", "tool.before", "--input", input.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("no hook matched this input on tool.before: pass (nothing ran)"),
        "{out}"
    );
    let (code, _, err) = hooks(&env, &cfg, dir.path(), &["test", "tool.later"]);
    assert_eq!(code, 2);
    assert!(err.contains("no hook event tool.later"), "{err}");
    assert!(server.requests().is_empty());
    assert!(!env.state_db().exists() || env.session_text().is_empty());
}

/// A hook that prints an array where the contract says one JSON object:
/// its output is an error (`on_error` decides), never read by position as
/// a decision and a reason (found by the hook_output fuzz target); the
/// same for an array where a hooks file has a table.
#[test]
fn a_hook_printing_an_array_is_an_error_not_a_decision() {
    let env = Env::new();
    let dir = project();
    let server = LlmServer::start(vec![]);
    let cfg = config(&env, "openai", &server.url(), "");
    let hook = |on_error: &str, out: &str| {
        let out = out.replace('"', "\\\"");
        format!(
            "[[hooks.run]]\nname = \"lister\"\non = \"prompt.submit\"\non_error = \"{on_error}\"\n\
             command = [\"sh\", \"-c\", \"printf '%s' '{out}'\"]\n"
        )
    };
    add_config(&cfg, &hook("pass", r#"["block", "by position"]"#));
    let (code, out, _) = hooks(&env, &cfg, dir.path(), &["test", "prompt.submit"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("lister: pass"), "{out}");
    assert!(
        out.contains("expected one JSON object, found an array"),
        "{out}"
    );
    assert!(!out.contains("by position"), "{out}");
    // The same words as an object block, with their reason.
    let cfg = config(&env, "openai", &server.url(), "");
    add_config(
        &cfg,
        &hook("pass", r#"{"decision": "block", "reason": "as an object"}"#),
    );
    let (code, out, _) = hooks(&env, &cfg, dir.path(), &["test", "prompt.submit"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("lister: block"), "{out}");
    assert!(out.contains("as an object"), "{out}");
    // A project's hooks file with an array for a hook's `match` table: a
    // problem naming it, not a match on the first glob by position.
    std::fs::create_dir_all(dir.path().join(".agent-tui")).unwrap();
    std::fs::write(
        dir.path().join(".agent-tui/hooks.toml"),
        "[[hooks.run]]\nname = \"gate\"\non = \"tool.before\"\nmatch = [\"run_command\"]\n\
         command = [\"true\"]\n",
    )
    .unwrap();
    let (code, out, err) = hooks(&env, &cfg, dir.path(), &["list", "--json"]);
    assert_eq!(code, 2, "{out}{err}");
    let list: Value = serde_json::from_str(&out).unwrap();
    assert!(
        list["problems"]
            .to_string()
            .contains("hooks.run[0].match: expected a table, found an array"),
        "{list}"
    );
}

#[test]
fn the_same_gate_blocks_in_the_tui_and_over_http() {
    use support::serve::{Client, rt, serve};
    let env = Env::new();
    let dir = project();
    with_keep(dir.path());
    let server = LlmServer::start(rm_then_answer());
    let cfg = config(&env, "openai", &server.url(), "");
    add_config(&cfg, NO_RM);
    {
        let tmux = support::tmux::start_agent(&env, &cfg, dir.path(), "hooks-tui", "");
        tmux.wait_for("F1 help");
        tmux.keys(&["-l", "clean up"]);
        tmux.keys(&["Enter"]);
        let screen = tmux.wait_for("Kept it.");
        assert!(screen.contains("hook no-rm"), "{screen}");
        assert!(screen.contains("tool.before · block"), "{screen}");
        // The hooks panel: source, trust and the last run.
        tmux.keys(&["-l", "/hooks"]);
        tmux.keys(&["Enter"]);
        let screen = tmux.wait_for("no-rm · tool.before · config · last: block in");
        assert!(screen.contains("Hooks:"), "{screen}");
    }
    assert!(second_request(&server).contains("hook no-rm blocked this call"));
    let server = LlmServer::start(rm_then_answer());
    let cfg = config(&env, "openai", &server.url(), "");
    add_config(&cfg, NO_RM);
    // Over HTTP a hook is told who asked, and in which workspace.
    add_config(
        &cfg,
        r#"
[[hooks.run]]
name = "who"
on = "prompt.submit"
command = ["python3", "-c", "import json,sys; d=json.load(sys.stdin); print(json.dumps({'context': 'asked by %s in %s from %s' % (d['user'], d['workspace_id'], d['front'])}))"]
"#,
    );
    let srv = serve(&env, &cfg, dir.path());
    let c = Client::new(&srv.base, srv.token.as_deref().unwrap());
    rt().block_on(async {
        let (_session, job) = c.session_and_run("clean up", "agent").await;
        let done = c
            .wait_event(&job, 20, |e| {
                e["type"] == "hook.completed" && e["data"]["name"] == "no-rm"
            })
            .await;
        assert_eq!(done["data"]["decision"], "block", "{done}");
        c.wait_event(&job, 20, |e| e["type"] == "job.completed")
            .await;
    });
    let second = second_request(&server);
    assert!(second.contains("hook no-rm blocked this call"));
    let told = phrase_at(&second, "asked by ");
    assert!(told.ends_with(" in default from serve"), "{told}");
    assert!(!told.starts_with("asked by None"), "{told}");
    assert!(dir.path().join("keep/data.txt").exists());
}

/// The text from `start` to the end of its line or quoted string.
fn phrase_at(text: &str, start: &str) -> String {
    let at = text
        .find(start)
        .unwrap_or_else(|| panic!("no {start:?} in {text}"));
    text[at..]
        .split(['"', '\\', '\n'])
        .next()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn the_model_cannot_propose_edits_to_hook_files_and_observers_see_the_apply() {
    let env = Env::new();
    let dir = project();
    std::fs::create_dir_all(dir.path().join(".agent-tui")).unwrap();
    let hooks_file = "[[hooks.run]]\nname = \"say\"\non = \"job.end\"\ncommand = [\"true\"]\n";
    std::fs::write(dir.path().join(".agent-tui/hooks.toml"), hooks_file).unwrap();
    let to_hooks = json!({"edits": [
        {"file_path": ".agent-tui/hooks.toml", "operation": "replace", "start_line": 1, "end_line": 1,
         "old_text": "[[hooks.run]]", "new_text": "# gone\n"}
    ]})
    .to_string();
    let mut script = vec![sse(openai::tool_calls(&[(
        "c1",
        "propose_edits",
        &to_hooks,
    )]))];
    script.extend(support::serve::edit_then_answer());
    let server = LlmServer::start(script);
    let cfg = config(&env, "openai", &server.url(), "");
    add_config(
        &cfg,
        "[[hooks.run]]\nname = \"applied\"\non = \"apply.after\"\ncommand = [\"sh\", \"-c\", \"cat > /dev/null\"]\n",
    );
    let run = exec(
        &env,
        &cfg,
        dir.path(),
        &["--apply", "all", "greet in Spanish"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let asked = second_request(&server);
    assert!(
        asked.contains(".agent-tui/hooks.toml is a hook file"),
        "{asked}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".agent-tui/hooks.toml")).unwrap(),
        hooks_file
    );
    assert!(
        std::fs::read_to_string(dir.path().join("src/greet.rs"))
            .unwrap()
            .contains("hola")
    );
    // The apply's observer ran (detached): its record comes soon after.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let audit = env.audit_records();
        if audit
            .iter()
            .any(|r| r["action"] == "hook" && r["target"] == "applied (apply.after)")
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no apply.after record: {audit:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn over_http_anyone_lists_hooks_and_only_admins_trust_or_test_them() {
    use support::serve::{Client, add_token, error_code, rt, serve};
    let env = Env::new();
    let dir = project();
    std::fs::create_dir_all(dir.path().join(".agent-tui")).unwrap();
    std::fs::write(
        dir.path().join(".agent-tui/hooks.toml"),
        "[[hooks.run]]\nname = \"say\"\non = \"prompt.submit\"\ncommand = [\"sh\", \"-c\", \"echo '{\\\"context\\\": \\\"said\\\"}'\"]\n",
    )
    .unwrap();
    let alice = add_token(&env, "alice", "admin");
    let bob = add_token(&env, "bob", "user");
    let server = LlmServer::start(vec![]);
    let cfg = config(&env, "openai", &server.url(), "");
    let srv = serve(&env, &cfg, dir.path());
    let (a, b) = (Client::new(&srv.base, &alice), Client::new(&srv.base, &bob));
    rt().block_on(async {
        let (status, list) = b.get("/api/v1/agent/hooks?workspace_id=default").await;
        assert_eq!(status, 200, "{list}");
        assert_eq!(list["hooks"][0]["trust"], "untrusted", "{list}");
        let trust = json!({"workspace_id": "default"});
        let (status, body) = b.post("/api/v1/agent/hooks/trust", trust.clone()).await;
        assert_eq!(status, 403, "{body}");
        assert_eq!(error_code(&body), "forbidden");
        let test = json!({"workspace_id": "default", "event": "prompt.submit"});
        let (status, body) = b.post("/api/v1/agent/hooks/test", test.clone()).await;
        assert_eq!(status, 403, "{body}");
        let (status, body) = a.post("/api/v1/agent/hooks/test", test.clone()).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["runs"], json!([]), "untrusted: nothing runs");
        let (status, body) = a.post("/api/v1/agent/hooks/trust", trust).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["trusted"], json!(["say"]));
        // Trusted here: the running server's engine runs it from now on.
        let (status, body) = a.post("/api/v1/agent/hooks/test", test.clone()).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["runs"][0]["context"], "said", "{body}");
        let bad = json!({"workspace_id": "default", "event": "tool.later"});
        let (status, body) = a.post("/api/v1/agent/hooks/test", bad).await;
        assert_eq!(status, 400, "{body}");
    });
}

/// `agent-tui ARGS --root ROOT` with the test key: (code, stdout, stderr).
fn cli(env: &Env, cfg: &Path, root: &Path, args: &[&str]) -> (i32, String, String) {
    let out = env
        .cmd()
        .env("TEST_LLM_KEY", KEY)
        .arg("--config")
        .arg(cfg)
        .args(args)
        .arg("--root")
        .arg(root)
        .output()
        .unwrap();
    (
        support::code(&out),
        support::stdout(&out),
        support::stderr(&out),
    )
}

#[test]
fn a_formatters_changes_go_in_the_same_apply_and_one_rollback_undoes_both() {
    let env = Env::new();
    let dir = project();
    let greet = dir.path().join("src/greet.rs");
    let original = std::fs::read(&greet).unwrap();
    let server = LlmServer::start(support::serve::edit_then_answer());
    let cfg = config(&env, "openai", &server.url(), "");
    // A "formatter": upper-cases the greeting (on the model's line) and
    // adds a last line (apart from it) in each file it is given.
    add_config(
        &cfg,
        "[[hooks.run]]\nname = \"fmt\"\non = \"apply.before\"\n\
         command = [\"sh\", \"-c\", \"for f in \\\"$@\\\"; do sed -i -e s/hola/HOLA/ -e '$a // end' \\\"$f\\\"; done\", \"fmt\", \"{files}\"]\n",
    );
    let run = exec(
        &env,
        &cfg,
        dir.path(),
        &["--json", "--apply", "all", "greet in Spanish"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let now = std::fs::read_to_string(&greet).unwrap();
    assert_eq!(
        now, "pub fn greet() {\n    println!(\"HOLA\");\n}\n// end\n",
        "the formatter's changes are applied"
    );
    // Its changes are hunks of the review, `origin: "hook:fmt"`, applied.
    let completed: Value = run
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["type"] == "apply.completed")
        .unwrap_or_else(|| panic!("{}", run.stdout));
    let hunks = completed["data"]["bundle"]["files"][0]["hunks"]
        .as_array()
        .unwrap();
    let by_hook: Vec<&Value> = hunks.iter().filter(|h| h["origin"] == "hook:fmt").collect();
    assert_eq!(by_hook.len(), 2, "{hunks:?}");
    assert!(by_hook.iter().all(|h| h["applied"] == true), "{hunks:?}");
    assert!(
        by_hook[1]["patch"].as_str().unwrap().contains("+// end"),
        "{hunks:?}"
    );
    let ids = completed["data"]["hunk_ids"].as_array().unwrap();
    assert!(ids.contains(&by_hook[1]["hunk_id"]), "{completed}");
    let (code, list, err) = cli(&env, &cfg, dir.path(), &["checkpoints", "list", "--json"]);
    assert_eq!(code, 0, "{err}");
    let list: Value = serde_json::from_str(&list).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1, "one checkpoint: {list}");
    let audit = env.audit_records();
    let hook = audit
        .iter()
        .find(|r| r["action"] == "hook" && r["target"] == "fmt (apply.before)")
        .unwrap();
    assert!(
        hook["outcome"]
            .as_str()
            .unwrap()
            .contains("\"decision\":\"pass\"")
    );
    let cp = list[0]["checkpoint_id"].as_str().unwrap();
    // The checkpoint keeps who wrote each hunk: its JSON, its text, and
    // the three-way view name the formatter.
    let (code, shown, err) = cli(
        &env,
        &cfg,
        dir.path(),
        &["checkpoints", "show", cp, "--json"],
    );
    assert_eq!(code, 0, "{err}");
    let shown: Value = serde_json::from_str(&shown).unwrap();
    let origins: Vec<&str> = shown["checkpoint"]["affected_files"][0]["hunks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["origin"].as_str().unwrap())
        .collect();
    assert!(origins.contains(&"hook:fmt"), "{shown}");
    assert!(origins.contains(&"agent"), "{shown}");
    assert_eq!(shown["three_way"][0]["hooks"], json!(["fmt"]), "{shown}");
    let (_, text, _) = cli(&env, &cfg, dir.path(), &["checkpoints", "show", cp]);
    assert!(
        text.contains(&format!(
            "{} by hook fmt (undo patch):",
            by_hook[1]["hunk_id"].as_str().unwrap()
        )),
        "{text}"
    );
    // Scoped: the formatter's separate line alone.
    let end_hunk = by_hook[1]["hunk_id"].as_str().unwrap();
    let (code, out, err) = cli(
        &env,
        &cfg,
        dir.path(),
        &["rollback", cp, "--hunks", end_hunk],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        std::fs::read_to_string(&greet).unwrap(),
        "pub fn greet() {\n    println!(\"HOLA\");\n}\n"
    );
    // Whole: one rollback of the apply takes the model's and the
    // formatter's changes back to the original bytes.
    let (code, out, err) = cli(&env, &cfg, dir.path(), &["rollback", cp]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        std::fs::read(&greet).unwrap(),
        original,
        "one rollback restores the bytes"
    );
}

#[test]
fn a_blocking_apply_before_hook_writes_nothing() {
    let env = Env::new();
    let dir = project();
    let greet = dir.path().join("src/greet.rs");
    let original = std::fs::read(&greet).unwrap();
    let server = LlmServer::start(support::serve::edit_then_answer());
    let cfg = config(&env, "openai", &server.url(), "");
    add_config(
        &cfg,
        "[[hooks.run]]\nname = \"lint\"\non = \"apply.before\"\n\
         command = [\"sh\", \"-c\", \"echo 'lint: greetings must be English' >&2; exit 2\"]\n",
    );
    let run = exec(
        &env,
        &cfg,
        dir.path(),
        &["--apply", "all", "greet in Spanish"],
    );
    assert_ne!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("hook lint blocked the apply: lint: greetings must be English"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read(&greet).unwrap(), original);
}

/// A model that proposes one edit to `a.py` and one to `b.rs`.
fn python_and_rust_edits() -> Vec<support::llm_server::Reply> {
    let edits = json!({"edits": [
        {"file_path": "a.py", "operation": "replace", "start_line": 1, "end_line": 1,
         "old_text": "x = 1", "new_text": "x = 2\n"},
        {"file_path": "b.rs", "operation": "replace", "start_line": 1, "end_line": 1,
         "old_text": "fn b() {}", "new_text": "fn b() { }\n"}
    ]})
    .to_string();
    vec![
        sse(openai::tool_calls(&[("c1", "propose_edits", &edits)])),
        sse(openai::text(&["Both changed."])),
    ]
}

#[test]
fn a_formatter_matched_by_path_runs_on_its_files_only() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "x = 1\n").unwrap();
    std::fs::write(dir.path().join("b.rs"), "fn b() {}\n").unwrap();
    let server = LlmServer::start(python_and_rust_edits());
    let cfg = config(&env, "openai", &server.url(), "");
    // "black" marks each file it is given; "gofmt" matches no file here.
    add_config(
        &cfg,
        "[[hooks.run]]\nname = \"black\"\non = \"apply.before\"\nmatch = { path = \"**/*.py\" }\n\
         command = [\"sh\", \"-c\", \"for f in \\\"$@\\\"; do echo '# formatted' >> \\\"$f\\\"; done\", \"fmt\", \"{files}\"]\n\
         [[hooks.run]]\nname = \"gofmt\"\non = \"apply.before\"\nmatch = { path = \"*.go\" }\n\
         command = [\"sh\", \"-c\", \"exit 2\"]\n\
         [[hooks.run]]\nname = \"py-after\"\non = \"apply.after\"\nmatch = { path = \"*.py\" }\n\
         command = [\"sh\", \"-c\", \"echo \\\"$@\\\" >&2; exit 0\", \"list\", \"{files}\"]\n",
    );
    let run = exec(
        &env,
        &cfg,
        dir.path(),
        &["--json", "--apply", "all", "change both"],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stderr, run.stdout);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.py")).unwrap(),
        "x = 2\n# formatted\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("b.rs")).unwrap(),
        "fn b() { }\n",
        "the .rs file is not given to a .py formatter"
    );
    let hooks_run: Vec<String> = run
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "hook.completed")
        .map(|e| e["data"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(hooks_run.contains(&"black".to_string()), "{hooks_run:?}");
    assert!(!hooks_run.contains(&"gofmt".to_string()), "{hooks_run:?}");
    // The apply's observer for .py files ran (detached): its record comes
    // soon after.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !env
        .audit_records()
        .iter()
        .any(|r| r["action"] == "hook" && r["target"] == "py-after (apply.after)")
    {
        assert!(Instant::now() < deadline, "no apply.after record");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        !env.audit_records()
            .iter()
            .any(|r| r["target"] == "gofmt (apply.before)")
    );
    // A tool or command match on a file event is a configuration error.
    add_config(
        &cfg,
        "[[hooks.run]]\nname = \"bad\"\non = \"apply.before\"\nmatch = { tool = \"run_command\" }\n\
         command = [\"true\"]\n",
    );
    let (code, _, err) = cli(&env, &cfg, dir.path(), &["doctor"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("hooks.run[3].match: a apply.before hook matches files by path only"),
        "{err}"
    );
}

#[test]
fn hooks_test_replays_a_captured_input_and_says_when_nothing_matched() {
    let env = Env::new();
    let dir = project();
    with_keep(dir.path());
    let capture = tempfile::tempdir().unwrap();
    let server = LlmServer::start(rm_then_answer());
    let cfg = config(&env, "openai", &server.url(), "");
    // A hook that keeps the whole input it received, as a user would to
    // replay it.
    add_config(
        &cfg,
        &format!(
            "[[hooks.run]]\nname = \"capture\"\non = \"tool.before\"\n\
             command = [\"sh\", \"-c\", \"cat > {c}/input.json\"]\nwritable = [\"{c}\"]\n",
            c = capture.path().display()
        ),
    );
    let run = exec(&env, &cfg, dir.path(), &["clean up"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let captured = capture.path().join("input.json");
    let input: Value = serde_json::from_str(&std::fs::read_to_string(&captured).unwrap()).unwrap();
    assert_eq!(input["data"]["tool"], "run_command", "{input}");
    add_config(&cfg, NO_RM);
    // The whole captured input: the gate blocks as in the job.
    let args = ["test", "tool.before", "--hook", "no-rm", "--input"];
    let mut with = args.to_vec();
    let path = captured.display().to_string();
    with.push(&path);
    with.push("--json");
    let (code, out, err) = hooks(&env, &cfg, dir.path(), &with);
    assert_eq!(code, 1, "{out}{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["decision"], "block", "{v}");
    // Its `data` alone, the same.
    let data = dir.path().join("data.json");
    std::fs::write(&data, input["data"].to_string()).unwrap();
    let path = data.display().to_string();
    let (code, out, err) = hooks(
        &env,
        &cfg,
        dir.path(),
        &["test", "tool.before", "--hook", "no-rm", "--input", &path],
    );
    assert_eq!(code, 1, "{out}{err}");
    // A call the gate's match does not take: said, not a silent pass.
    std::fs::write(
        &data,
        r#"{"tool": "read_file", "arguments": {"path": "README.md"}}"#,
    )
    .unwrap();
    let (code, out, err) = hooks(
        &env,
        &cfg,
        dir.path(),
        &["test", "tool.before", "--hook", "no-rm", "--input", &path],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(
            "no-rm: not run: its match {tool = \"run_command\", command = \"rm -rf*\"} takes none \
             of this input: tool read_file, paths README.md"
        ),
        "{out}"
    );
    assert!(
        out.contains("no hook matched this input on tool.before: pass (nothing ran)"),
        "{out}"
    );
    let (_, out, _) = hooks(
        &env,
        &cfg,
        dir.path(),
        &[
            "test",
            "tool.before",
            "--hook",
            "no-rm",
            "--input",
            &path,
            "--json",
        ],
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["runs"], json!([]), "{v}");
    assert_eq!(v["unmatched"][0]["name"], "no-rm", "{v}");
    // A captured input of another event is refused by name.
    let (code, _, err) = hooks(
        &env,
        &cfg,
        dir.path(),
        &[
            "test",
            "tool.after",
            "--input",
            &captured.display().to_string(),
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("the input was captured on tool.before, not tool.after"),
        "{err}"
    );
}
