//! The engine as a front end sees it (ops down, events up): cancellation of a
//! streaming request, of a clarification wait and of a slow tool, each within
//! 200 ms; mode rules for write tools; status changes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use agent_tui::agent::{EngineBuilder, Providers, Recording};
use agent_tui::config::{Config, ProviderConfig, ProviderKind, ToolProtocol};
use agent_tui::llm::build_provider;
use agent_tui::protocol::{Command, Event, EventBody, JobStatus, Mode, SessionRef, Tier};
use agent_tui::tools::{Tool, ToolContext, ToolError, ToolSpec};
use serde_json::{Value, json};
use support::engine::{Driven, next, until};
use support::jobs::{project, sse};
use support::llm_server::{LlmServer, Reply, openai};

const CANCEL_BUDGET: Duration = Duration::from_millis(200);

/// A write-tier tool that records whether it ran, optionally slowly.
struct FakeWrite {
    ran: Arc<AtomicBool>,
    sleep: Duration,
    tier: Tier,
    name: &'static str,
}

impl Tool for FakeWrite {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name,
            description: "test tool",
            schema: json!({"type": "object", "properties": {}, "additionalProperties": false}),
            tier: self.tier,
            modes: match self.tier {
                Tier::Read => Mode::ALL.to_vec(),
                Tier::Write | Tier::Exec => vec![Mode::Agent],
            },
        }
    }

    fn run(&self, _: &ToolContext<'_>, _: Value) -> Result<Value, ToolError> {
        self.ran.store(true, Ordering::SeqCst);
        std::thread::sleep(self.sleep);
        Ok(json!({"done": true}))
    }
}

fn engine(server: &LlmServer, root: &std::path::Path, extra: Option<FakeWrite>) -> Driven {
    let provider = ProviderConfig {
        kind: ProviderKind::Openai,
        base_url: format!("{}/v1", server.url()),
        api_key_env: Some("K".into()),
        model: "m".into(),
        tool_protocol: ToolProtocol::Native,
        context_window: None,
        max_output_tokens: None,
        price_input_per_mtok: None,
        price_output_per_mtok: None,
        vision: agent_tui::config::Vision::Auto,
    };
    let provider = build_provider("test", &provider, Duration::from_secs(5), &|_| {
        Some("key".into())
    })
    .unwrap();
    let mut builder = EngineBuilder::new(root)
        .config(Config::default())
        .providers(Providers::Given(provider, None))
        .recording(Recording::Off);
    if let Some(tool) = extra {
        builder = builder.tool(Box::new(tool));
    }
    Driven::new(builder.build().unwrap())
}

fn start(engine: &Driven, mode: Mode) {
    engine.send(Command::StartJob {
        session: SessionRef::New,
        job_id: "j1".into(),
        prompt: "go".into(),
        mode,
        max_tool_calls: None,
        choice: None,
        images: Vec::new(),
        workspace: None,
    });
}

