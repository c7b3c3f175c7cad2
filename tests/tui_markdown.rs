//! The transcript as a document: snapshots (insta, `TestBackend`) of each
//! markdown element at 60, 80 and 120 columns, code colours, thinking
//! blocks, and what `y` / `Y` copy.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use agent_tui::protocol::{Event, EventBody, JobStatus, Mode, Usage};
use agent_tui::tui::{App, Entry, draw, focused_message, highlight_code};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use ratatui::style::Color;

const WIDTHS: [u16; 3] = [60, 80, 120];
const HEIGHT: u16 = 40;

fn app() -> (tempfile::TempDir, App) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.rs"), "fn main() {}\n").unwrap();
    let tree = support::tui::tree(dir.path());
    let app = App::new("/demo".into(), tree, Mode::Ask, "local".into(), true, 12);
    (dir, app)
}

fn ev(body: EventBody) -> Event {
    Event {
        cursor: 1,
        body,
        ts: "2026-01-01T00:00:00.000Z".into(),
        job_id: "j".into(),
    }
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

/// An app whose model streamed `markdown` in small pieces and finished.
fn answered(markdown: &str) -> (tempfile::TempDir, App) {
    let (dir, mut app) = app();
    app.transcript.push(Entry::User("show me".into()));
    let chars: Vec<char> = markdown.chars().collect();
    for piece in chars.chunks(5) {
        let text: String = piece.iter().collect();
        app.on_event(&ev(EventBody::LlmDelta { text, attempt: 1 }));
    }
    app.on_event(&ev(completed(markdown)));
    (dir, app)
}

fn terminal(app: &App, width: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, HEIGHT)).unwrap();
    terminal.draw(|f| draw(f, app)).unwrap();
    terminal
}

