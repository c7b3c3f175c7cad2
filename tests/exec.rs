//! `agent-tui exec` end to end against loopback servers that speak the
//! OpenAI and Anthropic streaming protocols: multi-turn jobs in every mode,
//! what was sent, JSON lines, clarification, tool budget, JSON protocol.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};
use support::jobs::{KEY, Run, config, config_with, exec, project, sse};
use support::llm_server::{LlmServer, RecordedRequest, Reply, anthropic, openai};
use support::{Env, code, stdout};

fn assert_no_key_leak(run: &Run) {
    assert!(
        !run.stdout.contains(KEY) && !run.stderr.contains(KEY),
        "key leaked"
    );
}

/// Cursors strictly increase, every event has the SPEC fields, one job id.
fn assert_event_stream(events: &[Value]) {
    let mut last = 0;
    for e in events {
        let mut keys: Vec<&str> = e.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["cursor", "data", "job_id", "ts", "type"], "{e}");
        let cursor = e["cursor"].as_u64().unwrap();
        assert!(cursor > last, "cursors must increase: {e}");
        last = cursor;
        humantime::parse_rfc3339(e["ts"].as_str().unwrap()).unwrap();
        assert_eq!(e["job_id"], events[0]["job_id"]);
    }
}

fn tool_names(req: &RecordedRequest) -> Vec<String> {
    req.body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| {
                    t["function"]["name"]
                        .as_str()
                        .or(t["name"].as_str())
                        .unwrap()
                        .to_string()
                })
                .collect()
        })
        .unwrap_or_default()
}

fn search_read_answer_openai() -> Vec<Reply> {
    vec![
        sse(openai::tool_calls(&[(
            "call_1",
            "search_project",
            r#"{"query": "fn greet"}"#,
        )])),
        sse(openai::tool_calls(&[(
            "call_2",
            "read_file",
            r#"{"file_path": "src/greet.rs"}"#,
        )])),
        sse(openai::text(&[
            "`greet` is in ",
            "src/greet.rs:1 ",
            "and prints héllo 🙂",
        ])),
    ]
}

