//! The engine's conversation across jobs, as the TUI drives it: what the
//! user did with proposed hunks reaches the next request (once), a rollback
//! is told too, `/compact` summarizes on demand, and a session resumed by a
//! new engine (the TUI's `--resume`) sends the whole earlier conversation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use agent_tui::agent::{EngineBuilder, Providers, Recording};
use agent_tui::config::{Config, ProviderConfig, ProviderKind, ToolProtocol};
use agent_tui::llm::build_provider;
use agent_tui::protocol::{Command, CompactReason, Event, EventBody, Mode, Reply, SessionRef};
use serde_json::{Value, json};
use support::engine::{Driven, until};
use support::jobs::{project, sse};
use support::llm_server::{LlmServer, RecordedRequest, openai};

/// An engine as the TUI drives it: its jobs go to one session.
struct Tui {
    d: Driven,
    session: SessionRef,
}

fn start_engine(
    server: &LlmServer,
    root: &std::path::Path,
    state: &std::path::Path,
    session: SessionRef,
) -> Tui {
    start_engine_with(server, root, state, session, Some(32_000))
}

fn start_engine_with(
    server: &LlmServer,
    root: &std::path::Path,
    state: &std::path::Path,
    session: SessionRef,
    context_window: Option<u32>,
) -> Tui {
    let provider = ProviderConfig {
        kind: ProviderKind::Openai,
        base_url: format!("{}/v1", server.url()),
        api_key_env: None,
        model: "m".into(),
        tool_protocol: ToolProtocol::Native,
        context_window,
        max_output_tokens: None,
        price_input_per_mtok: None,
        price_output_per_mtok: None,
        vision: agent_tui::config::Vision::Auto,
    };
    let provider = build_provider("test", &provider, Duration::from_secs(5), &|_| None).unwrap();
    let engine = EngineBuilder::new(root)
        .config(Config::default())
        .providers(Providers::Given(provider, None))
        .recording(Recording::Sqlite(state.join("state.db")))
        .build()
        .unwrap();
    Tui {
        d: Driven::new(engine),
        session,
    }
}

async fn job(engine: &mut Tui, id: &str, prompt: &str) -> Vec<Event> {
    let start = Command::StartJob {
        session: engine.session.clone(),
        job_id: id.into(),
        prompt: prompt.into(),
        mode: Mode::Agent,
        max_tool_calls: None,
        choice: None,
        images: Vec::new(),
        workspace: None,
    };
    if let Reply::Started {
        session_id: Some(s),
        ..
    } = engine.d.engine.command(start).await.unwrap()
    {
        engine.session = SessionRef::Id(s);
    }
    until(&mut engine.d, EventBody::is_terminal).await
}

