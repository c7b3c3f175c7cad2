//! The engine's one door, driven directly: several subscribers each get
//! every event once; one that falls far behind does not slow the job and
//! catches up from the store; a job's stored events are read from a
//! cursor; commands answer with typed replies and typed errors (the first
//! answer wins); shutdown with a job running leaves it recorded and its
//! session free; two engines never drive one session at once; a session's
//! or a job's id is answered only once the store has it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::time::Duration;

use agent_tui::agent::{Engine, EngineBuilder, Filter, Providers, Recording, Subscription};
use agent_tui::config::{Config, ProviderConfig, ProviderKind, ToolProtocol};
use agent_tui::llm::build_provider;
use agent_tui::protocol::{
    Command, EngineError, Event, EventBody, JobStatus, Mode, Reply, SessionRef,
};
use support::engine::next_of;
use support::jobs::{project, sse};
use support::llm_server::{LlmServer, Reply as Serve, openai};

/// An engine on `root` answering from `server`, recording into `state`.
fn engine(server: &LlmServer, root: &Path, state: &Path) -> Engine {
    EngineBuilder::new(root)
        .config(Config::default())
        .providers(Providers::Given(provider(server), None))
        .recording(Recording::Sqlite(state.join("state.db")))
        .build()
        .unwrap()
}

/// The provider of `server` (one model, a large window).
fn provider(server: &LlmServer) -> Box<dyn agent_tui::llm::Provider> {
    let provider = ProviderConfig {
        kind: ProviderKind::Openai,
        base_url: format!("{}/v1", server.url()),
        api_key_env: None,
        model: "m".into(),
        tool_protocol: ToolProtocol::Native,
        context_window: Some(400_000),
        max_output_tokens: None,
        price_input_per_mtok: None,
        price_output_per_mtok: None,
        vision: agent_tui::config::Vision::Auto,
    };
    build_provider("test", &provider, Duration::from_secs(5), &|_| None).unwrap()
}

fn start(session: SessionRef, job: &str, prompt: &str) -> Command {
    Command::StartJob {
        session,
        job_id: job.into(),
        prompt: prompt.into(),
        mode: Mode::Agent,
        max_tool_calls: Some(2_000),
        choice: None,
        images: Vec::new(),
        workspace: None,
    }
}

/// Events of `events` until the job's end (its first terminal event).
async fn to_the_end(events: &mut Subscription) -> Vec<Event> {
    let mut seen = Vec::new();
    loop {
        let e = next_of(events).await;
        let end = e.body.is_terminal();
        seen.push(e);
        if end {
            return seen;
        }
    }
}

fn cursors(events: &[Event]) -> Vec<u64> {
    events.iter().map(|e| e.cursor).collect()
}

