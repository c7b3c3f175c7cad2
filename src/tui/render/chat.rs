//! The chat pane: the transcript (laid out from the bottom up, so its cost
//! follows the visible rows) and the input.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::pane;
use crate::protocol::Mode;
use crate::tui::app::{App, Entry, Focus};

/// Wraps `text` to `width` columns (by characters), keeping blank lines.
pub(super) fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out = Vec::new();
    for raw in text.split('\n') {
        let chars: Vec<char> = raw.chars().collect();
        if chars.is_empty() {
            out.push(String::new());
        }
        for chunk in chars.chunks(width) {
            out.push(chunk.iter().collect());
        }
    }
    out
}

pub(super) fn entry_lines(entry: &Entry, width: usize, tool_details: bool) -> Vec<Line<'static>> {
    let styled = |prefix: &str, text: &str, style: Style| -> Vec<Line<'static>> {
        wrap(text, width.saturating_sub(prefix.chars().count()))
            .into_iter()
            .enumerate()
            .map(|(i, l)| {
                let p = if i == 0 {
                    prefix.to_string()
                } else {
                    " ".repeat(prefix.chars().count())
                };
                Line::from(vec![Span::styled(p, style), Span::styled(l, style)])
            })
            .collect()
    };
    let mut lines = match entry {
        Entry::User(t) => styled(
            "you › ",
            t,
            Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
        ),
        Entry::Assistant(t) => {
            let mut in_code = false;
            let mut out = Vec::new();
            for raw in t.split('\n') {
                if raw.trim_start().starts_with("```") {
                    in_code = !in_code;
                    out.push(Line::from(Span::styled(
                        raw.to_string(),
                        Style::new().fg(Color::DarkGray),
                    )));
                    continue;
                }
                let style = if in_code {
                    Style::new().fg(Color::Yellow)
                } else if raw.starts_with('#') {
                    Style::new().add_modifier(Modifier::BOLD)
                } else {
                    Style::new()
                };
                for l in wrap(raw, width) {
                    out.push(Line::from(Span::styled(l, style)));
                }
            }
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
            let text: String = format!("{mark} {name} {summary}")
                .chars()
                .take(width)
                .collect();
            let mut out = vec![Line::from(Span::styled(text, Style::new().fg(color)))];
            if tool_details {
                for l in wrap(detail, width.saturating_sub(4)) {
                    out.push(Line::from(Span::styled(
                        format!("    {l}"),
                        Style::new().fg(Color::DarkGray),
                    )));
                }
            }
            return out;
        }
        Entry::Notice(t) => styled("· ", t, Style::new().fg(Color::DarkGray)),
        Entry::Error(t) => styled("error: ", t, Style::new().fg(Color::Red)),
    };
    lines.push(Line::from(""));
    lines
}

pub(super) fn draw_transcript(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let block = pane(" chat ".into(), app.focus == Focus::Chat);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let height = inner.height as usize;
    let width = inner.width as usize;
    // Walk back from the newest entry until the window (plus scroll) is full.
    let needed = height + app.scroll;
    let mut lines: Vec<Line<'static>> = Vec::new();
    for entry in app.transcript.iter().rev() {
        let mut block_lines = entry_lines(entry, width, app.tool_details);
        block_lines.append(&mut lines);
        lines = block_lines;
        if lines.len() >= needed {
            break;
        }
    }
    if app.transcript.is_empty() {
        lines.push(Line::from(Span::styled(
            "Ask about the code (Ask), get a plan (Plan), or have edits proposed for review (Agent). Ctrl+T switches mode.",
            Style::new().fg(Color::DarkGray),
        )));
    }
    let end = lines.len().saturating_sub(app.scroll.min(lines.len()));
    let start = end.saturating_sub(height);
    let visible: Vec<Line<'static>> = lines[start..end].to_vec();
    frame.render_widget(Paragraph::new(visible), inner);
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
    let block = pane(format!(" {mode} › {pins}"), app.focus == Focus::Input);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    frame.render_widget(&app.input, inner);
}