async fn cancel_and_time(engine: &mut Driven) -> Duration {
    let asked = Instant::now();
    engine.send(Command::Cancel {
        job_id: "j1".into(),
    });
    let rest = until(engine, EventBody::is_terminal).await;
    assert_eq!(rest.last().unwrap().body, EventBody::JobCancelled {});
    asked.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_stops_the_stream_and_closes_the_connection() {
    let chunks: Vec<String> = (0..100).map(|i| format!("word{i} ")).collect();
    let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
    let server = LlmServer::start(vec![Reply::Slow {
        events: openai::text(&refs),
        delay_ms: 100,
    }]);
    let root = project();
    let mut engine = engine(&server, root.path(), None);
    start(&engine, Mode::Ask);
    until(&mut engine, |b| matches!(b, EventBody::LlmDelta { .. })).await;
    let took = cancel_and_time(&mut engine).await;
    assert!(took < CANCEL_BUDGET, "cancel took {took:?}");
    let deadline = Instant::now() + Duration::from_secs(2);
    while server.connections_open() > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        server.connections_open(),
        0,
        "the HTTP stream must be closed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_while_waiting_for_the_user() {
    let server = LlmServer::start(vec![sse(openai::tool_calls(&[(
        "c1",
        "clarify_user",
        r#"{"question": "which?"}"#,
    )]))]);
    let root = project();
    let mut engine = engine(&server, root.path(), None);
    start(&engine, Mode::Agent);
    let seen = until(&mut engine, |b| {
        matches!(b, EventBody::ClarificationRequested { .. })
    })
    .await;
    let statuses: Vec<JobStatus> = seen.iter().filter_map(|e| e.body.status()).collect();
    assert_eq!(statuses, [JobStatus::Running, JobStatus::WaitingForUser]);
    let took = cancel_and_time(&mut engine).await;
    assert!(took < CANCEL_BUDGET, "cancel took {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_during_a_slow_tool() {
    let ran = Arc::new(AtomicBool::new(false));
    let slow = FakeWrite {
        ran: ran.clone(),
        sleep: Duration::from_secs(3),
        tier: Tier::Read,
        name: "slow_read",
    };
    let server = LlmServer::start(vec![sse(openai::tool_calls(&[("c1", "slow_read", "{}")]))]);
    let root = project();
    let mut engine = engine(&server, root.path(), Some(slow));
    start(&engine, Mode::Ask);
    until(&mut engine, |b| {
        matches!(b, EventBody::ToolCallRequested { .. })
    })
    .await;
    while !ran.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let took = cancel_and_time(&mut engine).await;
    assert!(took < CANCEL_BUDGET, "cancel took {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_tools_are_refused_outside_agent_mode() {
    for (mode, allowed) in [(Mode::Ask, false), (Mode::Plan, false), (Mode::Agent, true)] {
        let ran = Arc::new(AtomicBool::new(false));
        let tool = FakeWrite {
            ran: ran.clone(),
            sleep: Duration::ZERO,
            tier: Tier::Write,
            name: "fake_write",
        };
        let server = LlmServer::start(vec![
            sse(openai::tool_calls(&[("c1", "fake_write", "{}")])),
            sse(openai::text(&["done"])),
        ]);
        let root = project();
        let mut engine = engine(&server, root.path(), Some(tool));
        start(&engine, mode);
        let events = until(&mut engine, EventBody::is_terminal).await;
        let completed = events
            .iter()
            .find_map(|e| match &e.body {
                EventBody::ToolCallCompleted { ok, error, .. } => Some((*ok, error.clone())),
                _ => None,
            })
            .unwrap();
        assert_eq!(completed.0, allowed, "{mode:?}");
        assert_eq!(ran.load(Ordering::SeqCst), allowed, "{mode:?}: ran?");
        if !allowed {
            let error = completed.1.unwrap();
            assert_eq!(error["code"], "not_allowed_in_mode");
            assert!(
                error["message"]
                    .as_str()
                    .unwrap()
                    .contains(&format!("{} mode", mode.as_str()))
            );
        }
        let offered: Vec<String> = server.requests()[0].body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            offered.contains(&"fake_write".to_string()),
            allowed,
            "{mode:?}: {offered:?}"
        );
        assert!(matches!(
            events.last().unwrap().body,
            EventBody::JobCompleted { .. }
        ));
    }
}

/// An agent job (j1) that proposed one edit of `src/greet.rs` and ended,
/// its review pending.
async fn greet_proposed() -> (LlmServer, tempfile::TempDir, Driven) {
    let edits = json!({"edits": [{"file_path": "src/greet.rs", "operation": "replace",
        "start_line": 2, "end_line": 2, "new_text": "    println!(\"hi\");\n"}]})
    .to_string();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "propose_edits", &edits)])),
        sse(openai::text(&["ready"])),
    ]);
    let root = project();
    let mut engine = engine(&server, root.path(), None);
    start(&engine, Mode::Agent);
    until(&mut engine, EventBody::is_terminal).await;
    (server, root, engine)
}