/// The chat pane's text (the tree and status bar left out).
fn chat(app: &App, width: u16) -> String {
    let terminal = terminal(app, width);
    let buffer = terminal.backend().buffer();
    let tree = (width / 3).clamp(20, 40);
    (1..HEIGHT - 5)
        .map(|y| {
            let mut row = String::new();
            let mut skip = false;
            for x in tree + 1..width - 1 {
                // A wide character's second cell holds nothing of its own.
                let symbol = buffer[(x, y)].symbol();
                if !std::mem::take(&mut skip) {
                    row.push_str(symbol);
                    skip = unicode_width::UnicodeWidthStr::width(symbol) == 2;
                }
            }
            row.trim_end().to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
        .trim_end()
        .to_string()
}

fn snap(name: &str, markdown: &str) {
    let (_d, app) = answered(markdown);
    for width in WIDTHS {
        insta::assert_snapshot!(format!("md_{name}_{width}"), chat(&app, width));
    }
}

#[test]
fn headings() {
    snap(
        "headings",
        "# Heading one\n\nText under it.\n\n## Heading two\n\n### Heading three\n\nA closing paragraph.",
    );
}

#[test]
fn emphasis_and_inline_code() {
    snap(
        "emphasis",
        "Some *italic*, **bold**, ***both***, ~~struck~~ and `inline code` words in a sentence long enough to wrap at narrow widths.",
    );
}

#[test]
fn links() {
    snap(
        "links",
        "Read [the guide](https://example.com/guide/getting-started) first, or visit <https://example.com>.",
    );
}

#[test]
fn block_quotes() {
    snap(
        "quotes",
        "Before.\n\n> A quoted paragraph that is long enough to need wrapping inside the quote bar at sixty columns.\n>\n> Second quoted paragraph.\n\nAfter.",
    );
}

#[test]
fn lists() {
    snap(
        "lists",
        "1. First step with enough words to wrap onto a second line at narrow widths\n2. Second step\n   - nested bullet\n   - another nested bullet that also goes on long enough to wrap\n3. Third\n\n- [ ] open task\n- [x] done task",
    );
}

#[test]
fn tables() {
    snap(
        "table",
        "| File | Lines | Purpose |\n|:-----|------:|:-------:|\n| main.rs | 120 | entry |\n| layout.rs | 290 | fits tables to a width |",
    );
    snap(
        "table_wide",
        "| Module | Owner | Responsibility | Notes |\n|---|---|---|---|\n| src/tui/markdown/layout.rs | tui | tables, code and text fitted to the width of the pane | cached per width |\n| src/llm/think.rs | llm | thinking apart from the answer | streaming |",
    );
    // A row with more cells than the header (a small model's table): the
    // extra cells are shown, not dropped as GitHub drops them.
    snap(
        "table_ragged",
        "| File | Lines |\n|---|---:|\n| main.rs | 120 | entry point |\n| layout.rs | 290 |",
    );
}

#[test]
fn rules() {
    snap("rule", "Above the rule.\n\n---\n\nBelow the rule.");
}

#[test]
fn code_blocks() {
    snap(
        "code",
        "Run this:\n\n```rust\nfn main() {\n    let message = \"a string literal long enough to need more than one row at sixty columns\";\n    println!(\"{message}\");\n}\n```\n\nThen check.",
    );
}

#[test]
fn word_wrap_keeps_words_whole() {
    snap(
        "wrap",
        "Wrapping keeps words whole: extraordinarily matters wrap. 日本語のテキストも折り返されます。 A_single_identifier_that_is_much_wider_than_the_pane_at_sixty_columns_is_split.",
    );
}

#[test]
fn code_gets_colours_off_the_ui_task_and_keeps_its_layout() {
    let (_d, mut app) = answered("```rust\nfn main() { let x = 1; }\n```");
    let before = chat(&app, 80);
    let requests = std::mem::take(&mut app.highlight_requests);
    assert_eq!(requests.len(), 1, "one request per code block");
    let (key, lang, code) = &requests[0];
    assert_eq!(
        (lang.as_str(), code.as_str()),
        ("rust", "fn main() { let x = 1; }")
    );
    app.code_highlighted(*key, highlight_code(lang, code, 100));
    assert_eq!(chat(&app, 80), before, "colours do not move text");
    let terminal = terminal(&app, 80);
    let buffer = terminal.backend().buffer();
    let row = (0..HEIGHT)
        .find(|y| {
            (0..80)
                .map(|x| buffer[(x, *y)].symbol())
                .collect::<String>()
                .contains("fn main")
        })
        .unwrap();
    let colours: std::collections::HashSet<Color> = (30..79)
        .map(|x| buffer[(x, row)].fg)
        .filter(|c| *c != Color::Reset)
        .collect();
    assert!(
        colours.len() >= 3,
        "keyword, name and number coloured apart: {colours:?}"
    );
}

#[test]
fn thinking_is_folded_apart_from_the_answer_and_expands() {
    let (_d, mut app) = app();
    app.transcript.push(Entry::User("why?".into()));
    for piece in ["Let me weigh ", "the options first."] {
        app.on_event(&ev(EventBody::LlmReasoning {
            text: piece.into(),
            attempt: 1,
        }));
    }
    app.on_event(&ev(EventBody::LlmDelta {
        text: "Because **it is**.".into(),
        attempt: 1,
    }));
    app.on_event(&ev(completed("Because **it is**.")));
    let folded = chat(&app, 80);
    assert!(folded.contains("▸ thinking · 6 words"), "{folded}");
    assert!(!folded.contains("weigh"), "{folded}");
    assert!(folded.contains("Because it is."), "{folded}");
    app.focus = agent_tui::tui::Focus::Chat;
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    insta::assert_snapshot!("md_thinking_expanded_80", chat(&app, 80));
    let answer = app.transcript.iter().find_map(|e| match e {
        Entry::Assistant(a) => Some(a.text().to_string()),
        _ => None,
    });
    assert_eq!(answer.as_deref(), Some("Because **it is**."));
}

#[test]
fn a_retried_attempt_drops_its_thinking_and_text() {
    let (_d, mut app) = app();
    app.on_event(&ev(EventBody::LlmReasoning {
        text: "first try".into(),
        attempt: 1,
    }));
    app.on_event(&ev(EventBody::LlmDelta {
        text: "partial".into(),
        attempt: 1,
    }));
    app.on_event(&ev(EventBody::LlmDelta {
        text: "whole answer".into(),
        attempt: 2,
    }));
    assert_eq!(
        app.transcript,
        vec![Entry::Assistant("whole answer".into())]
    );
}

#[test]
fn y_and_shift_y_copy_the_focused_message_and_its_last_code_block() {
    let filler: String = (1..=40).map(|i| format!("point {i}\n\n")).collect();
    let md = format!("{filler}Two blocks:\n\n```sh\necho one\n```\n\n```py\nprint('two')\n```\n");
    let (_d, mut app) = answered(&md);
    app.transcript.push(Entry::User("and more?".into()));
    let long: String = (1..=60).map(|i| format!("line {i}\n\n")).collect();
    app.push_answer(&long);
    app.focus = agent_tui::tui::Focus::Chat;
    let area = Rect::new(0, 0, 80, HEIGHT);
    assert_eq!(
        focused_message(&app, area),
        Some(3),
        "the newest message on screen"
    );
    // Scrolled up to the first answer, it is the focused one, marked.
    app.scroll = 120 + 2;
    assert_eq!(focused_message(&app, area), Some(1));
    assert!(chat(&app, 80).contains("└ y copies this message · Y its last code block"));
    app.on_key(KeyEvent::new(KeyCode::Char('y'), KeyModifiers::NONE));
    let request = app.copy_request.take().unwrap();
    assert_eq!(app.copy_text(Some(1), request).unwrap().0, md);
    app.on_key(KeyEvent::new(KeyCode::Char('Y'), KeyModifiers::SHIFT));
    let request = app.copy_request.take().unwrap();
    let (code, what) = app.copy_text(Some(1), request).unwrap();
    assert_eq!(code, "print('two')");
    assert_eq!(what, "the code block (1 line)");
    // Your own message has no code block to copy.
    assert!(app.copy_text(Some(0), request).is_err());
    // Scrolling past the top keeps the top in view.
    app.scroll = 10_000;
    assert!(chat(&app, 80).starts_with("you › show me"));
    assert_eq!(focused_message(&app, area), Some(1));
    let limit = agent_tui::tui::max_scroll(&app, area).unwrap();
    app.scroll = limit;
    let top = chat(&app, 80);
    assert!(top.starts_with("you › show me"));
    app.scroll = limit - 1;
    assert!(
        !chat(&app, 80).starts_with("you › show me"),
        "the limit is the least scroll showing the top"
    );
}