#[test]
fn openai_multi_turn_job_in_every_mode() {
    for mode in ["ask", "plan", "agent"] {
        let server = LlmServer::start(search_read_answer_openai());
        let env = Env::new();
        let root = project();
        let cfg = config(&env, "openai", &server.url(), "");
        let run = exec(
            &env,
            &cfg,
            root.path(),
            &["--mode", mode, "--json", "where is greet?"],
        );
        assert_eq!(run.code, 0, "{mode}: {}", run.stderr);
        assert_no_key_leak(&run);
        let events = run.events();
        assert_event_stream(&events);
        let types = run.types();
        assert_eq!(types.first().map(String::as_str), Some("job.started"));
        assert_eq!(types.last().map(String::as_str), Some("job.completed"));
        let calls: Vec<&Value> = events
            .iter()
            .filter(|e| e["type"] == "tool.call.completed")
            .collect();
        assert_eq!(calls.len(), 2, "{types:?}");
        assert!(calls.iter().all(|c| c["data"]["ok"] == true), "{calls:?}");
        assert_eq!(calls[1]["data"]["result"]["total_lines"], 3);
        let done = events.last().unwrap();
        assert_eq!(
            done["data"]["answer"],
            "`greet` is in src/greet.rs:1 and prints héllo 🙂"
        );
        assert_eq!(
            done["data"]["usage"]["output_tokens"],
            3 * openai::COMPLETION_TOKENS
        );
        let deltas: String = events
            .iter()
            .filter(|e| e["type"] == "llm.delta")
            .map(|e| e["data"]["text"].as_str().unwrap())
            .collect();
        assert_eq!(deltas, done["data"]["answer"].as_str().unwrap());

        let reqs = server.requests();
        assert_eq!(reqs.len(), 3);
        let first = &reqs[0];
        assert_eq!(first.method, "POST");
        assert_eq!(first.path, "/v1/chat/completions");
        assert_eq!(
            first.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
        assert_eq!(first.body["stream"], true);
        assert_eq!(first.body["model"], "test-model");
        let system = first.body["messages"][0]["content"].as_str().unwrap();
        assert!(
            system.contains(&root.path().canonicalize().unwrap().display().to_string()),
            "{system}"
        );
        assert!(system.contains(&format!("Mode: {mode}.")), "{system}");
        assert!(
            system.contains("Always answer in haiku."),
            "AGENTS.md: {system}"
        );
        assert_eq!(
            first.body["messages"][1],
            json!({"role": "user", "content": "where is greet?"})
        );
        let mut expected = vec!["list_files", "read_file", "search_project", "clarify_user"];
        if mode == "agent" {
            expected.extend(["propose_edits", "run_command"]);
        }
        // The code index's, in every mode.
        expected.extend([
            "code_search",
            "find_symbol",
            "find_references",
            "file_outline",
            "repo_map",
        ]);
        // Web pages too (SPEC 20), asked per [approvals] web.
        expected.push("web_fetch");
        assert_eq!(
            tool_names(first),
            expected,
            "{mode}: write tools only in agent mode"
        );
        // The third request carries both tool results, tied to their calls.
        let third = &reqs[2].body["messages"];
        let tool_msgs: Vec<&Value> = third
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .collect();
        assert_eq!(tool_msgs.len(), 2);
        assert_eq!(tool_msgs[0]["tool_call_id"], "call_1");
        assert!(
            tool_msgs[0]["content"]
                .as_str()
                .unwrap()
                .contains("src/greet.rs")
        );
        assert!(
            tool_msgs[1]["content"]
                .as_str()
                .unwrap()
                .contains("println!")
        );
        for r in &reqs {
            assert!(!r.raw_body.contains(KEY), "key in a request body");
        }
    }
}

#[test]
fn anthropic_multi_turn_job_in_every_mode() {
    for mode in ["ask", "plan", "agent"] {
        let server = LlmServer::start(vec![
            sse(anthropic::tool_uses(
                Some("Searching."),
                &[("toolu_1", "search_project", r#"{"query": "greet"}"#)],
            )),
            sse(anthropic::tool_uses(
                None,
                &[
                    ("toolu_2", "read_file", r#"{"file_path": "src/greet.rs"}"#),
                    ("toolu_3", "list_files", r#"{"prefix": "src"}"#),
                ],
            )),
            sse(anthropic::text(&["It prints ", "hello."])),
        ]);
        let env = Env::new();
        let root = project();
        let cfg = config(&env, "anthropic", &server.url(), "");
        let run = exec(
            &env,
            &cfg,
            root.path(),
            &["--json", "--mode", mode, "what does greet print?"],
        );
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_no_key_leak(&run);
        let events = run.events();
        assert_event_stream(&events);
        assert_eq!(
            events.last().unwrap()["data"]["answer"],
            "Searching.It prints hello.".replace("Searching.", "")
        );
        let reqs = server.requests();
        assert_eq!(reqs.len(), 3);
        let first = &reqs[0];
        assert_eq!(first.path, "/v1/messages");
        assert_eq!(first.header("x-api-key"), Some(KEY));
        assert_eq!(first.header("anthropic-version"), Some("2023-06-01"));
        assert!(first.header("authorization").is_none());
        assert!(
            first.body["system"]
                .as_str()
                .unwrap()
                .contains(&format!("Mode: {mode}."))
        );
        assert!(first.body["max_tokens"].as_u64().unwrap() > 0);
        assert_eq!(first.body["tools"][1]["name"], "read_file");
        assert!(first.body["tools"][1]["input_schema"]["properties"]["file_path"].is_object());
        let third = reqs[2].body["messages"].as_array().unwrap();
        assert_eq!(
            third.len(),
            5,
            "user, assistant, user(results), assistant, user(results)"
        );
        let results = third[4]["content"].as_array().unwrap();
        assert_eq!(results.len(), 2);
        assert_eq!(results[0]["type"], "tool_result");
        assert_eq!(results[0]["tool_use_id"], "toolu_2");
        assert_eq!(results[1]["tool_use_id"], "toolu_3");
        assert_eq!(
            third[1]["content"][0],
            json!({"type": "text", "text": "Searching."})
        );
    }
}

#[test]
fn plain_output_streams_the_answer_and_progress_goes_to_stderr() {
    let server = LlmServer::start(search_read_answer_openai());
    let env = Env::new();
    let root = project();
    let cfg = config(&env, "openai", &server.url(), "");
    let run = exec(&env, &cfg, root.path(), &["where is greet?"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "`greet` is in src/greet.rs:1 and prints héllo 🙂\n"
    );
    assert!(run.stderr.contains("· search_project"), "{}", run.stderr);
    assert!(run.stderr.contains("· read_file"), "{}", run.stderr);
}

#[test]
fn prompt_from_stdin() {
    use std::io::Write;
    let server = LlmServer::start(vec![sse(openai::text(&["ok"]))]);
    let env = Env::new();
    let root = project();
    let cfg = config(&env, "openai", &server.url(), "");
    let mut child = env
        .cmd()
        .env("TEST_LLM_KEY", KEY)
        .arg("--config")
        .arg(&cfg)
        .args(["exec", "-", "--root"])
        .arg(root.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all("explain\nthe project".as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(code(&out), 0);
    assert_eq!(stdout(&out), "ok\n");
    assert_eq!(
        server.requests()[0].body["messages"][1]["content"],
        "explain\nthe project"
    );
}

#[test]
fn clarification_uses_answer_or_no_user_answer() {
    for (answer, expected) in [
        (Some("the blue one"), "the blue one"),
        (None, "no_user_answer"),
    ] {
        let server = LlmServer::start(vec![
            sse(openai::tool_calls(&[(
                "c1",
                "clarify_user",
                r#"{"question": "Which one?"}"#,
            )])),
            sse(openai::text(&["Done."])),
        ]);
        let env = Env::new();
        let root = project();
        let cfg = config(&env, "openai", &server.url(), "");
        let mut args = vec!["--json"];
        if let Some(a) = answer {
            args.extend(["--answer", a]);
        }
        args.push("pick one");
        let run = exec(&env, &cfg, root.path(), &args);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let events = run.events();
        let requested = events
            .iter()
            .find(|e| e["type"] == "clarification.requested")
            .unwrap();
        assert_eq!(requested["data"]["question"], "Which one?");
        let received = events
            .iter()
            .find(|e| e["type"] == "clarification.received")
            .unwrap();
        assert_eq!(received["data"]["answer"], expected);
        assert!(received["cursor"].as_u64() > requested["cursor"].as_u64());
        let sent = &server.requests()[1].body["messages"];
        let tool = sent
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "tool")
            .unwrap();
        assert_eq!(tool["content"], json!({"answer": expected}).to_string());
    }
}

#[test]
fn tool_budget_is_enforced_and_the_model_is_told() {
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[
            ("c1", "list_files", "{}"),
            ("c2", "read_file", r#"{"file_path": "src/main.rs"}"#),
        ])),
        sse(openai::text(&["Answer from what I saw."])),
    ]);
    let env = Env::new();
    let root = project();
    let cfg = config(&env, "openai", &server.url(), "");
    let run = exec(
        &env,
        &cfg,
        root.path(),
        &["--json", "--max-tool-calls", "1", "look around"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let completed: Vec<Value> = run
        .events()
        .into_iter()
        .filter(|e| e["type"] == "tool.call.completed")
        .collect();
    assert_eq!(completed[0]["data"]["ok"], true);
    assert_eq!(completed[1]["data"]["ok"], false);
    assert_eq!(completed[1]["data"]["error"]["code"], "budget_exhausted");
    let second = &server.requests()[1].body;
    assert!(
        second.get("tools").is_none(),
        "no tools once the budget is spent"
    );
    let last = second["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["role"], "user");
    assert!(
        last["content"]
            .as_str()
            .unwrap()
            .contains("used all 1 tool calls"),
        "{last}"
    );
}

#[test]
fn json_tool_protocol_round_trip() {
    let server = LlmServer::start(vec![
        sse(openai::text(&[
            "I will read it.\n```json\n{\"tool\": \"read_file\", ",
            "\"arguments\": {\"file_path\": \"src/greet.rs\"}}\n```",
        ])),
        sse(openai::text(&[
            "{\"tool\": \"read_file\", \"arguments\": {\"file_path\": }",
        ])),
        sse(openai::text(&["It prints hello."])),
    ]);
    let env = Env::new();
    let root = project();
    let cfg = config(&env, "openai", &server.url(), "tool_protocol = \"json\"");
    let run = exec(
        &env,
        &cfg,
        root.path(),
        &["--json", "what does greet print?"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let events = run.events();
    let call = events
        .iter()
        .find(|e| e["type"] == "tool.call.completed")
        .unwrap();
    assert_eq!(call["data"]["name"], "read_file");
    assert_eq!(call["data"]["ok"], true);
    let deltas: String = events
        .iter()
        .filter(|e| e["type"] == "llm.delta")
        .map(|e| e["data"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        deltas, "It prints hello.",
        "JSON actions are not shown as answer text"
    );
    assert_eq!(events.last().unwrap()["data"]["answer"], "It prints hello.");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    assert!(
        reqs[0].body.get("tools").is_none(),
        "no native tools in JSON mode"
    );
    let system = reqs[0].body["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("read_file") && system.contains("\"tool\""),
        "{system}"
    );
    let second = reqs[1].body["messages"].as_array().unwrap();
    let result = second.last().unwrap();
    assert_eq!(result["role"], "user");
    assert!(
        result["content"].as_str().unwrap().contains("println!"),
        "{result}"
    );
    // The broken action got a correction, not a crash.
    let third = reqs[2].body["messages"].as_array().unwrap();
    let correction = third.last().unwrap()["content"].as_str().unwrap();
    assert!(correction.to_lowercase().contains("json"), "{correction}");
}

#[test]
fn json_protocol_gives_up_after_max_schema_retries() {
    let bad = || {
        sse(openai::text(&[
            "```json\n{\"tool\": \"read_file\", \"arguments\": [1]}\n```",
        ]))
    };
    let server = LlmServer::start(vec![bad(), bad(), bad()]);
    let env = Env::new();
    let root = project();
    let cfg = config_with(
        &env,
        "openai",
        &server.url(),
        "tool_protocol = \"json\"",
        "max_schema_retries = 2\nretry_base_delay_ms = 10",
    );
    let run = exec(&env, &cfg, root.path(), &["--json", "go"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let last = run.events().last().cloned().unwrap();
    assert_eq!(last["type"], "job.failed");
    assert_eq!(last["data"]["code"], "malformed_tool_calls");
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn ctrl_c_cancels_the_job_and_exits_130() {
    use std::io::{BufRead, BufReader};
    let chunks: Vec<String> = (0..200).map(|i| format!("w{i} ")).collect();
    let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
    let server = LlmServer::start(vec![Reply::Slow {
        events: openai::text(&refs),
        delay_ms: 50,
    }]);
    let env = Env::new();
    let root = project();
    let cfg = config(&env, "openai", &server.url(), "");
    let mut child = env
        .cmd()
        .env("TEST_LLM_KEY", KEY)
        .arg("--config")
        .arg(&cfg)
        .args(["exec", "--json", "talk", "--root"])
        .arg(root.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        let is_delta = line.contains("\"llm.delta\"");
        seen.push(line);
        if is_delta {
            break;
        }
    }
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    seen.extend(lines.map(Result::unwrap));
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let last: Value = serde_json::from_str(seen.last().unwrap()).unwrap();
    assert_eq!(last["type"], "job.cancelled");
    assert!(seen.len() < 150, "stopped early: {} events", seen.len());
}