/// Events a store keeps (everything but streamed text).
fn stored(events: &[Event]) -> Vec<Event> {
    events
        .iter()
        .filter(|e| {
            !matches!(
                e.body,
                EventBody::LlmDelta { .. } | EventBody::LlmReasoning { .. }
            )
        })
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_subscribers_each_get_every_event_once() {
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "list_files", "{}")])),
        sse(openai::text(&["All ", "listed."])),
    ]);
    let (root, state) = (project(), tempfile::tempdir().unwrap());
    let engine = engine(&server, root.path(), state.path());
    let (mut a, mut b) = (engine.subscribe(Filter::All), engine.subscribe(Filter::All));
    let reply = engine
        .command(start(SessionRef::New, "j1", "list"))
        .await
        .unwrap();
    assert!(matches!(reply, Reply::Started { ref job_id, session_id: Some(_) } if job_id == "j1"));
    let (ea, eb) = (to_the_end(&mut a).await, to_the_end(&mut b).await);
    assert_eq!(ea, eb, "both saw the same events");
    let n = ea.len() as u64;
    assert_eq!(
        cursors(&ea),
        (1..=n).collect::<Vec<_>>(),
        "each once, in order"
    );
    assert!(matches!(ea[0].body, EventBody::JobStarted { .. }));
    // A third, from cursor 2 of the job, gets the stored ones after it.
    let mut c = engine.subscribe(Filter::Job {
        job_id: "j1".into(),
        after: 2,
    });
    let ec = to_the_end(&mut c).await;
    let expected: Vec<Event> = stored(&ea).into_iter().filter(|e| e.cursor > 2).collect();
    assert_eq!(ec, expected);
    // And the query gives the same page.
    let page = engine.events("j1", 2).await.unwrap();
    assert_eq!(page.events, expected);
    assert_eq!(page.status, Some(JobStatus::Completed));
    assert_eq!(page.next_cursor, n);
    engine.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_subscriber_does_not_slow_the_job_and_catches_up() {
    // 700 calls in one turn: ~1,400 events, more than a subscriber's window.
    let ids: Vec<String> = (0..700).map(|i| format!("c{i}")).collect();
    let refs: Vec<(&str, &str, &str)> = ids
        .iter()
        .map(|id| (id.as_str(), "list_scopes", "{}"))
        .collect();
    // The whole reply at once (tiny chunks would pace the stream).
    let server = LlmServer::start(vec![
        Serve::Sse {
            events: openai::tool_calls(&refs),
            split: support::llm_server::Split::Whole,
        },
        sse(openai::text(&["Done listing."])),
    ]);
    let (root, state) = (project(), tempfile::tempdir().unwrap());
    let engine = engine(&server, root.path(), state.path());
    let mut fast = engine.subscribe(Filter::All);
    let mut slow = engine.subscribe(Filter::All);
    engine
        .command(start(SessionRef::New, "j1", "list a lot"))
        .await
        .unwrap();
    // The job runs to its end while the slow one reads nothing.
    let seen_fast = to_the_end(&mut fast).await;
    assert!(seen_fast.len() > 1_024, "{} events", seen_fast.len());
    assert!(matches!(
        seen_fast.last().unwrap().body,
        EventBody::JobCompleted { .. }
    ));
    let seen_slow = to_the_end(&mut slow).await;
    assert!(slow.lagged() > 0, "it fell behind");
    // Every stored event once, in order; streamed text may be missed.
    assert_eq!(stored(&seen_slow), stored(&seen_fast));
    let mut last = 0;
    for e in &seen_slow {
        assert!(e.cursor > last, "cursor {} after {last}", e.cursor);
        last = e.cursor;
    }
    engine.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_answer_with_typed_replies_and_errors() {
    let ask = json_args(&[("question", "Which file?")]);
    let edits = serde_json::json!({"edits": [{"file_path": "src/greet.rs", "operation": "replace",
        "start_line": 2, "end_line": 2, "new_text": "    println!(\"hi\");\n"}]})
    .to_string();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("q1", "clarify_user", &ask)])),
        sse(openai::tool_calls(&[("e1", "propose_edits", &edits)])),
        sse(openai::text(&["Proposed."])),
    ]);
    let (root, state) = (project(), tempfile::tempdir().unwrap());
    let engine = engine(&server, root.path(), state.path());
    let mut events = engine.subscribe(Filter::All);
    engine
        .command(start(SessionRef::New, "j1", "change greet"))
        .await
        .unwrap();
    // A job id in use is refused.
    let again = engine.command(start(SessionRef::New, "j1", "x")).await;
    assert!(
        matches!(again, Err(EngineError::Invalid { .. })),
        "{again:?}"
    );
    loop {
        if let EventBody::ClarificationRequested { .. } = next_of(&mut events).await.body {
            break;
        }
    }
    let answer = |text: &str| Command::Answer {
        job_id: "j1".into(),
        text: text.into(),
    };
    assert_eq!(engine.command(answer("greet.rs")).await, Ok(Reply::Done));
    // The second answer loses: the first one won.
    let second = engine.command(answer("main.rs")).await;
    assert_eq!(second.as_ref().map_err(EngineError::code), Err("conflict"));
    let all = to_the_end(&mut events).await;
    let received: Vec<&str> = all
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ClarificationReceived { answer, .. } => Some(answer.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(received, ["greet.rs"]);
    // It has ended: cancelling is refused as too late (the state moved
    // on), a job never seen is not found.
    let cancel = engine
        .command(Command::Cancel {
            job_id: "j1".into(),
        })
        .await;
    assert_eq!(cancel.map_err(|e| e.code()), Err("conflict"));
    let cancel = engine
        .command(Command::Cancel {
            job_id: "j_never".into(),
        })
        .await;
    assert_eq!(cancel.map_err(|e| e.code()), Err("not_found"));
    // Unknown hunks are named.
    let decide = engine
        .command(Command::Decide {
            job_id: "j1".into(),
            accept: vec!["h_99".into()],
            reject: vec![],
            accept_all: false,
        })
        .await;
    match decide {
        Err(EngineError::Invalid { unknown, .. }) => assert_eq!(unknown, ["h_99"]),
        other => panic!("{other:?}"),
    }
    let accept_all = Command::Decide {
        job_id: "j1".into(),
        accept: vec![],
        reject: vec![],
        accept_all: true,
    };
    assert!(matches!(
        engine.command(accept_all).await,
        Ok(Reply::Review { .. })
    ));
    // The file changed underneath: a conflict, and nothing is written.
    std::fs::write(root.path().join("src/greet.rs"), "pub fn greet() {}\n").unwrap();
    let apply = engine
        .command(Command::Apply {
            job_id: "j1".into(),
        })
        .await;
    assert!(
        matches!(apply, Err(EngineError::Conflict { .. })),
        "{apply:?}"
    );
    assert_eq!(
        std::fs::read_to_string(root.path().join("src/greet.rs")).unwrap(),
        "pub fn greet() {}\n"
    );
    // A review of a job nobody had: not found.
    let none = engine
        .command(Command::Apply {
            job_id: "nope".into(),
        })
        .await;
    assert_eq!(none.map_err(|e| e.code()), Err("not_found"));
    engine.shutdown().await.unwrap();
}

