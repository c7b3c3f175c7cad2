//! The review view: files with their hunks' states, the current hunk with line
//! numbers and syntax colours, or the whole file with every hunk inline.

use crate::protocol::{HunkState, VerifyOutcome};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::pane;
use super::review_rows::{Rows, first_row, hunk_rows, position, whole_rows};
use crate::tui::app::{App, ReviewView, VerifyState};

pub(super) fn draw_review(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let Some(review) = &app.review else { return };
    let [left, right] = columns(area);
    draw_files(frame, app, review, left);
    let (right, verify) = verify_layout(review, right);
    if let Some((verify_area, (title, lines))) = verify {
        frame.render_widget(Clear, verify_area);
        frame.render_widget(Paragraph::new(lines).block(pane(title, false)), verify_area);
    }
    let Some(view) = hunk_pane(review, right) else {
        return;
    };
    let block = pane(view.title, true).title_bottom(Line::from(view.position).right_aligned());
    let inner = block.inner(right);
    frame.render_widget(block, right);
    let shown: Vec<Line> = view
        .rows
        .lines
        .into_iter()
        .skip(view.start)
        .take(usize::from(inner.height))
        .collect();
    frame.render_widget(Paragraph::new(shown), inner);
}

/// The files pane and the hunk's.
fn columns(area: Rect) -> [Rect; 2] {
    Layout::horizontal([
        Constraint::Length((area.width / 3).clamp(20, 40)),
        Constraint::Min(20),
    ])
    .areas(area)
}

/// The hunk (or whole-file) pane at `area`: its title, its rows at the
/// pane's width, the first one shown and where that is.
struct HunkPane {
    title: String,
    /// Where the rows shown are, when not all fit (on the bottom border).
    position: String,
    rows: Rows,
    start: usize,
    height: usize,
}

fn hunk_pane(review: &ReviewView, area: Rect) -> Option<HunkPane> {
    let (f, h) = review.current()?;
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
    let edited = match &hunk.origin {
        crate::protocol::review::HunkOrigin::User => " · edited by you".to_string(),
        crate::protocol::review::HunkOrigin::Hook(name) => format!(" · by hook {name}"),
        crate::protocol::review::HunkOrigin::Agent => String::new(),
    };
    let inner = pane(String::new(), true).inner(area);
    let (width, height) = (usize::from(inner.width), usize::from(inner.height));
    let whole = review
        .whole_file
        .as_ref()
        .filter(|(path, _)| path == &file.file_path);
    // The whole file keeps a few rows above the hunk; a hunk starts at its top.
    let (rows, lead, view) = match whole {
        Some((_, rows)) => (
            whole_rows(rows, &hunk.hunk_id, width),
            3,
            "· whole file (w) ",
        ),
        None => (hunk_rows(review, &hunk.hunk_id, width), 0, ""),
    };
    let start = first_row(review.scroll, rows.lines.len(), height, rows.hunk_row, lead);
    let title = format!(
        " {} · {} [{state}{big}{edited}] {view}",
        file.file_path, hunk.hunk_id
    );
    Some(HunkPane {
        title,
        position: position(&rows, start, height),
        rows,
        start,
        height,
    })
}

/// Where the review's hunk view is in a terminal of `screen`: its first
/// row shown, how many it shows and how many it has (scrolling keys move
/// within that); `None` when no review or hunk is drawn.
pub fn review_window(app: &App, screen: Rect) -> Option<(usize, usize, usize)> {
    if screen.width < super::MIN_WIDTH || screen.height < super::MIN_HEIGHT {
        return None;
    }
    let review = app.review.as_ref()?;
    let body = Rect {
        height: screen.height.saturating_sub(1),
        ..screen
    };
    let [_, right] = columns(body);
    let (right, _) = verify_layout(review, right);
    let view = hunk_pane(review, right)?;
    Some((view.start, view.height, view.rows.lines.len()))
}

