//! The chat pane: the transcript (laid out from the bottom up, so its cost
//! follows the visible rows; answers keep their laid-out lines) and the
//! input. In the chat's focus the newest message on screen is the focused
//! one: a line under it says that `y` / `Y` copy it.

use std::cell::Ref;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::pane;
use crate::protocol::Mode;
use crate::tui::app::{App, Details, Entry, Focus};
use crate::tui::markdown::Laid;
use crate::tui::wrap::{Run, runs_width, wrap};

/// Lines of `runs` wrapped under a prefix (a hanging indent after it).
fn prefixed(prefix: &str, runs: Vec<Run>, style: Style, width: usize) -> Vec<Line<'static>> {
    let lead = runs_width(&[(style, prefix.to_string())]);
    wrap(&runs, width.saturating_sub(lead).max(1))
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            let p = if i == 0 {
                prefix.to_string()
            } else {
                " ".repeat(lead)
            };
            let mut spans = vec![Span::styled(p, style)];
            spans.extend(l.into_iter().map(|(s, t)| Span::styled(t, s)));
            Line::from(spans)
        })
        .collect()
}

/// `run` on one row of `width`: what does not fit is cut at a word and
/// ends in "…" (Enter in the chat shows all of it).
fn one_row(run: Run, width: usize) -> Line<'static> {
    let style = run.0;
    let fits = runs_width(std::slice::from_ref(&run)) <= width;
    let rows = wrap(
        &[run],
        if fits {
            width
        } else {
            width.saturating_sub(1).max(1)
        },
    );
    let mut spans: Vec<Span<'static>> = rows
        .into_iter()
        .next()
        .unwrap_or_default()
        .into_iter()
        .map(|(s, t)| Span::styled(t, s))
        .collect();
    if !fits {
        spans.push(Span::styled("…", style));
    }
    Line::from(spans)
}

/// The lines of an entry other than an answer (whose lines are cached).
fn entry_lines(entry: &Entry, width: usize, details: bool) -> Vec<Line<'static>> {
    let plain = |prefix: &str, text: &str, style: Style| {
        prefixed(prefix, vec![(style, text.to_string())], style, width)
    };
    match entry {
        Entry::User(t) => plain(
            "you › ",
            t,
            Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
        ),
        Entry::Steer(t) => plain(
            "you ↳ ",
            t,
            Style::new().fg(Color::Cyan).add_modifier(Modifier::ITALIC),
        ),
        Entry::Pinned(paths) => plain(
            "      ",
            &format!("pinned: {}", paths.join(", ")),
            Style::new().fg(Color::DarkGray),
        ),
        Entry::Images(chips) => plain(
            "      ",
            &chips
                .iter()
                .map(|c| format!("▣ {c}"))
                .collect::<Vec<_>>()
                .join("   "),
            Style::new().fg(Color::DarkGray),
        ),
        Entry::Assistant(a) => plain("", a.text(), Style::new()),
        Entry::Thinking(t) => {
            let style = Style::new()
                .fg(Color::DarkGray)
                .add_modifier(Modifier::ITALIC);
            if !details {
                let words = t.split_whitespace().count();
                let text = format!("▸ thinking · {words} words (Enter shows it)");
                return plain("", &text, style);
            }
            let mut out = plain("", "▾ thinking", style);
            out.extend(plain("┊ ", t.trim(), style));
            out
        }
        Entry::Tool {
            name,
            summary,
            ok,
            detail,
        } => {
            let (mark, color) = match ok {
                None => ("…", Color::DarkGray),
                Some(true) => ("✓", Color::Green),
                Some(false) => ("✗", Color::Red),
            };
            let style = Style::new().fg(color);
            let mut out = vec![one_row((style, format!("{mark} {name} {summary}")), width)];
            if details {
                out.extend(plain("    ", detail, Style::new().fg(Color::DarkGray)));
            }
            out
        }
        Entry::Notice(t) => plain("· ", t, Style::new().fg(Color::DarkGray)),
        Entry::Error(t) => plain("error: ", t, Style::new().fg(Color::Red)),
    }
}

