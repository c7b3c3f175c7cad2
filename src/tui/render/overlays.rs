//! Everything drawn over the panes: help, dialogs (clarification, approval,
//! rollback, session picker), the file preview and the checkpoints views.

use crate::protocol::words::counted;
use ratatui::Frame;
use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::tui::app::{App, Overlay, RootDialog};
use crate::tui::wrap::{MORE, Run, cut, wrap};

pub(super) fn draw_overlay(frame: &mut Frame<'_>, app: &App, area: Rect) {
    match &app.overlay {
        Overlay::None => {}
        Overlay::Help { scroll } => draw_help(frame, app, area, *scroll),
        Overlay::EditHunk {
            hunk_id,
            file_path,
            first_line,
            editor,
            ..
        } => {
            let replaced = app
                .review
                .as_ref()
                .and_then(|r| r.bundle.hunks().find(|h| &h.hunk_id == hunk_id))
                .map(crate::protocol::Hunk::replaced_text)
                .unwrap_or_default();
            super::review::draw_hunk_editor(
                frame,
                area,
                hunk_id,
                file_path,
                &replaced,
                *first_line,
                editor,
            )
        }
        Overlay::Sessions { rows, cursor } => draw_sessions(frame, area, rows, *cursor),
        Overlay::Checkpoints {
            rows,
            cursor,
            three_way,
            file,
        } => {
            draw_checkpoints(frame, area, rows, *cursor, three_way.as_deref(), *file);
        }
        Overlay::Preview {
            path,
            lines,
            scroll,
            error,
            mark,
        } => draw_preview(
            frame,
            area,
            path,
            lines,
            (*scroll, *mark),
            error.as_deref(),
            app.pinned.contains(path),
        ),
        Overlay::Find {
            input,
            found,
            cursor,
        } => super::find::draw_find(frame, area, input, found, *cursor),
        Overlay::Models {
            input,
            rows,
            cursor,
            loading,
        } => super::find::draw_models(frame, area, input, rows, *cursor, *loading),
        Overlay::OpenRoot {
            input,
            choices,
            cursor,
            status,
        } => draw_open_root(frame, area, input, choices, *cursor, status),
        Overlay::Clarify {
            question, answer, ..
        } => draw_clarify(frame, area, question, answer),
        Overlay::Approval { .. } => super::approval::draw_approval(frame, area, &app.overlay),
        Overlay::Rollback { .. } => draw_rollback(frame, area, &app.overlay),
    }
}

/// The session picker (`--resume` without an id).
fn draw_sessions(
    frame: &mut Frame<'_>,
    area: Rect,
    rows: &[crate::protocol::SessionSummary],
    cursor: usize,
) {
    let mut text: Vec<Line> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let pending = if r.pending_review {
                "  [review pending]"
            } else {
                ""
            };
            let prompt: String = r
                .last_prompt
                .clone()
                .unwrap_or_default()
                .lines()
                .next()
                .unwrap_or_default()
                .chars()
                .take(40)
                .collect();
            let line = Line::from(format!(
                "{}  {}  {}  {prompt}{pending}",
                r.session_id,
                r.updated_at,
                counted(r.jobs, "job")
            ));
            if i == cursor {
                line.style(Style::new().add_modifier(Modifier::REVERSED))
            } else {
                line
            }
        })
        .collect();
    text.push(Line::from(""));
    text.push(Line::from(Span::styled(
        "Enter: resume · Esc: start a new session",
        Style::new().fg(Color::DarkGray),
    )));
    dialog(frame, area, "Resume a session", text);
}

/// The model's question, and the answer being typed.
fn draw_clarify(frame: &mut Frame<'_>, area: Rect, question: &str, answer: &str) {
    let text = vec![
        Line::from(question),
        Line::from(""),
        Line::from(vec![
            Span::styled("> ", Style::new().fg(Color::Cyan)),
            Span::raw(answer),
        ]),
        Line::from(""),
        Line::from(Span::styled(
            "Enter answers · Esc skips (no_user_answer)",
            Style::new().fg(Color::DarkGray),
        )),
    ];
    dialog(frame, area, "The model asks", text);
}