/// `EditHunk`: the reviewer's text replaces the hunk (accepted,
/// `origin: "user"`); refused once the file changed on disk; an unknown hunk
/// id is reported as such.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reviewer_edits_a_hunk_and_a_changed_file_refuses_it() {
    let (_server, root, mut engine) = greet_proposed().await;
    let edit = |hunk: &str, text: &str| Command::EditHunk {
        job_id: "j1".into(),
        hunk_id: hunk.into(),
        new_text: text.into(),
    };
    let updated = |e: &Event| match &e.body {
        EventBody::ReviewUpdated {
            bundle,
            unknown,
            error,
        } => Some((bundle.clone(), unknown.clone(), error.clone())),
        _ => None,
    };

    // The file changes under the review: the edit is refused, the hunk kept.
    let greet = root.path().join("src/greet.rs");
    let original = std::fs::read_to_string(&greet).unwrap();
    std::fs::write(&greet, "pub fn greet() {}\n").unwrap();
    engine.send(edit("h_1", "    mine();\n"));
    let (bundle, _, error) = updated(&next(&mut engine).await).unwrap();
    assert!(error.unwrap().contains("changed since"));
    let hunk = &bundle.files[0].hunks[0];
    assert_eq!(hunk.origin, agent_tui::review::HunkOrigin::Agent);
    assert_eq!(hunk.state.accepted(), None);

    engine.send(edit("h_9", "x\n"));
    let (_, unknown, _) = updated(&next(&mut engine).await).unwrap();
    assert_eq!(unknown, vec!["h_9".to_string()]);

    std::fs::write(&greet, &original).unwrap();
    engine.send(edit("h_1", "    mine();\n    also();\n"));
    let (bundle, unknown, error) = updated(&next(&mut engine).await).unwrap();
    assert!(unknown.is_empty() && error.is_none());
    let hunk = &bundle.files[0].hunks[0];
    assert_eq!(hunk.origin, agent_tui::review::HunkOrigin::User);
    assert_eq!(hunk.state.accepted(), Some(true));
    assert_eq!(
        hunk.patch,
        "@@ -1,3 +1,4 @@\n pub fn greet() {\n-    println!(\"hello\");\n+    mine();\n+    also();\n }\n"
    );
    let json = serde_json::to_value(&bundle).unwrap();
    assert_eq!(json["files"][0]["hunks"][0]["origin"], "user");
}