/// The review's files, each with its hunks under it (state, id, lines added
/// and removed, first line; the current one marked and kept in view), and the last
/// refusal under them.
fn draw_files(frame: &mut Frame<'_>, app: &App, review: &ReviewView, area: Rect) {
    let (done, all) = review.progress();
    let (rows, current_row) = file_rows(review);
    let area = match &app.review_error {
        // A refusal (a conflict on apply, a refused edit) stays in view.
        Some(error) => {
            let [files_area, error_area] =
                Layout::vertical([Constraint::Min(3), Constraint::Percentage(50)]).areas(area);
            frame.render_widget(
                Paragraph::new(error.text())
                    .style(Style::new().fg(Color::Red))
                    .wrap(Wrap { trim: true })
                    .block(pane(format!(" {} ", error.title()), false)),
                error_area,
            );
            files_area
        }
        None => area,
    };
    // Keep the current hunk in view, a few rows from the bottom edge.
    let height = usize::from(area.height.saturating_sub(2));
    let scroll = current_row.saturating_sub(height.saturating_sub(3).max(1));
    frame.render_widget(
        Paragraph::new(rows)
            .scroll((u16::try_from(scroll).unwrap_or(u16::MAX), 0))
            .block(pane(format!(" review {done}/{all} "), false)),
        area,
    );
}

/// The rows of the files pane and the row of the current hunk.
fn file_rows(review: &ReviewView) -> (Vec<Line<'static>>, usize) {
    let current = review.current();
    let mut rows = Vec::new();
    let mut current_row = 0;
    for (f, file) in review.bundle.files.iter().enumerate() {
        rows.push(Line::from(Span::styled(
            file.file_path.clone(),
            Style::new().add_modifier(Modifier::BOLD),
        )));
        for (h, hunk) in file.hunks.iter().enumerate() {
            let (added, removed) = line_counts(&hunk.patch);
            let (mark, colour) = state_mark(&hunk.state);
            let mut spans = vec![
                Span::raw(" "),
                Span::styled(mark, Style::new().fg(colour)),
                Span::raw(format!(" {} ", hunk.hunk_id)),
                Span::styled(format!("+{added}"), Style::new().fg(Color::Green)),
                Span::raw(" "),
                Span::styled(format!("-{removed}"), Style::new().fg(Color::Red)),
            ];
            if let Some(first) = hunk.changes.iter().map(|c| c.old_start).min() {
                spans.push(Span::styled(
                    format!(" L{}", first + 1),
                    Style::new().fg(Color::DarkGray),
                ));
            }
            if current == Some((f, h)) {
                current_row = rows.len();
                spans = spans
                    .into_iter()
                    .map(|s| s.patch_style(Style::new().add_modifier(Modifier::REVERSED)))
                    .collect();
            }
            rows.push(Line::from(spans));
        }
    }
    (rows, current_row)
}

/// Lines a patch adds and removes.
fn line_counts(patch: &str) -> (usize, usize) {
    patch
        .lines()
        .skip_while(|l| l.starts_with("@@"))
        .fold((0, 0), |(a, r), l| match l.as_bytes().first() {
            Some(b'+') => (a + 1, r),
            Some(b'-') => (a, r + 1),
            _ => (a, r),
        })
}

/// A hunk's state as one mark in the files pane, as the tree marks files
/// (● to decide, ✓, ✗; an applied one greyed, being done); the hunk's title
/// says it in words.
fn state_mark(state: &HunkState) -> (&'static str, Color) {
    match state {
        HunkState::Pending => ("●", Color::Yellow),
        HunkState::Accepted => ("✓", Color::Green),
        HunkState::Rejected => ("✗", Color::Red),
        HunkState::Applied => ("✓", Color::DarkGray),
        HunkState::Conflicted { .. } => ("!", Color::Yellow),
    }
}