/// Ctrl+Z: the checkpoint's files, or its hunks being picked.
fn draw_rollback(frame: &mut Frame<'_>, area: Rect, overlay: &Overlay) {
    let Overlay::Rollback {
        checkpoint_id,
        files,
        hunks,
        picking,
    } = overlay
    else {
        return;
    };
    let mut text = vec![Line::from(format!(
        "Roll back checkpoint {checkpoint_id}? It touched:"
    ))];
    let hint = match picking {
        None => {
            text.extend(files.iter().map(|f| Line::from(format!("  {f}"))));
            text.push(Line::from(""));
            text.push(Line::from(
                "A hard rollback loses later edits to these files.",
            ));
            let pick = if hunks.is_empty() {
                ""
            } else {
                " · p: pick hunks (scoped)"
            };
            format!("a: roll back all (hard){pick} · Esc: cancel")
        }
        Some((chosen, cursor)) => {
            for (i, ((hunk, file), on)) in hunks.iter().zip(chosen).enumerate() {
                let mark = if *on { "[x]" } else { "[ ]" };
                let line = Line::from(format!("  {mark} {hunk}  {file}"));
                text.push(if i == *cursor {
                    line.style(Style::new().add_modifier(Modifier::REVERSED))
                } else {
                    line
                });
            }
            text.push(Line::from(""));
            "Space: choose · Enter: roll back the chosen hunks · Esc: cancel".to_string()
        }
    };
    text.push(Line::from(Span::styled(
        hint,
        Style::new().fg(Color::DarkGray),
    )));
    dialog(frame, area, "Roll back", text);
}

pub(super) fn draw_preview(
    frame: &mut Frame<'_>,
    area: Rect,
    path: &str,
    lines: &[crate::tui::highlight::StyledLine],
    (scroll, mark): (usize, Option<usize>),
    error: Option<&str>,
    pinned: bool,
) {
    let rect = area;
    let pin = match (pinned, mark) {
        (_, Some(m)) => format!(" · range from line {} (p pins it, v clears)", m + 1),
        (true, None) => " · pinned".to_string(),
        (false, None) => String::new(),
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(Style::new().fg(Color::Yellow))
        .title(format!(" {path}{pin} · j/k scroll · p pin · Esc close "));
    let inner = block.inner(rect);
    frame.render_widget(Clear, rect);
    frame.render_widget(block, rect);
    let body: Vec<Line> = match (error, lines.is_empty()) {
        (Some(e), _) => vec![Line::from(Span::styled(
            e.to_string(),
            Style::new().fg(Color::Red),
        ))],
        (None, true) => vec![Line::from(Span::styled(
            "loading…",
            Style::new().fg(Color::DarkGray),
        ))],
        (None, false) => preview_rows(lines, (scroll, mark), inner),
    };
    frame.render_widget(Paragraph::new(body), inner);
}

/// The preview's rows from line `scroll`, numbered (a marked range's
/// numbers highlighted); a line too long for the pane goes on under `┆`.
fn preview_rows(
    lines: &[crate::tui::highlight::StyledLine],
    (scroll, mark): (usize, Option<usize>),
    inner: Rect,
) -> Vec<Line<'static>> {
    let height = usize::from(inner.height);
    let room = usize::from(inner.width).saturating_sub(6).max(1);
    let dim = Style::new().fg(Color::DarkGray);
    let mut rows = Vec::new();
    for (i, runs) in lines.iter().enumerate().skip(scroll) {
        if rows.len() >= height {
            break;
        }
        let selected = mark.is_some_and(|m| (m.min(scroll)..=m.max(scroll)).contains(&i));
        let number_style = if selected {
            Style::new().fg(Color::Black).bg(Color::Yellow)
        } else {
            dim
        };
        let runs: Vec<Run> = runs
            .iter()
            .map(|(c, t)| (Style::new().fg(*c), t.clone()))
            .collect();
        for (k, piece) in cut(&runs, room).into_iter().enumerate() {
            let head = if k == 0 {
                Span::styled(format!("{:>5} ", i + 1), number_style)
            } else {
                Span::styled(format!("{MORE:>5} "), dim)
            };
            let mut spans = vec![head];
            spans.extend(piece.into_iter().map(|(s, t)| Span::styled(t, s)));
            rows.push(Line::from(spans));
        }
    }
    rows.truncate(height);
    rows
}

/// The checkpoints list, the one under the cursor reversed.
fn checkpoint_lines(rows: &[crate::tui::app::CheckpointRow], cursor: usize) -> Vec<Line<'static>> {
    if rows.is_empty() {
        return vec![Line::from(Span::styled(
            "no checkpoints yet (or loading…)",
            Style::new().fg(Color::DarkGray),
        ))];
    }
    rows.iter()
        .enumerate()
        .map(|(i, r)| {
            let line = Line::from(format!(
                "{}  {}  {:<8} {}",
                r.id,
                r.created_at,
                r.kind,
                r.files.join(", ")
            ));
            if i == cursor {
                line.style(Style::new().add_modifier(Modifier::REVERSED))
            } else {
                line
            }
        })
        .collect()
}

