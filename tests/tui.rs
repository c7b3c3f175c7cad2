//! The TUI driven without a terminal: keys in, ops out; engine events in,
//! state and rendered screens (ratatui `TestBackend`, two sizes) checked.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use agent_tui::protocol::{Command, Event, EventBody, JobStatus, Mode, SessionRef, Usage};
use agent_tui::protocol::{DiffBundle, FileDiff, Hunk};
use agent_tui::tui::{App, Entry, Overlay, draw};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

fn app() -> (tempfile::TempDir, App) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(dir.path().join("README.md"), "# hi\n").unwrap();
    let tree = support::tui::tree(dir.path());
    let app = App::new(
        "/demo".into(),
        tree,
        Mode::Agent,
        "test m1".into(),
        true,
        12,
    );
    (dir, app)
}

/// What the event loop does with the app's loads: asks the engine.
fn plain_loads(app: &mut App, root: &std::path::Path) {
    support::tui::Rig::new(root).settle(app);
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        assert!(app.on_key(key(KeyCode::Char(c))).is_empty());
    }
}

fn ev(job: &str, cursor: u64, body: EventBody) -> Event {
    Event {
        cursor,
        body,
        ts: "2026-01-01T00:00:00.000Z".into(),
        job_id: job.into(),
    }
}

fn screen(app: &App, w: u16, h: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal.draw(|f| draw(f, app)).unwrap();
    let buffer = terminal.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..h {
        for x in 0..w {
            out.push_str(buffer[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

fn bundle(job: &str) -> DiffBundle {
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
        job_id: job.into(),
        files: vec![
            FileDiff {
                file_path: "src/main.rs".into(),
                base_file_hash: Some("sha256:x".into()),
                hunks: vec![
                    hunk(
                        "h_1",
                        "@@ -1,1 +1,1 @@\n-fn main() {}\n+fn main() { run(); }\n",
                    ),
                    hunk("h_2", "@@ -9,1 +9,2 @@\n old\n+new\n"),
                ],
            },
            FileDiff {
                file_path: "README.md".into(),
                base_file_hash: Some("sha256:y".into()),
                hunks: vec![hunk("h_3", "@@ -1,1 +1,1 @@\n-# hi\n+# hello\n")],
            },
        ],
    }
}

#[test]
fn sending_a_prompt_starts_a_job_in_the_current_mode() {
    let (_d, mut app) = app();
    type_text(&mut app, "explain main");
    let ops = app.on_key(key(KeyCode::Enter));
    let [
        Command::StartJob {
            prompt,
            mode,
            job_id,
            ..
        },
    ] = ops.as_slice()
    else {
        panic!("{ops:?}")
    };
    assert_eq!((prompt.as_str(), *mode), ("explain main", Mode::Agent));
    assert!(job_id.starts_with("job_tui_"));
    assert_eq!(
        app.transcript.last(),
        Some(&Entry::User("explain main".into()))
    );
    assert!(app.input.is_empty());
    // Esc cancels the running job.
    assert_eq!(
        app.on_key(key(KeyCode::Esc)),
        vec![Command::Cancel {
            job_id: job_id.clone()
        }]
    );
}

#[test]
fn modes_cycle_with_ctrl_t_and_slash_commands() {
    let (_d, mut app) = app();
    app.on_key(ctrl('t'));
    assert_eq!(app.mode, Mode::Ask);
    app.on_key(ctrl('t'));
    assert_eq!(app.mode, Mode::Plan);
    type_text(&mut app, "/agent");
    assert!(app.on_key(key(KeyCode::Enter)).is_empty());
    assert_eq!(app.mode, Mode::Agent);
}

#[test]
fn multi_line_input_and_history() {
    let (_d, mut app) = app();
    type_text(&mut app, "one");
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT));
    type_text(&mut app, "two");
    assert_eq!(app.input.lines(), ["one", "two"]);
    let ops = app.on_key(key(KeyCode::Enter));
    assert!(matches!(&ops[0], Command::StartJob { prompt, .. } if prompt == "one\ntwo"));
    app.on_event(&ev("x", 1, EventBody::JobCancelled {}));
    if let Some(job) = &mut app.job {
        job.status = JobStatus::Cancelled;
    }
    app.on_key(key(KeyCode::Up));
    assert_eq!(
        app.input.lines(),
        ["one", "two"],
        "Up recalls the last prompt"
    );
}

#[test]
fn ctrl_c_twice_quits_and_help_opens_on_question_mark() {
    let (_d, mut app) = app();
    app.on_key(ctrl('c'));
    assert_ne!(app.quit, agent_tui::tui::Quit::Now);
    app.on_key(ctrl('c'));
    assert_eq!(app.quit, agent_tui::tui::Quit::Now);
    let (_d, mut app) = self::app();
    app.on_key(key(KeyCode::Char('?')));
    assert_eq!(app.overlay, Overlay::Help { scroll: 0 });
    // Every key is on one of the pages; j/k and PgUp/PgDn scroll.
    let mut pages = screen(&app, 100, 30);
    for _ in 0..8 {
        app.on_key(key(KeyCode::PageDown));
        pages.push_str(&screen(&app, 60, 15));
    }
    for k in [
        "Ctrl+T",
        "Ctrl+R",
        "Ctrl+S",
        "Ctrl+Z",
        "Shift+Tab",
        "Ctrl+K",
        "Space",
    ] {
        assert!(pages.contains(k), "help lacks {k}:\n{pages}");
    }
    assert!(matches!(app.overlay, Overlay::Help { scroll } if scroll > 0));
    // Scrolling stops at the last line; the first key back up shows.
    for _ in 0..20 {
        app.on_key(key(KeyCode::PageDown));
    }
    let bottom = screen(&app, 60, 15);
    assert!(bottom.contains("/web URL"), "{bottom}");
    app.on_key(key(KeyCode::Char('k')));
    assert!(matches!(app.overlay, Overlay::Help { .. }));
    assert_ne!(screen(&app, 60, 15), bottom, "k moves at once");
    app.on_key(key(KeyCode::Char('x')));
    assert_eq!(app.overlay, Overlay::None);
}

/// Types `prompt`, sends it and feeds back the job's `job.started`
/// (cursor 1); the job's id.
fn start_job(app: &mut App, prompt: &str) -> String {
    type_text(app, prompt);
    let ops = app.on_key(key(KeyCode::Enter));
    let Command::StartJob { job_id, .. } = &ops[0] else {
        panic!()
    };
    let j = job_id.clone();
    let started = EventBody::JobStarted {
        prompt: prompt.into(),
        mode: Mode::Agent,
        root: "/demo".into(),
        provider: "p".into(),
        model: "m".into(),
        images: Vec::new(),
    };
    app.on_event(&ev(&j, 1, started));
    j
}

/// A file read for the model before its first request (a small window,
/// the instruction names it) shows like a read, says so, and is not one
/// of the model's calls.
#[test]
fn a_file_read_for_the_model_says_so_and_spends_no_step() {
    let (_d, mut app) = app();
    let job_id = start_job(&mut app, "fix sum.js");
    let j = job_id.as_str();
    app.on_event(&ev(
        j,
        2,
        EventBody::ToolCallRequested {
            tool_call_id: "attached_1".into(),
            name: "read_file".into(),
            arguments: json!({"file_path": "sum.js"}),
            attached: true,
        },
    ));
    let s = screen(&app, 120, 30);
    assert!(s.contains("read for the model"), "{s}");
    assert!(s.contains("running 0/12"), "{s}");
}

#[test]
fn a_reply_stopped_in_a_loop_says_so() {
    let (_d, mut app) = app();
    let job_id = start_job(&mut app, "why?");
    app.on_event(&ev(
        &job_id,
        2,
        EventBody::RepeatStopped {
            provider: "local".into(),
            chars: 57,
            copies: 3,
        },
    ));
    let s = screen(&app, 120, 30);
    assert!(s.contains("local's reply went round in a loop"), "{s}");
    assert!(s.contains("the same 57 characters 3 times"), "{s}");
}

#[test]
fn streamed_answer_tool_lines_and_review_flow() {
    let (_d, mut app) = app();
    let job_id = start_job(&mut app, "fix it");
    let j = job_id.as_str();
    app.on_event(&ev(
        j,
        2,
        EventBody::LlmDelta {
            text: "Let me ".into(),
            attempt: 1,
        },
    ));
    app.on_event(&ev(
        j,
        3,
        EventBody::LlmDelta {
            text: "look.".into(),
            attempt: 1,
        },
    ));
    app.on_event(&ev(
        j,
        4,
        EventBody::ToolCallRequested {
            tool_call_id: "c".into(),
            name: "read_file".into(),
            arguments: json!({"file_path": "src/main.rs"}),
            attached: false,
        },
    ));
    app.on_event(&ev(
        j,
        5,
        EventBody::ToolCallCompleted {
            tool_call_id: "c".into(),
            name: "read_file".into(),
            ok: true,
            result: Some(json!({})),
            error: None,
            duration_ms: 1,
        },
    ));
    app.on_event(&ev(j, 6, EventBody::DiffGenerated { bundle: bundle(j) }));
    app.on_event(&ev(
        j,
        7,
        EventBody::LlmDelta {
            text: "Proposed.".into(),
            attempt: 1,
        },
    ));
    let s = screen(&app, 100, 30);
    assert!(s.contains("you › fix it"), "{s}");
    assert!(s.contains("Let me look."), "{s}");
    assert!(s.contains("✓ read_file"), "{s}");
    assert!(s.contains("running 1/12"), "{s}");
    // The badge sits on the file with pending hunks, and only there.
    let tree_row = |name: &str| {
        s.lines()
            .find(|l| l.split('│').nth(1).is_some_and(|cell| cell.contains(name)))
            .unwrap_or_else(|| panic!("no tree row for {name}:\n{s}"))
            .split('│')
            .nth(1)
            .unwrap()
            .trim_end()
            .to_string()
    };
    assert!(
        tree_row("README.md").ends_with("README.md ●"),
        "tree badge for pending hunks:\n{s}"
    );
    assert!(!tree_row("src").contains('●'), "{s}");
    app.on_event(&ev(
        j,
        8,
        EventBody::JobCompleted {
            answer: "Let me look.Proposed.".into(),
            usage: Usage {
                input_tokens: 10,
                output_tokens: 5,
                requests: 1,
            },
            status: JobStatus::AwaitingReview,
            budget_exhausted: false,
            provider: String::new(),
            fallback_reason: None,
        },
    ));
    assert!(
        (app.view == agent_tui::tui::View::Review),
        "the review opens by itself"
    );
    let s = screen(&app, 100, 30);
    assert!(s.contains("src/main.rs · h_1 [pending]"), "{s}");
    assert!(s.contains("+fn main() { run(); }"), "{s}");
    assert!(s.contains("review 0/3"), "{s}");
    // y accepts h_1 and moves on; n rejects h_2; N rejects the next file.
    let ops = app.on_key(key(KeyCode::Char('y')));
    assert_eq!(
        ops,
        vec![Command::Decide {
            job_id: j.into(),
            accept: vec!["h_1".into()],
            reject: vec![],
            accept_all: false
        }]
    );
    let ops = app.on_key(key(KeyCode::Char('n')));
    assert_eq!(
        ops,
        vec![Command::Decide {
            job_id: j.into(),
            accept: vec![],
            reject: vec!["h_2".into()],
            accept_all: false
        }]
    );
    let ops = app.on_key(KeyEvent::new(KeyCode::Char('N'), KeyModifiers::SHIFT));
    assert_eq!(
        ops,
        vec![Command::Decide {
            job_id: j.into(),
            accept: vec![],
            reject: vec!["h_3".into()],
            accept_all: false
        }]
    );
    app.on_key(key(KeyCode::Char('k')));
    app.on_key(key(KeyCode::Char('k')));
    assert_eq!(app.review.as_ref().unwrap().cursor, 0);
    assert_eq!(
        app.on_key(ctrl('s')),
        vec![Command::Apply { job_id: j.into() }]
    );
    // A conflict is shown plainly and the review stays open.
    app.on_event(&ev(
        j,
        9,
        EventBody::ApplyFailed {
            error: "conflict: src/main.rs (it changed since the edits were proposed)".into(),
            code: agent_tui::protocol::ApplyFailure::Conflict,
            conflicts: vec![],
        },
    ));
    assert!((app.view == agent_tui::tui::View::Review));
    assert!(
        matches!(app.transcript.last(), Some(Entry::Error(e)) if e.contains("nothing was written"))
    );
    // Then an apply succeeds; Ctrl+Z offers to roll it back.
    let mut applied = bundle(j);
    for h in applied.files.iter_mut().flat_map(|f| f.hunks.iter_mut()) {
        h.state = if h.hunk_id == "h_1" {
            agent_tui::protocol::review::HunkState::Applied
        } else {
            agent_tui::protocol::review::HunkState::Rejected
        };
    }
    app.on_event(&ev(
        j,
        10,
        EventBody::CheckpointCreated {
            checkpoint_id: "cp_1".into(),
            kind: agent_tui::protocol::checkpoint::CheckpointKind::Apply,
            files: vec!["src/main.rs".into()],
        },
    ));
    app.on_event(&ev(
        j,
        11,
        EventBody::ApplyCompleted {
            checkpoint_id: "cp_1".into(),
            files: vec!["src/main.rs".into()],
            hunk_ids: vec!["h_1".into()],
            bundle: applied,
            edits: Vec::new(),
        },
    ));
    assert!(
        !(app.view == agent_tui::tui::View::Review),
        "nothing left to review"
    );
    app.on_key(ctrl('z'));
    assert!(
        matches!(&app.overlay, Overlay::Rollback { checkpoint_id, .. } if checkpoint_id == "cp_1")
    );
    let s = screen(&app, 100, 30);
    assert!(
        s.contains("a: roll back all (hard)") && s.contains("src/main.rs"),
        "{s}"
    );
    assert_eq!(
        app.on_key(key(KeyCode::Char('a'))),
        vec![Command::Rollback {
            checkpoint_id: "cp_1".into(),
            hunks: vec![],
            files: vec![],
            tell: None,
        }]
    );
}

#[test]
fn clarification_dialog_answers_or_skips() {
    for (typed, expected) in [("blue", "blue"), ("", "no_user_answer")] {
        let (_d, mut app) = app();
        app.on_event(&ev(
            "j",
            1,
            EventBody::ClarificationRequested {
                tool_call_id: "c".into(),
                question: "Which colour?".into(),
            },
        ));
        assert!(screen(&app, 80, 20).contains("Which colour?"));
        type_text(&mut app, typed);
        let ops = app.on_key(key(KeyCode::Enter));
        assert_eq!(
            ops,
            vec![Command::Answer {
                job_id: "j".into(),
                text: expected.into()
            }]
        );
        assert_eq!(app.overlay, Overlay::None);
    }
}

#[test]
fn a_failed_job_shows_its_error_and_the_app_stays_usable() {
    let (_d, mut app) = app();
    type_text(&mut app, "go");
    let ops = app.on_key(key(KeyCode::Enter));
    let Command::StartJob { job_id, .. } = &ops[0] else {
        panic!()
    };
    app.on_event(&ev(
        job_id,
        1,
        EventBody::JobFailed {
            error: "cannot connect to http://x".into(),
            code: agent_tui::protocol::JobFailure::ConnectFailed,
        },
    ));
    let s = screen(&app, 80, 20);
    assert!(s.contains("error: cannot connect"), "{s}");
    type_text(&mut app, "again");
    assert_eq!(
        app.on_key(key(KeyCode::Enter)).len(),
        1,
        "a new job can start"
    );
}

#[test]
fn layout_at_two_sizes_and_too_small() {
    let (_d, app) = app();
    let big = screen(&app, 120, 40);
    assert!(
        big.contains("/demo") && big.contains("▸ src") && big.contains("README.md"),
        "{big}"
    );
    assert!(
        big.contains(" AGENT ") && big.contains("test m1 ● online"),
        "{big}"
    );
    let small = screen(&app, 60, 15);
    assert!(
        small.contains("▸ src") && small.contains("agent ›"),
        "{small}"
    );
    let tiny = screen(&app, 50, 10);
    assert!(tiny.contains("Terminal too small"), "{tiny}");
}

#[test]
fn tree_keys_move_expand_and_jump() {
    let (_d, mut app) = app();
    app.on_key(key(KeyCode::BackTab));
    app.on_key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT));
    assert_eq!(app.focus, agent_tui::tui::Focus::Tree);
    // The tree in focus lists the root again (files made since show up).
    assert_eq!(
        app.loads,
        [agent_tui::tui::Load::TreeDir {
            rel: String::new(),
            depth: 0
        }]
    );
    plain_loads(&mut app, _d.path());
    app.on_key(key(KeyCode::Enter));
    // The folder is read off the UI task; the event loop hands it back.
    assert_eq!(
        app.loads,
        [agent_tui::tui::Load::TreeDir {
            rel: "src".into(),
            depth: 1
        }]
    );
    plain_loads(&mut app, _d.path());
    let s = screen(&app, 100, 30);
    assert!(s.contains("▾ src") && s.contains("main.rs"), "{s}");
    app.on_key(key(KeyCode::Char('r')));
    assert_eq!(app.tree.selected().unwrap().name, "README.md");
}

