//! The approval dialog: the command (or the calls of one turn) waiting for
//! allow-once or deny, where it runs, how it is confined; a command taller
//! than the window shows its head and its end, the rows between counted.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::overlays::{dialog, wrapped};
use crate::protocol::words::counted;
use crate::tui::app::Overlay;
use crate::tui::wrap::MORE;

/// A command (or calls of one turn) waiting for allow-once or deny.
pub(super) fn draw_approval(frame: &mut Frame<'_>, area: Rect, overlay: &Overlay) {
    let Overlay::Approval {
        name,
        command,
        cwd,
        root,
        sandbox,
        also,
        ..
    } = overlay
    else {
        return;
    };
    let label = |l: &str| Span::styled(format!("{l:>9} "), Style::new().fg(Color::DarkGray));
    let bold = Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD);
    let heading = if also.is_empty() {
        format!("The model wants to run {name}:")
    } else {
        format!("The model wants to run {} calls together:", also.len() + 1)
    };
    let mut place = vec![
        Line::from(vec![label("in"), Span::raw(cwd.clone())]),
        Line::from(vec![label("workspace"), Span::raw(root.clone())]),
    ];
    if !sandbox.is_empty() {
        // Said plainly where the kernel cannot hold the command in.
        let style = if sandbox.starts_with("Landlock") {
            Style::new().fg(Color::DarkGray)
        } else {
            Style::new().fg(Color::Red).add_modifier(Modifier::BOLD)
        };
        place.push(Line::from(vec![
            label("sandbox"),
            Span::styled(sandbox.clone(), style),
        ]));
    }
    let mut calls = vec![Line::from(vec![
        label("command"),
        Span::styled(command.clone(), bold),
    ])];
    calls.extend(
        also.iter()
            .map(|c| Line::from(vec![label(""), Span::styled(c.clone(), bold)])),
    );
    // The commands' rows as the dialog wraps them, their middle left out
    // (said so) where they are taller than the window: the end of a long
    // command, where `-delete` or `| sh` goes, always shows.
    let inner = usize::from(area.width.saturating_sub(4).min(80).saturating_sub(2)).max(1);
    let rows: Vec<Line> = calls.iter().flat_map(|l| wrapped(l, inner)).collect();
    let around: usize = place.iter().map(|l| wrapped(l, inner).len()).sum::<usize>() + 1 + 2;
    let room = usize::from(area.height.saturating_sub(2)).saturating_sub(around + 2);
    let (rows, hidden) = elide(rows, room.max(3));
    let (keys, title) = approval_keys(also.is_empty(), hidden);
    let mut text = vec![Line::from(heading), Line::from("")];
    text.extend(rows);
    text.extend(place);
    text.extend([
        Line::from(""),
        Line::from(Span::styled(keys, Style::new().fg(Color::DarkGray))),
    ]);
    dialog(frame, area, title, text);
}

/// The approval dialog's key line and title: one command or several, and
/// how many of their rows are not shown.
fn approval_keys(one: bool, hidden: usize) -> (String, &'static str) {
    match (one, hidden) {
        (true, 0) => (
            "y / Enter: allow once · n / Esc: deny".to_string(),
            "Allow this command?",
        ),
        (false, 0) => (
            "y / Enter: allow all once · n / Esc: deny all".to_string(),
            "Allow these commands?",
        ),
        (one, n) => (
            format!(
                "{} not shown: a taller window shows all · y / Enter: allow{} once · n / Esc: deny",
                counted(n, "line"),
                if one { "" } else { " all" }
            ),
            if one {
                "Allow this command?"
            } else {
                "Allow these commands?"
            },
        ),
    }
}

/// `rows` within `room`: its head and its tail, with a line saying how
/// many rows between them are not shown; and how many.
fn elide(mut rows: Vec<Line<'static>>, room: usize) -> (Vec<Line<'static>>, usize) {
    if rows.len() <= room {
        return (rows, 0);
    }
    let hidden = rows.len() + 1 - room;
    let head = (room - 1) / 2;
    let tail: Vec<Line<'static>> = rows.split_off(head + hidden);
    rows.truncate(head);
    rows.push(Line::from(Span::styled(
        format!(
            "{MORE} … {} of the command not shown …",
            counted(hidden, "line")
        ),
        Style::new().fg(Color::DarkGray),
    )));
    rows.extend(tail);
    (rows, hidden)
}