/// The user messages of a request, in order.
fn user_texts(req: &RecordedRequest) -> Vec<String> {
    req.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_user_did_with_each_hunk_reaches_the_next_request_once() {
    let edits = json!({"edits": [
        {"file_path": "src/greet.rs", "operation": "replace", "start_line": 2, "end_line": 2, "new_text": "    println!(\"hi\");\n"},
        {"file_path": "src/main.rs", "operation": "replace", "start_line": 2, "end_line": 2, "new_text": "    greet(); greet();\n"},
        {"file_path": "AGENTS.md", "operation": "replace", "start_line": 1, "end_line": 1, "new_text": "Answer in prose.\n"},
    ]})
    .to_string();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "propose_edits", &edits)])),
        sse(openai::text(&["three edits proposed"])),
        sse(openai::text(&["noted"])),
        sse(openai::text(&["again"])),
        sse(openai::text(&["after the rollback"])),
    ]);
    let root = project();
    let state = tempfile::tempdir().unwrap();
    let mut engine = start_engine(&server, root.path(), state.path(), SessionRef::New);
    let events = job(&mut engine, "j1", "change things").await;
    let bundle = events
        .iter()
        .rev()
        .find_map(|e| match &e.body {
            EventBody::DiffGenerated { bundle } => Some(bundle.clone()),
            _ => None,
        })
        .unwrap();
    let id_of = |path: &str| {
        bundle
            .files
            .iter()
            .find(|f| f.file_path == path)
            .unwrap()
            .hunks[0]
            .hunk_id
            .clone()
    };
    let (greet, main, agents) = (
        id_of("src/greet.rs"),
        id_of("src/main.rs"),
        id_of("AGENTS.md"),
    );
    engine.d.send(Command::Decide {
        job_id: "j1".into(),
        accept: vec![greet.clone()],
        reject: vec![main.clone()],
        accept_all: false,
    });
    engine.d.send(Command::EditHunk {
        job_id: "j1".into(),
        hunk_id: agents.clone(),
        new_text: "Answer in limericks.\n".into(),
    });
    engine.d.send(Command::Apply {
        job_id: "j1".into(),
    });
    let applied = until(&mut engine.d, |b| {
        matches!(
            b,
            EventBody::ApplyCompleted { .. } | EventBody::ApplyFailed { .. }
        )
    })
    .await;
    let checkpoint = match &applied.last().unwrap().body {
        EventBody::ApplyCompleted { checkpoint_id, .. } => checkpoint_id.clone(),
        other => panic!("{other:?}"),
    };

    job(&mut engine, "j2", "what now?").await;
    let sent = user_texts(&server.requests()[2]);
    let note = sent
        .iter()
        .find(|t| t.contains("what happened to the edits"))
        .expect("a review note");
    assert!(
        note.contains(&format!("{greet} (src/greet.rs): applied")),
        "{note}"
    );
    assert!(
        note.contains(&format!("{main} (src/main.rs): rejected by the user")),
        "{note}"
    );
    assert!(
        note.contains(&format!(
            "{agents} (AGENTS.md): rewritten by the user and applied"
        )),
        "{note}"
    );
    assert!(
        note.contains("+Answer in limericks."),
        "the user's own text: {note}"
    );
    assert_eq!(sent.last().unwrap(), "what now?");

    // Nothing changed since: nothing more is said.
    job(&mut engine, "j3", "and now?").await;
    let sent = user_texts(&server.requests()[3]);
    assert_eq!(
        sent.iter()
            .filter(|t| t.contains("what happened to the edits"))
            .count(),
        1
    );

    // A rollback is told before the next request.
    let tell = match &engine.session {
        SessionRef::Id(id) => Some(id.clone()),
        SessionRef::New | SessionRef::Latest => None,
    };
    engine.d.send(Command::Rollback {
        checkpoint_id: checkpoint.clone(),
        hunks: vec![],
        files: vec![],
        tell,
    });
    until(&mut engine.d, |b| {
        matches!(b, EventBody::RollbackCompleted { .. })
    })
    .await;
    job(&mut engine, "j4", "and after that?").await;
    let sent = user_texts(&server.requests()[4]);
    let note = sent
        .iter()
        .find(|t| t.contains("the user rolled back"))
        .unwrap_or_else(|| panic!("{sent:?}"));
    assert!(
        note.contains(&format!(
            "rolled back every change of checkpoint {checkpoint}"
        )),
        "{note}"
    );
    assert!(note.contains("src/greet.rs"), "{note}");
    // And the hunks' fates say so: applied, then rolled back.
    let fates = &sent[sent.len() - 2];
    assert!(
        fates.contains("h_2 (src/greet.rs): applied, then rolled back by the user"),
        "{fates}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_on_request_and_a_resumed_session_sends_the_summary() {
    let server = LlmServer::start(vec![
        sse(openai::text(&["answer one"])),
        sse(openai::text(&["answer two"])),
        sse(openai::text(&["answer three"])),
        sse(openai::text(&["answer four"])),
        // The summary request of /compact.
        sse(openai::text(&[
            "SUMMARY: the user asked four questions about greet.",
        ])),
        sse(openai::text(&["answer five"])),
        sse(openai::text(&["answer six"])),
    ]);
    let root = project();
    let state = tempfile::tempdir().unwrap();
    let mut engine = start_engine(&server, root.path(), state.path(), SessionRef::New);
    let detail =
        " Some detail that makes the question long enough to be worth summarizing.".repeat(20);
    for (i, q) in ["one", "two", "three", "four"].iter().enumerate() {
        job(
            &mut engine,
            &format!("j{i}"),
            &format!("question {q}.{detail}"),
        )
        .await;
    }
    engine.d.send(Command::Compact {
        session: engine.session.clone(),
        job_id: "c1".into(),
    });
    let events = until(&mut engine.d, EventBody::is_terminal).await;
    let compacted = events
        .iter()
        .find_map(|e| match &e.body {
            EventBody::ContextCompacted {
                reason,
                tokens_before,
                tokens_after,
                messages_summarized,
            } => Some((*reason, *tokens_before, *tokens_after, *messages_summarized)),
            _ => None,
        })
        .expect("context.compacted");
    assert_eq!(compacted.0, CompactReason::Manual);
    assert!(compacted.2 < compacted.1);
    assert_eq!(compacted.3, 4, "the two oldest exchanges");
    let summary_request = &server.requests()[4];
    assert!(
        summary_request.body.get("tools").is_none(),
        "the summary request offers no tools"
    );
    assert!(
        summary_request.body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("working memory")
    );
    match &events.last().unwrap().body {
        EventBody::JobCompleted { answer, .. } => {
            assert!(answer.starts_with("Compacted the conversation"), "{answer}")
        }
        other => panic!("{other:?}"),
    }

    job(&mut engine, "j5", "question five").await;
    let expect = |req: &RecordedRequest, last: &str| {
        let sent = user_texts(req);
        assert!(
            sent[0].contains("SUMMARY: the user asked four questions"),
            "{sent:?}"
        );
        assert_eq!(
            sent[1..],
            [
                format!("question three.{detail}"),
                format!("question four.{detail}"),
                last.into()
            ]
        );
        let answers: Vec<Value> = req.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "assistant")
            .map(|m| m["content"].clone())
            .collect();
        assert_eq!(answers[..2], [json!("answer three"), json!("answer four")]);
    };
    expect(&server.requests()[5], "question five");

    // A new engine resuming the session (the TUI's --resume) continues from
    // the summary, not from the first question.
    let id = engine.d.engine.latest_session().await.unwrap().unwrap();
    engine.d.engine.shutdown().await.unwrap();
    drop(engine);
    let mut engine = start_engine(&server, root.path(), state.path(), SessionRef::Id(id));
    job(&mut engine, "j6", "question six").await;
    let sent = user_texts(&server.requests()[6]);
    assert!(sent[0].contains("SUMMARY"), "{sent:?}");
    assert!(!sent.iter().any(|t| t.starts_with("question one")));
    assert_eq!(sent.last().unwrap(), "question six");
    assert!(sent.contains(&"question five".to_string()));
}