fn json_args(pairs: &[(&str, &str)]) -> String {
    let map: serde_json::Map<String, serde_json::Value> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), serde_json::Value::String(v.to_string())))
        .collect();
    serde_json::Value::Object(map).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_with_a_job_running_records_it_and_frees_its_session() {
    let words: Vec<String> = (0..200).map(|i| format!("word{i} ")).collect();
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    let server = LlmServer::start(vec![
        Serve::Slow {
            events: openai::text(&refs),
            delay_ms: 50,
        },
        sse(openai::text(&["Going on."])),
    ]);
    let (root, state) = (project(), tempfile::tempdir().unwrap());
    let first = engine(&server, root.path(), state.path());
    let mut events = first.subscribe(Filter::All);
    let session = match first
        .command(start(SessionRef::New, "j1", "talk slowly"))
        .await
        .unwrap()
    {
        Reply::Started {
            session_id: Some(id),
            ..
        } => id,
        other => panic!("{other:?}"),
    };
    loop {
        if let EventBody::LlmDelta { .. } = next_of(&mut events).await.body {
            break;
        }
    }
    first.shutdown().await.unwrap();
    let rest = to_the_end(&mut events).await;
    assert_eq!(rest.last().unwrap().body, EventBody::JobCancelled {});
    // Commands after shutdown are refused, plainly.
    let late = first.command(start(SessionRef::New, "j9", "x")).await;
    assert_eq!(late.map_err(|e| e.code()), Err("unavailable"));
    drop(first);

    // Another engine finds it recorded, and may go on with the session.
    let second = engine(&server, root.path(), state.path());
    let transcript = second.transcript(&session).await.unwrap();
    assert_eq!(transcript.jobs.len(), 1);
    assert_eq!(transcript.jobs[0].status, Some(JobStatus::Cancelled));
    let page = second.events("j1", 0).await.unwrap();
    assert!(matches!(page.events[0].body, EventBody::JobStarted { .. }));
    assert_eq!(page.events.last().unwrap().body, EventBody::JobCancelled {});
    let mut events = second.subscribe(Filter::All);
    second
        .command(start(SessionRef::Id(session.clone()), "j2", "go on"))
        .await
        .unwrap();
    let done = to_the_end(&mut events).await;
    assert!(matches!(
        done.last().unwrap().body,
        EventBody::JobCompleted { .. }
    ));
    second.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_engines_never_drive_one_session_at_once() {
    let words: Vec<String> = (0..40).map(|i| format!("w{i} ")).collect();
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    let server = LlmServer::start(vec![
        Serve::Slow {
            events: openai::text(&refs),
            delay_ms: 50,
        },
        sse(openai::text(&["Second."])),
    ]);
    let (root, state) = (project(), tempfile::tempdir().unwrap());
    let a = engine(&server, root.path(), state.path());
    let b = engine(&server, root.path(), state.path());
    let mut a_events = a.subscribe(Filter::All);
    let session = match a
        .command(start(SessionRef::New, "ja", "slow"))
        .await
        .unwrap()
    {
        Reply::Started {
            session_id: Some(id),
            ..
        } => id,
        other => panic!("{other:?}"),
    };
    // `a` drives it while its job runs: `b` hears who does.
    next_of(&mut a_events).await;
    let refused = b
        .command(start(SessionRef::Id(session.clone()), "jb", "me too"))
        .await;
    match refused {
        Err(EngineError::Busy { message }) => {
            assert!(message.contains(&session), "{message}");
            assert!(
                message.contains(&format!("pid {}", std::process::id())),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
    // Once `a` is idle (its lease let go), `b` goes on with the session.
    to_the_end(&mut a_events).await;
    let mut b_events = b.subscribe(Filter::All);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        match b
            .command(start(SessionRef::Id(session.clone()), "jb", "me now"))
            .await
        {
            Ok(_) => break,
            Err(EngineError::Busy { .. }) if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => panic!("{e}"),
        }
    }
    let done = to_the_end(&mut b_events).await;
    assert!(matches!(
        done.last().unwrap().body,
        EventBody::JobCompleted { .. }
    ));
    // `b` saw what `a` did: the conversation carries the first job.
    let second = &server.requests()[1].body["messages"];
    assert!(second.to_string().contains("slow"), "{second}");
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}

/// A session's id is never answered before the store has the session:
/// another engine on the same store (another process, another host) finds
/// every session the moment its id is known.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_sessions_id_is_answered_only_once_it_is_stored() {
    let server = LlmServer::start(vec![]);
    let (root, state) = (project(), tempfile::tempdir().unwrap());
    let a = engine(&server, root.path(), state.path());
    let b = engine(&server, root.path(), state.path());
    for _ in 0..40 {
        let id = match a.command(Command::CreateSession).await.unwrap() {
            Reply::SessionCreated { session_id } => session_id,
            other => panic!("{other:?}"),
        };
        let seen = b.transcript(&id).await;
        assert!(seen.is_ok(), "{id}: {seen:?}");
    }
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}

/// The same for a job: once `Started` names it, another engine on the store
/// finds it, its first event stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_started_jobs_id_is_answered_only_once_it_is_stored() {
    let replies: Vec<Serve> = (0..20).map(|_| sse(openai::text(&["ok"]))).collect();
    let server = LlmServer::start(replies);
    let (root, state) = (project(), tempfile::tempdir().unwrap());
    let a = engine(&server, root.path(), state.path());
    let b = engine(&server, root.path(), state.path());
    let mut events = a.subscribe(Filter::All);
    for i in 0..20 {
        let job = format!("j{i}");
        a.command(start(SessionRef::New, &job, "hi")).await.unwrap();
        let page = b.events(&job, 0).await;
        let first = page
            .as_ref()
            .map(|p| p.events.first().map(|e| e.body.clone()));
        assert!(
            matches!(first, Ok(Some(EventBody::JobStarted { .. }))),
            "{job}: {page:?}"
        );
        to_the_end(&mut events).await;
    }
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}

/// A decision answered on one engine is what another engine on the store
/// reads next (a client may ask another host for the review).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_is_answered_only_once_it_is_stored() {
    let edits = serde_json::json!({"edits": [
        {"file_path": "src/greet.rs", "operation": "replace", "start_line": 2, "end_line": 2,
         "new_text": "    println!(\"hi\");\n"},
        {"file_path": "src/main.rs", "operation": "replace", "start_line": 2, "end_line": 2,
         "new_text": "    greet(); // twice\n"}]})
    .to_string();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("e1", "propose_edits", &edits)])),
        sse(openai::text(&["Proposed."])),
    ]);
    let (root, state) = (project(), tempfile::tempdir().unwrap());
    let a = engine(&server, root.path(), state.path());
    let b = engine(&server, root.path(), state.path());
    let mut events = a.subscribe(Filter::All);
    let session = match a
        .command(start(SessionRef::New, "j1", "change"))
        .await
        .unwrap()
    {
        Reply::Started {
            session_id: Some(s),
            ..
        } => s,
        other => panic!("{other:?}"),
    };
    to_the_end(&mut events).await;
    // h_1 (src/greet.rs) accepted and rejected in turn; src/main.rs's hunk
    // stays undecided, so the review stays pending.
    for i in 0..30 {
        let accept = i % 2 == 0;
        let h1 = vec!["h_1".to_string()];
        let (accept_ids, reject_ids) = if accept { (h1, vec![]) } else { (vec![], h1) };
        a.command(Command::Decide {
            job_id: "j1".into(),
            accept: accept_ids,
            reject: reject_ids,
            accept_all: false,
        })
        .await
        .unwrap();
        let seen = b
            .pending_review(SessionRef::Id(session.clone()))
            .await
            .unwrap();
        let hunk = seen
            .as_ref()
            .and_then(|r| r.bundle.hunks().find(|h| h.hunk_id == "h_1"))
            .unwrap_or_else(|| panic!("round {i}: {seen:?}"));
        assert_eq!(hunk.state.accepted(), Some(accept), "round {i}");
    }
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}

