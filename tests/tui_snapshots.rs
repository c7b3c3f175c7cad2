//! Snapshots (insta) of every pane and dialog, rendered on a `TestBackend`
//! at two sizes, from states reached by feeding engine events and keys.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use agent_tui::protocol::{DiffBundle, FileDiff, Hunk};
use agent_tui::protocol::{Event, EventBody, JobStatus, Mode, Usage};
use agent_tui::tui::{App, LatestCheckpoint, draw};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

/// The sizes users meet most, large screens, and the smallest we draw.
const SIZES: [(u16, u16); 4] = [(80, 24), (120, 40), (200, 60), (60, 15)];

fn app() -> (tempfile::TempDir, App) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(dir.path().join("Cargo.toml"), "[package]\n").unwrap();
    let tree = support::tui::tree(dir.path());
    (
        dir,
        App::new(
            "/demo".into(),
            tree,
            Mode::Agent,
            "openai gpt-4.1".into(),
            true,
            12,
        ),
    )
}

fn ev(cursor: u64, body: EventBody) -> Event {
    Event {
        cursor,
        body,
        ts: "2026-01-01T00:00:00.000Z".into(),
        job_id: "j".into(),
    }
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn render(app: &App, (w, h): (u16, u16)) -> String {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal.draw(|f| draw(f, app)).unwrap();
    let buffer = terminal.backend().buffer().clone();
    (0..h)
        .map(|y| {
            (0..w)
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn snap(name: &str, app: &App) {
    for size in SIZES {
        let screen = render(app, size);
        borders_apart(&screen, name, size);
        insta::assert_snapshot!(format!("{name}_{}x{}", size.0, size.1), screen);
    }
}

/// No overlay border touches or covers a pane's: corners glued to corners
/// or to side borders (`└└`, `│┘` ...) mean one was drawn over the other.
fn borders_apart(screen: &str, name: &str, (w, h): (u16, u16)) {
    for glued in ["└└", "┘┘", "┌┌", "┐┐", "│┘", "│┐", "└│", "┌│"] {
        if let Some(row) = screen.lines().position(|l| l.contains(glued)) {
            panic!("{name} at {w}x{h}: `{glued}` on row {row}:\n{screen}");
        }
    }
}

fn bundle() -> DiffBundle {
    let hunk = |id: &str, patch: &str| Hunk {
        hunk_id: id.into(),
        patch: patch.into(),
        state: agent_tui::protocol::review::HunkState::Pending,
        edit_ids: vec!["e_1".into()],
        oversized: false,
        origin: agent_tui::protocol::review::HunkOrigin::Agent,
        changes: vec![],
    };
    DiffBundle {
        job_id: "j".into(),
        files: vec![FileDiff {
            file_path: "src/main.rs".into(),
            base_file_hash: Some("sha256:x".into()),
            hunks: vec![hunk(
                "h_1",
                "@@ -1,2 +1,2 @@\n-fn main() {}\n+fn main() {\n+    run();\n }\n",
            )],
        }],
    }
}

fn conversation(app: &mut App) {
    app.transcript
        .push(agent_tui::tui::Entry::User("where is main?".into()));
    app.on_event(&ev(
        1,
        EventBody::JobStarted {
            prompt: "where is main?".into(),
            mode: Mode::Agent,
            root: "/demo".into(),
            provider: "p".into(),
            model: "m".into(),
            images: Vec::new(),
        },
    ));
    app.on_event(&ev(
        2,
        EventBody::ToolCallRequested {
            tool_call_id: "c".into(),
            name: "search_project".into(),
            arguments: json!({"query": "fn main"}),
            attached: false,
        },
    ));
    app.on_event(&ev(
        3,
        EventBody::ToolCallCompleted {
            tool_call_id: "c".into(),
            name: "search_project".into(),
            ok: true,
            result: Some(json!({"results": []})),
            error: None,
            duration_ms: 2,
        },
    ));
    app.on_event(&ev(
        4,
        EventBody::LlmDelta {
            text: "It is in `src/main.rs`:\n```rust\nfn main() {}\n```".into(),
            attempt: 1,
        },
    ));
}

#[test]
fn empty_app() {
    let (_d, app) = app();
    snap("empty", &app);
}

#[test]
fn streaming_conversation() {
    let (_d, mut app) = app();
    conversation(&mut app);
    snap("streaming", &app);
}

#[test]
fn review_view() {
    let (_d, mut app) = app();
    conversation(&mut app);
    app.on_event(&ev(5, EventBody::DiffGenerated { bundle: bundle() }));
    app.on_event(&ev(
        6,
        EventBody::JobCompleted {
            answer: "done".into(),
            usage: Usage {
                input_tokens: 100,
                output_tokens: 20,
                requests: 1,
            },
            status: JobStatus::AwaitingReview,
            budget_exhausted: false,
            provider: String::new(),
            fallback_reason: None,
        },
    ));
    snap("review", &app);
}

#[test]
fn hunk_editor_and_a_refusal_in_the_review() {
    let (_d, mut app) = app();
    app.on_event(&ev(5, EventBody::DiffGenerated { bundle: bundle() }));
    app.on_key(KeyEvent::new(KeyCode::Char('r'), KeyModifiers::CONTROL));
    app.on_key(key(KeyCode::Char('e')));
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::End));
    for c in " // mine".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    snap("hunk_editor", &app);
    app.on_key(key(KeyCode::Esc));
    app.on_event(&ev(
        6,
        EventBody::ApplyFailed {
            error: "conflict: src/main.rs (it changed since the edits were proposed)".into(),
            code: agent_tui::protocol::ApplyFailure::Conflict,
            conflicts: vec![],
        },
    ));
    snap("review_conflict", &app);
}

#[test]
fn approval_dialog() {
    let (_d, mut app) = app();
    conversation(&mut app);
    app.on_event(&ev(
        5,
        EventBody::ApprovalRequested {
            tool_call_id: "c9".into(),
            name: "run_command".into(),
            arguments: json!({"command": "cargo test -p core -- --nocapture"}),
            root: "/home/me/demo".into(),
            cwd: "crates/core".into(),
            sandbox: "Landlock: writes in the root only, no network".into(),
            batch: vec![],
        },
    ));
    snap("approval", &app);
}

#[test]
fn batch_approval_dialog() {
    let (_d, mut app) = app();
    conversation(&mut app);
    app.on_event(&ev(
        5,
        EventBody::ApprovalRequested {
            tool_call_id: "c1".into(),
            name: "git_add".into(),
            arguments: json!({"paths": ["src/main.rs", "README.md"]}),
            root: "/home/me/demo".into(),
            cwd: ".".into(),
            sandbox: String::new(),
            batch: vec![agent_tui::protocol::BatchedCall {
                tool_call_id: "c2".into(),
                name: "git_commit".into(),
                arguments: json!({"message": "Greet in Spanish"}),
            }],
        },
    ));
    snap("approval_batch", &app);
}

#[test]
fn help_overlay() {
    let (_d, mut app) = app();
    app.on_key(key(KeyCode::F(1)));
    snap("help", &app);
    app.on_key(key(KeyCode::PageDown));
    app.on_key(key(KeyCode::PageDown));
    snap("help_scrolled", &app);
}

#[test]
fn clarification_dialog() {
    let (_d, mut app) = app();
    app.on_event(&ev(
        1,
        EventBody::ClarificationRequested {
            tool_call_id: "c".into(),
            question: "Which config file?".into(),
        },
    ));
    app.on_key(key(KeyCode::Char('a')));
    snap("clarify", &app);
}

#[test]
fn rollback_dialogs() {
    let (_d, mut app) = app();
    app.latest_checkpoint = Some(LatestCheckpoint {
        id: "cp_1".into(),
        files: vec!["src/main.rs".into()],
        hunks: vec![
            ("h_1".into(), "src/main.rs".into()),
            ("h_2".into(), "src/main.rs".into()),
        ],
    });
    app.on_key(KeyEvent::new(KeyCode::Char('z'), KeyModifiers::CONTROL));
    snap("rollback", &app);
    app.on_key(key(KeyCode::Char('p')));
    app.on_key(key(KeyCode::Char(' ')));
    snap("rollback_pick", &app);
}

#[test]
fn file_preview() {
    let (_d, mut app) = app();
    app.on_key(key(KeyCode::BackTab));
    app.on_key(key(KeyCode::BackTab));
    app.on_key(key(KeyCode::Enter));
    // The event loop reads the expanded folder off the UI task.
    support::tui::Rig::new(_d.path()).settle(&mut app);
    app.on_key(key(KeyCode::Char('j')));
    app.on_key(key(KeyCode::Enter));
    let Some(agent_tui::tui::Load::Preview { generation, path }) = app.loads.pop() else {
        panic!("a preview is requested")
    };
    app.preview_loaded(
        generation,
        Ok(agent_tui::tui::highlight(&path, "fn main() {}\n", 100)),
    );
    snap("preview", &app);
}

#[test]
fn too_small() {
    let (_d, app) = app();
    insta::assert_snapshot!("too_small_50x10", render(&app, (50, 10)));
}

#[test]
fn checkpoints_view() {
    let (_d, mut app) = app();
    app.on_key(KeyEvent::new(KeyCode::Char('k'), KeyModifiers::CONTROL));
    app.checkpoints_loaded(vec![agent_tui::tui::CheckpointRow {
        id: "cp_1".into(),
        created_at: "2026-01-01T00:00:00.000Z".into(),
        kind: "apply".into(),
        files: vec!["src/main.rs".into()],
    }]);
    snap("checkpoints", &app);
    app.on_key(key(KeyCode::Enter));
    app.loads.clear();
    app.three_way_loaded(
        "cp_1",
        vec![agent_tui::protocol::checkpoint::ThreeWay {
            file_path: "src/main.rs".into(),
            current: Some("fn main() { mine(); }\n".into()),
            unreadable: None,
            base: Some("fn main() {}\n".into()),
            proposed: Some("fn main() { run(); }\n".into()),
            hooks: Vec::new(),
        }],
    );
    snap("three_way", &app);
}

#[test]
fn scopes_in_the_tree_and_the_open_root_dialog() {
    let dir = tempfile::tempdir().unwrap();
    let (proj, docs) = (dir.path().join("proj"), dir.path().join("docs"));
    std::fs::create_dir_all(proj.join("src")).unwrap();
    std::fs::write(proj.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("guide.md"), "# Guide\n").unwrap();
    let rig = support::tui::Rig::with_dirs(&proj, &[docs.display().to_string()]);
    let mut app = App::new(
        "/demo".into(),
        rig.tree(),
        Mode::Agent,
        "openai gpt-4.1".into(),
        true,
        12,
    );
    snap("scopes_tree", &app);
    app.on_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL));
    app.recent_roots_loaded(vec!["/work/service".into(), "/work/shared-lib".into()]);
    app.on_key(key(KeyCode::Down));
    snap("open_root_dialog", &app);
}
