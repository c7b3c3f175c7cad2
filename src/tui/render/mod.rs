//! Drawing the app: a pure function of `&App` onto a frame. The transcript
//! is laid out from the bottom up, so its cost follows the visible rows, not
//! the session's length.

use crate::tui::overrides::HintPane;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

mod approval;
mod chat;
mod find;
mod overlays;
mod review;
mod review_rows;

pub use overlays::help_line_count;
pub use review::review_window;

use super::app::{App, Badge, Focus, ProviderState, View};
use super::tree::NodeKind;
use crate::protocol::JobStatus;

pub const MIN_WIDTH: u16 = 60;
pub const MIN_HEIGHT: u16 = 15;

pub fn draw(frame: &mut Frame<'_>, app: &App) {
    let area = frame.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let msg = format!(
            "Terminal too small: {}x{} (needs {MIN_WIDTH}x{MIN_HEIGHT})",
            area.width, area.height
        );
        frame.render_widget(Paragraph::new(msg).wrap(Wrap { trim: true }), area);
        return;
    }
    let [body, status] = Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(area);
    if app.view == View::Review {
        review::draw_review(frame, app, body);
    } else {
        let [tree, chat, input] = panes(app, body);
        draw_tree(frame, app, tree);
        chat::draw_transcript(frame, app, chat);
        chat::draw_input(frame, app, input);
    }
    draw_status(frame, app, status);
    overlays::draw_overlay(frame, app, overlay_area(body));
    crate::tui::theme::adapt(frame.buffer_mut(), app.theme);
}

/// Where overlays go: inside the panes' borders with a margin (two columns,
/// one row), so no overlay border touches or covers a pane's, at any size.
pub(super) fn overlay_area(body: Rect) -> Rect {
    Rect {
        x: body.x + 2,
        y: body.y + 1,
        width: body.width.saturating_sub(4),
        height: body.height.saturating_sub(2),
    }
}

/// The tree, chat and input panes of the main view.
fn panes(app: &App, body: Rect) -> [Rect; 3] {
    let tree_width = (body.width / 3).clamp(20, 40);
    let [tree, right] =
        Layout::horizontal([Constraint::Length(tree_width), Constraint::Min(20)]).areas(body);
    let queued = chat::queue_rows(app);
    let input_height = (app.input.lines().len() as u16 + 2).clamp(3, 8) + queued;
    let [chat, input] =
        Layout::vertical([Constraint::Min(3), Constraint::Length(input_height)]).areas(right);
    [tree, chat, input]
}

fn transcript_view(app: &App, area: Rect) -> Option<chat::TranscriptView> {
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT || app.view == View::Review {
        return None;
    }
    let [body, _] = Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(area);
    let [_, chat, _] = panes(app, body);
    let inner = chat::transcript_inner(app, chat);
    Some(chat::transcript_view(
        app,
        inner.width as usize,
        inner.height as usize,
    ))
}

/// The rows of text the chat shows in a terminal of `screen`.
pub fn chat_rows(app: &App, screen: Rect) -> usize {
    let [body, _] = Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(screen);
    let [_, chat, _] = panes(app, body);
    usize::from(chat::transcript_inner(app, chat).height)
}

/// The rows of text a file preview shows in a terminal of `screen`.
pub fn preview_rows(screen: Rect) -> usize {
    let [body, _] = Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(screen);
    usize::from(overlay_area(body).height.saturating_sub(2))
}

/// The message the chat's focus is on in a frame of `area` (what `y`
/// copies): the newest message with a row on screen.
pub fn focused_message(app: &App, area: Rect) -> Option<usize> {
    transcript_view(app, area)?.focused
}

/// The most the transcript can scroll up in a frame of `area`.
pub fn max_scroll(app: &App, area: Rect) -> Option<usize> {
    transcript_view(app, area).map(|v| v.max_scroll)
}

pub(super) fn pane(title: String, focused: bool) -> Block<'static> {
    let style = if focused {
        Style::new().fg(Color::Cyan)
    } else {
        Style::new().fg(Color::DarkGray)
    };
    Block::default()
        .borders(Borders::ALL)
        .border_style(style)
        .title(title)
}