#[test]
fn chat_scrolls_with_keys_and_follows_new_text_at_the_bottom() {
    let (_d, mut app) = app();
    for i in 0..60 {
        app.transcript.push(Entry::Notice(format!("note {i}")));
    }
    let s = screen(&app, 100, 30);
    assert!(s.contains("note 59") && !s.contains("note 20 "), "{s}");
    app.on_key(key(KeyCode::Tab));
    app.on_key(key(KeyCode::Tab));
    assert_eq!(app.focus, agent_tui::tui::Focus::Chat);
    app.on_key(key(KeyCode::PageUp));
    app.on_key(key(KeyCode::PageUp));
    app.on_key(key(KeyCode::Up));
    assert_eq!(app.scroll, 21);
    let s = screen(&app, 100, 30);
    assert!(!s.contains("note 59"), "scrolled up:\n{s}");
    app.on_key(key(KeyCode::PageDown));
    app.on_key(key(KeyCode::PageDown));
    app.on_key(key(KeyCode::PageDown));
    assert_eq!(app.scroll, 0);
    app.paste("pasted text");
}

#[test]
fn rollback_dialog_picks_hunks_for_a_scoped_rollback() {
    let (_d, mut app) = app();
    app.latest_checkpoint = Some(agent_tui::tui::LatestCheckpoint {
        id: "cp_9".into(),
        files: vec!["a.rs".into(), "b.rs".into()],
        hunks: vec![
            ("h_1".into(), "a.rs".into()),
            ("h_2".into(), "a.rs".into()),
            ("h_3".into(), "b.rs".into()),
        ],
    });
    app.on_key(ctrl('z'));
    assert!(screen(&app, 100, 30).contains("p: pick hunks (scoped)"));
    app.on_key(key(KeyCode::Char('p')));
    app.on_key(key(KeyCode::Enter));
    assert!(
        matches!(app.overlay, Overlay::Rollback { .. }),
        "nothing chosen: nothing happens"
    );
    app.on_key(key(KeyCode::Char(' ')));
    app.on_key(key(KeyCode::Char('j')));
    app.on_key(key(KeyCode::Char('j')));
    app.on_key(key(KeyCode::Char(' ')));
    let s = screen(&app, 100, 30);
    assert!(
        s.contains("[x] h_1") && s.contains("[ ] h_2") && s.contains("[x] h_3"),
        "{s}"
    );
    let ops = app.on_key(key(KeyCode::Enter));
    assert_eq!(
        ops,
        vec![Command::Rollback {
            checkpoint_id: "cp_9".into(),
            hunks: vec!["h_1".into(), "h_3".into()],
            files: vec![],
            tell: None,
        }]
    );
    assert_eq!(app.overlay, Overlay::None);
    // Esc leaves everything as it is.
    app.on_key(ctrl('z'));
    assert!(app.on_key(key(KeyCode::Esc)).is_empty());
    assert_eq!(app.overlay, Overlay::None);
}

#[test]
fn a_retried_request_replaces_its_partial_text() {
    let (_d, mut app) = app();
    app.on_event(&ev(
        "j",
        1,
        EventBody::LlmDelta {
            text: "partial ans".into(),
            attempt: 1,
        },
    ));
    app.on_event(&ev(
        "j",
        2,
        EventBody::LlmDelta {
            text: "full answer".into(),
            attempt: 2,
        },
    ));
    assert_eq!(
        app.transcript.last(),
        Some(&Entry::Assistant("full answer".into()))
    );
}

#[test]
fn preview_loads_off_the_ui_task_by_generation_and_pins_context() {
    let (_d, mut app) = app();
    app.on_key(key(KeyCode::BackTab));
    app.on_key(key(KeyCode::BackTab));
    app.on_key(key(KeyCode::Char('r')));
    app.on_key(key(KeyCode::Enter));
    let Some(agent_tui::tui::Load::Preview { generation, path }) = app.loads.pop() else {
        panic!("a preview is requested")
    };
    assert_eq!(path, "README.md");
    assert!(screen(&app, 100, 30).contains("loading…"));
    // A stale result is dropped; the current one shows, highlighted.
    app.preview_loaded(
        generation + 7,
        Ok(vec![vec![(ratatui::style::Color::Red, "stale".into())]]),
    );
    assert!(!screen(&app, 100, 30).contains("stale"));
    let lines = agent_tui::tui::highlight("README.md", "# hi\nsome text\n", 100);
    app.preview_loaded(generation, Ok(lines));
    let s = screen(&app, 100, 30);
    assert!(
        s.contains("README.md · j/k scroll") && s.contains("    2 some text"),
        "{s}"
    );
    app.on_key(key(KeyCode::Char('p')));
    assert_eq!(app.pinned, ["README.md"]);
    app.on_key(key(KeyCode::Esc));
    assert_eq!(app.overlay, Overlay::None);
    // The pin is sent with the next instruction and shown by the input.
    app.on_key(key(KeyCode::Tab));
    app.on_key(key(KeyCode::Tab));
    assert!(screen(&app, 100, 30).contains("pinned: README.md"));
    type_text(&mut app, "summarize");
    let ops = app.on_key(key(KeyCode::Enter));
    assert!(
        matches!(&ops[0], Command::StartJob { prompt, .. } if prompt.starts_with("summarize") && prompt.contains("pinned these files") && prompt.contains("README.md")),
        "{ops:?}"
    );
    // p again in the tree unpins.
    app.on_key(key(KeyCode::BackTab));
    app.on_key(key(KeyCode::BackTab));
    app.on_key(key(KeyCode::Char('p')));
    assert!(app.pinned.is_empty());
}

#[test]
fn at_path_completion_from_the_file_list() {
    let (_d, mut app) = app();
    app.paths = ["src/main.rs", "src/lib.rs", "docs/guide.md", "README.md"]
        .into_iter()
        .collect();
    type_text(&mut app, "look at @src/ma");
    assert!(app.on_key(key(KeyCode::Tab)).is_empty());
    assert_eq!(app.input.lines(), ["look at @src/main.rs"]);
    assert_eq!(
        app.focus,
        agent_tui::tui::Focus::Input,
        "Tab completed, focus stays"
    );
    type_text(&mut app, " and @gui");
    app.on_key(key(KeyCode::Tab));
    assert_eq!(
        app.input.lines(),
        ["look at @src/main.rs and @docs/guide.md"],
        "by file name"
    );
    // A scope's file keeps one `@`: `@lib/ut` is `@lib/util.rs`.
    app.paths.push("@lib/util.rs");
    type_text(&mut app, " @lib/ut");
    app.on_key(key(KeyCode::Tab));
    assert_eq!(
        app.input.lines(),
        ["look at @src/main.rs and @docs/guide.md @lib/util.rs"]
    );
    type_text(&mut app, " x");
    app.on_key(key(KeyCode::Tab));
    assert_eq!(
        app.focus,
        agent_tui::tui::Focus::Tree,
        "no @token: Tab moves focus"
    );
}