/// An entry's rows: owned, or an answer's cached lines.
enum Rows<'a> {
    Owned(Vec<Line<'static>>),
    Answer(Ref<'a, Laid>),
}

impl Rows<'_> {
    fn len(&self) -> usize {
        match self {
            Rows::Owned(v) => v.len(),
            Rows::Answer(l) => l.len(),
        }
    }

    fn get(&self, i: usize) -> Option<&Line<'static>> {
        match self {
            Rows::Owned(v) => v.get(i),
            Rows::Answer(l) => l.get(i),
        }
    }
}

/// What the transcript shows at a size.
pub struct TranscriptView {
    pub lines: Vec<Line<'static>>,
    /// The newest message (yours or the model's) with a row on screen.
    pub focused: Option<usize>,
    /// The most the transcript can scroll (its first row at the top).
    pub max_scroll: usize,
}

/// Rows after entry `i`: tool calls stay together with what follows, and
/// an instruction with the files it pinned and the images it carried.
fn gap(entries: &[Entry], i: usize) -> usize {
    match (&entries[i], entries.get(i + 1)) {
        (Entry::Tool { .. }, _)
        | (Entry::User(_) | Entry::Pinned(_), Some(Entry::Pinned(_) | Entry::Images(_))) => 0,
        _ => 1,
    }
}

/// Whether the row after entry `i` is where the focused message's copy
/// hint goes (after its pins and images for an instruction).
fn hint_after(entries: &[Entry], i: usize, focused: Option<usize>) -> bool {
    let under = |e: &Entry| matches!(e, Entry::Pinned(_) | Entry::Images(_));
    focused == Some(i)
        || (under(&entries[i]) && focused == i.checked_sub(1))
        || (matches!(entries[i], Entry::Images(_))
            && i >= 2
            && matches!(entries[i - 1], Entry::Pinned(_))
            && focused == Some(i - 2))
}

fn is_message(entry: &Entry) -> bool {
    matches!(entry, Entry::User(_) | Entry::Assistant(_))
}