/// The user allows a command once: it runs in the root and the model gets
/// its output. Cancelling while it runs ends it (its whole process group)
/// within the cancel budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowed_command_runs_and_cancel_kills_it() {
    let root = project();
    let pid_file = root.path().join("pid");
    let slow =
        json!({"command": format!("sh -c 'echo $$ > {}; exec sleep 30'", pid_file.display())})
            .to_string();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[(
            "c1",
            "run_command",
            &json!({"command": "echo approved"}).to_string(),
        )])),
        sse(openai::tool_calls(&[("c2", "run_command", &slow)])),
    ]);
    let mut engine = engine(&server, root.path(), None);
    start(&engine, Mode::Agent);
    let approve = |engine: &Driven, id: &str| {
        engine.send(Command::Approve {
            job_id: "j1".into(),
            tool_call_id: id.into(),
            approved: true,
            reason: None,
        });
    };
    let seen = until(&mut engine, |b| {
        matches!(b, EventBody::ApprovalRequested { .. })
    })
    .await;
    let EventBody::ApprovalRequested { arguments, .. } = &seen.last().unwrap().body else {
        unreachable!()
    };
    assert_eq!(arguments["command"], "echo approved");
    approve(&engine, "c1");
    let seen = until(&mut engine, |b| {
        matches!(b, EventBody::ToolCallCompleted { .. })
    })
    .await;
    let EventBody::ToolCallCompleted { result, ok, .. } = &seen.last().unwrap().body else {
        unreachable!()
    };
    assert!(ok);
    assert_eq!(result.as_ref().unwrap()["stdout"], "approved\n");
    assert!(seen.iter().any(|e| e.body
        == EventBody::ApprovalResolved {
            tool_call_id: "c1".into(),
            approved: true,
            by: "user".into(),
            user: None,
        }));

    until(&mut engine, |b| {
        matches!(b, EventBody::ApprovalRequested { .. })
    })
    .await;
    approve(&engine, "c2");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !std::fs::read_to_string(&pid_file).is_ok_and(|p| p.ends_with('\n')) {
        assert!(Instant::now() < deadline, "the command did not start");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let took = cancel_and_time(&mut engine).await;
    assert!(took < CANCEL_BUDGET, "cancel took {took:?}");
    let proc = std::path::Path::new("/proc").join(pid.trim());
    let deadline = Instant::now() + Duration::from_secs(2);
    while proc.exists()
        && !std::fs::read_to_string(proc.join("stat")).is_ok_and(|s| s.contains(") Z "))
    {
        assert!(Instant::now() < deadline, "the command outlived the cancel");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Review ops sent while an apply's file work runs off the engine task
/// wait for it, in order: the reviewer's next decision comes after the
/// apply's outcome, never before it (nor lost under it).
#[tokio::test]
async fn review_ops_wait_for_an_apply_under_way() {
    let (_server, _root, mut engine) = greet_proposed().await;
    let decide = |accept: bool| Command::Decide {
        job_id: "j1".into(),
        accept: if accept {
            vec!["h_1".into()]
        } else {
            Vec::new()
        },
        reject: if accept {
            Vec::new()
        } else {
            vec!["h_1".into()]
        },
        accept_all: false,
    };
    engine.send(decide(true));
    engine.send(Command::Apply {
        job_id: "j1".into(),
    });
    engine.send(decide(false));
    let mut kinds = Vec::new();
    while kinds.len() < 4 {
        let e = next(&mut engine).await;
        kinds.push(match &e.body {
            EventBody::ReviewUpdated { bundle, .. } => {
                format!("review {:?}", bundle.files[0].hunks[0].state.accepted())
            }
            EventBody::ApplyStarted { .. } => "apply started".into(),
            // No store in this engine: the apply ends refused.
            EventBody::ApplyFailed { .. } => "apply ended".into(),
            other => format!("{other:?}"),
        });
    }
    assert_eq!(
        kinds,
        [
            "review Some(true)",
            "apply started",
            "apply ended",
            "review Some(false)"
        ]
    );
}

/// An edited hunk keeps no context line its neighbour shows: two edits of
/// src/greet.rs one unchanged line apart are two hunks without context,
/// and so is the first after the reviewer rewrites it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edited_hunk_keeps_out_of_its_neighbours_context() {
    let edits = json!({"edits": [
        {"file_path": "src/greet.rs", "operation": "replace", "start_line": 1, "end_line": 1,
         "new_text": "pub fn greet_all() {\n"},
        {"file_path": "src/greet.rs", "operation": "replace", "start_line": 3, "end_line": 3,
         "new_text": "} // greet\n"}]})
    .to_string();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "propose_edits", &edits)])),
        sse(openai::text(&["ready"])),
    ]);
    let root = project();
    let mut engine = engine(&server, root.path(), None);
    start(&engine, Mode::Agent);
    until(&mut engine, EventBody::is_terminal).await;
    engine.send(Command::EditHunk {
        job_id: "j1".into(),
        hunk_id: "h_1".into(),
        new_text: "pub fn hello() {\n".into(),
    });
    let bundle = loop {
        if let EventBody::ReviewUpdated { bundle, .. } = next(&mut engine).await.body {
            break bundle;
        }
    };
    let hunks = &bundle.files[0].hunks;
    assert_eq!(hunks.len(), 2, "{bundle:?}");
    assert_eq!(
        hunks[0].patch,
        "@@ -1,1 +1,1 @@\n-pub fn greet() {\n+pub fn hello() {\n"
    );
    assert_eq!(hunks[1].patch, "@@ -3,1 +3,1 @@\n-}\n+} // greet\n");
}
