//! A small window's job (issue 30), through the binary against a loopback
//! OpenAI-compatible server: the first request carries the project's
//! outline and the files the instruction names already read (within 40 %
//! of the window), and calls that keep coming back with the same result
//! end in an answer instead of spending the budget. Large windows keep
//! the plain request.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};
use support::jobs::{Run, config, exec, of_type, read_then_answer, sse};
use support::llm_server::{LlmServer, Reply, openai};
use support::{Env, write_files};

const SUM_JS: &str =
    "export function sum(values) {\n  return values.reduce((a, b) => a + b, 1);\n}\n";

/// `exec --json` in `root` with a provider window of `window` tokens.
fn run_with(
    server: &LlmServer,
    window: u32,
    protocol: &str,
    root: &std::path::Path,
    prompt: &str,
) -> Run {
    let env = Env::new();
    let extra = format!("context_window = {window}\ntool_protocol = \"{protocol}\"");
    let cfg = config(&env, "openai", &server.url(), &extra);
    exec(&env, &cfg, root, &["--json", prompt])
}

fn project() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    write_files(
        root.path(),
        &[
            ("sum.js", SUM_JS),
            ("README.md", "# demo\n"),
            ("src/util.js", "export const one = 1;\n"),
        ],
    );
    root
}

/// One `exec` in the sample project (with `more` files) at a window of
/// `window` tokens and native tools, the model answering "ok": the run
/// and the first request's body.
fn first_request(window: u32, more: &[(&str, &str)], prompt: &str) -> (Run, Value) {
    let root = project();
    write_files(root.path(), more);
    let server = LlmServer::start(vec![sse(openai::text(&["ok"]))]);
    let r = run_with(&server, window, "native", root.path(), prompt);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let body = server.requests()[0].body.clone();
    (r, body)
}

fn messages(body: &Value) -> &Vec<Value> {
    body["messages"].as_array().unwrap()
}

/// The text a request carries (messages and tools), as a server counts it.
fn request_text(body: &Value) -> String {
    let mut text: Vec<String> = messages(body)
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    text.push(body["tools"].to_string());
    text.join("\n")
}

#[test]
fn a_small_windows_first_request_has_the_outline_and_the_named_file_read() {
    let (r, body) = first_request(2048, &[], "sum() in sum.js starts from 1. Fix it.");
    let body = &body;
    let system = messages(body)[0]["content"].as_str().unwrap();
    // The code index: code_search offered, its lookups named.
    assert!(
        system.contains("- find_symbol, find_references, file_outline, repo_map: "),
        "{system}"
    );
    assert!(body["tools"].to_string().contains("\"code_search\""));
    assert!(
        system.contains("Project files: README.md, src/util.js, sum.js."),
        "{system}"
    );
    // The root by its name only: small models copy an absolute root into
    // their paths, which tools refuse.
    let root = r.events()[0]["data"]["root"].as_str().unwrap().to_string();
    let name = root.rsplit('/').next().unwrap();
    assert!(!system.contains(&root), "{system}");
    assert!(system.contains(&format!("project `{name}`")), "{system}");
    // The instruction, then the file it names as a read_file call and its
    // result, before the model's first word.
    let m = messages(body);
    assert_eq!(m.len(), 4, "{m:?}");
    assert_eq!(m[1]["role"], "user");
    assert_eq!(m[2]["role"], "assistant");
    assert_eq!(m[2]["tool_calls"][0]["function"]["name"], "read_file");
    assert_eq!(
        m[2]["tool_calls"][0]["function"]["arguments"],
        r#"{"file_path":"sum.js"}"#
    );
    // "", not null: llama-cpp-python's server refuses a null content.
    assert_eq!(m[2]["content"], "");
    assert_eq!(m[3]["role"], "tool");
    let read = m[3]["content"].as_str().unwrap();
    assert!(read.contains("a + b, 1"), "{m:?}");
    // No file hash for the model in a small window (the event keeps it).
    assert!(!read.contains("file_hash"), "{read}");
    // Still within 44 % of the window, the reply's reserve aside (40 %
    // before the code index: code_search, and its four lookups named
    // through more_tools, cost ~80 tokens and save whole reads).
    let counter = agent_tui::context::TokenCounter::for_model("gpt-4o");
    let tokens = counter.count(&request_text(body));
    assert!(tokens <= 900, "{tokens} tokens: {}", request_text(body));
    // Shown like a read, marked as agent-tui's own (not the model's call:
    // its budget is whole and eval does not count it).
    let events = r.events();
    let reads = of_type(&events, "tool.call.requested");
    assert_eq!(reads.len(), 1, "{events:?}");
    assert_eq!(reads[0]["data"]["attached"], true);
    assert_eq!(reads[0]["data"]["name"], "read_file");
    let done = events
        .iter()
        .find(|e| e["type"] == "tool.call.completed")
        .unwrap();
    assert!(done["data"]["result"]["file_hash"].is_string(), "{done}");
}

