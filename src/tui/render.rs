//! Drawing the app: a pure function of `&App` onto a frame. The transcript
//! is laid out from the bottom up, so its cost follows the visible rows, not
//! the session's length.

use ratatui::Frame;
use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::app::{App, Entry, Focus, Overlay, ProviderState};
use super::tree::NodeKind;
use crate::protocol::{JobStatus, Mode};

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
    if app.reviewing {
        draw_review(frame, app, body);
    } else {
        let tree_width = (body.width / 3).clamp(20, 40);
        let [tree, right] =
            Layout::horizontal([Constraint::Length(tree_width), Constraint::Min(20)]).areas(body);
        let input_height = (app.input.lines().len() as u16 + 2).clamp(3, 8);
        let [chat, input] =
            Layout::vertical([Constraint::Min(3), Constraint::Length(input_height)]).areas(right);
        draw_tree(frame, app, tree);
        draw_transcript(frame, app, chat);
        draw_input(frame, app, input);
    }
    draw_status(frame, app, status);
    match &app.overlay {
        Overlay::None => {}
        Overlay::Help => draw_help(frame, app, area),
        Overlay::Sessions { rows, cursor } => {
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
                        "{}  {}  {} job(s)  {prompt}{pending}",
                        r.session_id, r.updated_at, r.jobs
                    ));
                    if i == *cursor {
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
        Overlay::Clarify {
            question, answer, ..
        } => {
            let text = vec![
                Line::from(question.as_str()),
                Line::from(""),
                Line::from(vec![
                    Span::styled("> ", Style::new().fg(Color::Cyan)),
                    Span::raw(answer.as_str()),
                ]),
                Line::from(""),
                Line::from(Span::styled(
                    "Enter answers · Esc skips (no_user_answer)",
                    Style::new().fg(Color::DarkGray),
                )),
            ];
            dialog(frame, area, "The model asks", text);
        }
        Overlay::Rollback {
            checkpoint_id,
            files,
            hunks,
            picking,
        } => {
            let mut text = vec![Line::from(format!(
                "Roll back checkpoint {checkpoint_id}? It touched:"
            ))];
            match picking {
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
                    text.push(Line::from(Span::styled(
                        format!("a: roll back all (hard){pick} · Esc: cancel"),
                        Style::new().fg(Color::DarkGray),
                    )));
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
                    text.push(Line::from(Span::styled(
                        "Space: choose · Enter: roll back the chosen hunks · Esc: cancel",
                        Style::new().fg(Color::DarkGray),
                    )));
                }
            }
            dialog(frame, area, "Roll back", text);
        }
    }
}

fn pane(title: String, focused: bool) -> Block<'static> {
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
        let review = app.review.as_ref()?;
        let file = review.bundle.files.iter().find(|f| f.file_path == rel)?;
        let hunk = |pred: &dyn Fn(&crate::review::Hunk) -> bool| file.hunks.iter().any(pred);
        if hunk(&|h| !h.applied && h.accepted.is_none()) {
            Some(('●', Color::Yellow))
        } else if hunk(&|h| h.applied) {
            Some(('✓', Color::Green))
        } else {
            Some(('✗', Color::Red))
        }
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

