//! The transcript's cost while an answer streams: a 20,000-token answer fed
//! to the TUI's state in 100 deltas (as the engine batches a fast stream),
//! with a frame drawn (on a `TestBackend`, 120x36) after each one. Two
//! answers: one unbroken paragraph (the worst case for incremental parsing:
//! the whole text stays the growing tail) and realistic markdown (headings,
//! lists, code fences, tables). Budget: 100 ms CPU each, the TUI's whole
//! streaming budget being 1 s. Run with `cargo bench --bench transcript`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use agent_tui::protocol::{Event, EventBody, JobStatus, Mode, Usage};
use agent_tui::tui::{App, Tree, draw};
use cpu_time::ThreadTime;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const TOKENS: usize = 20_000;
const DELTAS: usize = 100;
const RUNS: usize = 5;
const BUDGET: Duration = Duration::from_millis(100);

fn ev(body: EventBody) -> Event {
    Event {
        cursor: 1,
        body,
        ts: "2026-01-01T00:00:00.000Z".into(),
        job_id: "j".into(),
    }
}

fn markdown() -> String {
    let mut out = String::new();
    let mut i = 0;
    while out.split_whitespace().count() < TOKENS {
        i += 1;
        out.push_str(&format!(
            "## Step {i}\n\nThe change **matters** here: `value_{i}` is read, checked and \
             written back, so the caller sees *one* consistent state.\n\n\
             - first point about step {i}\n- second point with [a link](https://example.com/{i})\n\n\
             ```rust\nfn step_{i}(x: u32) -> u32 {{\n    x.wrapping_mul({i}) + 1\n}}\n```\n\n\
             | name | value |\n|---|---:|\n| step | {i} |\n\n"
        ));
    }
    out
}

fn run(name: &str, text: &str) {
    let chars: Vec<char> = text.chars().collect();
    let per = chars.len().div_ceil(DELTAS);
    let mut cpu = Vec::new();
    for _ in 0..RUNS {
        let mut app = App::new(
            "/b".into(),
            Tree::default(),
            Mode::Ask,
            "b".into(),
            true,
            12,
        );
        let mut terminal = Terminal::new(TestBackend::new(120, 36)).unwrap();
        let start = ThreadTime::now();
        for piece in chars.chunks(per) {
            let text: String = piece.iter().collect();
            app.on_event(&ev(EventBody::LlmDelta { text, attempt: 1 }));
            terminal.draw(|f| draw(f, &app)).unwrap();
        }
        app.on_event(&ev(EventBody::JobCompleted {
            answer: text.to_string(),
            usage: Usage::default(),
            status: JobStatus::Completed,
            budget_exhausted: false,
            provider: String::new(),
            fallback_reason: None,
        }));
        terminal.draw(|f| draw(f, &app)).unwrap();
        cpu.push(start.elapsed());
    }
    cpu.sort();
    let median = cpu[RUNS / 2];
    println!(
        "{name}: {} KB in {DELTAS} deltas, a frame after each: median {:.1} ms CPU (min {:.1}, max {:.1}; budget {} ms)",
        text.len() / 1024,
        median.as_secs_f64() * 1e3,
        cpu[0].as_secs_f64() * 1e3,
        cpu[RUNS - 1].as_secs_f64() * 1e3,
        BUDGET.as_millis()
    );
    assert!(median <= BUDGET, "{name} over budget");
}

fn main() {
    let paragraph: String = (0..TOKENS).map(|i| format!(" tok{i}")).collect();
    run("one paragraph", &paragraph);
    run("markdown", &markdown());
}