/// An engine opened read-only (a server's `read_only` workspace) offers no
/// command and refuses one the model calls anyway, even where the config
/// would run it unasked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_engine_runs_no_command() {
    let call = json_args(&[("command", "touch made.txt")]);
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "run_command", &call)])),
        sse(openai::text(&["Not run."])),
    ]);
    let (root, state) = (project(), tempfile::tempdir().unwrap());
    let mut config = Config::default();
    config.approvals.exec = agent_tui::config::ApprovalPolicy::Auto;
    let engine = EngineBuilder::new(root.path())
        .config(config)
        .providers(Providers::Given(provider(&server), None))
        .recording(Recording::Sqlite(state.path().join("state.db")))
        .read_only()
        .build()
        .unwrap();
    let mut events = engine.subscribe(Filter::All);
    engine
        .command(start(SessionRef::New, "j1", "make a file"))
        .await
        .unwrap();
    let seen = to_the_end(&mut events).await;
    let refused = seen.iter().any(|e| {
        matches!(&e.body, EventBody::ToolCallCompleted { name, ok: false, .. } if name == "run_command")
    });
    assert!(refused, "{seen:?}");
    assert!(!root.path().join("made.txt").exists(), "the command ran");
    let tools = server.requests()[0].body["tools"].to_string();
    assert!(!tools.contains("run_command"), "{tools}");
    engine.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apply_stops_a_running_verify_of_its_review() {
    // The verify would judge a tree the apply is changing: its "baseline"
    // would hold the hunks. The apply stops it; it says `cancelled`.
    let edits = serde_json::json!({"edits": [{"file_path": "src/greet.rs", "operation": "replace",
        "start_line": 2, "end_line": 2, "new_text": "    println!(\"hi\");\n"}]})
    .to_string();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("e1", "propose_edits", &edits)])),
        sse(openai::text(&["Proposed."])),
    ]);
    let (root, state) = (project(), tempfile::tempdir().unwrap());
    let mut config = Config::default();
    config.verify.command = Some("sleep 20; exit 1".into());
    let engine = EngineBuilder::new(root.path())
        .config(config)
        .providers(Providers::Given(provider(&server), None))
        .recording(Recording::Sqlite(state.path().join("state.db")))
        .build()
        .unwrap();
    let mut events = engine.subscribe(Filter::All);
    engine
        .command(start(SessionRef::New, "j1", "change greet"))
        .await
        .unwrap();
    to_the_end(&mut events).await;
    let accept_all = Command::Decide {
        job_id: "j1".into(),
        accept: vec![],
        reject: vec![],
        accept_all: true,
    };
    engine.command(accept_all).await.unwrap();
    let verifying = {
        let engine = engine.clone();
        tokio::spawn(async move {
            engine
                .command(Command::Verify {
                    job_id: "j1".into(),
                })
                .await
        })
    };
    loop {
        if let EventBody::VerifyStarted { .. } = next_of(&mut events).await.body {
            break;
        }
    }
    let started = std::time::Instant::now();
    let applied = engine
        .command(Command::Apply {
            job_id: "j1".into(),
        })
        .await;
    assert!(matches!(applied, Ok(Reply::Applied { .. })), "{applied:?}");
    let verified = tokio::time::timeout(Duration::from_secs(10), verifying)
        .await
        .expect("the verify stopped")
        .unwrap();
    match verified {
        Ok(Reply::Verified { result }) => {
            assert_eq!(
                result.outcome,
                agent_tui::protocol::VerifyOutcome::Cancelled
            );
            assert!(result.baseline.is_none(), "{result:?}");
        }
        other => panic!("{other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(10));
    // Applied already (by this engine or another process): said so, not
    // "accept hunks first".
    let again = engine
        .command(Command::Apply {
            job_id: "j1".into(),
        })
        .await;
    match again {
        Err(EngineError::Invalid { message, .. }) => {
            assert!(message.contains("1 hunk applied already"), "{message}")
        }
        other => panic!("{other:?}"),
    }
    engine.shutdown().await.unwrap();
}
