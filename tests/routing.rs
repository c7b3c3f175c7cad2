//! `[routing]` through `agent-tui exec` against two loopback servers: a
//! "local" one that misbehaves in each trigger's way and a "remote" one that
//! answers. `hybrid_auto` falls back with the right reason, from the same
//! conversation, traced in events, session and audit log; `local` and
//! `remote` never touch the other server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};
use support::Env;
use support::jobs::{KEY, Run, project, sse};
use support::llm_server::{LlmServer, Reply, openai};

/// A config with providers `local` and `remote` at the two servers.
fn config(env: &Env, local: &LlmServer, remote: &LlmServer, routing: &str) -> std::path::PathBuf {
    let text = format!(
        "[providers.local]\nkind = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"\"\nmodel = \"small\"\ncontext_window = 16384\n\
         [providers.remote]\nkind = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"TEST_LLM_KEY\"\nmodel = \"big\"\ncontext_window = 16384\n\
         [agent]\nretry_base_delay_ms = 10\nmax_retries = 2\nrequest_timeout_secs = 5\n\
         [routing]\nlocal = \"local\"\nremote = \"remote\"\n{routing}\n",
        local.url(),
        remote.url()
    );
    let path = env.home.path().join("config.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn exec(env: &Env, cfg: &std::path::Path, args: &[&str]) -> Run {
    let root = project();
    support::jobs::exec(env, cfg, root.path(), args)
}

fn of_type(run: &Run, kind: &str) -> Vec<Value> {
    run.events()
        .into_iter()
        .filter(|e| e["type"] == kind)
        .collect()
}

/// llama.cpp's answer to a request longer than its window.
fn overflow() -> Reply {
    Reply::Status {
        code: 400,
        headers: vec![],
        body: json!({"error": {"code": 400, "message": "request (9000 tokens) exceeds the available context size (2048 tokens), try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 9000, "n_ctx": 2048}}).to_string(),
    }
}

fn model_calls(server: &LlmServer) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.is_model_call())
        .count()
}

/// Runs a hybrid job whose local server replies `local`; checks the
/// fallback, the answer from the remote and what the remote was sent.
fn falls_back(local: Vec<Reply>, routing: &str, mode: &str, reason: &str) -> (Env, Run) {
    let env = Env::new();
    let local = LlmServer::start(local);
    let remote = LlmServer::start(vec![sse(openai::text(&["Remote ", "answer."]))]);
    let cfg = config(
        &env,
        &local,
        &remote,
        &format!("mode = \"hybrid_auto\"\n{routing}"),
    );
    let run = exec(
        &env,
        &cfg,
        &["--json", "--mode", mode, "where is greet defined?"],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stderr, run.stdout);
    let fallback = of_type(&run, "provider.fallback");
    assert_eq!(fallback.len(), 1, "{}", run.stdout);
    assert_eq!(
        fallback[0]["data"],
        json!({"from": "local", "to": "remote", "reason": reason, "model": "big"})
    );
    let done = &of_type(&run, "job.completed")[0]["data"];
    assert_eq!(done["answer"], "Remote answer.");
    assert_eq!(done["provider"], "remote");
    assert_eq!(done["fallback_reason"], reason);
    // The remote goes on from the same conversation.
    let sent = &remote.requests()[0];
    assert!(sent.raw_body.contains("where is greet defined?"));
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    // Traced in the audit log.
    let audit = env.audit_records();
    assert!(
        audit.iter().any(|r| r["action"] == "provider.fallback"
            && r["target"] == "local -> remote"
            && r["outcome"] == reason),
        "{audit:?}"
    );
    // And in the session.
    let session = env.session_text();
    assert!(session.contains("\"provider.fallback\""), "{session}");
    assert!(
        session.contains(&format!("\"fallback_reason\":\"{reason}\"")),
        "{session}"
    );
    (env, run)
}

#[test]
fn a_provider_error_falls_back_after_the_local_attempts() {
    let error = Reply::Status {
        code: 500,
        headers: vec![],
        body: json!({"error": {"message": "model crashed"}}).to_string(),
    };
    let (_env, _run) = falls_back(vec![error], "", "ask", "provider_error");
    // Two local attempts when configured so.
    let env = Env::new();
    let failing = || Reply::Status {
        code: 503,
        headers: vec![],
        body: "{}".into(),
    };
    let local = LlmServer::start(vec![failing(), failing()]);
    let remote = LlmServer::start(vec![sse(openai::text(&["ok"]))]);
    let cfg = config(
        &env,
        &local,
        &remote,
        "mode = \"hybrid_auto\"\nhybrid_max_local_attempts = 2",
    );
    let run = exec(&env, &cfg, &["--json", "--mode", "ask", "q"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(model_calls(&local), 2);
    assert_eq!(model_calls(&remote), 1);
}

#[test]
fn a_slow_local_request_falls_back_on_timeout() {
    let start = std::time::Instant::now();
    falls_back(
        vec![Reply::Stall { secs: 10 }],
        "hybrid_remote_on_timeout_ms = 300",
        "ask",
        "timeout",
    );
    assert!(start.elapsed().as_secs() < 5, "{:?}", start.elapsed());
}

#[test]
fn probes_of_a_slow_local_server_spend_the_same_timeout() {
    // The local server answers nothing in time: not its model call, and
    // not the probes before it (window discovery, tokenizer counts), each
    // of which would otherwise wait its own 2 s.
    let env = Env::new();
    let stall = || Reply::Stall { secs: 20 };
    let local = LlmServer::start_with_side(vec![stall()], (0..8).map(|_| stall()).collect());
    let remote = LlmServer::start(vec![sse(openai::text(&["Remote answer."]))]);
    let cfg = config(
        &env,
        &local,
        &remote,
        "mode = \"hybrid_auto\"\nhybrid_remote_on_timeout_ms = 1000",
    );
    // No configured window: the job asks the local server for it.
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replacen("context_window = 16384\n", "", 1);
    std::fs::write(&cfg, text).unwrap();
    let start = std::time::Instant::now();
    let run = exec(&env, &cfg, &["--json", "--mode", "ask", "q"]);
    let took = start.elapsed();
    assert_eq!(run.code, 0, "{}\n{}", run.stderr, run.stdout);
    assert!(
        !local.side_requests().is_empty(),
        "the local server was probed"
    );
    let fallback = of_type(&run, "provider.fallback");
    assert_eq!(fallback[0]["data"]["reason"], "timeout");
    assert_eq!(
        of_type(&run, "job.completed")[0]["data"]["answer"],
        "Remote answer."
    );
    assert!(
        took < std::time::Duration::from_millis(3500),
        "fell back after {took:?}, not about 1 s"
    );
}

#[test]
fn repeated_schema_failures_fall_back() {
    let bad = || sse(openai::tool_calls(&[("c1", "no_such_tool", "{}")]));
    falls_back(
        vec![bad(), bad()],
        "hybrid_remote_on_schema_fail = 2",
        "ask",
        "schema_failures",
    );
}

#[test]
fn a_spent_budget_without_edits_falls_back_in_agent_mode() {
    let read = |i: usize| {
        sse(openai::tool_calls(&[(
            &format!("c{i}"),
            "read_file",
            r#"{"file_path": "src/main.rs"}"#,
        )]))
    };
    let env = Env::new();
    let local = LlmServer::start(vec![read(1), read(2)]);
    let remote = LlmServer::start(vec![sse(openai::text(&["Remote answer."]))]);
    let cfg = config(&env, &local, &remote, "mode = \"hybrid_auto\"");
    let run = exec(
        &env,
        &cfg,
        &[
            "--json",
            "--mode",
            "agent",
            "--max-tool-calls",
            "2",
            "fix it",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let fallback = of_type(&run, "provider.fallback");
    assert_eq!(
        fallback[0]["data"]["reason"],
        "budget_exhausted_without_edits"
    );
    // The remote sees the local's tool results and has tools again.
    let sent = &remote.requests()[0];
    assert!(sent.raw_body.contains("greet()"), "{}", sent.raw_body);
    assert!(sent.body["tools"].as_array().is_some_and(|t| !t.is_empty()));
}

#[test]
fn a_context_overflow_after_compaction_falls_back() {
    falls_back(
        (0..6).map(|_| overflow()).collect(),
        "",
        "ask",
        "context_overflow",
    );
}

#[test]
fn a_trigger_switched_off_does_not_fall_back() {
    let env = Env::new();
    let local = LlmServer::start((0..6).map(|_| overflow()).collect());
    let remote = LlmServer::start(vec![sse(openai::text(&["remote"]))]);
    let cfg = config(
        &env,
        &local,
        &remote,
        "mode = \"hybrid_auto\"\nhybrid_remote_on_context_overflow = false",
    );
    let run = exec(&env, &cfg, &["--json", "--mode", "ask", "q"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(of_type(&run, "provider.fallback").is_empty());
    assert_eq!(
        of_type(&run, "job.failed")[0]["data"]["code"],
        "context_overflow"
    );
    assert_eq!(remote.requests().len(), 0);
}

#[test]
fn strict_modes_never_touch_the_other_provider() {
    let env = Env::new();
    let error = || Reply::Status {
        code: 500,
        headers: vec![],
        body: "{}".into(),
    };
    let local = LlmServer::start(vec![error(), error(), error()]);
    let remote = LlmServer::start(vec![sse(openai::text(&["ok"]))]);
    let cfg = config(&env, &local, &remote, "mode = \"local\"");
    let run = exec(&env, &cfg, &["--json", "--mode", "ask", "q"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(of_type(&run, "provider.fallback").is_empty());
    assert_eq!(remote.requests().len(), 0, "local mode reached the remote");
    assert_eq!(model_calls(&local), 3, "the first request and two retries");

    let local = LlmServer::start(vec![]);
    let remote = LlmServer::start(vec![sse(openai::text(&["from remote"]))]);
    let cfg = config(&env, &local, &remote, "mode = \"hybrid_auto\"");
    // --routing overrides the config's mode.
    let run = exec(
        &env,
        &cfg,
        &["--json", "--routing", "remote", "--mode", "ask", "q"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        local.requests().len(),
        0,
        "remote mode reached the local server"
    );
    let done = &of_type(&run, "job.completed")[0]["data"];
    assert_eq!(done["provider"], "remote");
    assert_eq!(done["fallback_reason"], Value::Null);
}

#[test]
fn bad_routing_is_a_usage_error_naming_what_is_missing() {
    let env = Env::new();
    let local = LlmServer::start(vec![]);
    let remote = LlmServer::start(vec![]);
    let cfg = config(&env, &local, &remote, "");
    let run = exec(
        &env,
        &cfg,
        &["--routing", "sometimes", "--mode", "ask", "q"],
    );
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("unknown routing mode \"sometimes\""),
        "{}",
        run.stderr
    );
    // A config whose hybrid mode names no remote provider.
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("remote = \"remote\"\n", "mode = \"hybrid_auto\"\n");
    std::fs::write(&cfg, text).unwrap();
    let run = exec(&env, &cfg, &["--mode", "ask", "q"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("routing.mode = \"hybrid_auto\" needs routing.remote"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_tui_names_the_provider_answering_now_and_shows_the_fallback() {
    use agent_tui::protocol::{Event, EventBody, FallbackReason, Mode};
    use agent_tui::tui::{App, Entry};
    let dir = tempfile::tempdir().unwrap();
    let mut app = App::new(
        "/r".into(),
        support::tui::tree(dir.path()),
        Mode::Ask,
        "local small".into(),
        true,
        12,
    );
    let ev = |body| Event {
        cursor: 1,
        body,
        ts: "2026-01-01T00:00:00.000Z".into(),
        job_id: "j".into(),
    };
    app.on_event(&ev(EventBody::ProviderFallback {
        from: "local".into(),
        to: "remote".into(),
        reason: FallbackReason::Timeout,
        model: "big".into(),
    }));
    assert_eq!(app.provider_label, "remote");
    assert!(
        matches!(app.transcript.last(), Some(Entry::Notice(n)) if n.contains("local gave up (timeout): the job goes on with remote"))
    );
}

#[test]
fn a_script_reading_stdout_gets_only_the_answer_that_completed() {
    // The local stream breaks off mid-answer (every attempt), the remote
    // answers: stdout, read by a script, holds the remote answer alone.
    let env = Env::new();
    let cut = || Reply::SseCut {
        events: openai::text(&["PARTIAL ", "LOCAL ", "TEXT"])
            .into_iter()
            .take(2)
            .collect(),
    };
    let local = LlmServer::start(vec![cut(), cut(), cut()]);
    let remote = LlmServer::start(vec![sse(openai::text(&["Remote ", "answer."]))]);
    let cfg = config(&env, &local, &remote, "mode = \"hybrid_auto\"");
    let run = exec(&env, &cfg, &["--mode", "ask", "where is greet defined?"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "Remote answer.\n", "{:?}", run.stdout);
    assert!(run.stderr.contains("remote"), "{}", run.stderr);
}

/// The fallback a context overflow exists for: a conversation too big for
/// the local model goes to a remote whose window nothing states (not in
/// the config, not said by its server, a model the table does not know).
/// It is sent as it is, not refused for the 8192-token guess.
#[test]
fn an_overflow_goes_to_a_remote_whose_window_is_unknown() {
    let env = Env::new();
    let local = LlmServer::start((0..6).map(|_| overflow()).collect());
    let remote = LlmServer::start(vec![sse(openai::text(&["Remote ", "answer."]))]);
    let cfg = config(&env, &local, &remote, "mode = \"hybrid_auto\"");
    let text = std::fs::read_to_string(&cfg).unwrap().replace(
        "model = \"big\"\ncontext_window = 16384\n",
        "model = \"big\"\n",
    );
    std::fs::write(&cfg, text).unwrap();
    // About 12,000 tokens: more than the default window on its own.
    let long = format!(
        "summarize this: {}",
        "lorem ipsum dolor sit amet ".repeat(1800)
    );
    let run = exec(&env, &cfg, &["--json", "--mode", "ask", &long]);
    assert_eq!(run.code, 0, "{}\n{}", run.stderr, run.stdout);
    assert_eq!(
        of_type(&run, "provider.fallback")[0]["data"]["reason"],
        "context_overflow"
    );
    let done = &of_type(&run, "job.completed")[0]["data"];
    assert_eq!(done["provider"], "remote");
    assert_eq!(done["answer"], "Remote answer.");
    // The remote got the whole conversation, uncompacted.
    let calls: Vec<_> = remote
        .requests()
        .into_iter()
        .filter(|r| r.is_model_call())
        .collect();
    assert_eq!(calls.len(), 1, "no summary request first");
    assert!(calls[0].raw_body.contains(&long), "sent whole");
}

/// A remote whose window is known to be too small is not sent what cannot
/// fit: the job fails before the request, naming the window.
#[test]
fn an_overflow_is_not_sent_to_a_remote_known_too_small() {
    let env = Env::new();
    let local = LlmServer::start((0..6).map(|_| overflow()).collect());
    let remote = LlmServer::start(vec![sse(openai::text(&["never"]))]);
    let cfg = config(&env, &local, &remote, "mode = \"hybrid_auto\"");
    let text = std::fs::read_to_string(&cfg).unwrap().replace(
        "model = \"big\"\ncontext_window = 16384\n",
        "model = \"big\"\ncontext_window = 4096\n",
    );
    std::fs::write(&cfg, text).unwrap();
    let long = format!(
        "summarize this: {}",
        "lorem ipsum dolor sit amet ".repeat(1800)
    );
    let run = exec(&env, &cfg, &["--json", "--mode", "ask", &long]);
    assert_eq!(run.code, 1, "{}\n{}", run.stderr, run.stdout);
    let failed = &of_type(&run, "job.failed")[0]["data"];
    assert_eq!(failed["code"], "context_overflow");
    assert!(
        failed["error"].as_str().unwrap().contains("4096"),
        "{failed}"
    );
    assert_eq!(model_calls(&remote), 0);
}
