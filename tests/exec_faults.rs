//! Provider faults end to end: refused connections, timeouts, 429 with
//! Retry-After, 5xx, streams cut mid-way, error events inside the stream,
//! malformed tool arguments and unknown tools. Retryable faults are retried
//! (bounded); the rest fail the job with an actionable message. Nothing panics.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use serde_json::Value;
use support::Env;
use support::jobs::{Run, config, config_with, exec, project, sse};
use support::llm_server::{LlmServer, Reply, anthropic, openai};

fn status(code: u16, headers: &[(&str, &str)], body: &str) -> Reply {
    Reply::Status {
        code,
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        body: body.to_string(),
    }
}

fn run_openai(script: Vec<Reply>, args: &[&str]) -> (Run, LlmServer) {
    let server = LlmServer::start(script);
    let env = Env::new();
    let root = project();
    let cfg = config(&env, "openai", &server.url(), "");
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    all.push("do it");
    let run = exec(&env, &cfg, root.path(), &all);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    (run, server)
}

fn last(run: &Run) -> Value {
    run.events().last().cloned().unwrap()
}

fn assert_completed(run: &Run, answer: &str) {
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let last = last(run);
    assert_eq!(last["type"], "job.completed", "{last}");
    assert_eq!(last["data"]["answer"], answer);
}

fn assert_failed(run: &Run, code: &str, needle: &str) {
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let last = last(run);
    assert_eq!(last["type"], "job.failed", "{last}");
    assert_eq!(last["data"]["code"], code, "{last}");
    let error = last["data"]["error"].as_str().unwrap();
    assert!(error.contains(needle), "{error}");
}

#[test]
fn connection_refused_fails_with_a_hint() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let env = Env::new();
    let root = project();
    let cfg = config(&env, "openai", &format!("http://{closed}"), "");
    let run = exec(&env, &cfg, root.path(), &["--json", "hi"]);
    assert_failed(&run, "connect_failed", "cannot connect");
    let plain = exec(&env, &cfg, root.path(), &["hi"]);
    assert_eq!(plain.code, 1);
    assert!(
        plain.stderr.contains("agent-tui: cannot connect"),
        "{}",
        plain.stderr
    );
    assert!(plain.stdout.is_empty());
}

#[test]
fn a_stalled_stream_times_out() {
    let server = LlmServer::start(vec![Reply::Stall { secs: 30 }, Reply::Stall { secs: 30 }]);
    let env = Env::new();
    let root = project();
    let agent = "retry_base_delay_ms = 10\nmax_retries = 1\nrequest_timeout_secs = 1";
    let cfg = config_with(&env, "openai", &server.url(), "", agent);
    let started = Instant::now();
    let run = exec(&env, &cfg, root.path(), &["--json", "hi"]);
    assert_failed(&run, "timeout", "did not respond within 1 s");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(server.requests().len(), 2, "one retry");
}