/// The hunk's area, and the verify's pane under it once one ran (its
/// area, title and lines: the summary, then as much of the output's end as
/// fits).
type VerifyShown = (Rect, (String, Vec<Line<'static>>));

fn verify_layout(review: &ReviewView, area: Rect) -> (Rect, Option<VerifyShown>) {
    let Some((title, head, tail)) = verify_lines(review, area.width.saturating_sub(2)) else {
        return (area, None);
    };
    let want = (head.len() + tail.len()) as u16 + 2;
    let height = want.min(area.height / 2).max(3);
    let [hunk_area, verify_area] =
        Layout::vertical([Constraint::Min(6), Constraint::Length(height)]).areas(area);
    let room = usize::from(height.saturating_sub(2)).saturating_sub(head.len());
    let skip = tail.len().saturating_sub(room);
    let shown: Vec<Line> = head
        .into_iter()
        .chain(tail.into_iter().skip(skip))
        .collect();
    (hunk_area, Some((verify_area, (title, shown))))
}

/// What the verify's pane shows: its title, the summary lines and a
/// failure's output; `None` before any verify.
type VerifyPane = (String, Vec<Line<'static>>, Vec<Line<'static>>);

/// What a failed verdict that still stands offers (a verify stopped since
/// leaves it standing, and says so).
fn verdict_line(
    review: &ReviewView,
    shown: &crate::protocol::VerifyResult,
    dim: Style,
) -> Option<Line<'static>> {
    let failed = review.failed_verdict()?;
    let text = if shown.ran() {
        "f: send it to the model · Ctrl+S asks once more".to_string()
    } else {
        format!(
            "the last verdict stands: {} · f: send it to the model · Ctrl+S asks once more",
            failed.outcome.as_str()
        )
    };
    Some(Line::styled(text, dim))
}

fn verify_lines(review: &ReviewView, width: u16) -> Option<VerifyPane> {
    let dim = Style::new().fg(Color::DarkGray);
    match &review.verify {
        VerifyState::NotRun => None,
        VerifyState::Running { command, hunk_ids } => Some((
            " verify: running (Esc stops it) ".into(),
            vec![
                Line::from(format!("`{command}`")),
                Line::styled(format!("on {} in a scratch copy…", hunk_ids.join(" ")), dim),
            ],
            Vec::new(),
        )),
        VerifyState::Done(r) => {
            let stale = r.stale_for(&review.bundle) || review.tree_changed;
            let colour = match r.outcome {
                VerifyOutcome::Passed => Color::Green,
                VerifyOutcome::AlreadyFailing | VerifyOutcome::Cancelled => Color::Yellow,
                VerifyOutcome::Failed | VerifyOutcome::TimedOut | VerifyOutcome::Error => {
                    Color::Red
                }
            };
            let mark = if r.passed { "✓" } else { "✗" };
            let style = if stale { dim } else { Style::new().fg(colour) };
            let exit = r
                .exit_code
                .filter(|c| *c != 0)
                .map(|c| format!(" · exit {c}"))
                .unwrap_or_default();
            let mut lines = vec![Line::from(vec![
                Span::styled(
                    format!(
                        "{mark} {} in {:.1} s",
                        r.outcome.as_str(),
                        r.duration_ms as f64 / 1000.0
                    ),
                    style.add_modifier(Modifier::BOLD),
                ),
                Span::styled(format!("{exit} · hunks {}", r.hunk_ids.join(" ")), dim),
            ])];
            if stale {
                let why = if r.stale_for(&review.bundle) {
                    "stale: decisions changed since (v runs it again)"
                } else {
                    "stale: the project's files changed since (v runs it again)"
                };
                lines.push(Line::styled(why, dim));
            }
            if let Some(b) = r.baseline.as_ref().filter(|b| !b.passed) {
                let cached = if b.cached { " (cached)" } else { "" };
                lines.push(Line::styled(
                    format!("the unmodified tree fails too{cached}"),
                    dim,
                ));
            }
            if let Some(e) = &r.error {
                lines.push(Line::styled(e.clone(), Style::new().fg(Color::Red)));
            }
            lines.extend(verdict_line(review, r, dim));
            let mut tail = Vec::new();
            if !r.passed {
                let w = usize::from(width.max(8));
                for l in r.output_tail.lines() {
                    tail.push(Line::from(l.chars().take(w).collect::<String>()));
                }
            }
            Some((format!(" verify `{}` ", r.command), lines, tail))
        }
    }
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
/// line `first_line` of the file), following its scroll; a line too long
/// for the pane wraps, its next rows marked `┆` in the gutter.
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
    // The editor scrolled to its cursor and wrapped while drawing: number
    // what it shows (a row that starts past a line's first column goes on
    // from the row above).
    let (top, _) = editor.0.scroll_offset();
    let dim = Style::new().fg(Color::DarkGray);
    let w = usize::from(width) - 1;
    let mut numbers: Vec<Line> = Vec::new();
    let mut last = None;
    for row in 0..usize::from(gutter.height) {
        let at = editor.0.screen_to_data(usize::from(top) + row, 0);
        if last == Some((at.0, at.1)) {
            break; // past the end: the last row again
        }
        last = Some((at.0, at.1));
        let mark = if at.1 > 0 {
            format!("{:>w$} ", crate::tui::wrap::MORE)
        } else {
            format!("{:>w$} ", first_line + at.0)
        };
        numbers.push(Line::from(Span::styled(mark, dim)));
    }
    frame.render_widget(Paragraph::new(numbers), gutter);
}