/// A provider with a bug: it panics when asked.
struct Panicking;

impl agent_tui::llm::Provider for Panicking {
    fn name(&self) -> &str {
        "broken"
    }
    fn model(&self) -> &str {
        "m"
    }
    fn supports_native_tools(&self) -> bool {
        true
    }
    fn context_window(&self) -> Option<u32> {
        Some(32_000)
    }
    fn max_output_tokens(&self) -> Option<u32> {
        None
    }
    fn step<'a>(
        &'a self,
        _: agent_tui::llm::Request<'a>,
        _: agent_tui::llm::TextSink<'a>,
    ) -> futures_util::future::BoxFuture<'a, Result<agent_tui::llm::Turn, agent_tui::llm::LlmError>>
    {
        Box::pin(async { panic!("a bug in the provider") })
    }
    fn probe(
        &self,
    ) -> futures_util::future::BoxFuture<'_, Result<String, agent_tui::llm::LlmError>> {
        Box::pin(async { Ok(String::new()) })
    }
    fn discover_window(
        &self,
    ) -> futures_util::future::BoxFuture<'_, Option<agent_tui::llm::ServerWindow>> {
        Box::pin(async { None })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_job_still_ends_with_job_failed() {
    let root = project();
    let built = EngineBuilder::new(root.path())
        .config(Config::default())
        .providers(Providers::Given(Box::new(Panicking), None))
        .recording(Recording::Off)
        .build()
        .unwrap();
    let mut engine = Tui {
        d: Driven::new(built),
        session: SessionRef::New,
    };
    let events = job(&mut engine, "j1", "hello").await;
    match &events.last().unwrap().body {
        EventBody::JobFailed { code, error } => {
            assert_eq!(*code, agent_tui::protocol::JobFailure::InternalError);
            assert!(error.contains("internal error"), "{error}");
        }
        other => panic!("{other:?}"),
    }
    // The engine goes on.
    let events = job(&mut engine, "j2", "again").await;
    assert!(matches!(
        events.last().unwrap().body,
        EventBody::JobFailed { .. }
    ));
}

/// A window the engine found out is taken again by the next session
/// (for ten minutes): llama-cpp-python's answer costs a long prompt's
/// tokenizing, and the TUI and `serve` start many sessions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_discovered_window_is_asked_for_once_per_engine() {
    let models = support::llm_server::Reply::json(
        200,
        json!({"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "me", "permissions": []}]}),
    );
    let refusal = support::llm_server::Reply::json(
        400,
        json!({"error": {"message": "This model's maximum context length is 4096 tokens, however you requested 524289 tokens (524288 in your prompt; 1 for the completion). Please reduce your prompt; or completion length.", "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}),
    );
    let server = LlmServer::start_with_side(
        vec![sse(openai::text(&["one"])), sse(openai::text(&["two"]))],
        vec![models, refusal],
    );
    let (root, state) = (project(), tempfile::tempdir().unwrap());
    let mut engine = start_engine_with(&server, root.path(), state.path(), SessionRef::New, None);
    for id in ["j1", "j2"] {
        engine.session = SessionRef::New;
        let events = job(&mut engine, id, "hello").await;
        let window = events.iter().find_map(|e| match &e.body {
            EventBody::UsageUpdated { context_window, .. } => Some(*context_window),
            _ => None,
        });
        assert_eq!(window, Some(4096), "{id}");
    }
    let probes = server
        .side_requests()
        .iter()
        .filter(|q| q.path.ends_with("/v1/completions"))
        .count();
    assert_eq!(
        probes,
        1,
        "{:?}",
        server
            .side_requests()
            .iter()
            .map(|q| &q.path)
            .collect::<Vec<_>>()
    );
    assert_eq!(server.requests().len(), 2);
}
