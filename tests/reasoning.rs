//! Thinking and usage as real servers stream them, through `agent-tui
//! exec`: `reasoning_content` (llama.cpp, vLLM), `reasoning` (Ollama), a
//! leading `<think>` block (servers without a reasoning parser) and
//! Anthropic thinking blocks become `llm.reasoning` events, never part of
//! the answer, the plain output or the next request; a server that refuses
//! `stream_options` is asked again without it, and counts are estimated
//! when no usage comes (calibrated by the server's tokenizer where it has one).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;
use support::Env;
use support::jobs::{Run, config, exec, of_type, project, sse};
use support::llm_server::{LlmServer, Reply, anthropic, openai};

const THINKING: &str = "The user wants a greeting; check the file first.";

fn reasoning_text(run: &Run) -> String {
    of_type(&run.events(), "llm.reasoning")
        .iter()
        .map(|e| e["data"]["text"].as_str().unwrap().to_string())
        .collect()
}

fn answer(run: &Run) -> String {
    let events = run.events();
    of_type(&events, "job.completed")[0]["data"]["answer"]
        .as_str()
        .unwrap()
        .to_string()
}

/// `exec --json --mode ask PROMPT` against `server` (`extra`: provider settings).
fn ask(env: &Env, server: &LlmServer, extra: &str, prompt: &str) -> Run {
    let root = project();
    let cfg = config(env, "openai", &server.url(), extra);
    let run = exec(env, &cfg, root.path(), &["--json", "--mode", "ask", prompt]);
    assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
    run
}

fn input_tokens(run: &Run) -> u64 {
    let events = run.events();
    of_type(&events, "job.completed")[0]["data"]["usage"]["input_tokens"]
        .as_u64()
        .unwrap()
}