#[test]
fn rate_limit_honours_retry_after() {
    let started = Instant::now();
    let (run, server) = run_openai(
        vec![
            status(
                429,
                &[("Retry-After", "1")],
                r#"{"error": {"message": "slow down"}}"#,
            ),
            sse(openai::text(&["fine"])),
        ],
        &[],
    );
    assert_completed(&run, "fine");
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "waited {:?}",
        started.elapsed()
    );
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn server_errors_are_retried_then_succeed() {
    let (run, server) = run_openai(
        vec![
            status(500, &[], "internal"),
            status(503, &[], r#"{"error": {"message": "overloaded"}}"#),
            sse(openai::text(&["recovered"])),
        ],
        &[],
    );
    assert_completed(&run, "recovered");
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn retries_are_bounded() {
    let (run, server) = run_openai(
        vec![
            status(502, &[], "bad gateway"),
            status(502, &[], "bad gateway"),
            status(502, &[], "bad gateway"),
        ],
        &[],
    );
    assert_failed(&run, "http_status", "HTTP 502");
    assert_eq!(server.requests().len(), 3, "max_retries = 2");
}

#[test]
fn auth_errors_fail_at_once_with_a_hint() {
    let (run, server) = run_openai(
        vec![
            status(
                401,
                &[],
                r#"{"error": {"message": "Incorrect API key provided"}}"#,
            ),
            sse(openai::text(&["never"])),
        ],
        &[],
    );
    assert_failed(&run, "http_status", "Incorrect API key provided");
    assert!(
        last(&run)["data"]["error"]
            .as_str()
            .unwrap()
            .contains("API key variable")
    );
    assert_eq!(server.requests().len(), 1, "not retried");
}

#[test]
fn a_key_the_server_quotes_back_is_masked_everywhere() {
    // Some gateways quote the refused key in their error: it must reach
    // neither the events, the store nor the terminal.
    let quoted = || {
        status(
            401,
            &[],
            &format!(
                r#"{{"error": {{"message": "Incorrect API key provided: {}"}}}}"#,
                support::jobs::KEY
            ),
        )
    };
    let server = LlmServer::start(vec![quoted(), quoted()]);
    let env = Env::new();
    let root = project();
    let cfg = config(&env, "openai", &server.url(), "");
    for args in [&["--json", "do it"][..], &["do it"][..]] {
        let run = exec(&env, &cfg, root.path(), args);
        assert_eq!(run.code, 1, "{}", run.stderr);
        let said = format!("{}{}", run.stdout, run.stderr);
        assert!(!said.contains(support::jobs::KEY), "{said}");
        assert!(
            said.contains("Incorrect API key provided: [the API key]"),
            "{said}"
        );
    }
    let stored = std::fs::read(env.state_db()).unwrap();
    let wal = std::fs::read(env.state_db().with_extension("db-wal")).unwrap_or_default();
    for bytes in [stored, wal] {
        assert!(!String::from_utf8_lossy(&bytes).contains(support::jobs::KEY));
    }
}

#[test]
fn a_stream_cut_midway_is_retried_and_marked_as_a_new_attempt() {
    let mut partial = openai::text(&["partial ", "answer ", "that never ends"]);
    partial.truncate(3);
    let (run, server) = run_openai(
        vec![
            Reply::SseCut { events: partial },
            sse(openai::text(&["complete answer"])),
        ],
        &[],
    );
    assert_completed(&run, "complete answer");
    assert_eq!(server.requests().len(), 2);
    let attempts: Vec<(String, u64)> = run
        .events()
        .iter()
        .filter(|e| e["type"] == "llm.delta")
        .map(|e| {
            (
                e["data"]["text"].as_str().unwrap().to_string(),
                e["data"]["attempt"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(attempts.first().unwrap().1, 1);
    assert_eq!(
        attempts.last().unwrap(),
        &("complete answer".to_string(), 2)
    );
}

#[test]
fn a_dropped_connection_is_retried() {
    let (run, _) = run_openai(vec![Reply::Drop, sse(openai::text(&["ok"]))], &[]);
    assert_completed(&run, "ok");
}

#[test]
fn an_error_event_inside_the_stream() {
    let (run, server) = run_openai(
        vec![
            sse(openai::error_event("upstream hiccup")),
            sse(openai::text(&["ok"])),
        ],
        &[],
    );
    assert_completed(&run, "ok");
    assert_eq!(server.requests().len(), 2);

    let env = Env::new();
    let root = project();
    let server = LlmServer::start(vec![
        sse(anthropic::error_event("overloaded_error", "Overloaded")),
        sse(anthropic::text(&["ok"])),
    ]);
    let cfg = config(&env, "anthropic", &server.url(), "");
    let run = exec(&env, &cfg, root.path(), &["--json", "hi"]);
    assert_completed(&run, "ok");

    let server = LlmServer::start(vec![
        sse(anthropic::error_event(
            "invalid_request_error",
            "prompt is too long",
        )),
        sse(anthropic::text(&["never"])),
    ]);
    let cfg = config(&env, "anthropic", &server.url(), "");
    let run = exec(&env, &cfg, root.path(), &["--json", "hi"]);
    // An overflow inside the stream: nothing older to compact, so the job
    // fails at once, naming the setting to change.
    assert_failed(&run, "context_overflow", "context_window");
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn malformed_arguments_and_unknown_tools_go_back_to_the_model() {
    let (run, server) = run_openai(
        vec![
            sse(openai::tool_calls(&[
                ("c1", "read_file", r#"{"file_path": "src/main.rs""#),
                ("c2", "read_files", r#"{"file_path": "src/main.rs"}"#),
                ("c3", "read_file", r#"{"path": "src/main.rs"}"#),
            ])),
            sse(openai::text(&["sorted out"])),
        ],
        &[],
    );
    assert_completed(&run, "sorted out");
    let errors: Vec<Value> = run
        .events()
        .into_iter()
        .filter(|e| e["type"] == "tool.call.completed")
        .map(|e| e["data"]["error"].clone())
        .collect();
    assert_eq!(errors[0]["code"], "invalid_arguments");
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .contains("not valid JSON"),
        "{}",
        errors[0]
    );
    assert_eq!(errors[1]["code"], "unknown_tool");
    assert!(
        errors[1]["message"]
            .as_str()
            .unwrap()
            .contains("`read_file`"),
        "{}",
        errors[1]
    );
    assert_eq!(errors[2]["code"], "invalid_arguments");
    assert!(
        errors[2]["message"].as_str().unwrap().contains("`path`"),
        "{}",
        errors[2]
    );
    let sent = &server.requests()[1].body["messages"];
    let tool_msgs: Vec<&Value> = sent
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    assert_eq!(tool_msgs.len(), 3);
    assert!(
        tool_msgs[1]["content"]
            .as_str()
            .unwrap()
            .contains("unknown_tool")
    );
    // The raw, unparsable arguments are echoed back as they were sent.
    let assistant = sent
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap();
    assert_eq!(
        assistant["tool_calls"][0]["function"]["arguments"],
        r#"{"file_path": "src/main.rs""#
    );
}

#[test]
fn endless_malformed_calls_fail_the_job() {
    let bad = || sse(openai::tool_calls(&[("c", "nope_tool", "{}")]));
    let (run, server) = run_openai(vec![bad(), bad(), bad(), bad(), bad(), bad(), bad()], &[]);
    assert_failed(&run, "malformed_tool_calls", "unusable tool calls");
    assert_eq!(
        server.requests().len(),
        6,
        "max_schema_retries = 5, then give up"
    );
}

#[test]
fn text_from_the_model_never_steers_the_terminal() {
    // A title-setting and screen-clearing sequence in the answer and in a
    // path the model proposed is shown, not sent.
    let evil = "evil\u{1b}]0;PWNED\u{7}\u{1b}[2Jname.txt";
    let edits = serde_json::json!({"edits": [{"file_path": evil, "operation": "create", "new_text": "x\n"}]})
        .to_string();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "propose_edits", &edits)])),
        sse(openai::text(&["done \u{1b}[2J", "here\u{202e}"])),
    ]);
    let env = Env::new();
    let root = project();
    let cfg = config(&env, "openai", &server.url(), "");
    let run = exec(&env, &cfg, root.path(), &["do it"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for said in [&run.stdout, &run.stderr] {
        assert!(
            !said.contains('\u{1b}') && !said.contains('\u{7}'),
            "{said:?}"
        );
    }
    assert!(
        run.stdout.contains("done \\u{1b}[2Jhere\\u{202e}") && !run.stdout.contains('\u{202e}'),
        "{:?}",
        run.stdout
    );
    assert!(
        run.stderr.contains("evil\\u{1b}]0;PWNED"),
        "{:?}",
        run.stderr
    );
}

/// A turn with nothing in it (small models end one at once now and then):
/// the model is asked once to go on; a second empty turn fails the job.
#[test]
fn an_empty_turn_is_asked_to_go_on_once() {
    let (run, server) = run_openai(
        vec![sse(openai::text(&[])), sse(openai::text(&["done"]))],
        &[],
    );
    assert_completed(&run, "done");
    let second = server.requests()[1].body["messages"].to_string();
    assert!(second.contains("Your reply was empty"), "{second}");
    let (run, _server) = run_openai(
        vec![sse(openai::text(&[])), sse(openai::text(&["  "]))],
        &[],
    );
    assert_failed(&run, "empty_answer", "without an answer");
}
