//! The review view: files with hunk counts, the current hunk with line
//! numbers and syntax colours, or the whole file with every hunk inline.

use crate::protocol::HunkState;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::pane;
use crate::tui::app::{App, ReviewView};

pub(super) fn draw_review(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let Some(review) = &app.review else { return };
    let [left, right] = Layout::horizontal([
        Constraint::Length((area.width / 3).clamp(20, 40)),
        Constraint::Min(20),
    ])
    .areas(area);
    draw_files(frame, app, review, left);
    let Some((f, h)) = review.current() else {
        return;
    };
    let file = &review.bundle.files[f];
    let hunk = &file.hunks[h];
    let state = match &hunk.state {
        HunkState::Applied => "applied".to_string(),
        HunkState::Accepted => "accepted".to_string(),
        HunkState::Rejected => "rejected".to_string(),
        HunkState::Pending => "pending".to_string(),
        HunkState::Conflicted { reason } => format!("conflict: {reason}"),
    };
    let big = if hunk.oversized { " · oversized" } else { "" };
    let edited = if hunk.origin == crate::protocol::review::HunkOrigin::User {
        " · edited by you"
    } else {
        ""
    };
    let title = format!(
        " {} · {} [{state}{big}{edited}] ",
        file.file_path, hunk.hunk_id
    );
    if let Some((path, rows)) = &review.whole_file
        && path == &file.file_path
    {
        draw_whole_file(frame, right, &title, rows, &hunk.hunk_id);
        return;
    }
    let lines = hunk_lines(review, &hunk.hunk_id);
    frame.render_widget(Paragraph::new(lines).block(pane(title, true)), right);
}

/// The review's files with their hunk counts (the current one marked), and
/// the last refusal under them.
fn draw_files(frame: &mut Frame<'_>, app: &App, review: &ReviewView, area: Rect) {
    let current = review.current();
    let (done, all) = review.progress();
    let files: Vec<Line> = review
        .bundle
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let pending = f
                .hunks
                .iter()
                .filter(|h| h.state.accepted().is_none())
                .count();
            let text = format!(
                "{} ({} hunk(s), {pending} pending)",
                f.file_path,
                f.hunks.len()
            );
            if current.map(|c| c.0) == Some(i) {
                Line::from(Span::styled(
                    text,
                    Style::new().add_modifier(Modifier::REVERSED),
                ))
            } else {
                Line::from(text)
            }
        })
        .collect();
    let area = match &app.review_error {
        // A refusal (a conflict on apply, a refused edit) stays in view.
        Some(error) => {
            let [files_area, error_area] =
                Layout::vertical([Constraint::Min(3), Constraint::Percentage(50)]).areas(area);
            frame.render_widget(
                Paragraph::new(error.as_str())
                    .style(Style::new().fg(Color::Red))
                    .wrap(Wrap { trim: true })
                    .block(pane(" nothing written ".into(), false)),
                error_area,
            );
            files_area
        }
        None => area,
    };
    frame.render_widget(
        Paragraph::new(files).block(pane(format!(" review {done}/{all} "), false)),
        area,
    );
}

/// A hunk's lines: old numbers left, new right, its colours once computed
/// (the rows were parsed once when the bundle arrived).
fn hunk_lines(review: &ReviewView, hunk_id: &str) -> Vec<Line<'static>> {
    let colours = review.colours.get(hunk_id);
    let rows = review.rows.get(hunk_id).map_or(&[][..], Vec::as_slice);
    let number = |n: Option<usize>| n.map_or_else(|| "    ".to_string(), |n| format!("{n:>4}"));
    rows.iter()
        .enumerate()
        .map(|(i, row)| {
            let style = match row.marker {
                '@' => Style::new().fg(Color::Cyan),
                '+' => Style::new().fg(Color::Green),
                '-' => Style::new().fg(Color::Red),
                '\\' => Style::new().fg(Color::DarkGray),
                _ => Style::new(),
            };
            let nums = format!("{}{} ", number(row.old), number(row.new));
            let mut spans = vec![Span::styled(nums, Style::new().fg(Color::DarkGray))];
            let tint = match row.marker {
                '+' => Some(Color::Rgb(0, 50, 0)),
                '-' => Some(Color::Rgb(60, 0, 0)),
                _ => None,
            };
            match (colours.and_then(|c| c.get(i)), row.marker) {
                (Some(runs), '+' | '-' | ' ') if !runs.is_empty() => {
                    spans.push(Span::styled(row.marker.to_string(), style));
                    for (c, t) in runs {
                        let s = Style::new().fg(*c);
                        spans.push(Span::styled(t.clone(), tint.map_or(s, |bg| s.bg(bg))));
                    }
                }
                _ => spans.push(Span::styled(row.text.clone(), style)),
            }
            Line::from(spans)
        })
        .collect()
}