/// Thinking in `field`, a tool call, then the answer; checks what each
/// front end and the second request saw.
fn thinking_stays_apart(field: &str) {
    let env = Env::new();
    let root = project();
    let server = LlmServer::start(vec![
        sse(openai::reasoning_then_tool_calls(
            THINKING,
            &[("call_1", "read_file", r#"{"file_path": "src/main.rs"}"#)],
        )),
        sse(openai::reasoning_then_text(
            field,
            &["It calls ", "`greet`."],
            &["# Answer\n\n", "`main` calls **greet**."],
        )),
    ]);
    let run = ask(&env, &server, "", "what does main do?");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(reasoning_text(&run), format!("{THINKING}It calls `greet`."));
    assert_eq!(answer(&run), "# Answer\n\n`main` calls **greet**.");
    let deltas: String = of_type(&run.events(), "llm.delta")
        .iter()
        .map(|e| e["data"]["text"].as_str().unwrap().to_string())
        .collect();
    assert!(!deltas.contains("greeting"), "{deltas}");
    // The model is never sent its own thinking back.
    let second = &server.requests()[1];
    assert!(
        !second.body.to_string().contains("check the file first"),
        "{}",
        second.body
    );

    // Plain output: the answer's markdown as written; thinking only noted on stderr.
    let server = LlmServer::start(vec![sse(openai::reasoning_then_text(
        field,
        &["Weigh it."],
        &["# Answer\n\n", "- one\n- **two**\n"],
    ))]);
    let cfg = config(&env, "openai", &server.url(), "");
    let run = exec(&env, &cfg, root.path(), &["--mode", "ask", "list"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "# Answer\n\n- one\n- **two**\n");
    assert!(run.stderr.contains("· thinking…"), "{}", run.stderr);
    assert!(!run.stderr.contains("Weigh it"), "{}", run.stderr);
}

#[test]
fn reasoning_content_of_llama_cpp_and_vllm() {
    thinking_stays_apart("reasoning_content");
}

#[test]
fn reasoning_of_ollama() {
    thinking_stays_apart("reasoning");
}

#[test]
fn a_leading_think_block_in_the_content_is_thinking() {
    let env = Env::new();
    let server = LlmServer::start(vec![sse(openai::text(&[
        "<thi",
        "nk>\nweighing ",
        "options</th",
        "ink>\n\n",
        "The answer.",
    ]))]);
    let run = ask(&env, &server, "", "q");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(reasoning_text(&run).trim(), "weighing options");
    assert_eq!(answer(&run), "The answer.");
}

#[test]
fn anthropic_thinking_blocks() {
    let env = Env::new();
    let root = project();
    let server = LlmServer::start(vec![sse(anthropic::thinking_then_text(
        &["Consider ", "the file."],
        &["Done: ", "**yes**."],
    ))]);
    let cfg = config(&env, "anthropic", &server.url(), "");
    let run = exec(&env, &cfg, root.path(), &["--json", "--mode", "ask", "q"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(reasoning_text(&run), "Consider the file.");
    assert_eq!(answer(&run), "Done: **yes**.");
}

#[test]
fn a_server_refusing_stream_options_is_asked_without_it_and_usage_is_estimated() {
    let env = Env::new();
    let refusal = json!({"error": {
        "message": "Unrecognized request argument supplied: stream_options",
        "type": "invalid_request_error", "param": null, "code": null}});
    let server = LlmServer::start(vec![
        Reply::Status {
            code: 400,
            headers: vec![],
            body: refusal.to_string(),
        },
        sse(openai::tool_calls(&[("call_1", "list_files", r#"{}"#)])),
        sse(openai::text_without_usage(&["All ", "listed."])),
    ]);
    let run = ask(&env, &server, "", "list the files");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(answer(&run), "All listed.");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].body["stream_options"]["include_usage"], true);
    // Once refused, never sent again in this run.
    assert!(requests[1].body.get("stream_options").is_none());
    assert!(requests[2].body.get("stream_options").is_none());
    let events = run.events();
    let usage = &of_type(&events, "job.completed")[0]["data"]["usage"];
    assert!(usage["input_tokens"].as_u64().unwrap() > 100, "{usage}");
    assert!(usage["output_tokens"].as_u64().unwrap() > 0, "{usage}");
    let updated = of_type(&events, "usage.updated");
    assert_eq!(updated.last().unwrap()["data"]["estimated"], true);
}

#[test]
fn other_bad_requests_are_not_retried_without_stream_options() {
    let env = Env::new();
    let server = LlmServer::start(vec![Reply::Status {
        code: 400,
        headers: vec![],
        body: json!({"error": {"message": "model not found"}}).to_string(),
    }]);
    let run = ask(&env, &server, "", "q");
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(server.requests().len(), 1);
}

/// A server whose streams carry no usage (llama-cpp-python) is asked once
/// per job to count the request with its own tokenizer, and the job's
/// counts are calibrated by the answer.
#[test]
fn without_usage_the_servers_tokenizer_calibrates_the_counts() {
    let env = Env::new();
    let side = vec![Reply::Status {
        code: 200,
        headers: vec![],
        body: json!({"count": 4321}).to_string(),
    }];
    let server = LlmServer::start_with_side(
        vec![
            sse(openai::text_without_usage(&["All ", "listed."])),
            sse(openai::text_without_usage(&["Again."])),
        ],
        side,
    );
    // (`native`: `auto` would ask the tokenizer again for its own check.)
    let native = "context_window = 32768\ntool_protocol = \"native\"";
    let run = ask(&env, &server, native, "list the files");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let side = server.side_requests();
    assert_eq!(side.len(), 1, "{side:?}");
    assert_eq!(side[0].path, "/extras/tokenize/count");
    let counted = side[0].body["input"].as_str().unwrap();
    assert!(
        counted.contains("list the files") && counted.contains("read_file"),
        "{counted}"
    );
    let input = input_tokens(&run);
    assert!((3900..4800).contains(&input), "calibrated count {input}");

    // A server without a tokenizer endpoint: both kinds asked, the plain
    // estimate kept.
    let server = LlmServer::start(vec![sse(openai::text_without_usage(&["Done."]))]);
    let run = ask(&env, &server, native, "q");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let paths: Vec<String> = server
        .side_requests()
        .iter()
        .map(|r| r.path.clone())
        .collect();
    assert_eq!(paths, ["/extras/tokenize/count", "/tokenize"]);
    let input = input_tokens(&run);
    assert!(input > 100, "{input}");
}