#[test]
fn tool_lines_expand_on_enter_in_the_chat() {
    let (_d, mut app) = app();
    app.on_event(&ev(
        "j",
        1,
        EventBody::ToolCallRequested {
            tool_call_id: "c".into(),
            name: "search_project".into(),
            arguments: json!({"query": "needle", "glob": "*.rs"}),
            attached: false,
        },
    ));
    app.on_event(&ev(
        "j",
        2,
        EventBody::ToolCallCompleted {
            tool_call_id: "c".into(),
            name: "search_project".into(),
            ok: false,
            result: None,
            error: Some(json!({"code": "invalid_arguments", "message": "bad glob"})),
            duration_ms: 3,
        },
    ));
    let folded = screen(&app, 100, 30);
    assert!(
        folded.contains("✗ search_project") && !folded.contains("→ error: bad glob"),
        "{folded}"
    );
    app.on_key(key(KeyCode::Tab));
    app.on_key(key(KeyCode::Tab));
    app.on_key(key(KeyCode::Enter));
    let open = screen(&app, 100, 30);
    assert!(
        open.contains("\"glob\": \"*.rs\"") && open.contains("→ error: bad glob (3 ms)"),
        "{open}"
    );
}

/// A tool line keeps to one row: what does not fit ends in "…", so a cut
/// line never reads as whole.
#[test]
fn a_long_tool_line_is_cut_with_an_ellipsis() {
    let (_d, mut app) = app();
    app.on_event(&ev(
        "j",
        1,
        EventBody::ToolCallRequested {
            tool_call_id: "c".into(),
            name: "read_file".into(),
            arguments: json!({"file_path": "calc.py"}),
            attached: true,
        },
    ));
    let narrow = screen(&app, 90, 20);
    let tool_row = |screen: &str| {
        screen
            .lines()
            .find(|l| l.contains("read_file"))
            .unwrap()
            .trim_end_matches(['│', ' '])
            .to_string()
    };
    // (A call still running starts with "…" too: its end is what counts.)
    assert!(tool_row(&narrow).ends_with('…'), "{narrow}");
    assert!(!narrow.contains("names it"), "{narrow}");
    let wide = screen(&app, 160, 20);
    assert!(
        tool_row(&wide).ends_with("(read for the model: the instruction names it)"),
        "{wide}"
    );
}

#[test]
fn checkpoints_list_and_three_way_view() {
    let (_d, mut app) = app();
    app.on_key(ctrl('k'));
    assert!(
        app.loads == [agent_tui::tui::Load::Checkpoints],
        "the list is loaded off the UI task"
    );
    app.checkpoints_loaded(vec![
        agent_tui::tui::CheckpointRow {
            id: "cp_2".into(),
            created_at: "2026-01-02".into(),
            kind: "rollback".into(),
            files: vec!["a.rs".into()],
        },
        agent_tui::tui::CheckpointRow {
            id: "cp_1".into(),
            created_at: "2026-01-01".into(),
            kind: "apply".into(),
            files: vec!["a.rs".into(), "b.rs".into()],
        },
    ]);
    let s = screen(&app, 100, 30);
    assert!(
        s.contains("cp_2") && s.contains("cp_1") && s.contains("a.rs, b.rs"),
        "{s}"
    );
    app.on_key(key(KeyCode::Char('j')));
    app.on_key(key(KeyCode::Enter));
    assert_eq!(
        app.loads.pop(),
        Some(agent_tui::tui::Load::ThreeWay("cp_1".into()))
    );
    let view = |f: &str, cur: &str| agent_tui::protocol::checkpoint::ThreeWay {
        file_path: f.into(),
        current: Some(cur.into()),
        unreadable: None,
        base: Some("old line\n".into()),
        proposed: Some("agent line\n".into()),
        hooks: vec!["fmt".into()],
    };
    app.three_way_loaded(
        "cp_1",
        vec![view("a.rs", "mine now\n"), view("b.rs", "b now\n")],
    );
    let s = screen(&app, 120, 30);
    for needle in [
        "a.rs (1/2) · with changes by hook fmt",
        " current ",
        " checkpoint base ",
        " agent proposed ",
        "mine now",
        "old line",
        "agent line",
    ] {
        assert!(s.contains(needle), "{needle}:\n{s}");
    }
    app.on_key(key(KeyCode::Char('j')));
    assert!(screen(&app, 120, 30).contains("b.rs (2/2)"));
    app.on_key(key(KeyCode::Esc));
    assert!(
        screen(&app, 100, 30).contains("Enter: three-way view"),
        "Esc goes back to the list"
    );
    app.on_key(key(KeyCode::Esc));
    assert_eq!(app.overlay, Overlay::None);
}

#[test]
fn review_lines_carry_syntax_colours_on_a_tinted_background() {
    let (_d, mut app) = app();
    app.on_event(&ev(
        "j",
        1,
        EventBody::DiffGenerated {
            bundle: bundle("j"),
        },
    ));
    app.on_key(ctrl('r'));
    // Highlighting is asked of the event loop, never done on the UI task.
    assert!(app.review.as_ref().unwrap().colours.is_empty());
    plain_loads(&mut app, _d.path());
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    terminal.draw(|f| draw(f, &app)).unwrap();
    let buffer = terminal.backend().buffer().clone();
    let row = (0..30u16)
        .find(|&y| {
            (0..100u16)
                .map(|x| buffer[(x, y)].symbol().to_string())
                .collect::<String>()
                .contains("+fn main() { run(); }")
        })
        .expect("the added line is shown");
    let cells: Vec<_> = (0..100u16).map(|x| buffer[(x, row)].clone()).collect();
    let tinted: Vec<_> = cells
        .iter()
        .filter(|c| c.bg == ratatui::style::Color::Rgb(0, 50, 0))
        .collect();
    assert!(!tinted.is_empty(), "added code sits on a green tint");
    let colours: std::collections::HashSet<String> =
        tinted.iter().map(|c| format!("{:?}", c.fg)).collect();
    assert!(
        colours.len() > 1,
        "more than one syntax colour: {colours:?}"
    );
}

#[test]
fn session_picker_resumes_the_chosen_session_or_starts_a_new_one() {
    use agent_tui::protocol::SessionSummary;
    let row = |id: &str, pending: bool| SessionSummary {
        session_id: id.into(),
        created_at: "2026-01-01".into(),
        updated_at: "2026-01-02".into(),
        jobs: 2,
        pending_review: pending,
        last_prompt: Some("rename Foo".into()),
    };
    for (keys, expected) in [
        (
            vec![KeyCode::Char('j'), KeyCode::Enter],
            Some("s_old".to_string()),
        ),
        (vec![KeyCode::Esc], None),
    ] {
        let (_d, mut app) = app();
        app.overlay = Overlay::Sessions {
            rows: vec![row("s_new", true), row("s_old", false)],
            cursor: 0,
        };
        let s = screen(&app, 100, 30);
        assert!(
            s.contains("s_new") && s.contains("[review pending]") && s.contains("rename Foo"),
            "{s}"
        );
        for k in keys {
            assert!(app.on_key(key(k)).is_empty());
        }
        // The picked session is read; jobs go to it (none picked: a new one).
        let loads: Vec<_> = expected
            .iter()
            .map(|id| agent_tui::tui::Load::Session(id.clone()))
            .collect();
        assert_eq!(app.loads, loads);
        assert_eq!(app.session, expected);
        assert_eq!(app.overlay, Overlay::None);
    }
}

#[test]
fn status_bar_shows_provider_online_degraded_offline() {
    let (_d, mut app) = app();
    assert!(screen(&app, 100, 30).contains("test m1 ● online"));
    app.on_event(&ev(
        "j",
        1,
        EventBody::LlmDelta {
            text: "x".into(),
            attempt: 2,
        },
    ));
    assert!(screen(&app, 100, 30).contains("test m1 ◐ degraded"));
    app.on_event(&ev(
        "j",
        2,
        EventBody::JobFailed {
            error: "cannot connect".into(),
            code: agent_tui::protocol::JobFailure::ConnectFailed,
        },
    ));
    assert!(screen(&app, 100, 30).contains("test m1 ○ offline"));
    app.on_event(&ev(
        "k",
        1,
        EventBody::LlmDelta {
            text: "y".into(),
            attempt: 1,
        },
    ));
    assert!(screen(&app, 100, 30).contains("test m1 ● online"));
}

#[test]
fn review_toggles_the_whole_file_with_changes_inline() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.rs"), "one\ntwo\nthree\nfour\n").unwrap();
    let rig = support::tui::Rig::new(dir.path());
    let file = FileDiff {
        file_path: "a.rs".into(),
        base_file_hash: None,
        hunks: vec![Hunk {
            hunk_id: "h_1".into(),
            patch: "@@ -2,1 +2,1 @@\n-two\n+TWO\n".into(),
            state: agent_tui::protocol::review::HunkState::Pending,
            edit_ids: vec![],
            oversized: false,
            origin: agent_tui::protocol::review::HunkOrigin::Agent,
            changes: vec![agent_tui::protocol::review::Change {
                old_start: 1,
                old_len: 1,
                new_lines: vec!["TWO\n".into()],
            }],
        }],
    };
    let rows: Vec<_> = rig
        .rt
        .block_on(rig.engine.whole_file(file.clone()))
        .unwrap()
        .into_iter()
        .map(|r| (r.sign, r.text, r.hunk_id))
        .collect();
    let shown: Vec<String> = rows.iter().map(|(m, t, _)| format!("{m}{t}")).collect();
    assert_eq!(shown, [" one", "-two", "+TWO", " three", " four"]);

    let (_d, mut app) = app();
    app.on_event(&ev(
        "j",
        1,
        EventBody::DiffGenerated {
            bundle: DiffBundle {
                job_id: "j".into(),
                files: vec![file],
            },
        },
    ));
    app.on_key(ctrl('r'));
    app.on_key(key(KeyCode::Char('w')));
    let Some(agent_tui::tui::Load::WholeFile(request)) = app.loads.pop() else {
        panic!("the file is loaded off the UI task")
    };
    assert_eq!(request.file_path, "a.rs");
    app.whole_file_loaded("a.rs".into(), rows);
    let s = screen(&app, 100, 30);
    assert!(
        s.contains("whole file (w)")
            && s.contains("-two")
            && s.contains("+TWO")
            && s.contains(" four"),
        "{s}"
    );
    app.on_key(key(KeyCode::Char('w')));
    assert!(
        !screen(&app, 100, 30).contains("whole file (w)"),
        "w toggles back to the hunk"
    );
}

#[test]
fn a_line_range_of_the_preview_can_be_pinned() {
    let (_d, mut app) = app();
    app.on_key(key(KeyCode::BackTab));
    app.on_key(key(KeyCode::BackTab));
    app.on_key(key(KeyCode::Char('r')));
    app.on_key(key(KeyCode::Enter));
    let Some(agent_tui::tui::Load::Preview { generation, path }) = app.loads.pop() else {
        panic!("a preview is requested")
    };
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    app.preview_loaded(generation, Ok(agent_tui::tui::highlight(&path, &text, 100)));
    app.on_key(key(KeyCode::Char('j')));
    app.on_key(key(KeyCode::Char('v')));
    for _ in 0..3 {
        app.on_key(key(KeyCode::Char('j')));
    }
    assert!(screen(&app, 100, 30).contains("range from line 2"));
    app.on_key(key(KeyCode::Char('p')));
    assert_eq!(app.pinned, ["README.md:2-5"]);
}