fn draw_tree(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let block = pane(format!(" {} ", app.root), app.focus == Focus::Tree);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let height = inner.height as usize;
    let offset = app.tree.offset(height);
    let badge = |rel: &str| -> Option<(char, Color)> {
        Some(match app.badges.get(rel)? {
            Badge::Pending => ('●', Color::Yellow),
            Badge::Applied => ('✓', Color::Green),
            Badge::Rejected => ('✗', Color::Red),
        })
    };
    let lines: Vec<Line> = app
        .tree
        .nodes()
        .iter()
        .enumerate()
        .skip(offset)
        .take(height)
        .map(|(i, n)| {
            let icon = match n.kind {
                NodeKind::Dir { expanded: true } => "▾ ",
                NodeKind::Dir { expanded: false } => "▸ ",
                NodeKind::File => "  ",
            };
            let mut spans = vec![Span::raw(format!(
                "{}{icon}{}",
                "  ".repeat(n.depth),
                n.name
            ))];
            if let Some(note) = n.note {
                spans.push(Span::styled(
                    format!(" {note}"),
                    Style::new().add_modifier(Modifier::DIM),
                ));
            }
            if let Some((c, color)) = badge(&n.rel) {
                spans.push(Span::styled(format!(" {c}"), Style::new().fg(color)));
            }
            let line = Line::from(spans);
            if i == app.tree.selected_index() {
                line.style(Style::new().add_modifier(Modifier::REVERSED))
            } else {
                line
            }
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

fn draw_status(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let mode = format!(" {} ", app.mode.as_str().to_uppercase());
    let (state, colour) = match app.provider_state {
        ProviderState::Missing => ("", Color::Red),
        ProviderState::Online => ("● online", Color::Green),
        ProviderState::Degraded => ("◐ degraded", Color::Yellow),
        ProviderState::Offline => ("○ offline", Color::Red),
    };
    let provider = Span::styled(
        format!(" {} {state} ", app.shown_provider()),
        Style::new().fg(colour),
    );
    let mode = Span::styled(mode, Style::new().fg(Color::Black).bg(Color::Cyan));
    // A note (what was just copied) shows until the next key, in place of
    // the job, counts and hints.
    if let Some(note) = &app.status_note {
        let room = (area.width as usize).saturating_sub(mode.width() + provider.width());
        let text: String = format!(" {note}").chars().take(room).collect();
        let note = Span::styled(text, Style::new().fg(Color::Green));
        frame.render_widget(Paragraph::new(Line::from(vec![mode, provider, note])), area);
        return;
    }
    let mut spans = vec![mode, provider];
    spans.extend(job_spans(app));
    spans.extend(mcp_spans(app));
    // Said where it is so by design (Windows): commands run unconfined,
    // each one asked for.
    if crate::platform::sandbox::NO_CONFINEMENT {
        spans.push(Span::styled(
            " commands unconfined ",
            Style::new().fg(Color::Yellow),
        ));
    }
    if let Some(label) = app.index.label() {
        let colour = match app.index {
            crate::tui::app::IndexGauge::Failed(_) => Color::Red,
            _ => Color::DarkGray,
        };
        spans.push(Span::styled(format!(" {label} "), Style::new().fg(colour)));
    }
    let room = (area.width as usize).saturating_sub(spans.iter().map(Span::width).sum());
    spans.push(hint_span(app, room));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The job's state and steps, the tokens, how full the window is, the
/// review's progress.
fn job_spans(app: &App) -> Vec<Span<'static>> {
    let job = match &app.job {
        Some(j) => {
            let state = match j.status {
                JobStatus::Queued => "queued",
                JobStatus::Running => "running",
                JobStatus::WaitingForUser => "waiting for you",
                JobStatus::AwaitingReview => "awaiting review",
                JobStatus::Completed => "done",
                JobStatus::Failed => "failed",
                JobStatus::Cancelled => "cancelled",
            };
            format!(" {state} {}/{} ", j.steps, j.max_steps)
        }
        None => " idle ".to_string(),
    };
    // "~": some counts are estimates (the server reported none).
    let tokens = format!(
        " {}{} tok ",
        if app.tokens_estimated { "~" } else { "" },
        app.tokens.input_tokens + app.tokens.output_tokens
    );
    let mut spans = vec![Span::raw(job), Span::raw(tokens)];
    if let Some(usd) = app.cost.shown() {
        let digits = match usd {
            1.0.. => 2,
            0.01..1.0 => 3,
            _ => 6,
        };
        spans.push(Span::raw(format!(" ${usd:.digits$} ")));
    }
    if let Some(gauge) = &app.context {
        let percent = gauge.percent();
        let colour = match percent {
            0..70 => Color::Reset,
            70..90 => Color::Yellow,
            _ => Color::Red,
        };
        spans.push(Span::styled(
            format!(" ctx {percent}% "),
            Style::new().fg(colour),
        ));
    }
    // Only while it has something to decide or to apply.
    if let Some(r) = app.review.as_ref().filter(|r| r.bundle.is_pending()) {
        let (done, all) = r.progress();
        spans.push(Span::styled(
            format!(" review {done}/{all} "),
            Style::new().fg(Color::Yellow),
        ));
    }
    spans
}

/// MCP servers once a job has started them: ● running, ✗ failed.
fn mcp_spans(app: &App) -> Vec<Span<'static>> {
    if app.mcp.is_empty() {
        return Vec::new();
    }
    let mut spans = vec![Span::raw(" mcp")];
    for server in &app.mcp {
        let (mark, colour) = match server.state {
            crate::protocol::McpState::Running => ("●", Color::Green),
            crate::protocol::McpState::Failed => ("✗", Color::Red),
            crate::protocol::McpState::Stopped | crate::protocol::McpState::Disabled => {
                ("○", Color::DarkGray)
            }
        };
        spans.push(Span::styled(
            format!(" {mark}{}", server.name),
            Style::new().fg(colour),
        ));
    }
    spans.push(Span::raw(" "));
    spans
}

/// Hints for the focused pane, most useful first, as many as fit in
/// `room`, with the keys the keymap has now.
fn hint_span(app: &App, room: usize) -> Span<'static> {
    let pane = if app.view == View::Review {
        HintPane::Review
    } else if app.focus == Focus::Chat {
        HintPane::Chat
    } else {
        HintPane::Other
    };
    let mut room = room;
    let mut text = String::new();
    for hint in app.keymap.status_hints(pane) {
        let piece = if text.is_empty() {
            format!(" {hint}")
        } else {
            format!(" · {hint}")
        };
        let width = piece.chars().count();
        if width > room {
            break;
        }
        room -= width;
        text.push_str(&piece);
    }
    Span::styled(text, Style::new().fg(Color::DarkGray))
}