pub(super) fn draw_checkpoints(
    frame: &mut Frame<'_>,
    area: Rect,
    rows: &[crate::tui::app::CheckpointRow],
    cursor: usize,
    three_way: Option<&[crate::protocol::ThreeWay]>,
    file: usize,
) {
    let rect = area;
    frame.render_widget(Clear, rect);
    let Some(views) = three_way else {
        let lines = checkpoint_lines(rows, cursor);
        let block = Block::default()
            .borders(Borders::ALL)
            .title(" Checkpoints · Enter: three-way view · Esc: close ")
            .border_style(Style::new().fg(Color::Yellow));
        frame.render_widget(Paragraph::new(lines).block(block), rect);
        return;
    };
    let Some(view) = views.get(file) else { return };
    let [bar, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(rect);
    let hooked = match view.hooks.as_slice() {
        [] => String::new(),
        names => format!(" · with changes by hook {}", names.join(", ")),
    };
    let title = format!(
        " {} ({}/{}){hooked} · j/k file · Esc back ",
        view.file_path,
        file + 1,
        views.len()
    );
    frame.render_widget(
        Paragraph::new(Line::from(Span::styled(
            title,
            Style::new().fg(Color::Yellow),
        ))),
        bar,
    );
    let columns = Layout::horizontal([Constraint::Ratio(1, 3); 3]).split(body);
    for ((name, text), col) in [
        ("current", &view.current),
        ("checkpoint base", &view.base),
        ("agent proposed", &view.proposed),
    ]
    .into_iter()
    .zip(columns.iter())
    {
        let lines: Vec<Line> = match text {
            Some(t) => t.lines().map(|l| Line::from(l.to_string())).collect(),
            None => vec![Line::from(Span::styled(
                "(no file)",
                Style::new().fg(Color::DarkGray),
            ))],
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .title(format!(" {name} "));
        frame.render_widget(Paragraph::new(lines).block(block), *col);
    }
}

/// Columns between two columns of the help.
const HELP_GAP: u16 = 2;
/// The key labels' column in the help.
const HELP_LABEL: usize = 12;

/// Where the help's lines go in `rect`: its columns (each keeping a gap on
/// its right) and the lines, wrapped to a column's width.
fn help_layout(app: &App, rect: Rect) -> (Vec<Rect>, Vec<Line<'static>>) {
    // Wide terminals get columns; the lines flow down one, then the next.
    let columns = (rect.width.saturating_sub(2) / 60).max(1);
    let inner = Block::default().borders(Borders::ALL).inner(rect);
    let widths = vec![Constraint::Ratio(1, u32::from(columns)); usize::from(columns)];
    let gap = if columns > 1 { HELP_GAP } else { 0 };
    let areas: Vec<Rect> = Layout::horizontal(widths)
        .split(inner)
        .iter()
        .map(|a| Rect {
            width: a.width.saturating_sub(gap),
            ..*a
        })
        .collect();
    let width = areas
        .iter()
        .map(|a| usize::from(a.width))
        .min()
        .unwrap_or(1);
    (areas, help_lines(app, width))
}

/// How many lines the help has in a terminal of `screen` (how far it
/// scrolls).
pub fn help_line_count(app: &App, screen: Rect) -> usize {
    let [body, _] = Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(screen);
    help_layout(app, super::overlay_area(body)).1.len()
}

pub(super) fn draw_help(frame: &mut Frame<'_>, app: &App, rect: Rect, scroll: usize) {
    // A description too long for its column wraps under itself, never
    // into the next column.
    let (areas, lines) = help_layout(app, rect);
    let height = rect.height.saturating_sub(2).max(1) as usize;
    let per_page = height * areas.len();
    // Like a preview, scrolling stops with the last line at the top.
    let more = if scroll + per_page < lines.len() {
        " ↓ more · j/k/PgDn scroll · other keys close "
    } else {
        " j/k scroll · other keys close "
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .title(" Keys ")
        .title_bottom(Line::from(more))
        .border_style(Style::new().fg(Color::Yellow));
    frame.render_widget(Clear, rect);
    frame.render_widget(block, rect);
    let shown: Vec<Line> = lines.into_iter().skip(scroll).take(per_page).collect();
    for (chunk, col) in shown.chunks(height).zip(areas.iter()) {
        frame.render_widget(Paragraph::new(chunk.to_vec()), *col);
    }
}

/// The key table as help lines `width` columns wide: a heading per pane or
/// dialog, then its keys, each description wrapped beside its key.
fn help_lines(app: &App, width: usize) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    for (title, keys) in app.keymap.help_sections() {
        if !lines.is_empty() {
            lines.push(Line::from(""));
        }
        lines.push(Line::from(Span::styled(
            title,
            Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
        )));
        for (label, help) in keys {
            let lead = label.chars().count().max(HELP_LABEL) + 1;
            let room = width.saturating_sub(lead).max(1);
            let rows = wrap(&[(Style::new(), help.to_string())], room);
            for (i, row) in rows.into_iter().enumerate() {
                let lead = match i {
                    0 => Span::styled(
                        format!("{label:>w$} ", w = HELP_LABEL),
                        Style::new().fg(Color::Cyan),
                    ),
                    _ => Span::raw(" ".repeat(lead)),
                };
                let text = row.into_iter().map(|(_, t)| t).collect::<String>();
                lines.push(Line::from(vec![lead, Span::raw(text)]));
            }
        }
    }
    lines
}

/// A dialog of `lines`, the last being its keys: as tall as the lines once
/// wrapped, and when the area is too short for them, the body gives way
/// (blank rows first, then its end) so the keys line always shows.
pub(super) fn dialog(frame: &mut Frame<'_>, area: Rect, title: &str, mut lines: Vec<Line>) {
    let width = area.width.saturating_sub(4).min(80);
    let inner = usize::from(width.saturating_sub(2)).max(1);
    let keys: Vec<Line> = lines.pop().map(|l| wrapped(&l, inner)).unwrap_or_default();
    let mut body: Vec<Line> = lines.iter().flat_map(|l| wrapped(l, inner)).collect();
    let room = usize::from(area.height.saturating_sub(2)).saturating_sub(keys.len());
    while body.len() > room
        && let Some(blank) = body.iter().rposition(|l| l.width() == 0)
    {
        body.remove(blank);
    }
    if body.len() > room {
        body.truncate(room.saturating_sub(1));
        body.push(Line::from(Span::styled(
            "…",
            Style::new().fg(Color::DarkGray),
        )));
        body.truncate(room);
    }
    body.extend(keys);
    let height = u16::try_from(body.len() + 2)
        .unwrap_or(u16::MAX)
        .min(area.height);
    let rect = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height.saturating_sub(height)) / 2,
        width,
        height,
    };
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(body).alignment(Alignment::Left).block(
            Block::default()
                .borders(Borders::ALL)
                .title(format!(" {title} "))
                .border_style(Style::new().fg(Color::Yellow)),
        ),
        rect,
    );
}