#[test]
fn e_edits_the_hunk_text_and_ctrl_s_keeps_it() {
    let (_d, mut app) = app();
    let j = "job_1";
    app.on_event(&ev(j, 1, EventBody::DiffGenerated { bundle: bundle(j) }));
    app.on_key(ctrl('r'));
    assert!(app.on_key(key(KeyCode::Char('e'))).is_empty());
    match &app.overlay {
        Overlay::EditHunk {
            hunk_id, editor, ..
        } => {
            assert_eq!(hunk_id, "h_1");
            assert_eq!(editor.text(), "fn main() { run(); }\n");
        }
        other => panic!("{other:?}"),
    }
    // Esc drops the edit and sends nothing.
    assert!(app.on_key(key(KeyCode::Esc)).is_empty());
    assert_eq!(app.overlay, Overlay::None);
    assert!((app.view == agent_tui::tui::View::Review));

    app.on_key(key(KeyCode::Char('e')));
    app.on_key(key(KeyCode::End));
    // Keys bound elsewhere (j, y, ?) are text here.
    type_text(&mut app, " // y j ?");
    app.on_key(key(KeyCode::Enter));
    type_text(&mut app, "fn two() {}");
    let s = screen(&app, 100, 30);
    assert!(s.contains("edit h_1 · src/main.rs"), "{s}");
    assert!(s.contains("Ctrl+S keep and accept"), "{s}");
    assert!(s.contains("fn two() {}"), "{s}");
    assert_eq!(
        app.on_key(ctrl('s')),
        vec![Command::EditHunk {
            job_id: j.into(),
            hunk_id: "h_1".into(),
            new_text: "fn main() { run(); } // y j ?\nfn two() {}\n".into(),
        }]
    );
    assert_eq!(app.overlay, Overlay::None);

    // The engine's answer: the hunk is the user's now.
    let mut edited = bundle(j);
    let h = &mut edited.files[0].hunks[0];
    h.origin = agent_tui::protocol::review::HunkOrigin::User;
    h.state = agent_tui::protocol::review::HunkState::Accepted;
    h.patch =
        "@@ -1,1 +1,2 @@\n-fn main() {}\n+fn main() { run(); } // y j ?\n+fn two() {}\n".into();
    app.on_event(&ev(
        j,
        2,
        EventBody::ReviewUpdated {
            bundle: edited.clone(),
            unknown: vec![],
            error: None,
        },
    ));
    let s = screen(&app, 100, 30);
    assert!(s.contains("[accepted · edited by you]"), "{s}");
    assert!(s.contains("+fn two() {}"), "{s}");
    // A formatter's change (`apply.before`) names its hook.
    let mut hooked = edited.clone();
    let h = &mut hooked.files[0].hunks[0];
    h.origin = agent_tui::protocol::review::HunkOrigin::Hook("fmt".into());
    h.state = agent_tui::protocol::review::HunkState::Applied;
    app.on_event(&ev(
        j,
        2,
        EventBody::ReviewUpdated {
            bundle: hooked,
            unknown: vec![],
            error: None,
        },
    ));
    let s = screen(&app, 100, 30);
    assert!(s.contains("[applied · by hook fmt]"), "{s}");
    app.on_event(&ev(
        j,
        2,
        EventBody::ReviewUpdated {
            bundle: edited.clone(),
            unknown: vec![],
            error: None,
        },
    ));

    // A refused edit stays in view in the review.
    app.on_event(&ev(
        j,
        3,
        EventBody::ReviewUpdated {
            bundle: edited,
            unknown: vec![],
            error: Some("src/main.rs changed since the edits were proposed".into()),
        },
    ));
    let s = screen(&app, 100, 30);
    assert!(s.contains("The edit was not kept"), "{s}");
    // The next decision clears it.
    app.on_key(key(KeyCode::Char('y')));
    assert!(!screen(&app, 100, 30).contains("The edit was not kept"));

    // An applied hunk cannot be edited.
    let mut applied = bundle(j);
    applied.files[0].hunks[0].state = agent_tui::protocol::review::HunkState::Applied;
    app.on_event(&ev(
        j,
        4,
        EventBody::ReviewUpdated {
            bundle: applied,
            unknown: vec![],
            error: None,
        },
    ));
    app.review.as_mut().unwrap().cursor = 0;
    app.on_key(key(KeyCode::Char('e')));
    assert_eq!(app.overlay, Overlay::None);
    assert!(screen(&app, 100, 30).contains("already applied"));
}

#[test]
fn approval_dialog_allows_once_or_denies() {
    let (_d, mut app) = app();
    type_text(&mut app, "run the tests");
    let ops = app.on_key(key(KeyCode::Enter));
    let Command::StartJob { job_id, .. } = &ops[0] else {
        panic!()
    };
    let j = job_id.clone();
    let ask = |id: &str| EventBody::ApprovalRequested {
        tool_call_id: id.into(),
        name: "run_command".into(),
        arguments: json!({"command": "cargo test -q"}),
        root: "/work/demo".into(),
        cwd: ".".into(),
        sandbox: "unconfined: this kernel has no Landlock".into(),
        batch: vec![],
    };
    app.on_event(&ev(&j, 1, ask("c1")));
    assert_eq!(app.job.as_ref().unwrap().status, JobStatus::WaitingForUser);
    let s = screen(&app, 100, 30);
    for needle in [
        "Allow this command?",
        "cargo test -q",
        "/work/demo",
        "allow once",
        "unconfined: this kernel has no Landlock",
    ] {
        assert!(s.contains(needle), "{needle}:\n{s}");
    }
    // Other keys neither answer nor leak into the input.
    assert!(app.on_key(key(KeyCode::Char('x'))).is_empty());
    assert!(app.on_key(ctrl('t')).is_empty());
    assert!(matches!(app.overlay, Overlay::Approval { .. }));
    assert_eq!(
        app.on_key(key(KeyCode::Char('y'))),
        vec![Command::Approve {
            job_id: j.clone(),
            tool_call_id: "c1".into(),
            approved: true,
            reason: None
        }]
    );
    assert_eq!(app.overlay, Overlay::None);
    app.on_event(&ev(
        &j,
        2,
        EventBody::ApprovalResolved {
            tool_call_id: "c1".into(),
            approved: true,
            by: "user".into(),
            user: None,
        },
    ));
    assert_eq!(app.job.as_ref().unwrap().status, JobStatus::Running);

    app.on_event(&ev(&j, 3, ask("c2")));
    assert_eq!(
        app.on_key(key(KeyCode::Esc)),
        vec![Command::Approve {
            job_id: j.clone(),
            tool_call_id: "c2".into(),
            approved: false,
            reason: None
        }]
    );
    app.on_event(&ev(
        &j,
        4,
        EventBody::ApprovalResolved {
            tool_call_id: "c2".into(),
            approved: false,
            by: "user".into(),
            user: None,
        },
    ));
    assert!(matches!(app.transcript.last(), Some(Entry::Notice(n)) if n.contains("You denied")));
}

#[test]
fn compact_command_context_gauge_and_compaction_notices() {
    let (_dir, mut app) = app();
    // `/compact` sends Command::Compact and says what is happening.
    type_text(&mut app, "/compact");
    let ops = app.on_key(key(KeyCode::Enter));
    let job = match ops.as_slice() {
        [
            Command::Compact {
                session: SessionRef::New,
                job_id,
            },
        ] => job_id.clone(),
        other => panic!("{other:?}"),
    };
    assert!(matches!(app.transcript.last(), Some(Entry::Notice(t)) if t.contains("Compacting")));
    app.on_event(&ev(
        &job,
        1,
        EventBody::ContextCompacted {
            reason: agent_tui::protocol::CompactReason::Manual,
            tokens_before: 9000,
            tokens_after: 1200,
            messages_summarized: 6,
        },
    ));
    app.on_event(&ev(
        &job,
        2,
        EventBody::JobCompleted {
            answer: "Compacted the conversation: 9000 → 1200 tokens.".into(),
            usage: Usage::default(),
            status: JobStatus::Completed,
            budget_exhausted: false,
            provider: String::new(),
            fallback_reason: None,
        },
    ));
    // Shown once, as a notice, never as an assistant answer.
    assert!(matches!(app.transcript.last(), Some(Entry::Notice(t)) if t.contains("9000 → 1200")));
    assert!(
        !app.transcript
            .iter()
            .any(|e| matches!(e, Entry::Assistant(_)))
    );

    // A job's own compaction and usage: a chat line and `ctx NN%`.
    type_text(&mut app, "go on");
    let ops = app.on_key(key(KeyCode::Enter));
    let Some(Command::StartJob { job_id, .. }) = ops.first() else {
        panic!("{ops:?}")
    };
    assert!(
        !screen(&app, 100, 30).contains("ctx "),
        "no gauge before any usage"
    );
    app.on_event(&ev(
        job_id,
        1,
        EventBody::UsageUpdated {
            input_tokens: 5000,
            output_tokens: 100,
            context_tokens: 6500,
            context_window: 8192,
            estimated: false,
        },
    ));
    assert!(
        screen(&app, 100, 30).contains("ctx 79%"),
        "{}",
        screen(&app, 100, 30)
    );
    app.on_event(&ev(
        job_id,
        2,
        EventBody::ContextCompacted {
            reason: agent_tui::protocol::CompactReason::Threshold,
            tokens_before: 6500,
            tokens_after: 1600,
            messages_summarized: 9,
        },
    ));
    let s = screen(&app, 100, 30);
    assert!(s.contains("ctx 19%"), "{s}");
    assert!(
        s.contains("Context compacted (threshold): 6500 → 1600"),
        "{s}"
    );
    app.on_event(&ev(
        job_id,
        3,
        EventBody::JobCompleted {
            answer: "partial findings".into(),
            usage: Usage::default(),
            status: JobStatus::Completed,
            budget_exhausted: true,
            provider: String::new(),
            fallback_reason: None,
        },
    ));
    assert!(
        matches!(app.transcript.last(), Some(Entry::Notice(t)) if t.contains("tool budget was spent"))
    );
}

#[test]
fn the_hunk_editor_numbers_lines_as_the_file_does() {
    let (_d, mut app) = app();
    let j = "job_1";
    let mut b = bundle(j);
    let h = &mut b.files[0].hunks[0];
    h.patch = "@@ -30,2 +30,3 @@\n-fn main() {}\n-// end\n+fn main() {\n+    run();\n+}\n".into();
    h.changes = vec![agent_tui::protocol::review::Change {
        old_start: 29,
        old_len: 2,
        new_lines: vec!["fn main() {\n".into(), "    run();\n".into(), "}\n".into()],
    }];
    app.on_event(&ev(j, 1, EventBody::DiffGenerated { bundle: b }));
    app.on_key(ctrl('r'));
    app.on_key(key(KeyCode::Char('e')));
    let s = screen(&app, 100, 30);
    for (n, text) in [(30, "fn main() {"), (31, "    run();"), (32, "}")] {
        assert!(
            s.lines().any(|l| l.contains(&format!("{n} {text}"))),
            "line {n} is not numbered as in the file:\n{s}"
        );
    }
    assert!(!s.lines().any(|l| l.contains(" 1 fn main() {")), "{s}");
}

#[test]
fn a_recovery_at_start_is_said_in_the_transcript() {
    let (_d, mut app) = app();
    let recovery = agent_tui::protocol::checkpoint::Recovery {
        checkpoint_id: "cp_9".into(),
        job_id: "job_1".into(),
        operation: "apply".into(),
        outcome: agent_tui::protocol::checkpoint::Settled::Undone,
        restored: vec!["src/a.rs".into()],
        left_alone: Vec::new(),
        temp_files_removed: 1,
    };
    app.on_event(&ev("job_1", 1, EventBody::RecoveryCompleted(recovery)));
    let s = screen(&app, 120, 30);
    assert!(
        s.contains("Recovered: an interrupted apply (checkpoint cp_9) was undone: restored"),
        "{s}"
    );
}

#[test]
fn the_light_theme_draws_for_a_light_background() {
    use ratatui::style::Color;
    let colours = |app: &App| {
        let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
        terminal.draw(|f| draw(f, app)).unwrap();
        let buffer = terminal.backend().buffer().clone();
        buffer
            .content
            .iter()
            .map(|c| (c.fg, c.bg))
            .collect::<Vec<_>>()
    };
    let (_d, mut app) = app();
    let j = "job_1";
    let mut b = bundle(j);
    b.files[0].hunks[0].patch = "@@ -1,1 +1,1 @@\n-fn main() {}\n+fn main() { run(); }\n".into();
    app.on_event(&ev(j, 1, EventBody::DiffGenerated { bundle: b }));
    app.on_key(ctrl('r'));
    plain_loads(&mut app, _d.path());
    let dark = colours(&app);
    assert!(dark.iter().any(|(fg, _)| *fg == Color::Yellow));
    assert!(dark.iter().any(|(_, bg)| *bg == Color::Rgb(0, 50, 0)));
    app.theme = agent_tui::config::Theme::Light;
    let light = colours(&app);
    let pale_accents = [Color::Yellow, Color::LightYellow, Color::Cyan, Color::White];
    assert!(light.iter().all(|(fg, _)| !pale_accents.contains(fg)));
    assert!(
        light
            .iter()
            .all(|(_, bg)| *bg != Color::Rgb(0, 50, 0) && *bg != Color::Rgb(60, 0, 0))
    );
    assert!(
        light
            .iter()
            .any(|(_, bg)| *bg == Color::Rgb(0xdc, 0xf5, 0xdc)),
        "added lines tinted pale"
    );
}

