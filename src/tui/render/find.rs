//! The typed-list dialogs: `Ctrl+P` (what was typed, then files and
//! symbols by a fuzzy name, a symbol with its kind, file and line) and
//! `/model` (providers and their models, the default and the unusable
//! marked); the chosen row reversed.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use crate::protocol::Found;
use crate::tui::app::models::{ModelRow, shown};

pub(super) fn draw_find(
    frame: &mut Frame<'_>,
    area: Rect,
    input: &str,
    found: &[Found],
    cursor: usize,
) {
    let dim = Style::new().fg(Color::DarkGray);
    let rows = found
        .iter()
        .map(|f| {
            Line::from(match (&f.symbol, f.line) {
                (Some(name), Some(line)) => vec![
                    Span::styled(format!("  {:<9} ", f.kind), dim),
                    Span::raw(match &f.container {
                        Some(c) => format!("{c}::{name}"),
                        None => name.clone(),
                    }),
                    Span::styled(format!("  {}:{line}", f.path), dim),
                ],
                _ => vec![Span::styled("  file      ", dim), Span::raw(f.path.clone())],
            })
        })
        .collect();
    let empty = if input.is_empty() {
        "type part of a file or symbol name"
    } else {
        "nothing found"
    };
    let list = TypedList {
        title: "Find a file or a symbol",
        input,
        empty,
        keys: "Enter: open in the preview · ↑/↓: choose · Esc: close",
    };
    list.draw(frame, area, rows, cursor);
}

pub(super) fn draw_models(
    frame: &mut Frame<'_>,
    area: Rect,
    input: &str,
    rows: &[ModelRow],
    cursor: usize,
    loading: bool,
) {
    let dim = Style::new().fg(Color::DarkGray);
    let lines = shown(rows, input)
        .into_iter()
        .map(|r| {
            let mut spans = vec![
                Span::styled(format!("  {:<12} ", r.provider), dim),
                Span::raw(r.model.clone()),
            ];
            if r.default {
                spans.push(Span::styled("  (default)", Style::new().fg(Color::Green)));
            }
            if let Some(note) = &r.note {
                let colour = if r.usable { Color::Yellow } else { Color::Red };
                spans.push(Span::styled(format!("  {note}"), Style::new().fg(colour)));
            }
            Line::from(spans)
        })
        .collect();
    let list = TypedList {
        title: "Provider and model",
        input,
        empty: if loading {
            "asking the providers for their models…"
        } else {
            "no model matches"
        },
        keys: "Enter: use for the next messages · type to narrow · ↑/↓: choose · Esc: close",
    };
    list.draw(frame, area, lines, cursor);
}

/// A dialog of what was typed over rows it narrows, the cursor's reversed.
struct TypedList<'a> {
    title: &'a str,
    input: &'a str,
    /// Said when there are no rows.
    empty: &'a str,
    keys: &'a str,
}

impl TypedList<'_> {
    fn draw(&self, frame: &mut Frame<'_>, area: Rect, rows: Vec<Line<'static>>, cursor: usize) {
        let dim = Style::new().fg(Color::DarkGray);
        let mut text = vec![
            Line::from(vec![
                Span::styled("> ", Style::new().fg(Color::Cyan)),
                Span::raw(self.input.to_string()),
            ]),
            Line::from(""),
        ];
        if rows.is_empty() {
            text.push(Line::from(Span::styled(self.empty.to_string(), dim)));
        }
        let height = usize::from(area.height.saturating_sub(8)).clamp(3, 20);
        let first = cursor.saturating_sub(height - 1);
        for (i, line) in rows.into_iter().enumerate().skip(first).take(height) {
            text.push(if i == cursor {
                line.style(Style::new().add_modifier(Modifier::REVERSED))
            } else {
                line
            });
        }
        text.push(Line::from(""));
        text.push(Line::from(Span::styled(self.keys.to_string(), dim)));
        super::overlays::dialog(frame, area, self.title, text);
    }
}