pub(super) fn draw_whole_file(
    frame: &mut Frame<'_>,
    area: Rect,
    title: &str,
    rows: &[crate::tui::app::WholeFileRow],
    hunk_id: &str,
) {
    let block = pane(format!("{title}· whole file (f) "), true);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    // Keep the current hunk in view, a few rows below the top.
    let first = rows
        .iter()
        .position(|r| r.2.as_deref() == Some(hunk_id))
        .unwrap_or(0);
    let start = first.saturating_sub(3);
    let lines: Vec<Line> = rows
        .iter()
        .skip(start)
        .take(inner.height as usize)
        .map(|(marker, text, hunk)| {
            let mut style = match marker {
                '+' => Style::new().fg(Color::Green),
                '-' => Style::new().fg(Color::Red),
                _ => Style::new(),
            };
            if hunk.as_deref() == Some(hunk_id) {
                style = style.add_modifier(Modifier::BOLD);
            }
            Line::from(Span::styled(format!("{marker}{text}"), style))
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The in-app editor of a hunk's new text, over the review.
pub(super) fn draw_hunk_editor(
    frame: &mut Frame<'_>,
    area: Rect,
    hunk_id: &str,
    file_path: &str,
    replaced: &str,
    first_line: usize,
    editor: &crate::tui::app::Editor,
) {
    let rect = area;
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(Style::new().fg(Color::Yellow))
        .title(format!(" edit {hunk_id} · {file_path} "))
        .title_bottom(Line::from(Span::styled(
            " Ctrl+S keep and accept · Esc discard ",
            Style::new().fg(Color::Yellow),
        )));
    let inner = block.inner(rect);
    frame.render_widget(Clear, rect);
    frame.render_widget(block, rect);
    // What the text replaces, above the editor, when there is room.
    let replaced: Vec<String> = replaced.lines().map(|l| format!("- {l}")).collect();
    let room = (inner.height / 3).min(replaced.len() as u16 + 1);
    if inner.height < 10 || replaced.is_empty() {
        draw_numbered(frame, inner, first_line, editor);
        return;
    }
    let [top, bottom] =
        Layout::vertical([Constraint::Length(room), Constraint::Min(3)]).areas(inner);
    let mut lines: Vec<Line> = replaced
        .into_iter()
        .take(room.saturating_sub(1) as usize)
        .map(|l| Line::from(Span::styled(l, Style::new().fg(Color::Red))))
        .collect();
    lines.push(Line::from(Span::styled(
        "replaced by (edit below):",
        Style::new().fg(Color::DarkGray),
    )));
    frame.render_widget(Paragraph::new(lines), top);
    draw_numbered(frame, bottom, first_line, editor);
}

/// The editor with the file's line numbers beside it (its first line is
/// line `first_line` of the file), following its scroll.
fn draw_numbered(
    frame: &mut Frame<'_>,
    area: Rect,
    first_line: usize,
    editor: &crate::tui::app::Editor,
) {
    let count = editor.0.lines().len().max(1);
    let width = (first_line + count).to_string().len() as u16 + 1;
    let [gutter, text] =
        Layout::horizontal([Constraint::Length(width), Constraint::Min(1)]).areas(area);
    frame.render_widget(&editor.0, text);
    // The editor scrolled to its cursor while drawing: number what it shows.
    let (top, _) = editor.0.scroll_offset();
    let numbers: Vec<Line> = (top as usize..count)
        .take(gutter.height as usize)
        .map(|row| {
            Line::from(Span::styled(
                format!("{:>w$} ", first_line + row, w = width as usize - 1),
                Style::new().fg(Color::DarkGray),
            ))
        })
        .collect();
    frame.render_widget(Paragraph::new(numbers), gutter);
}