#[test]
fn status_bar_hints_follow_rebound_keys() {
    let (_d, mut app) = app();
    let keys = [
        ("apply".to_string(), "ctrl+w".to_string()),
        ("accept".to_string(), "a".to_string()),
    ];
    app.keymap = agent_tui::tui::KeyMap::from_config(&keys.into_iter().collect()).unwrap();
    let j = "job_1";
    app.on_event(&ev(j, 1, EventBody::DiffGenerated { bundle: bundle(j) }));
    app.on_key(ctrl('r'));
    let s = screen(&app, 160, 30);
    let status = s.lines().last().unwrap();
    assert!(
        status.contains("a/n hunk · ctrl+w apply · v verify · j/k move"),
        "{status}"
    );
    assert!(!status.contains("Ctrl+S"), "{status}");
}

#[test]
fn ctrl_o_waits_for_a_running_job_and_its_dialog_picks_or_types_a_root() {
    use agent_tui::tui::Load;
    let (_d, mut app) = app();
    type_text(&mut app, "fix it");
    let ops = app.on_key(key(KeyCode::Enter));
    let Command::StartJob { job_id, .. } = &ops[0] else {
        panic!()
    };
    let j = job_id.clone();
    // A job runs: the dialog does not open, the user is told why.
    assert!(app.on_key(ctrl('o')).is_empty());
    assert_eq!(app.overlay, Overlay::None);
    assert!(
        matches!(app.transcript.last(), Some(Entry::Notice(n)) if n.contains("job is running"))
    );
    app.on_event(&ev(
        &j,
        1,
        EventBody::JobCompleted {
            answer: "done".into(),
            usage: Usage::default(),
            status: JobStatus::Completed,
            budget_exhausted: false,
            provider: String::new(),
            fallback_reason: None,
        },
    ));
    app.loads.clear();
    app.on_key(ctrl('o'));
    assert!(matches!(app.overlay, Overlay::OpenRoot { .. }));
    assert_eq!(app.loads, [Load::RecentRoots]);
    app.loads.clear();
    app.recent_roots_loaded(vec!["/work/b".into(), "/work/a".into()]);
    // ↓ picks a recent root; Enter opens it.
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Down));
    assert!(screen(&app, 100, 30).contains("> /work/a"));
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.loads, [Load::OpenRoot("/work/a".into())]);
    app.loads.clear();
    // A failure keeps the dialog with the reason; typing edits the path.
    app.root_open_failed("agent root `/work/a` does not exist".into());
    assert!(screen(&app, 100, 30).contains("does not exist"));
    app.on_key(key(KeyCode::Backspace));
    type_text(&mut app, "c");
    app.on_key(key(KeyCode::Tab));
    assert_eq!(app.loads, [Load::RootCompletion("/work/c".into())]);
    app.loads.clear();
    app.root_completions_loaded("/work/c", vec!["/work/code/".into(), "/work/cold/".into()]);
    assert!(
        screen(&app, 100, 30).contains("> /work/co"),
        "the shared prefix is filled in"
    );
    app.on_key(key(KeyCode::Esc));
    assert_eq!(app.overlay, Overlay::None);
    assert!(app.loads.is_empty());
}

/// `review.updated` with the bundle `b`, decisions and all.
fn decided(b: &DiffBundle) -> EventBody {
    EventBody::ReviewUpdated {
        bundle: b.clone(),
        unknown: vec![],
        error: None,
    }
}

/// The review's verify: `v` asks for it (nothing accepted: a hint, no
/// command), Esc stops a running one instead of closing the review, a
/// failure sits beside the hunks, Ctrl+S asks once more, a changed
/// decision marks it stale (and then Ctrl+S applies at once), `f` sends
/// it to the model as a new job.
#[test]
fn the_verify_runs_stops_goes_stale_and_is_sent_back() {
    use agent_tui::protocol::{VerifyOutcome, VerifyResult};
    let (_d, mut app) = app();
    let mut b = bundle("j");
    app.on_event(&ev("j", 1, EventBody::DiffGenerated { bundle: b.clone() }));
    app.on_key(ctrl('r'));
    // Nothing accepted: the engine's refusal is shown in the review.
    let ops = app.on_key(key(KeyCode::Char('v')));
    let refused = agent_tui::protocol::EngineError::invalid(
        "no accepted hunks to verify: accept the hunks to check first",
    );
    app.replied(&ops[0], Err(refused));
    assert!(screen(&app, 120, 30).contains("Cannot verify: no accepted hunks"));
    b.files[0].hunks[0].state = agent_tui::protocol::review::HunkState::Accepted;
    app.on_event(&ev("j", 2, decided(&b)));
    let ops = app.on_key(key(KeyCode::Char('v')));
    assert!(
        matches!(ops.as_slice(), [Command::Verify { job_id }] if job_id == "j"),
        "{ops:?}"
    );
    app.on_event(&ev(
        "j",
        3,
        EventBody::VerifyStarted {
            hunk_ids: vec!["h_1".into()],
            command: "cargo test".into(),
        },
    ));
    assert!(screen(&app, 120, 30).contains("verify: running (Esc stops it)"));
    let ops = app.on_key(key(KeyCode::Esc));
    assert!(
        matches!(ops.as_slice(), [Command::CancelVerify { job_id }] if job_id == "j"),
        "{ops:?}"
    );
    assert!(
        screen(&app, 120, 30).contains("review"),
        "the review stays open"
    );

    let failed = VerifyResult {
        passed: false,
        outcome: VerifyOutcome::Failed,
        command: "cargo test".into(),
        exit_code: Some(101),
        duration_ms: 2300,
        overhead_ms: 40,
        output_tail: "test tests::adds ... FAILED\nerror: test failed".into(),
        hunk_ids: vec!["h_1".into()],
        decisions: b.verify_key(),
        baseline: None,
        confined: true,
        copy: "copy".into(),
        error: None,
        not_verified: vec![],
        tree: None,
    };
    app.on_event(&ev("j", 4, EventBody::VerifyCompleted(failed)));
    let s = screen(&app, 120, 30);
    assert!(
        s.contains("✗ failed in 2.3 s") && s.contains("exit 101") && s.contains("tests::adds"),
        "{s}"
    );
    assert!(
        app.on_key(ctrl('s')).is_empty(),
        "the first Ctrl+S only asks"
    );
    assert!(screen(&app, 120, 30).contains("Ctrl+S again applies them anyway"));
    assert!(matches!(
        app.on_key(ctrl('s')).as_slice(),
        [Command::Apply { .. }]
    ));

    // Another decision: the result is stale, and Ctrl+S applies at once.
    b.files[1].hunks[0].state = agent_tui::protocol::review::HunkState::Accepted;
    app.on_event(&ev("j", 5, decided(&b)));
    assert!(screen(&app, 120, 30).contains("stale: decisions changed since"));
    assert!(matches!(
        app.on_key(ctrl('s')).as_slice(),
        [Command::Apply { .. }]
    ));

    // `f` sends the failure; the chat follows the new job.
    let ops = app.on_key(key(KeyCode::Char('f')));
    let [Command::VerifyFeedback { job_id, new_job_id }] = ops.as_slice() else {
        panic!("{ops:?}")
    };
    assert_eq!(job_id, "j");
    assert_eq!(
        app.job.as_ref().map(|j| j.id.clone()),
        Some(new_job_id.clone())
    );
    assert!(screen(&app, 120, 30).contains("Sent the failed verify"));
}

/// The review's files pane lists every hunk under its file (state, id,
/// lines added and removed, first line) and keeps the current one in view.
#[test]
fn the_files_pane_lists_the_hunks_and_follows_the_cursor() {
    let (_d, mut app) = app();
    let j = start_job(&mut app, "rename");
    let hunks: Vec<Hunk> = (0..40)
        .map(|i| Hunk {
            hunk_id: format!("h_{}", i + 1),
            patch: format!("@@ -{0},1 +{0},1 @@\n-old {i}\n+new {i}\n", 10 * i + 1),
            state: agent_tui::protocol::review::HunkState::Pending,
            edit_ids: vec![format!("e_{}", i + 1)],
            oversized: false,
            origin: agent_tui::protocol::review::HunkOrigin::Agent,
            changes: vec![agent_tui::protocol::review::Change {
                old_start: 10 * i,
                old_len: 1,
                new_lines: vec![format!("new {i}\n")],
            }],
        })
        .collect();
    let bundle = DiffBundle {
        job_id: j.clone(),
        files: vec![FileDiff {
            file_path: "notes.txt".into(),
            base_file_hash: Some("sha256:x".into()),
            hunks,
        }],
    };
    app.on_event(&ev(&j, 2, EventBody::DiffGenerated { bundle }));
    app.on_event(&ev(
        &j,
        3,
        EventBody::JobCompleted {
            answer: String::new(),
            usage: Usage::default(),
            status: JobStatus::AwaitingReview,
            budget_exhausted: false,
            provider: String::new(),
            fallback_reason: None,
        },
    ));
    let s = screen(&app, 80, 24);
    assert!(s.contains("notes.txt"), "{s}");
    assert!(s.contains("● h_1 +1 -1 L1"), "{s}");
    assert!(s.contains("● h_2 +1 -1 L11"), "{s}");
    // y asks the engine to accept h_1 and moves on; then down to h_35.
    assert!(!app.on_key(key(KeyCode::Char('y'))).is_empty());
    for _ in 0..33 {
        app.on_key(key(KeyCode::Char('j')));
    }
    let s = screen(&app, 80, 24);
    assert!(s.contains("notes.txt · h_35 [pending]"), "{s}");
    assert!(
        s.contains("● h_35 +1 -1 L341"),
        "the current hunk in view:\n{s}"
    );
    assert!(!s.contains(" h_1 "), "scrolled past the top:\n{s}");
    for _ in 0..34 {
        app.on_key(key(KeyCode::Char('k')));
    }
    let s = screen(&app, 80, 24);
    assert!(s.contains("notes.txt · h_1 [pending]"), "{s}");
    assert!(s.contains("● h_1 +1 -1 L1"), "back in view:\n{s}");
}

// ---- QA report (tmux): review scrolling, long lines, badges, the tree,
// ---- notices while streaming, a rejected review, pages, dialogs.

fn sized(app: &mut App, w: u16, h: u16) {
    app.screen = Some(ratatui::layout::Rect::new(0, 0, w, h));
}

fn one_hunk(path: &str, patch: &str, state: agent_tui::protocol::review::HunkState) -> FileDiff {
    FileDiff {
        file_path: path.into(),
        base_file_hash: None,
        hunks: vec![Hunk {
            hunk_id: "h_1".into(),
            patch: patch.into(),
            state,
            edit_ids: vec![],
            oversized: false,
            origin: agent_tui::protocol::review::HunkOrigin::Agent,
            changes: vec![],
        }],
    }
}

fn review_of(app: &mut App, files: Vec<FileDiff>) {
    app.on_event(&ev(
        "j",
        1,
        EventBody::DiffGenerated {
            bundle: DiffBundle {
                job_id: "j".into(),
                files,
            },
        },
    ));
    app.on_key(ctrl('r'));
}

/// The screen without spaces and borders, rows joined: a line cut over
/// several rows reads whole again (when nothing else is beside it).
fn squeezed(screen: &str) -> String {
    screen
        .chars()
        .filter(|c| !c.is_whitespace() && !"│┆".contains(*c))
        .collect()
}

/// Columns `from..to` of every row of a screen.
fn region(screen: &str, from: usize, to: usize) -> String {
    screen
        .lines()
        .map(|l| l.chars().skip(from).take(to - from).collect::<String>() + "\n")
        .collect()
}

