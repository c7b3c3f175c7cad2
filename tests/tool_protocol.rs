//! `tool_protocol = "auto"` (issue 30) through the binary against loopback
//! servers with a tokenizer endpoint: before the first request with tools,
//! a one-token probe tells whether the chat template drops them (the
//! server's prompt count far below what was sent with them); one that does
//! gets tools described in the prompt from that first request on, the
//! conversation kept and nothing streamed to be thrown away; one whose
//! template keeps them stays native; `native` and `json` are kept as
//! configured.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};
use support::jobs::{config, doctor, exec, models_list, of_type, read_then_answer, sse};
use support::llm_server::openai::{count, probe};
use support::llm_server::{LlmServer, Reply, openai};
use support::{Env, write_files};

/// A known window: no discovery questions take the side answers.
const WINDOW: &str = "context_window = 32768";

/// A loopback model answering `replies` (and `side`: tokenizer answers),
/// and a config for it with `extra` provider settings.
fn model(
    env: &Env,
    replies: Vec<Reply>,
    side: Vec<Reply>,
    extra: &str,
) -> (LlmServer, std::path::PathBuf) {
    let server = LlmServer::start_with_side(replies, side);
    let cfg = config(env, "openai", &server.url(), extra);
    (server, cfg)
}

/// `exec --json "read notes.txt"` in `root`, which must succeed and say
/// once that the tools moved into the prompt, with `why` in the reason;
/// its events.
fn switched_once(
    env: &Env,
    cfg: &std::path::Path,
    root: &std::path::Path,
    why: &str,
) -> Vec<Value> {
    let run = exec(env, cfg, root, &["--json", "read notes.txt"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let events = run.events();
    let switched = of_type(&events, "provider.tools_in_prompt");
    assert_eq!(switched.len(), 1, "{events:?}");
    let reason = switched[0]["data"]["reason"].as_str().unwrap();
    assert!(reason.contains(why), "{reason}");
    events
}

fn has_native_tools(body: &Value) -> bool {
    body["tools"].as_array().is_some_and(|t| !t.is_empty())
}

fn system_text(body: &Value) -> String {
    body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_template_that_drops_the_tools_switches_them_into_the_prompt() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    write_files(root.path(), &[("notes.txt", "one\n")]);
    // The server counts 11 prompt tokens (the probe's usage) where its
    // tokenizer makes 300 of the request without tools and 900 with them.
    let (server, cfg) = model(
        &env,
        vec![probe(11), sse(openai::text(&["Now I can see them."]))],
        vec![count(300), count(900)],
        WINDOW,
    );
    let events = switched_once(&env, &cfg, root.path(), "11 prompt tokens");
    let done = events.last().unwrap();
    assert_eq!(done["data"]["answer"], "Now I can see them.", "{done}");
    // Nothing was streamed before the switch: one attempt, one answer.
    assert!(
        events
            .iter()
            .filter(|e| e["type"] == "llm.delta")
            .all(|e| e["data"]["attempt"] == 1),
        "{events:?}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    // The probe: native tools, not streamed, one token.
    assert!(has_native_tools(&requests[0].body));
    assert_ne!(requests[0].body["stream"], true);
    assert!(!has_native_tools(&requests[1].body), "the tools moved");
    let system = system_text(&requests[1].body);
    assert!(
        system.contains("# Tools") && system.contains("read_file"),
        "{system}"
    );
    // The same conversation: the instruction is there again.
    assert!(
        requests[1].body["messages"]
            .to_string()
            .contains("read notes.txt")
    );
    // The plain run says so on stderr.
    let (_server, cfg) = model(
        &env,
        vec![probe(11), sse(openai::text(&["seeing"]))],
        vec![count(300), count(900)],
        WINDOW,
    );
    let run = exec(&env, &cfg, root.path(), &["read notes.txt"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), "seeing");
    assert!(
        run.stderr.contains("drops the tools")
            && !run.stderr.contains("failed and is being retried"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_template_that_keeps_the_tools_stays_native() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    // 11 counted where the tokenizer makes 5 without tools and 12 with.
    let (server, cfg) = model(
        &env,
        vec![probe(11), sse(openai::text(&["fine"]))],
        vec![count(5), count(12)],
        WINDOW,
    );
    let run = exec(&env, &cfg, root.path(), &["--json", "hello"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        !run.stdout.contains("provider.tools_in_prompt"),
        "{}",
        run.stdout
    );
    assert_eq!(server.requests().len(), 2, "the probe, then the request");
    assert!(has_native_tools(&server.requests()[1].body));
    let asked: Vec<String> = server
        .side_requests()
        .iter()
        .map(|r| r.path.clone())
        .collect();
    assert_eq!(
        asked,
        ["/extras/tokenize/count", "/extras/tokenize/count"],
        "checked"
    );
    // An explicit `native` is never checked: no tokenizer question.
    let (server, cfg) = model(
        &env,
        vec![sse(openai::text(&["fine"]))],
        vec![count(300), count(900)],
        "context_window = 32768\ntool_protocol = \"native\"",
    );
    let run = exec(&env, &cfg, root.path(), &["--json", "hello"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        server
            .side_requests()
            .iter()
            .all(|r| !r.path.contains("tokenize"))
    );
    assert!(has_native_tools(&server.requests()[0].body));
}

/// The answer text the job streamed.
fn streamed(events: &[Value]) -> String {
    of_type(events, "llm.delta")
        .iter()
        .map(|e| e["data"]["text"].as_str().unwrap_or_default())
        .collect()
}

/// A template that keeps the tools, and a model that writes its call as
/// text all the same (Qwen2.5-Coder's `<tool_call>` form, which
/// llama-cpp-python passes on as content, tags and all or with the tags
/// lost as special tokens): the call is read back and run, nothing of it
/// is streamed as answer text, and what the model imagined after the call
/// is dropped. Prose and a JSON answer naming no offered tool stay
/// answers, streamed whole.
#[test]
fn a_tool_call_written_as_text_is_read_back_as_a_call() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    write_files(root.path(), &[("notes.txt", "the secret word is plum\n")]);
    for call in [
        vec![
            "<tool_call>\n{\"name\": \"read_",
            "file\", \"arguments\": {\"file_path\": \"notes.txt\"}}\n</tool_call>",
        ],
        vec![
            "{\"name\": \"read_file\", \"arguments\": \"{\\\"file_path\\\":\\\"notes.txt\\\"}\"}",
            "\n{\"content\": \"imagined\"}",
        ],
    ] {
        let (server, cfg) = model(
            &env,
            vec![
                probe(11),
                sse(openai::text(&call)),
                sse(openai::text(&["It says plum."])),
            ],
            vec![count(5), count(12)],
            WINDOW,
        );
        let run = exec(
            &env,
            &cfg,
            root.path(),
            &["--json", "what does notes.txt say?"],
        );
        assert_eq!(run.code, 0, "{}", run.stderr);
        let events = run.events();
        let asked = of_type(&events, "tool.call.requested");
        let ran: Vec<&Value> = asked
            .iter()
            .copied()
            .filter(|e| e["data"]["attached"] != true)
            .collect();
        assert_eq!(ran.len(), 1, "{events:?}");
        assert_eq!(ran[0]["data"]["name"], "read_file");
        assert_eq!(
            ran[0]["data"]["arguments"],
            json!({"file_path": "notes.txt"})
        );
        let streamed = streamed(&events);
        assert_eq!(streamed, "It says plum.", "{events:?}");
        assert_eq!(events.last().unwrap()["data"]["answer"], "It says plum.");
        // The next request carries the call natively and its result.
        let next = server.requests()[2].body["messages"].to_string();
        assert!(
            next.contains("tool_calls") && next.contains("plum"),
            "{next}"
        );
        assert!(!next.contains("imagined"), "{next}");
    }
    // A JSON answer that names no offered tool, and prose, stay answers.
    for answer in [
        vec!["{\"name\": \"demo\", ", "\"version\": \"0.2.0\"}"],
        vec!["The ", "word is plum."],
    ] {
        let (_server, cfg) = model(
            &env,
            vec![probe(11), sse(openai::text(&answer))],
            vec![count(5), count(12)],
            WINDOW,
        );
        let run = exec(&env, &cfg, root.path(), &["--json", "what is it?"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let events = run.events();
        let whole = answer.concat();
        let streamed = streamed(&events);
        assert_eq!(streamed, whole);
        assert_eq!(events.last().unwrap()["data"]["answer"], whole.as_str());
        assert!(of_type(&events, "tool.call.requested").is_empty());
    }
}

/// A call written as text that cannot be read (Qwen2.5-Coder left the
/// quotes inside its arguments' text unescaped) is no answer: the model is
/// told what was wrong and calls again; nothing of it is streamed.
#[test]
fn a_tool_call_written_as_text_that_cannot_be_read_is_sent_back() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    write_files(root.path(), &[("notes.txt", "the secret word is plum\n")]);
    let broken = "<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"read_file\", \
                  \"arguments\": \"{\\\"file_path\\\":\\\"notes\".txt\\\"}\"}}\n</tools>";
    let good = "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"file_path\": \"notes.txt\"}}\n</tool_call>";
    let (server, cfg) = model(
        &env,
        vec![
            probe(11),
            sse(openai::text(&[broken])),
            sse(openai::text(&[good])),
            sse(openai::text(&["It says plum."])),
        ],
        vec![count(5), count(12)],
        WINDOW,
    );
    let run = exec(
        &env,
        &cfg,
        root.path(),
        &["--json", "what does notes.txt say?"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let events = run.events();
    let streamed = streamed(&events);
    assert_eq!(streamed, "It says plum.", "{events:?}");
    assert_eq!(events.last().unwrap()["data"]["answer"], "It says plum.");
    let ran = of_type(&events, "tool.call.requested");
    assert_eq!(ran.len(), 1, "{events:?}");
    assert_eq!(
        ran[0]["data"]["arguments"],
        json!({"file_path": "notes.txt"})
    );
    let second = server.requests()[2].body["messages"].to_string();
    assert!(second.contains("could not be read"), "{second}");
}

/// llama.cpp's and vLLM's `POST /tokenize` answer the check too (one body
/// for both: llama.cpp reads `content` and answers `tokens`, vLLM reads
/// `model` and `prompt` and answers `count`); once a server's endpoint is
/// known, later counts go straight to it.
#[test]
fn the_tokenize_endpoints_of_llama_cpp_and_vllm_are_asked() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    write_files(root.path(), &[("notes.txt", "one\n")]);
    let not_found = || Reply::json(404, json!({"detail": "Not Found"}));
    let llama_cpp = |n: usize| Reply::json(200, json!({"tokens": vec![1; n]}));
    let vllm = |n: u64| {
        Reply::json(
            200,
            json!({"count": n, "max_model_len": 32768, "tokens": vec![7; n as usize],
            "token_strs": null}),
        )
    };
    for (name, base, full) in [
        ("llama.cpp", llama_cpp(300), llama_cpp(900)),
        ("vLLM", vllm(300), vllm(900)),
    ] {
        let (server, cfg) = model(
            &env,
            vec![probe(11), sse(openai::text(&["Now I can see them."]))],
            vec![not_found(), base, full],
            WINDOW,
        );
        switched_once(&env, &cfg, root.path(), "about 900 with the tools, 300");
        let side = server.side_requests();
        let paths: Vec<&str> = side.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(
            paths,
            ["/extras/tokenize/count", "/tokenize", "/tokenize"],
            "{name}"
        );
        let body = &side[1].body;
        assert!(body["content"].as_str().unwrap().contains("read notes.txt"));
        assert_eq!(body["prompt"], body["content"], "{name}");
        assert!(body["model"].is_string(), "{name}: {body}");
    }
}

/// A session whose earlier job called a tool natively goes on after the
/// switch: the request carries that call and its result as text.
#[test]
fn the_switch_keeps_the_conversation() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    write_files(root.path(), &[("notes.txt", "the secret word is plum\n")]);
    let (_server, cfg) = model(
        &env,
        read_then_answer("notes.txt", "It says plum."),
        vec![],
        "tool_protocol = \"native\"",
    );
    let run = exec(
        &env,
        &cfg,
        root.path(),
        &["--json", "what does notes.txt say?"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let (server, cfg) = model(
        &env,
        vec![probe(50), sse(openai::text(&["Still plum."]))],
        vec![count(400), count(1200)],
        WINDOW,
    );
    let run = exec(
        &env,
        &cfg,
        root.path(),
        &["--json", "--continue", "and now?"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "the probe, then the request");
    let again = requests[1].body["messages"].to_string();
    for needle in [
        "what does notes.txt say?",
        "the secret word is plum",
        "and now?",
    ] {
        assert!(again.contains(needle), "{needle}: {again}");
    }
    assert!(!has_native_tools(&requests[1].body));
}

/// With tools in the prompt and a small window the reply is held to a
/// call of an offered tool (with its own arguments) or `{"answer": …}`
/// (`response_format`, which llama.cpp turns into a grammar); the answer
/// comes out as plain text; a server that refuses the field is asked
/// again without it, and never again with it.
#[test]
fn a_small_window_constrains_the_json_reply_where_the_server_can() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    let (server, cfg) = model(
        &env,
        vec![sse(openai::text(&[r#"{"answer": "Forty-two."}"#]))],
        vec![],
        "context_window = 2048\ntool_protocol = \"json\"",
    );
    let run = exec(&env, &cfg, root.path(), &["--json", "what is the answer?"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.events().last().unwrap()["data"]["answer"], "Forty-two.");
    let format = &server.requests()[0].body["response_format"];
    assert_eq!(format["type"], "json_object", "{format}");
    let shapes = format["schema"]["anyOf"].to_string();
    assert!(
        shapes.contains("read_file") && shapes.contains("\"answer\""),
        "{shapes}"
    );
    // Refused: the same request again without it.
    let (server, cfg) = model(
        &env,
        vec![
            Reply::json(
                400,
                json!({"error": {"message": "unknown field response_format"}}),
            ),
            sse(openai::text(&["Plain answer."])),
        ],
        vec![],
        "context_window = 2048\ntool_protocol = \"json\"",
    );
    let run = exec(&env, &cfg, root.path(), &["--json", "what is the answer?"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[0].body.get("response_format").is_some());
    assert!(requests[1].body.get("response_format").is_none());
    // A large window is not constrained.
    let (server, cfg) = model(
        &env,
        vec![sse(openai::text(&["ok"]))],
        vec![],
        "context_window = 32768\ntool_protocol = \"json\"",
    );
    let run = exec(&env, &cfg, root.path(), &["--json", "hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(server.requests()[0].body.get("response_format").is_none());
}

/// Ollama's answer to tools for a model whose template has none: HTTP 400
/// on its OpenAI-compatible endpoint, the body as Ollama sends it.
fn ollama_refuses_tools() -> Reply {
    Reply::json(
        400,
        json!({"error": {"message": "registry.ollama.ai/library/smollm2:135m does not support tools",
            "type": "api_error", "param": null, "code": null}}),
    )
}

/// A server that refuses native tools for the model (Ollama, or vLLM
/// without a tool-call parser) and has no tokenizer to probe: under `auto` the same request goes again with the
/// tools in the prompt, said once; under an explicit `native` the job
/// fails saying what to set.
#[test]
fn a_server_that_refuses_tools_gets_them_in_the_prompt() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    write_files(root.path(), &[("notes.txt", "one\n")]);
    let (server, cfg) = model(
        &env,
        vec![ollama_refuses_tools(), sse(openai::text(&["Seen."]))],
        vec![],
        WINDOW,
    );
    let events = switched_once(&env, &cfg, root.path(), "does not support tools");
    assert_eq!(events.last().unwrap()["data"]["answer"], "Seen.");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(has_native_tools(&requests[0].body));
    assert!(!has_native_tools(&requests[1].body));
    assert!(system_text(&requests[1].body).contains("# Tools"));
    // vLLM started without a tool-call parser refuses them too (its body).
    let vllm = Reply::json(
        400,
        json!({"object": "error", "message": "\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set",
            "type": "BadRequestError", "param": null, "code": 400}),
    );
    let (server, cfg) = model(
        &env,
        vec![vllm, sse(openai::text(&["Seen."]))],
        vec![],
        WINDOW,
    );
    let run = exec(&env, &cfg, root.path(), &["read notes.txt"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("enable-auto-tool-choice"),
        "{}",
        run.stderr
    );
    assert!(!has_native_tools(&server.requests()[1].body));
    // llama.cpp's server without Jinja answers HTTP 500 (its body): not
    // retried as a server fault; its tokenizer answers, so the probe is
    // refused first, then the request, which goes again with the tools in
    // the prompt.
    let jinja = || {
        Reply::json(
            500,
            json!({"error": {"code": 500, "message": "tools param requires --jinja flag",
            "type": "server_error"}}),
        )
    };
    let tokens = |n: usize| Reply::json(200, json!({"tokens": vec![1; n]}));
    let not_found = Reply::Status {
        code: 404,
        headers: vec![],
        body: "File Not Found".into(),
    };
    let (server, cfg) = model(
        &env,
        vec![jinja(), jinja(), sse(openai::text(&["Seen."]))],
        vec![not_found, tokens(300), tokens(900)],
        WINDOW,
    );
    let run = exec(&env, &cfg, root.path(), &["read notes.txt"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), "Seen.");
    assert!(run.stderr.contains("requires --jinja"), "{}", run.stderr);
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        3,
        "the probe, the request, the request again"
    );
    assert!(has_native_tools(&requests[1].body));
    assert!(!has_native_tools(&requests[2].body));
    // Explicitly native: one request, not retried, and the error names
    // both ways out.
    let (server, cfg) = model(
        &env,
        vec![jinja()],
        vec![],
        "context_window = 32768\ntool_protocol = \"native\"",
    );
    let run = exec(&env, &cfg, root.path(), &["read notes.txt"]);
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("--jinja for native tools") && run.stderr.contains("tool_protocol"),
        "{}",
        run.stderr
    );
    assert_eq!(server.requests().len(), 1, "not retried");
    // Explicitly native: refused, and the error says what to set.
    let (_server, cfg) = model(
        &env,
        vec![ollama_refuses_tools()],
        vec![],
        "context_window = 32768\ntool_protocol = \"native\"",
    );
    let run = exec(&env, &cfg, root.path(), &["read notes.txt"]);
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("does not support tools")
            && run.stderr.contains("tool_protocol = \"json\""),
        "{}",
        run.stderr
    );
}

/// `doctor` on `auto`: a server that refuses tools for the model is named
/// as such (Ollama), one that counts the same prompt with and without a
/// tool drops them, one that counts more keeps them.
#[test]
fn doctor_tells_refused_dropped_and_kept_tools_apart() {
    let env = Env::new();
    let doctor = |replies: Vec<Reply>| {
        let side = vec![models_list(), models_list(), models_list()];
        let server = LlmServer::start_with_side(replies, side);
        doctor(&env, &config(&env, "openai", &server.url(), WINDOW))
    };
    let text = doctor(vec![ollama_refuses_tools(), ollama_refuses_tools()]);
    assert!(
        text.contains("refuses native tools for this model")
            && text.contains("does not support tools"),
        "{text}"
    );
    let text = doctor(vec![probe(21), probe(21)]);
    assert!(
        text.contains("drops tool definitions (21 prompt tokens with a tool, 21 without)"),
        "{text}"
    );
    let text = doctor(vec![probe(90), probe(21)]);
    assert!(text.contains("keeps them (90 prompt tokens"), "{text}");
}