/// Wraps `text` to `width` columns (by characters), keeping blank lines.
fn wrap(text: &str, width: usize) -> Vec<String> {
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

fn entry_lines(entry: &Entry, width: usize, tool_details: bool) -> Vec<Line<'static>> {
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

fn draw_transcript(frame: &mut Frame<'_>, app: &App, area: Rect) {
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

fn draw_input(frame: &mut Frame<'_>, app: &App, area: Rect) {
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

fn draw_status(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let mode = format!(" {} ", app.mode.as_str().to_uppercase());
    let (state, colour) = match (app.provider_ok, app.provider_state) {
        (false, _) => ("", Color::Red),
        (true, ProviderState::Online) => ("● online", Color::Green),
        (true, ProviderState::Degraded) => ("◐ degraded", Color::Yellow),
        (true, ProviderState::Offline) => ("○ offline", Color::Red),
    };
    let provider = Span::styled(
        format!(" {} {state} ", app.provider_label),
        Style::new().fg(colour),
    );
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
    let tokens = format!(
        " {} tok ",
        app.tokens.input_tokens + app.tokens.output_tokens
    );
    let review = app.review.as_ref().map(|r| {
        let (done, all) = r.progress();
        format!(" review {done}/{all} ")
    });
    let hints = if app.reviewing {
        " j/k hunk · y/n · Y/N file · Ctrl+S apply · Esc back · F1 help"
    } else {
        " Tab focus · Ctrl+T mode · Ctrl+R review · Ctrl+Z undo · F1 help"
    };
    let mut spans = vec![
        Span::styled(mode, Style::new().fg(Color::Black).bg(Color::Cyan)),
        provider,
        Span::raw(job),
        Span::raw(tokens),
    ];
    if let Some(r) = review {
        spans.push(Span::styled(r, Style::new().fg(Color::Yellow)));
    }
    spans.push(Span::styled(hints, Style::new().fg(Color::DarkGray)));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn draw_review(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let Some(review) = &app.review else { return };
    let [left, right] = Layout::horizontal([
        Constraint::Length((area.width / 3).clamp(20, 40)),
        Constraint::Min(20),
    ])
    .areas(area);
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
                .filter(|h| h.accepted.is_none() && !h.applied)
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
    frame.render_widget(
        Paragraph::new(files).block(pane(format!(" review {done}/{all} "), false)),
        left,
    );
    let Some((f, h)) = current else { return };
    let file = &review.bundle.files[f];
    let hunk = &file.hunks[h];
    let state = match (hunk.applied, hunk.accepted) {
        (true, _) => "applied",
        (false, Some(true)) => "accepted",
        (false, Some(false)) => "rejected",
        (false, None) => "pending",
    };
    let big = if hunk.oversized { " · oversized" } else { "" };
    let title = format!(" {} · {} [{state}{big}] ", file.file_path, hunk.hunk_id);
    // Line numbers follow the @@ header: old on the left, new on the right.
    let (mut old_no, mut new_no) = header_numbers(&hunk.patch);
    if let Some((path, rows)) = &review.whole_file
        && path == &file.file_path
    {
        draw_whole_file(frame, right, &title, rows, &hunk.hunk_id);
        return;
    }
    let colours = review.colours.get(&hunk.hunk_id);
    let lines: Vec<Line> = hunk
        .patch
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let l = l.trim_end_matches('\r');
            let (style, nums) = match l.chars().next() {
                Some('@') => (Style::new().fg(Color::Cyan), String::from("         ")),
                Some('+') => {
                    new_no += 1;
                    (
                        Style::new().fg(Color::Green),
                        format!("    {:>4} ", new_no - 1),
                    )
                }
                Some('-') => {
                    old_no += 1;
                    (
                        Style::new().fg(Color::Red),
                        format!("{:>4}     ", old_no - 1),
                    )
                }
                Some('\\') => (Style::new().fg(Color::DarkGray), String::from("         ")),
                _ => {
                    old_no += 1;
                    new_no += 1;
                    (Style::new(), format!("{:>4}{:>4} ", old_no - 1, new_no - 1))
                }
            };
            let mut spans = vec![Span::styled(nums, Style::new().fg(Color::DarkGray))];
            let tint = match l.chars().next() {
                Some('+') => Some(Color::Rgb(0, 50, 0)),
                Some('-') => Some(Color::Rgb(60, 0, 0)),
                _ => None,
            };
            match (colours.and_then(|c| c.get(i)), l.chars().next()) {
                (Some(runs), Some('+' | '-' | ' ')) if !runs.is_empty() => {
                    let prefix = l.chars().next().map(String::from).unwrap_or_default();
                    spans.push(Span::styled(prefix, style));
                    for (c, t) in runs {
                        let s = Style::new().fg(*c);
                        spans.push(Span::styled(t.clone(), tint.map_or(s, |bg| s.bg(bg))));
                    }
                }
                _ => spans.push(Span::styled(l.to_string(), style)),
            }
            Line::from(spans)
        })
        .collect();
    frame.render_widget(Paragraph::new(lines).block(pane(title, true)), right);
}

fn draw_whole_file(
    frame: &mut Frame<'_>,
    area: Rect,
    title: &str,
    rows: &[super::WholeFileRow],
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

fn header_numbers(patch: &str) -> (usize, usize) {
    let header = patch.lines().next().unwrap_or_default();
    let num = |sign: char| -> usize {
        header
            .split_whitespace()
            .find(|w| w.starts_with(sign))
            .and_then(|w| w[1..].split(',').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(1)
    };
    (num('-').max(1), num('+').max(1))
}

fn draw_preview(
    frame: &mut Frame<'_>,
    area: Rect,
    path: &str,
    lines: &[super::highlight::StyledLine],
    (scroll, mark): (usize, Option<usize>),
    error: Option<&str>,
    pinned: bool,
) {
    let rect = Rect {
        x: area.x + 2,
        y: area.y + 1,
        width: area.width.saturating_sub(4),
        height: area.height.saturating_sub(3),
    };
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
        (None, false) => lines
            .iter()
            .enumerate()
            .skip(scroll)
            .take(inner.height as usize)
            .map(|(i, runs)| {
                let selected = mark.is_some_and(|m| (m.min(scroll)..=m.max(scroll)).contains(&i));
                let number_style = if selected {
                    Style::new().fg(Color::Black).bg(Color::Yellow)
                } else {
                    Style::new().fg(Color::DarkGray)
                };
                let mut spans = vec![Span::styled(format!("{:>5} ", i + 1), number_style)];
                spans.extend(
                    runs.iter()
                        .map(|(c, t)| Span::styled(t.clone(), Style::new().fg(*c))),
                );
                Line::from(spans)
            })
            .collect(),
    };
    frame.render_widget(Paragraph::new(body), inner);
}

fn draw_checkpoints(
    frame: &mut Frame<'_>,
    area: Rect,
    rows: &[super::app::CheckpointRow],
    cursor: usize,
    three_way: Option<&[crate::checkpoint::ThreeWay]>,
    file: usize,
) {
    let rect = Rect {
        x: area.x + 1,
        y: area.y + 1,
        width: area.width.saturating_sub(2),
        height: area.height.saturating_sub(3),
    };
    frame.render_widget(Clear, rect);
    let Some(views) = three_way else {
        let lines: Vec<Line> = if rows.is_empty() {
            vec![Line::from(Span::styled(
                "no checkpoints yet (or loading…)",
                Style::new().fg(Color::DarkGray),
            ))]
        } else {
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
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .title(" Checkpoints · Enter: three-way view · Esc: close ")
            .border_style(Style::new().fg(Color::Yellow));
        frame.render_widget(Paragraph::new(lines).block(block), rect);
        return;
    };
    let Some(view) = views.get(file) else { return };
    let [bar, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(rect);
    let title = format!(
        " {} ({}/{}) · j/k file · Esc back ",
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

fn draw_help(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let rows = app.keymap.help_rows();
    let rect = Rect {
        x: area.x + 1,
        y: area.y + 1,
        width: area.width.saturating_sub(2),
        height: area.height.saturating_sub(2),
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .title(" Keys (any key closes) ")
        .border_style(Style::new().fg(Color::Yellow));
    let inner = block.inner(rect);
    frame.render_widget(Clear, rect);
    frame.render_widget(block, rect);
    // As many columns as the rows need to fit the height.
    let per_column = (inner.height as usize).max(1);
    let columns = rows.len().div_ceil(per_column).max(1);
    let widths = vec![Constraint::Ratio(1, columns as u32); columns];
    let areas = Layout::horizontal(widths).split(inner);
    for (chunk, col) in rows.chunks(per_column).zip(areas.iter()) {
        let lines: Vec<Line> = chunk
            .iter()
            .map(|(label, help, _)| {
                Line::from(vec![
                    Span::styled(format!("{label:>11} "), Style::new().fg(Color::Cyan)),
                    Span::raw(*help),
                ])
            })
            .collect();
        frame.render_widget(Paragraph::new(lines), *col);
    }
}

fn dialog(frame: &mut Frame<'_>, area: Rect, title: &str, lines: Vec<Line>) {
    let width = area.width.saturating_sub(8).min(80);
    let height = (lines.len() as u16 + 2).min(area.height.saturating_sub(2));
    let rect = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height.saturating_sub(height)) / 2,
        width,
        height,
    };
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .alignment(Alignment::Left)
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .title(format!(" {title} "))
                    .border_style(Style::new().fg(Color::Yellow)),
            ),
        rect,
    );
}