fn squeeze(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

#[test]
fn a_hunk_taller_than_the_pane_scrolls_by_page_and_line_and_says_where_it_is() {
    use agent_tui::protocol::review::HunkState;
    let (_d, mut app) = app();
    sized(&mut app, 100, 30);
    let mut patch = "@@ -6,1 +6,121 @@\n def first(items):\n".to_string();
    for i in 0..120 {
        patch.push_str(&format!("+# filler line {i}\n"));
    }
    review_of(
        &mut app,
        vec![one_hunk("items.py", &patch, HunkState::Pending)],
    );
    let s = screen(&app, 100, 30);
    assert!(s.contains("lines 1-27 of 122 ↓"), "{s}");
    assert!(
        s.contains("filler line 24 ") && !s.contains("filler line 25 "),
        "{s}"
    );
    app.on_key(key(KeyCode::PageDown));
    let s = screen(&app, 100, 30);
    assert!(
        s.contains("lines 26-52 of 122"),
        "a page less two rows:\n{s}"
    );
    app.on_key(key(KeyCode::Char('J')));
    assert!(screen(&app, 100, 30).contains("lines 27-53 of 122"));
    app.on_key(key(KeyCode::Char('K')));
    app.on_key(ctrl('u'));
    assert!(screen(&app, 100, 30).contains("lines 1-27 of 122"));
    for _ in 0..6 {
        app.on_key(ctrl('d'));
    }
    let s = screen(&app, 100, 30);
    assert!(
        s.contains("filler line 119") && s.contains("lines 96-122 of 122 ↑"),
        "the end of the hunk can be read:\n{s}"
    );
    // The whole file scrolls the same way.
    let rows: Vec<agent_tui::tui::WholeFileRow> = (0..130)
        .map(|i| ('+', format!("# row {i}"), Some("h_1".to_string())))
        .collect();
    app.on_key(key(KeyCode::Char('w')));
    app.loads.clear();
    app.whole_file_loaded("items.py".into(), rows);
    let s = screen(&app, 100, 30);
    assert!(
        s.contains("whole file (w)") && s.contains("lines 1-27 of 130 ↓"),
        "{s}"
    );
    for _ in 0..8 {
        app.on_key(key(KeyCode::PageDown));
    }
    assert!(screen(&app, 100, 30).contains("+# row 129"));
    // The help lists the review's scrolling keys.
    app.on_key(key(KeyCode::F(1)));
    let help = screen(&app, 200, 60);
    assert!(
        help.contains("scroll the hunk / whole file a page"),
        "{help}"
    );
}

#[test]
fn long_lines_go_on_under_a_mark_in_the_review_whole_file_editor_and_preview() {
    use agent_tui::protocol::review::HunkState;
    let wide = "    return items[-1] if items else None  # safe: handles the empty list case too, \
                returns None; and also  os.system('rm -rf ~')";
    let (_d, mut app) = app();
    let patch =
        format!("@@ -3,3 +3,3 @@\n \n def last(items):\n-    return items[len(items)]\n+{wide}\n");
    review_of(
        &mut app,
        vec![one_hunk("items.py", &patch, HunkState::Pending)],
    );
    for (w, h) in [(100, 30), (60, 20)] {
        let s = screen(&app, w, h);
        assert!(s.contains('┆'), "a continuation mark:\n{s}");
        assert!(
            squeezed(&s).contains(&squeeze(wide)),
            "every character at {w}x{h}:\n{s}"
        );
    }
    // The whole file.
    app.on_key(key(KeyCode::Char('w')));
    app.loads.clear();
    app.whole_file_loaded(
        "items.py".into(),
        vec![
            (' ', "def last(items):".into(), None),
            (
                '-',
                "    return items[len(items)]".into(),
                Some("h_1".into()),
            ),
            ('+', wide.into(), Some("h_1".into())),
        ],
    );
    let s = screen(&app, 100, 30);
    assert!(
        s.contains("whole file") && squeezed(&s).contains(&squeeze(wide)),
        "{s}"
    );
    app.on_key(key(KeyCode::Char('w')));
    // The hunk editor wraps too, its next rows marked in the gutter.
    app.on_key(key(KeyCode::Char('e')));
    let s = region(&screen(&app, 100, 30), 3, 97);
    assert!(
        s.contains('┆') && squeezed(&s).contains(&squeeze(wide)),
        "{s}"
    );
    app.on_key(key(KeyCode::Esc));
    app.on_key(key(KeyCode::Esc));
    // The file preview.
    app.on_key(key(KeyCode::BackTab));
    app.on_key(key(KeyCode::BackTab));
    app.on_key(key(KeyCode::Char('r')));
    app.on_key(key(KeyCode::Enter));
    let Some(agent_tui::tui::Load::Preview { generation, path }) = app.loads.pop() else {
        panic!("a preview is asked for")
    };
    let long = format!("{}END", "abcdefghij".repeat(30));
    app.preview_loaded(
        generation,
        Ok(agent_tui::tui::highlight(&path, &format!("{long}\n"), 100)),
    );
    let s = region(&screen(&app, 100, 30), 3, 97);
    assert!(s.contains('┆') && squeezed(&s).contains(&long), "{s}");
}

#[test]
fn tree_badges_say_pending_applied_or_rejected() {
    use agent_tui::protocol::review::HunkState;
    let (_d, mut app) = app();
    let patch = "@@ -1,1 +1,1 @@\n-# hi\n+# hello\n";
    let mut bundle = DiffBundle {
        job_id: "j".into(),
        files: vec![one_hunk("README.md", patch, HunkState::Accepted)],
    };
    app.on_event(&ev(
        "j",
        1,
        EventBody::DiffGenerated {
            bundle: bundle.clone(),
        },
    ));
    let tree_row = |app: &App| {
        screen(app, 100, 30)
            .lines()
            .find(|l| l.starts_with("│  README.md"))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        tree_row(&app).contains("README.md ●"),
        "accepted, not written: {}",
        tree_row(&app)
    );
    bundle.files[0].hunks[0].state = HunkState::Applied;
    app.on_event(&ev(
        "j",
        2,
        EventBody::ApplyCompleted {
            checkpoint_id: "cp_1".into(),
            files: vec!["README.md".into()],
            hunk_ids: vec!["h_1".into()],
            bundle: bundle.clone(),
            edits: vec![],
        },
    ));
    assert!(app.review.is_none());
    assert!(
        tree_row(&app).contains("README.md ✓"),
        "applied: {}",
        tree_row(&app)
    );
    bundle.files[0].hunks[0].state = HunkState::Rejected;
    app.on_event(&ev("k", 3, EventBody::DiffGenerated { bundle }));
    assert!(tree_row(&app).contains("README.md ✗"), "{}", tree_row(&app));
}

#[test]
fn files_made_after_start_show_in_the_tree_after_an_apply_or_a_command() {
    let (d, mut app) = app();
    std::fs::write(d.path().join("newmod.py"), "x = 1\n").unwrap();
    app.on_event(&ev(
        "j",
        1,
        EventBody::CheckpointCreated {
            checkpoint_id: "cp_1".into(),
            files: vec!["newmod.py".into()],
            kind: agent_tui::protocol::CheckpointKind::Exec,
        },
    ));
    assert!(app.loads.contains(&agent_tui::tui::Load::TreeDir {
        rel: String::new(),
        depth: 0
    }));
    plain_loads(&mut app, d.path());
    let s = screen(&app, 100, 30);
    assert!(s.contains("newmod.py"), "{s}");
}

#[test]
fn a_notice_while_an_answer_streams_does_not_split_it() {
    let (_d, mut app) = app();
    let job = start_job(&mut app, "SLOW please");
    let delta = |app: &mut App, n: u64, text: &str| {
        app.on_event(&ev(
            &job,
            n,
            EventBody::LlmDelta {
                text: text.into(),
                attempt: 1,
            },
        ));
    };
    delta(
        &mut app,
        1,
        "# Heading one\n\nSome **bold** text and a [link](h",
    );
    app.on_key(ctrl('r'));
    assert_eq!(app.status_note.as_deref(), Some("Nothing to review."));
    type_text(&mut app, "PROSE x");
    // Enter while it streams steers the job (nothing is said in the chat
    // until the model has it).
    let sent = app.on_key(key(KeyCode::Enter));
    assert!(
        matches!(&sent[..], [Command::Steer { text, .. }] if text == "PROSE x"),
        "{sent:?}"
    );
    delta(&mut app, 2, "ttps://example.com/v) to follow.");
    let whole =
        "# Heading one\n\nSome **bold** text and a [link](https://example.com/v) to follow.";
    app.on_event(&ev(
        &job,
        3,
        EventBody::JobCompleted {
            answer: whole.into(),
            usage: Usage::default(),
            status: JobStatus::Completed,
            budget_exhausted: false,
            provider: String::new(),
            fallback_reason: None,
        },
    ));
    let answers: Vec<&str> = app
        .transcript
        .iter()
        .filter_map(|e| match e {
            Entry::Assistant(a) => Some(a.text()),
            _ => None,
        })
        .collect();
    assert_eq!(answers, [whole], "one answer, whole");
    let n = app.transcript.len();
    assert!(matches!(&app.transcript[n - 1], Entry::Notice(t) if t == "Nothing to review."));
}

#[test]
fn a_review_with_every_hunk_rejected_closes_with_nothing_written() {
    use agent_tui::protocol::review::HunkState;
    let (_d, mut app) = app();
    let patch = "@@ -1,1 +1,1 @@\n-# hi\n+# hello\n";
    review_of(
        &mut app,
        vec![one_hunk("README.md", patch, HunkState::Pending)],
    );
    assert!(
        screen(&app, 100, 30)
            .lines()
            .nth(29)
            .unwrap()
            .contains("review 0/1")
    );
    let rejected = DiffBundle {
        job_id: "j".into(),
        files: vec![one_hunk("README.md", patch, HunkState::Rejected)],
    };
    app.on_event(&ev("j", 2, decided(&rejected)));
    let s = screen(&app, 100, 30);
    assert!(
        !s.lines().nth(29).unwrap().contains("review 1/1"),
        "decided: no longer in the status bar\n{s}"
    );
    assert!(app.on_key(ctrl('s')).is_empty(), "no apply is sent");
    let s = screen(&app, 100, 30);
    assert!(app.review.is_none() && !s.contains("Apply failed"), "{s}");
    assert!(s.contains("Nothing accepted: nothing written"), "{s}");
    app.on_key(ctrl('r'));
    assert!(matches!(app.transcript.last(), Some(Entry::Notice(t)) if t == "Nothing to review."));
}

#[test]
fn the_whole_file_starts_at_its_top_when_it_fits() {
    let (_d, mut app) = app();
    let mut b = bundle("j");
    b.files.truncate(1);
    review_of(&mut app, b.files);
    app.on_key(key(KeyCode::Char('j')));
    app.on_key(key(KeyCode::Char('w')));
    app.loads.clear();
    let mut rows: Vec<agent_tui::tui::WholeFileRow> = vec![
        ('-', "fn main() {}".into(), Some("h_1".into())),
        ('+', "fn main() { run(); }".into(), Some("h_1".into())),
    ];
    rows.extend((2..9).map(|i| (' ', format!("line {i}"), None)));
    rows.push((' ', "old".into(), Some("h_2".into())));
    rows.push(('+', "new".into(), Some("h_2".into())));
    app.whole_file_loaded("src/main.rs".into(), rows);
    let s = screen(&app, 100, 30);
    assert!(
        s.contains("-fn main() {}") && s.contains("+new"),
        "from line 1:\n{s}"
    );
    assert!(!s.contains("lines "), "everything fits: no position\n{s}");
}

#[test]
fn the_diff_gutter_fits_line_numbers_past_a_thousand() {
    use agent_tui::protocol::review::HunkState;
    let (_d, mut app) = app();
    let patch = "@@ -3597,2 +3597,2 @@\n x_3597 = 3597\n-x_3598 = 3598\n+x_3598 = 0\n";
    review_of(
        &mut app,
        vec![one_hunk("big.py", patch, HunkState::Pending)],
    );
    let s = screen(&app, 100, 30);
    assert!(s.contains("3597 3597  x_3597"), "{s}");
    assert!(
        s.contains("3598      -x_3598") && s.contains("     3598 +x_3598"),
        "{s}"
    );
}

#[test]
fn pgup_and_pgdn_move_a_page_in_the_chat_and_the_preview() {
    let (d, mut app) = app();
    for i in 0..200 {
        app.transcript.push(Entry::Notice(format!("line {i}")));
    }
    for (w, h) in [(100, 30), (200, 50)] {
        sized(&mut app, w, h);
        app.scroll = 0;
        app.focus = agent_tui::tui::Focus::Chat;
        let rows = agent_tui::tui::chat_rows(&app, ratatui::layout::Rect::new(0, 0, w, h));
        assert!(rows > 12);
        app.on_key(key(KeyCode::PageUp));
        assert_eq!(app.scroll, rows - 2, "a page at {w}x{h}");
    }
    let text: String = (1..=500).map(|i| format!("l{i}\n")).collect();
    std::fs::write(d.path().join("long.txt"), &text).unwrap();
    sized(&mut app, 100, 30);
    app.focus = agent_tui::tui::Focus::Input;
    app.on_key(key(KeyCode::BackTab));
    app.on_key(key(KeyCode::BackTab));
    plain_loads(&mut app, d.path());
    app.on_key(key(KeyCode::Char('l')));
    app.on_key(key(KeyCode::Enter));
    plain_loads(&mut app, d.path());
    app.on_key(key(KeyCode::PageDown));
    let Overlay::Preview { scroll, .. } = &app.overlay else {
        panic!("a preview")
    };
    // 30 rows: 29 of body, an overlay margin each side, borders: 25 shown.
    assert_eq!(*scroll, 23);
}

#[test]
fn the_approval_keys_stay_in_view_at_60x20() {
    let (_d, mut app) = app();
    app.on_event(&ev(
        "j",
        1,
        EventBody::ApprovalRequested {
            tool_call_id: "c".into(),
            name: "run_command".into(),
            arguments: json!({"command": "python3 -c \"import os; print(os.listdir('.')); print('a long inline program that goes on and on and on')\""}),
            root: "/tmp/qa-tui/proj".into(),
            cwd: ".".into(),
            sandbox: "Landlock: writes in the root only, no network".into(),
            batch: vec![],
        },
    ));
    for (w, h) in [(60, 20), (60, 15), (100, 30)] {
        let s = screen(&app, w, h);
        assert!(
            s.contains("y / Enter: allow once · n / Esc: deny"),
            "{w}x{h}:\n{s}"
        );
    }
}

#[test]
fn a_command_taller_than_the_window_shows_its_end_and_says_what_is_not_shown() {
    let (_d, mut app) = app();
    let names: Vec<String> = (0..200).map(|i| format!("-name f{i}")).collect();
    let command = format!("find . {} -delete", names.join(" -o "));
    app.on_event(&ev(
        "j",
        1,
        EventBody::ApprovalRequested {
            tool_call_id: "c".into(),
            name: "run_command".into(),
            arguments: json!({ "command": command }),
            root: "/tmp/proj".into(),
            cwd: ".".into(),
            sandbox: "Landlock: writes in the root only, no network".into(),
            batch: vec![],
        },
    ));
    for (w, h) in [(100, 30), (80, 24), (60, 20)] {
        let s = screen(&app, w, h);
        assert!(s.contains("-delete"), "the end is hidden at {w}x{h}:\n{s}");
        assert!(s.contains("of the command not shown"), "{w}x{h}:\n{s}");
        assert!(s.contains("find ."), "{w}x{h}:\n{s}");
        assert!(s.contains("Esc: deny"), "{w}x{h}:\n{s}");
    }
}

#[test]
fn a_verify_that_cannot_run_is_not_titled_nothing_written() {
    let (_d, mut app) = app();
    review_of(&mut app, bundle("j").files);
    app.replied(
        &agent_tui::protocol::Command::Verify { job_id: "j".into() },
        Err(agent_tui::protocol::EngineError::Invalid {
            message: "there is no verify command: set `[verify] command` in the config".into(),
            unknown: vec![],
        }),
    );
    let s = screen(&app, 100, 30);
    assert!(
        s.contains("verify not run") && !s.contains("nothing written"),
        "{s}"
    );
    app.on_event(&ev(
        "j",
        2,
        EventBody::ApplyFailed {
            error: "conflict".into(),
            code: agent_tui::protocol::ApplyFailure::Conflict,
            conflicts: vec![],
        },
    ));
    assert!(screen(&app, 100, 30).contains("nothing written"));
}

fn completed(answer: &str) -> EventBody {
    EventBody::JobCompleted {
        answer: answer.into(),
        usage: Usage::default(),
        status: JobStatus::Completed,
        budget_exhausted: false,
        provider: String::new(),
        fallback_reason: None,
    }
}

fn at(job: &str, cursor: u64, ts: &str, body: EventBody) -> Event {
    Event {
        ts: format!("2026-01-01T00:00:{ts}.000Z"),
        ..ev(job, cursor, body)
    }
}

/// Issue 3: an instruction sent while the review on screen still has hunks
/// not applied asks once (the text stays); the next Enter sends it and the
/// review stays pending in the session: once the new review is done, it is
/// said, and Ctrl+R opens it (asked of the engine) with its decisions; the
/// status bar counts the review on screen only.
#[test]
fn an_instruction_over_a_review_not_applied_asks_once_and_ctrl_r_reaches_it_later() {
    use agent_tui::protocol::PendingReview;
    use agent_tui::protocol::review::HunkState;
    use agent_tui::tui::{Load, Loaded};
    let (_d, mut app) = app();
    app.session = Some("s_1".into());
    let mut first = bundle("j");
    app.on_event(&ev(
        "j",
        1,
        EventBody::DiffGenerated {
            bundle: first.clone(),
        },
    ));
    first.files[0].hunks[0].state = HunkState::Accepted;
    app.on_event(&ev("j", 2, decided(&first)));
    type_text(&mut app, "README please");
    assert!(app.on_key(key(KeyCode::Enter)).is_empty(), "asked first");
    let said = "The review of src/main.rs and README.md has 3 hunks not applied (1 accepted): \
                Enter again sends anyway (the review stays: Ctrl+R), Ctrl+R opens it.";
    assert_eq!(app.transcript.last(), Some(&Entry::Notice(said.into())));
    assert_eq!(app.status_note.as_deref(), Some(said));
    assert_eq!(app.input.lines(), ["README please"], "the text is kept");
    let ops = app.on_key(key(KeyCode::Enter));
    let [Command::StartJob { job_id, prompt, .. }] = ops.as_slice() else {
        panic!("the second Enter sends: {ops:?}")
    };
    assert_eq!(prompt, "README please");
    // The new job's review takes the screen; the status bar counts it alone.
    let patch = "@@ -1,1 +1,1 @@\n-# hi\n+# hello\n";
    let mut second = DiffBundle {
        job_id: job_id.clone(),
        files: vec![one_hunk("README.md", patch, HunkState::Accepted)],
    };
    app.on_event(&ev(
        job_id,
        1,
        EventBody::DiffGenerated {
            bundle: second.clone(),
        },
    ));
    let status = screen(&app, 100, 30).lines().nth(29).unwrap().to_string();
    assert!(status.contains("review 1/1"), "{status}");
    second.files[0].hunks[0].state = HunkState::Applied;
    app.loads.clear();
    app.on_event(&ev(
        job_id,
        2,
        EventBody::ApplyCompleted {
            checkpoint_id: "cp_1".into(),
            files: vec!["README.md".into()],
            hunk_ids: vec!["h_1".into()],
            bundle: second,
            edits: vec![],
        },
    ));
    assert!(app.review.is_none());
    let asked = |open| Load::PendingReview {
        session: "s_1".into(),
        open,
    };
    assert!(app.loads.contains(&asked(false)), "{:?}", app.loads);
    let pending = PendingReview {
        session_id: "s_1".into(),
        job_id: "j".into(),
        bundle: first.clone(),
        verify: None,
        tree_changed: false,
    };
    app.loaded(Loaded::PendingReview {
        open: false,
        result: Ok(Some(Box::new(pending.clone()))),
    });
    assert!(
        matches!(app.transcript.last(), Some(Entry::Notice(t)) if t.starts_with("The review of src/main.rs and README.md is still pending")),
        "{:?}",
        app.transcript.last()
    );
    assert!(app.review.is_none(), "said, not opened");
    app.loads.clear();
    app.on_key(ctrl('r'));
    assert_eq!(app.loads, [asked(true)]);
    app.loaded(Loaded::PendingReview {
        open: true,
        result: Ok(Some(Box::new(pending))),
    });
    let s = screen(&app, 100, 30);
    assert_eq!(app.review.as_ref().map(|r| r.job_id.as_str()), Some("j"));
    assert!(s.contains("src/main.rs · h_1 [accepted]"), "{s}");
    assert!(s.lines().nth(29).unwrap().contains("review 1/3"), "{s}");
    // Nothing pending any more: Ctrl+R says so once the engine answers.
    app.review = None;
    app.view = agent_tui::tui::View::Chat;
    app.on_key(ctrl('r'));
    app.loaded(Loaded::PendingReview {
        open: true,
        result: Ok(None),
    });
    assert!(matches!(app.transcript.last(), Some(Entry::Notice(t)) if t == "Nothing to review."));
}

/// Issue 5: a resumed session shows each instruction as the user wrote it
/// with its pins dim under it (not the marker the model reads), its tool
/// lines and its apply notices where they happened; the last instruction's
/// pins come back (none when it had none).
#[test]
fn a_resumed_session_shows_the_users_words_pins_tool_lines_and_notices() {
    use agent_tui::protocol::{JobSummary, Transcript};
    use agent_tui::tui::{Loaded, Resumed};
    let job = |id: &str, prompt: &str, answer: &str| JobSummary {
        job_id: id.into(),
        prompt: prompt.into(),
        status: Some(JobStatus::Completed),
        answer: Some(answer.into()),
        edits: 0,
        bundle: None,
        events: 0,
        images: Vec::new(),
        provider: String::new(),
        model: String::new(),
    };
    let marker = "\n\n[Pinned context: the user pinned these files; read them with read_file: ";
    let started = |prompt: &str| EventBody::JobStarted {
        prompt: prompt.into(),
        mode: Mode::Agent,
        root: "/demo".into(),
        provider: "test".into(),
        model: "m1".into(),
        images: Vec::new(),
    };
    for (last, pins) in [
        (
            format!("two{marker}a.rs, src/b.rs]"),
            vec!["a.rs", "src/b.rs"],
        ),
        ("two".to_string(), vec![]),
    ] {
        let first = format!("PROSE one{marker}README.md]");
        let events = vec![
            at("j2", 1, "05", started(&last)),
            at("j1", 1, "01", started(&first)),
            at(
                "j1",
                2,
                "02",
                EventBody::ToolCallRequested {
                    tool_call_id: "c1".into(),
                    name: "list_files".into(),
                    arguments: json!({"path": "."}),
                    attached: false,
                },
            ),
            at(
                "j1",
                3,
                "03",
                EventBody::ToolCallCompleted {
                    tool_call_id: "c1".into(),
                    name: "list_files".into(),
                    ok: true,
                    result: Some(json!(["a.rs"])),
                    error: None,
                    duration_ms: 3,
                },
            ),
            at("j1", 4, "04", completed("First.")),
            at("j2", 2, "06", completed("Second.")),
            // Applied after the second instruction, recorded under the first.
            at(
                "j1",
                5,
                "07",
                EventBody::ApplyCompleted {
                    checkpoint_id: "cp_1".into(),
                    files: vec!["a.rs".into()],
                    hunk_ids: vec!["h_1".into()],
                    bundle: DiffBundle {
                        job_id: "j1".into(),
                        files: vec![],
                    },
                    edits: vec![],
                },
            ),
        ];
        let resumed = Resumed {
            transcript: Transcript {
                session_id: "s_1".into(),
                root: "/demo".into(),
                created_at: "2026-01-01".into(),
                jobs: vec![job("j1", &first, "First."), job("j2", &last, "Second.")],
            },
            events,
        };
        let (_d, mut app) = app();
        app.loaded(Loaded::Session(Ok(Box::new(resumed))));
        let shown: Vec<String> = app
            .transcript
            .iter()
            .map(|e| match e {
                Entry::User(t) => format!("you {t}"),
                Entry::Pinned(p) => format!("pinned {}", p.join(", ")),
                Entry::Assistant(a) => format!("answer {}", a.text()),
                Entry::Tool { name, ok, .. } => format!("tool {name} {ok:?}"),
                Entry::Notice(t) => format!("notice {t}"),
                other => format!("{other:?}"),
            })
            .collect();
        let mut expected = vec![
            "you PROSE one",
            "pinned README.md",
            "tool list_files Some(true)",
            "answer First.",
            "you two",
        ];
        if !pins.is_empty() {
            expected.push("pinned a.rs, src/b.rs");
        }
        expected.extend([
            "answer Second.",
            "notice Applied 1 hunk to a.rs; checkpoint cp_1 (Ctrl+Z rolls back).",
        ]);
        assert_eq!(shown, expected);
        assert_eq!(app.pinned, pins, "the last instruction's pins");
        let s = screen(&app, 100, 30);
        assert!(!s.contains("[Pinned context"), "{s}");
        assert!(
            s.contains("you › PROSE one") && s.contains("pinned: README.md"),
            "{s}"
        );
        assert!(s.contains("✓ list_files"), "{s}");
    }
}

/// Issue 7: the review left behind by Ctrl+O is reached with `--continue`
/// only when its session is the folder's newest; otherwise it is named.
#[test]
fn the_review_left_by_ctrl_o_names_its_session_unless_it_is_the_newest() {
    let (_d, mut app) = app();
    assert_eq!(app.left_review_note(Some("s_b")), None, "no review");
    app.session = Some("s_a".into());
    app.on_event(&ev(
        "j",
        1,
        EventBody::DiffGenerated {
            bundle: bundle("j"),
        },
    ));
    assert_eq!(
        app.left_review_note(Some("s_b")).as_deref(),
        Some("The review pending in /demo stays there (agent-tui --resume s_a in that folder).")
    );
    assert_eq!(
        app.left_review_note(Some("s_a")).as_deref(),
        Some("The review pending in /demo stays there (agent-tui --continue in that folder).")
    );
}

/// A stored session of one job whose prompt is `prompt`, with `events`.
fn resumed_of(prompt: &str, events: Vec<Event>) -> agent_tui::tui::Resumed {
    use agent_tui::protocol::{JobSummary, Transcript};
    agent_tui::tui::Resumed {
        transcript: Transcript {
            session_id: "s_1".into(),
            root: "/demo".into(),
            created_at: "2026-01-01".into(),
            jobs: vec![JobSummary {
                job_id: "j1".into(),
                prompt: prompt.into(),
                status: Some(JobStatus::Completed),
                answer: Some("Done.".into()),
                edits: 0,
                bundle: None,
                events: 0,
                images: Vec::new(),
                provider: String::new(),
                model: String::new(),
            }],
        },
        events,
    }
}

/// Round 3 #4: the note the status bar showed while an answer streamed
/// (held back from the chat) goes once the chat has it at the job's end.
#[test]
fn a_held_notice_leaves_the_status_bar_when_the_job_ends() {
    let (_d, mut app) = app();
    let job = start_job(&mut app, "SLOW again");
    app.on_event(&ev(
        &job,
        2,
        EventBody::LlmDelta {
            text: "Some text".into(),
            attempt: 1,
        },
    ));
    app.on_key(ctrl('o'));
    let held = app.status_note.clone().unwrap_or_default();
    assert!(held.starts_with("A job is running"), "{held:?}");
    app.on_event(&ev(&job, 3, completed("Some text")));
    assert!(
        matches!(app.transcript.last(), Some(Entry::Notice(t)) if *t == held),
        "{:?}",
        app.transcript.last()
    );
    assert_eq!(app.status_note, None, "the chat has it now");
    let status = screen(&app, 100, 30).lines().nth(29).unwrap().to_string();
    assert!(!status.contains("A job is running"), "{status}");
}

/// Round 3 #6: a resumed session's tree marks the files its reviews
/// applied (✓) or rejected (✗), as the live session did; a rollback's
/// files lose their mark.
#[test]
fn a_resumed_session_keeps_the_trees_badges() {
    use agent_tui::protocol::review::HunkState;
    use agent_tui::tui::{Badge, Loaded};
    let patch = "@@ -1,1 +1,1 @@\n-# hi\n+# hello\n";
    let files = |a: HunkState, r: HunkState, g: HunkState| DiffBundle {
        job_id: "j1".into(),
        files: vec![
            one_hunk("src/main.rs", patch, a),
            one_hunk("README.md", patch, r),
            one_hunk("gone.rs", patch, g),
        ],
    };
    let pending = files(HunkState::Pending, HunkState::Pending, HunkState::Pending);
    let done = files(HunkState::Applied, HunkState::Rejected, HunkState::Applied);
    let applied = |cursor, ts, cp: &str| {
        at(
            "j1",
            cursor,
            ts,
            EventBody::ApplyCompleted {
                checkpoint_id: cp.into(),
                files: vec!["src/main.rs".into()],
                hunk_ids: vec!["h_1".into()],
                bundle: done.clone(),
                edits: vec![],
            },
        )
    };
    let events = vec![
        at("j1", 1, "01", completed("Done.")),
        at("j1", 2, "02", EventBody::DiffGenerated { bundle: pending }),
        at("j1", 3, "03", decided(&done)),
        applied(4, "04", "cp_1"),
        at(
            "j1",
            5,
            "05",
            EventBody::RollbackCompleted {
                checkpoint_id: "cp_1".into(),
                rollback_checkpoint_id: "cp_2".into(),
                files: vec!["gone.rs".into()],
            },
        ),
    ];
    let (_d, mut app) = app();
    app.loaded(Loaded::Session(Ok(Box::new(resumed_of("fix", events)))));
    let badges: Vec<(&str, Badge)> = app.badges.iter().map(|(f, b)| (f.as_str(), *b)).collect();
    assert_eq!(
        badges,
        [
            ("README.md", Badge::Rejected),
            ("src/main.rs", Badge::Applied)
        ]
    );
    let s = screen(&app, 100, 30);
    assert!(s.contains("README.md ✗"), "{s}");
}

/// Round 3 #8: a pin of the resumed session whose file is gone since is
/// dropped and said; the others (a range pin too) stay.
#[test]
fn a_resumed_pin_whose_file_is_gone_is_dropped_and_said() {
    use agent_tui::tui::Loaded;
    let (d, mut app) = app();
    let prompt = "PROSE five\n\n[Pinned context: the user pinned these files; read them \
                  with read_file: README.md, src/main.rs:1-1]";
    std::fs::remove_file(d.path().join("README.md")).unwrap();
    app.loaded(Loaded::Session(Ok(Box::new(resumed_of(prompt, vec![])))));
    plain_loads(&mut app, d.path());
    assert_eq!(app.pinned, ["src/main.rs:1-1"]);
    assert!(
        app.transcript.contains(&Entry::Notice(
            "README.md is pinned no more: it is gone.".into()
        )),
        "{:?}",
        app.transcript
    );
}

#[test]
fn a_job_whose_review_was_rejected_whole_is_done_in_the_status_bar() {
    use agent_tui::protocol::review::HunkState;
    let (_d, mut app) = app();
    let j = start_job(&mut app, "say hello");
    let patch = "@@ -1,1 +1,1 @@\n-# hi\n+# hello\n";
    let files = |state| vec![one_hunk("README.md", patch, state)];
    let pending = DiffBundle {
        job_id: j.clone(),
        files: files(HunkState::Pending),
    };
    app.on_event(&ev(&j, 2, EventBody::DiffGenerated { bundle: pending }));
    app.on_event(&ev(
        &j,
        3,
        EventBody::JobCompleted {
            answer: "Proposed.".into(),
            usage: Usage::default(),
            status: JobStatus::AwaitingReview,
            budget_exhausted: false,
            provider: String::new(),
            fallback_reason: None,
        },
    ));
    let bar = |app: &App| screen(app, 100, 30).lines().nth(29).unwrap().to_string();
    assert!(bar(&app).contains("awaiting review"), "{}", bar(&app));
    let rejected = DiffBundle {
        job_id: j.clone(),
        files: files(HunkState::Rejected),
    };
    app.on_event(&ev(&j, 4, decided(&rejected)));
    assert!(!bar(&app).contains("awaiting review"), "{}", bar(&app));
    assert!(bar(&app).contains(" done "), "{}", bar(&app));
}

#[test]
fn an_apply_waits_on_a_running_verify_and_a_stopped_one_keeps_the_verdict() {
    use agent_tui::protocol::{VerifyOutcome, VerifyResult};
    let (_d, mut app) = app();
    let mut b = bundle("j");
    b.files[0].hunks[0].state = agent_tui::protocol::review::HunkState::Accepted;
    app.on_event(&ev("j", 1, EventBody::DiffGenerated { bundle: b.clone() }));
    app.on_key(ctrl('r'));
    let started = |cursor| {
        ev(
            "j",
            cursor,
            EventBody::VerifyStarted {
                hunk_ids: vec!["h_1".into()],
                command: "cargo test".into(),
            },
        )
    };
    // Ctrl+S while the check runs asks first; the second applies (the
    // engine stops the verify).
    app.on_event(&started(2));
    assert!(app.on_key(ctrl('s')).is_empty(), "asked, not applied");
    assert!(screen(&app, 120, 30).contains("still running"));
    assert!(matches!(
        app.on_key(ctrl('s')).as_slice(),
        [Command::Apply { .. }]
    ));
    let result = |outcome: VerifyOutcome| VerifyResult {
        passed: false,
        outcome,
        command: "cargo test".into(),
        exit_code: Some(101),
        duration_ms: 2300,
        overhead_ms: 40,
        output_tail: "error: test failed".into(),
        hunk_ids: vec!["h_1".into()],
        decisions: b.verify_key(),
        baseline: None,
        confined: true,
        copy: "copy".into(),
        error: None,
        not_verified: vec![],
        tree: None,
    };
    app.on_event(&ev(
        "j",
        3,
        EventBody::VerifyCompleted(result(VerifyOutcome::Failed)),
    ));
    // Run again and stopped with Esc: the failure still stands.
    app.on_event(&started(4));
    app.on_event(&ev(
        "j",
        5,
        EventBody::VerifyCompleted(result(VerifyOutcome::Cancelled)),
    ));
    let s = screen(&app, 120, 30);
    assert!(s.contains("the last verdict stands: failed"), "{s}");
    assert!(
        app.on_key(ctrl('s')).is_empty(),
        "the failed verdict still asks"
    );
    assert!(screen(&app, 120, 30).contains("Ctrl+S again applies them anyway"));
    let ops = app.on_key(key(KeyCode::Char('f')));
    assert!(
        matches!(ops.as_slice(), [Command::VerifyFeedback { .. }]),
        "{ops:?}"
    );
}

/// A message sent before the first message's reply names the new session
/// waits for it and then goes to that session (it would otherwise start a
/// session of its own, without the conversation so far).
#[test]
fn a_second_message_before_the_first_reply_goes_to_the_same_session() {
    let (_d, mut app) = app();
    type_text(&mut app, "one");
    let sent = app.on_key(key(KeyCode::Enter));
    let first = app.outgoing(sent);
    assert_eq!(first.len(), 1);
    let Command::StartJob { job_id, .. } = &first[0] else {
        panic!("{first:?}")
    };
    let done = EventBody::JobCompleted {
        answer: "One.".into(),
        usage: Usage::default(),
        status: JobStatus::Completed,
        budget_exhausted: false,
        provider: String::new(),
        fallback_reason: None,
    };
    app.on_event(&ev(job_id, 1, done));
    type_text(&mut app, "two");
    let sent = app.on_key(key(KeyCode::Enter));
    assert!(
        app.outgoing(sent).is_empty(),
        "held until the session is known"
    );
    let reply = agent_tui::protocol::Reply::Started {
        job_id: job_id.clone(),
        session_id: Some("s1".into()),
    };
    app.replied(&first[0], Ok(reply));
    let ready = std::mem::take(&mut app.outbox.ready);
    let [
        Command::StartJob {
            session, prompt, ..
        },
    ] = ready.as_slice()
    else {
        panic!("{ready:?}")
    };
    assert_eq!(session, &SessionRef::Id("s1".into()));
    assert_eq!(prompt, "two");
}

/// `/web URL` pins a page; a missing or other address is said, not sent.
#[test]
fn web_pins_an_http_page_and_says_what_it_cannot_pin() {
    let (_d, mut app) = app();
    for (typed, said) in [
        ("/web", "/web takes a page's address"),
        ("/web ftp://x/y", "not `ftp://x/y`"),
        ("/web https://docs.rs/tokio", "Pinned https://docs.rs/tokio"),
    ] {
        type_text(&mut app, typed);
        assert!(app.on_key(key(KeyCode::Enter)).is_empty(), "{typed}");
        let note = app.status_note.clone().unwrap_or_default();
        assert!(note.contains(said), "{typed}: {note}");
    }
    assert_eq!(app.pinned, vec!["https://docs.rs/tokio".to_string()]);
    type_text(&mut app, "what is new?");
    let sent = app.on_key(key(KeyCode::Enter));
    let [Command::StartJob { prompt, .. }] = sent.as_slice() else {
        panic!("{sent:?}")
    };
    assert!(
        prompt.ends_with("read them with web_fetch: https://docs.rs/tokio]"),
        "{prompt}"
    );
}