/// A dialog's line word-wrapped to `width` columns, in its styles (the
/// line's own, such as a selection, kept on each row).
pub(super) fn wrapped(line: &Line, width: usize) -> Vec<Line<'static>> {
    let runs: Vec<Run> = line
        .spans
        .iter()
        .map(|s| (s.style, s.content.to_string()))
        .collect();
    wrap(&runs, width)
        .into_iter()
        .map(|row| {
            let spans: Vec<Span<'static>> =
                row.into_iter().map(|(s, t)| Span::styled(t, s)).collect();
            Line::from(spans).style(line.style)
        })
        .collect()
}

/// `Ctrl+O`: the path being typed, the recent roots or completions, and
/// where the opening stands.
fn draw_open_root(
    frame: &mut Frame<'_>,
    area: Rect,
    input: &str,
    choices: &[String],
    cursor: Option<usize>,
    status: &RootDialog,
) {
    let dim = Style::new().fg(Color::DarkGray);
    let mut text = vec![Line::from(vec![
        Span::styled("> ", Style::new().fg(Color::Cyan)),
        Span::raw(input),
    ])];
    match status {
        RootDialog::Editing => {}
        RootDialog::Opening => text.push(Line::from(Span::styled("opening…", dim))),
        RootDialog::Failed(why) => text.push(Line::from(Span::styled(
            why.as_str(),
            Style::new().fg(Color::Red),
        ))),
    }
    text.push(Line::from(""));
    for (i, choice) in choices.iter().enumerate().take(12) {
        let line = Line::from(format!("  {choice}"));
        text.push(if Some(i) == cursor {
            line.style(Style::new().add_modifier(Modifier::REVERSED))
        } else {
            line
        });
    }
    text.push(Line::from(""));
    text.push(Line::from(Span::styled(
        "Enter: open · Tab: complete · ↑/↓: recent roots · Esc: cancel",
        dim,
    )));
    dialog(frame, area, "Open a folder as the agent root", text);
}