#[test]
fn a_large_window_gets_neither_outline_nor_read() {
    let (_, body) = first_request(131_072, &[], "sum() in sum.js starts from 1. Fix it.");
    let body = &body;
    assert_eq!(messages(body).len(), 2);
    assert!(
        !messages(body)[0]["content"]
            .as_str()
            .unwrap()
            .contains("Project files")
    );
}

/// In a small window the reply's limit goes out as what the request
/// leaves of the window (llama.cpp's server would go on generating past
/// it), at least the reserve, as llama.cpp's own `n_predict` (a server
/// counting the request higher than we do could refuse a `max_tokens`); a
/// large window's server sizes replies itself; a configured
/// `max_output_tokens` is sent as `max_tokens`, as it is.
#[test]
fn a_small_window_limits_the_reply_to_what_the_request_leaves() {
    let (_, body) = first_request(2048, &[], "sum() in sum.js starts from 1. Fix it.");
    let limit = body["n_predict"].as_u64().expect("n_predict sent");
    assert!(body.get("max_tokens").is_none(), "{body}");
    let counter = agent_tui::context::TokenCounter::for_model("gpt-4o");
    let request = u64::from(counter.count(&request_text(&body)));
    assert!((256..=2048).contains(&limit), "{limit}");
    // (The engine's estimate and this count of the wire's text differ a
    // little before any usage has calibrated it.)
    assert!(limit + request <= 2048 + 205, "{limit} + {request}");
    assert!(
        limit + request >= 2048 - 256,
        "{limit} + {request}: the room, not the reserve"
    );
    let (_, body) = first_request(131_072, &[], "sum() in sum.js starts from 1. Fix it.");
    assert!(
        body.get("n_predict").is_none() && body.get("max_tokens").is_none(),
        "{body}"
    );
    let root = project();
    let server = LlmServer::start(vec![sse(openai::text(&["ok"]))]);
    let env = Env::new();
    let extra = "context_window = 2048\ntool_protocol = \"native\"\nmax_output_tokens = 300";
    let cfg = config(&env, "openai", &server.url(), extra);
    let r = exec(&env, &cfg, root.path(), &["--json", "hello"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(server.requests()[0].body["max_tokens"], 300);
    assert!(server.requests()[0].body.get("n_predict").is_none());
}

/// A strict server that refuses llama.cpp's field is asked again without
/// it, and not sent it again in that run.
#[test]
fn a_server_that_refuses_n_predict_is_asked_without_it() {
    let root = project();
    let server = LlmServer::start(vec![
        Reply::json(
            400,
            json!({"error": {"message": "Unrecognized request argument supplied: n_predict",
                "type": "invalid_request_error", "param": null, "code": null}}),
        ),
        sse(openai::tool_calls(&[("c1", "list_files", "{}")])),
        sse(openai::text(&["Three files."])),
    ]);
    let r = run_with(&server, 2048, "native", root.path(), "what is here?");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[0].body["n_predict"].is_u64());
    assert!(requests[1].body.get("n_predict").is_none());
    assert!(requests[2].body.get("n_predict").is_none());
}

#[test]
fn a_named_file_too_big_for_the_window_is_left_to_the_model() {
    let big: String = (0..600)
        .map(|i| format!("line number {i} of the log\n"))
        .collect();
    let prompt = "How many lines of app.log mention disk? See also sum.js.";
    let (_, body) = first_request(2048, &[("app.log", &big)], prompt);
    let m = messages(&body).clone();
    // app.log does not fit; sum.js, named after it, does.
    assert_eq!(m.len(), 4, "{m:?}");
    assert_eq!(
        m[2]["tool_calls"][0]["function"]["arguments"],
        r#"{"file_path":"sum.js"}"#
    );
}

/// The model calls `list_files {}` three times, then answers; the run at
/// `window` tokens (native tools) and the requests it made.
fn three_same_calls(window: u32) -> (Run, Vec<Value>) {
    let root = project();
    let call = |id| sse(openai::tool_calls(&[(id, "list_files", "{}")]));
    let server = LlmServer::start(vec![
        call("c1"),
        call("c2"),
        call("c3"),
        sse(openai::text(&["Three files."])),
    ]);
    let r = run_with(&server, window, "native", root.path(), "what is here?");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let requests: Vec<Value> = server.requests().into_iter().map(|q| q.body).collect();
    assert_eq!(requests.len(), 4);
    (r, requests)
}

/// The job's `job.completed` data.
fn completed(r: &Run) -> Value {
    let events = r.events();
    let done = events
        .iter()
        .find(|e| e["type"] == "job.completed")
        .unwrap();
    done["data"].clone()
}

#[test]
fn a_call_repeated_with_the_same_result_ends_in_an_answer() {
    let (r, requests) = three_same_calls(2048);
    let third = requests[2].to_string();
    assert!(third.contains("with the same arguments before"), "{third}");
    // After the second repeat no tools are offered and the model is told why.
    let last = &requests[3];
    assert!(last["tools"].is_null(), "{last}");
    assert!(last.to_string().contains("No more tools"), "{last}");
    // In agent mode, with how a file can still be changed.
    assert!(
        last.to_string()
            .contains("To change a file, write its path"),
        "{last}"
    );
    let done = completed(&r);
    assert_eq!(done["answer"], "Three files.");
    assert_eq!(done["budget_exhausted"], false);
}

#[test]
fn a_large_window_lets_the_calls_repeat() {
    let (_, requests) = three_same_calls(131_072);
    assert!(!requests[2].to_string().contains("same arguments before"));
    assert!(!requests[3]["tools"].is_null());
}

#[test]
fn with_tools_in_the_text_the_last_lean_reply_is_held_to_an_answer() {
    let root = project();
    let call = r#"{"tool": "list_files", "arguments": {}}"#;
    let server = LlmServer::start(vec![
        sse(openai::text(&[call])),
        sse(openai::text(&[call])),
        sse(openai::text(&[call])),
        sse(openai::text(&[r#"{"answer": "Three files."}"#])),
    ]);
    let r = run_with(&server, 2048, "json", root.path(), "what is here?");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let requests = server.requests();
    let last = &requests[3].body;
    let shapes = &last["response_format"]["schema"]["anyOf"];
    assert_eq!(shapes.as_array().unwrap().len(), 1, "{last}");
    assert!(shapes[0]["properties"]["answer"].is_object(), "{last}");
    assert_eq!(completed(&r)["answer"], "Three files.");
}

/// The model's own read in a small window comes back without the file's
/// hash (no tool takes it back); a large window keeps the result whole.
#[test]
fn a_small_window_reads_without_the_file_hash() {
    for (window, hashed) in [(2048, false), (131_072, true)] {
        let root = project();
        let server = LlmServer::start(read_then_answer("README.md", "A demo."));
        let r = run_with(&server, window, "native", root.path(), "what is this?");
        assert_eq!(r.code, 0, "{}", r.stderr);
        let second = &server.requests()[1].body;
        let read = messages(second)
            .iter()
            .find(|m| m["role"] == "tool")
            .unwrap()["content"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(read.contains("# demo"), "{read}");
        assert_eq!(read.contains("file_hash"), hashed, "{window}: {read}");
    }
}

/// A reply that goes round in a loop, word by word: a line, then the same
/// sentence again and again.
fn looping_words(copies: usize) -> Vec<String> {
    let mut words = vec!["Here it is.\n".to_string()];
    for _ in 0..copies {
        for word in "The sum starts from one, which is the bug in this file. ".split_inclusive(' ')
        {
            words.push(word.to_string());
        }
    }
    words
}

#[test]
fn a_small_windows_reply_that_goes_round_in_a_loop_is_stopped_and_kept_once() {
    const SENTENCE: &str = "The sum starts from one, which is the bug in this file. ";
    let root = project();
    let words = looping_words(40);
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    // 440 chunks 10 ms apart: 4.4 s if read to the end.
    let server = LlmServer::start(vec![Reply::Slow {
        events: openai::text(&refs),
        delay_ms: 10,
    }]);
    let started = std::time::Instant::now();
    let r = run_with(&server, 2048, "native", root.path(), "Why is sum() wrong?");
    let took = started.elapsed();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        took < std::time::Duration::from_secs(3),
        "not stopped: {took:?}"
    );
    let events = r.events();
    let stopped = of_type(&events, "llm.repeat_stopped");
    assert_eq!(stopped.len(), 1, "{}", r.stdout);
    assert_eq!(stopped[0]["data"]["chars"], SENTENCE.len());
    assert!(stopped[0]["data"]["copies"].as_u64().unwrap() >= 3);
    assert_eq!(stopped[0]["data"]["provider"], "test");
    let answer = completed(&r)["answer"].as_str().unwrap().to_string();
    assert_eq!(answer, format!("Here it is.\n{SENTENCE}"));
    // A large window's reply is left alone.
    let words = looping_words(8);
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    let server = LlmServer::start(vec![sse(openai::text(&refs))]);
    let r = run_with(
        &server,
        131_072,
        "native",
        root.path(),
        "Why is sum() wrong?",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(of_type(&r.events(), "llm.repeat_stopped").is_empty());
    assert_eq!(
        completed(&r)["answer"]
            .as_str()
            .unwrap()
            .matches(SENTENCE)
            .count(),
        8
    );
}

const SUM_FIXED: &str =
    "export function sum(values) {\n  return values.reduce((a, b) => a + b, 0);\n}\n";

/// `exec --json` of the sum.js fix in the sample project at `window`
/// tokens, the model answering `replies`: the env (for `review`), the root,
/// the run and the requests' bodies.
fn sum_fix(window: u32, replies: Vec<Reply>) -> (Env, tempfile::TempDir, Run, Vec<Value>) {
    let env = Env::new();
    let root = project();
    let server = LlmServer::start(replies);
    let extra = format!("context_window = {window}\ntool_protocol = \"native\"");
    let cfg = config(&env, "openai", &server.url(), &extra);
    let prompt = "sum() in sum.js starts from 1 instead of 0. Fix it.";
    let r = exec(&env, &cfg, root.path(), &["--json", prompt]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let requests = server.requests().into_iter().map(|q| q.body).collect();
    (env, root, r, requests)
}

/// The hunks' patches of the run's last diff.
fn patches(r: &Run) -> Vec<String> {
    let events = r.events();
    let Some(diff) = of_type(&events, "diff.generated").last().copied().cloned() else {
        return Vec::new();
    };
    diff["data"]["bundle"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["hunks"].as_array().unwrap().clone())
        .map(|h| h["patch"].as_str().unwrap().to_string())
        .collect()
}

/// Small models that cannot fill `propose_edits` write the file out whole
/// in their answer (a path, then a fenced block; or the shape of a read's
/// result): in a small window's agent-mode job that proposed nothing,
/// that becomes a `propose_edits` call like any other, reviewed hunk by
/// hunk (and only the changed lines are a hunk); re-reading the file the
/// job read for the model counts as a repeat at once.
#[test]
fn a_file_written_out_whole_in_a_small_windows_answer_is_proposed_for_review() {
    let written = format!("The start was wrong.\n\nsum.js:\n```js\n{SUM_FIXED}```\n");
    let (env, root, r, _) = sum_fix(2048, vec![sse(openai::text(&[written.as_str()]))]);
    let events = r.events();
    let calls = of_type(&events, "tool.call.requested");
    let proposed: Vec<&&Value> = calls
        .iter()
        .filter(|e| e["data"]["name"] == "propose_edits")
        .collect();
    assert_eq!(proposed.len(), 1, "{events:?}");
    assert_eq!(proposed[0]["data"]["tool_call_id"], "answer_edits");
    assert_eq!(
        patches(&r),
        [
            "@@ -1,3 +1,3 @@\n export function sum(values) {\n-  return values.reduce((a, b) => a + b, 1);\n+  return values.reduce((a, b) => a + b, 0);\n }\n"
        ]
    );
    let done = completed(&r);
    assert_eq!(done["status"], "awaiting_review", "{done}");
    assert_eq!(done["answer"], written.as_str());
    // Nothing was written; the review applies it like any other.
    assert_eq!(
        std::fs::read_to_string(root.path().join("sum.js")).unwrap(),
        SUM_JS
    );
    let out = env
        .cmd()
        .args(["review", "--accept-all", "--apply", "--root"])
        .arg(root.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(root.path().join("sum.js")).unwrap(),
        SUM_FIXED
    );

    // A re-read of the attached file is a repeat at once; the answer in
    // the shape of a read's result is read as the file's new text.
    let object = json!({"file_path": "sum.js", "content": SUM_FIXED}).to_string();
    let (_env, _root, r, requests) = sum_fix(
        2048,
        vec![
            sse(openai::tool_calls(&[(
                "c1",
                "read_file",
                r#"{"file_path":"sum.js"}"#,
            )])),
            sse(openai::text(&[
                "<tool_response>\n",
                object.as_str(),
                "\n</tool_response>",
            ])),
        ],
    );
    assert_eq!(patches(&r).len(), 1, "{}", r.stdout);
    let second = requests[1].to_string();
    assert!(
        second.contains("with the same arguments before"),
        "{second}"
    );

    // A call of a tool the model made up, its arguments a string whose
    // quotes were not escaped (Qwen2.5-Coder-1.5B's `write_file`).
    let args = json!({"file_path": "sum.js", "content": SUM_FIXED}).to_string();
    let made_up = format!("{{\"name\": \"write_file\", \"arguments\": \"{args}\"}}");
    let (_env, _root, r, _) = sum_fix(2048, vec![sse(openai::text(&[made_up.as_str()]))]);
    assert_eq!(patches(&r).len(), 1, "{}", r.stdout);
    assert_eq!(completed(&r)["status"], "awaiting_review");
}

#[test]
fn a_whole_file_in_the_answer_is_no_edit_in_a_large_window_or_when_it_is_a_piece() {
    let written = format!("sum.js:\n```js\n{SUM_FIXED}```\n");
    let (_env, _root, r, _) = sum_fix(131_072, vec![sse(openai::text(&[written.as_str()]))]);
    assert!(patches(&r).is_empty(), "{}", r.stdout);
    assert_eq!(completed(&r)["status"], "completed");
    // A block unlike the file (another file's text under its name).
    let other = "sum.js:\n```\nprint('hello world')\nimport os\nx = 1\n```\n";
    let (_env, root, r, _) = sum_fix(2048, vec![sse(openai::text(&[other]))]);
    assert!(patches(&r).is_empty(), "{}", r.stdout);
    assert_eq!(
        std::fs::read_to_string(root.path().join("sum.js")).unwrap(),
        SUM_JS
    );
}