/// The transcript's visible lines at `width` x `height`, scrolled by `app.scroll`.
pub fn transcript_view(app: &App, width: usize, height: usize) -> TranscriptView {
    // Walk back from the newest entry until the window (plus scroll) is
    // full; each entry is followed by one separator row.
    let needed = height + app.scroll;
    let mut taken: Vec<(usize, Rows<'_>)> = Vec::new();
    let mut total = 0;
    for (i, entry) in app.transcript.iter().enumerate().rev() {
        let rows = match entry {
            Entry::Assistant(a) => {
                Rows::Answer(a.lines(width, &app.code_colours, app.colours_generation))
            }
            other => Rows::Owned(entry_lines(other, width, app.details == Details::Shown)),
        };
        total += rows.len() + gap(&app.transcript, i);
        taken.push((i, rows));
        if total >= needed {
            break;
        }
    }
    taken.reverse();
    // Scrolling stops with the transcript's first row at the top.
    let end = total.saturating_sub(app.scroll).max(height.min(total));
    let start = end.saturating_sub(height);
    // The focused message: the newest whose rows meet the window.
    let mut focused = None;
    let mut row = total;
    for (i, rows) in taken.iter().rev() {
        let first = row - rows.len() - gap(&app.transcript, *i);
        if first < end && row > start && is_message(&app.transcript[*i]) {
            focused = Some(*i);
            break;
        }
        row = first;
    }
    let marker = app.focus == Focus::Chat;
    let mut lines = Vec::with_capacity(end - start);
    let mut row = 0;
    for (i, rows) in &taken {
        let n = rows.len();
        let all = n + gap(&app.transcript, *i);
        for k in 0..all {
            if (start..end).contains(&(row + k)) {
                let line = match rows.get(k) {
                    Some(l) => l.clone(),
                    None if marker && hint_after(&app.transcript, *i, focused) => {
                        let text = if width >= 48 {
                            "└ y copies this message · Y its last code block"
                        } else {
                            "└ y copy · Y copy code"
                        };
                        Line::from(Span::styled(text, Style::new().fg(Color::DarkGray)))
                    }
                    None => Line::from(""),
                };
                lines.push(line);
            }
        }
        row += all;
        if row >= end {
            break;
        }
    }
    // The walk reached the first entry unless it stopped early.
    let whole = taken.first().is_none_or(|(i, _)| *i == 0);
    let max_scroll = if whole {
        total.saturating_sub(height)
    } else {
        usize::MAX
    };
    TranscriptView {
        lines,
        focused,
        max_scroll,
    }
}

/// The transcript pane's inner area for a chat pane at `area`.
pub(super) fn transcript_inner(app: &App, area: Rect) -> Rect {
    pane(String::new(), app.focus == Focus::Chat).inner(area)
}

pub(super) fn draw_transcript(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let block = pane(" chat ".into(), app.focus == Focus::Chat);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if app.transcript.is_empty() {
        let hint = "Ask about the code (Ask), get a plan (Plan), or have edits proposed for review (Agent). Ctrl+T switches mode.";
        let lines = prefixed(
            "",
            vec![(Style::new(), hint.into())],
            Style::new().fg(Color::DarkGray),
            inner.width as usize,
        );
        frame.render_widget(
            Paragraph::new(lines).style(Style::new().fg(Color::DarkGray)),
            inner,
        );
        return;
    }
    let view = transcript_view(app, inner.width as usize, inner.height as usize);
    // Each row set as it is (laid out to the width already): a paragraph
    // would truncate and align them again, at every frame of a stream.
    let buf = frame.buffer_mut();
    for (row, line) in (inner.y..inner.bottom()).zip(&view.lines) {
        buf.set_line(inner.x, row, line, inner.width);
    }
}

pub(super) fn draw_input(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let mode = match app.mode {
        Mode::Ask => "ask",
        Mode::Plan => "plan",
        Mode::Agent => "agent",
    };
    let pins = if app.pinned.is_empty() {
        String::new()
    } else {
        format!("· pinned: {} ", app.pinned.join(", "))
    };
    let mut block = pane(format!(" {mode} › {pins}"), app.focus == Focus::Input);
    let chips = app.image_chips();
    if !chips.is_empty() {
        let shown: Vec<String> = chips.iter().map(|c| format!(" ▣ {c} ")).collect();
        block = block.title_bottom(shown.join("·"));
    }
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let rows = queue_rows(app).min(inner.height.saturating_sub(1));
    let [queue, text] =
        Layout::vertical([Constraint::Length(rows), Constraint::Min(1)]).areas(inner);
    let style = Style::new().fg(Color::DarkGray);
    let slash = app.slash_matches();
    if !slash.is_empty() {
        let width = slash.iter().map(|(n, _)| n.len()).max().unwrap_or(0) + 2;
        for (row, (name, what)) in (queue.y..queue.bottom()).zip(&slash) {
            let line = format!("/{name:<width$}{what}");
            frame
                .buffer_mut()
                .set_stringn(queue.x, row, line, usize::from(queue.width), style);
        }
        frame.render_widget(&app.input, text);
        return;
    }
    let hidden = app.queued.len().saturating_sub(usize::from(rows));
    for (i, (row, q)) in (queue.y..queue.bottom())
        .zip(app.queued.iter().skip(hidden))
        .enumerate()
    {
        let first = q.text.lines().next().unwrap_or_default();
        let more = if i == 0 && hidden > 0 {
            format!(" (+{hidden} before)")
        } else {
            String::new()
        };
        let line = format!("queued {} › {first}{more}", hidden + i + 1);
        frame
            .buffer_mut()
            .set_stringn(queue.x, row, line, usize::from(queue.width), style);
    }
    frame.render_widget(&app.input, text);
}

/// Rows above the input: the `/` popup's commands, else the queued
/// messages (at most three).
pub(super) fn queue_rows(app: &App) -> u16 {
    match app.slash_matches().len() {
        0 => app.queued.len().min(3) as u16,
        n => n as u16,
    }
}
