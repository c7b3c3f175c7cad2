//! The review view: files with their hunks' states, the current hunk with line
//! numbers and syntax colours, or the whole file with every hunk inline.

use crate::protocol::{HunkState, VerifyOutcome};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::pane;
use crate::tui::app::{App, ReviewView, VerifyState};

pub(super) fn draw_review(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let Some(review) = &app.review else { return };
    let [left, right] = Layout::horizontal([
        Constraint::Length((area.width / 3).clamp(20, 40)),
        Constraint::Min(20),
    ])
    .areas(area);
    draw_files(frame, app, review, left);
    let right = draw_verify(frame, review, right);
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

/// The verify's pane under the hunk, once one ran; the area left above.
fn draw_verify(frame: &mut Frame<'_>, review: &ReviewView, area: Rect) -> Rect {
    match verify_lines(review, area.width.saturating_sub(2)) {
        Some((title, head, tail)) => {
            let want = (head.len() + tail.len()) as u16 + 2;
            let height = want.min(area.height / 2).max(3);
            let [hunk_area, verify_area] =
                Layout::vertical([Constraint::Min(6), Constraint::Length(height)]).areas(area);
            // The summary, then as much of the output's end as fits.
            let room = usize::from(height.saturating_sub(2)).saturating_sub(head.len());
            let skip = tail.len().saturating_sub(room);
            let shown: Vec<Line> = head
                .into_iter()
                .chain(tail.into_iter().skip(skip))
                .collect();
            frame.render_widget(Clear, verify_area);
            frame.render_widget(Paragraph::new(shown).block(pane(title, false)), verify_area);
            hunk_area
        }
        None => area,
    }
}

/// What the verify's pane shows: its title, the summary lines and a
/// failure's output; `None` before any verify.
type VerifyPane = (String, Vec<Line<'static>>, Vec<Line<'static>>);

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
            let stale = r.stale_for(&review.bundle);
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
                lines.push(Line::styled(
                    "stale: decisions changed since (v runs it again)",
                    dim,
                ));
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
            if !r.passed && !stale {
                lines.push(Line::styled(
                    "f: send it to the model · Ctrl+S asks once more",
                    dim,
                ));
            }
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
    let block = pane(format!("{title}· whole file (w) "), true);
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
