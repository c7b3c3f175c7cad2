//! The review's hunk and whole-file views as rows fitted to a width: a line
//! too long for the pane goes on under a `┆` (nothing is cut), each row
//! knows the line it shows, and the window of rows on screen follows the
//! view's scroll.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use crate::tui::app::{ReviewScroll, ReviewView, WholeFileRow};
use crate::tui::wrap::{MORE, Run, cut};

/// A view's rows at a width, and the line (of the patch or the file) each
/// row shows.
#[derive(Default)]
pub struct Rows {
    pub lines: Vec<Line<'static>>,
    pub source: Vec<usize>,
    /// How many lines they show.
    pub sources: usize,
    /// The first row of the current hunk.
    pub hunk_row: usize,
    /// The columns each row has.
    width: usize,
}

impl Rows {
    fn sized(width: usize) -> Rows {
        Rows {
            width,
            ..Rows::default()
        }
    }

    /// Adds `text` (a line's runs after its `head`) cut to `width`: the
    /// first piece after `head`, the others after `more`.
    fn push(&mut self, source: usize, head: Vec<Span<'static>>, more: Span<'static>, text: &[Run]) {
        let lead: usize = head.iter().map(Span::width).sum();
        let room = self.room(lead);
        for (i, piece) in cut(text, room).into_iter().enumerate() {
            let mut spans = if i == 0 {
                head.clone()
            } else {
                let pad = " ".repeat(lead.saturating_sub(more.width()));
                vec![Span::raw(pad), more.clone()]
            };
            spans.extend(piece.into_iter().map(|(s, t)| Span::styled(t, s)));
            self.lines.push(Line::from(spans));
            self.source.push(source);
        }
        self.sources = self.sources.max(source + 1);
    }

    fn room(&self, lead: usize) -> usize {
        self.width.saturating_sub(lead).max(1)
    }
}

/// The first row to show of `total` in `height` rows: the scroll kept in
/// range; following the hunk, the hunk's row less `lead` rows of context
/// (the top when everything fits).
pub fn first_row(
    scroll: ReviewScroll,
    total: usize,
    height: usize,
    hunk_row: usize,
    lead: usize,
) -> usize {
    let max = total.saturating_sub(height);
    match scroll {
        ReviewScroll::At(n) => n.min(max),
        ReviewScroll::ToHunk => hunk_row.saturating_sub(lead).min(max),
    }
}

/// Where the window is, for the pane's border (" lines 1-23 of 128 ↓ ":
/// the arrows say which way there is more), when not every row fits.
pub fn position(rows: &Rows, start: usize, height: usize) -> String {
    let total = rows.lines.len();
    if total <= height {
        return String::new();
    }
    let end = (start + height).min(total);
    let first = rows.source.get(start).map_or(1, |s| s + 1);
    let last = rows.source.get(end.saturating_sub(1)).map_or(1, |s| s + 1);
    let more = match (start > 0, end < total) {
        (true, true) => "↑↓",
        (false, true) => "↓",
        (true, false) => "↑",
        (false, false) => "",
    };
    format!(" lines {first}-{last} of {} {more} ", rows.sources)
}

/// A hunk's rows: old numbers left, new right (as wide as the largest
/// shown, a space between), its colours once computed on a tinted ground.
pub fn hunk_rows(review: &ReviewView, hunk_id: &str, width: usize) -> Rows {
    let colours = review.colours.get(hunk_id);
    let patch = review.rows.get(hunk_id).map_or(&[][..], Vec::as_slice);
    let largest = patch
        .iter()
        .flat_map(|r| [r.old, r.new])
        .flatten()
        .max()
        .unwrap_or(0);
    let w = largest.to_string().len().max(3);
    let number = |n: Option<usize>| n.map_or_else(|| " ".repeat(w), |n| format!("{n:>w$}"));
    let mut rows = Rows::sized(width);
    let dim = Style::new().fg(Color::DarkGray);
    for (i, row) in patch.iter().enumerate() {
        let style = match row.marker {
            '@' => Style::new().fg(Color::Cyan),
            '+' => Style::new().fg(Color::Green),
            '-' => Style::new().fg(Color::Red),
            '\\' => Style::new().fg(Color::DarkGray),
            _ => Style::new(),
        };
        let tint = match row.marker {
            '+' => Some(Color::Rgb(0, 50, 0)),
            '-' => Some(Color::Rgb(60, 0, 0)),
            _ => None,
        };
        let rest = row.text.get(row.marker.len_utf8()..).unwrap_or_default();
        let text: Vec<Run> = match (colours.and_then(|c| c.get(i)), row.marker) {
            (Some(runs), '+' | '-' | ' ') if !runs.is_empty() => runs
                .iter()
                .map(|(c, t)| {
                    let s = Style::new().fg(*c);
                    (tint.map_or(s, |bg| s.bg(bg)), t.clone())
                })
                .collect(),
            _ => vec![(style, rest.to_string())],
        };
        let head = vec![
            Span::styled(format!("{} {} ", number(row.old), number(row.new)), dim),
            Span::styled(row.marker.to_string(), style),
        ];
        rows.push(i, head, Span::styled(MORE, dim), &text);
    }
    rows
}

/// The whole file's rows, every hunk inline; the current hunk's in bold.
pub fn whole_rows(file: &[WholeFileRow], hunk_id: &str, width: usize) -> Rows {
    let mut rows = Rows::sized(width);
    let mut hunk_row = None;
    for (i, (marker, text, hunk)) in file.iter().enumerate() {
        let mut style = match marker {
            '+' => Style::new().fg(Color::Green),
            '-' => Style::new().fg(Color::Red),
            _ => Style::new(),
        };
        if hunk.as_deref() == Some(hunk_id) {
            style = style.add_modifier(Modifier::BOLD);
            hunk_row.get_or_insert(rows.lines.len());
        }
        let head = vec![Span::styled(marker.to_string(), style)];
        let more = Span::styled(MORE, Style::new().fg(Color::DarkGray));
        rows.push(i, head, more, &[(style, text.clone())]);
    }
    rows.hunk_row = hunk_row.unwrap_or(0);
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(rows: &Rows) -> Vec<String> {
        rows.lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn a_long_line_goes_on_under_a_mark_and_nothing_is_cut() {
        let line = format!("    return x  # {}os.system('rm -rf ~')", "a".repeat(40));
        let file = vec![
            (' ', "def last(items):".to_string(), None),
            ('+', line.clone(), Some("h_1".to_string())),
        ];
        let rows = whole_rows(&file, "h_1", 30);
        let shown = texts(&rows);
        assert_eq!(shown[0], " def last(items):");
        assert!(shown[1].starts_with("+    return x"), "{shown:?}");
        assert!(shown[2].starts_with("┆"), "{shown:?}");
        let joined: String = shown[1..]
            .iter()
            .map(|l| &l[l.char_indices().nth(1).map_or(0, |(i, _)| i)..])
            .collect();
        assert_eq!(joined, line, "every character is shown");
        assert!(shown.iter().all(|l| l.chars().count() <= 30));
        assert_eq!(rows.source, [0, 1, 1, 1]);
        assert_eq!(rows.hunk_row, 1);
    }

    #[test]
    fn the_window_follows_the_hunk_or_the_scroll_and_says_where_it_is() {
        // Fits: the top, whatever the hunk.
        assert_eq!(first_row(ReviewScroll::ToHunk, 9, 27, 5, 3), 0);
        // Does not fit: the hunk three rows below the top, within range.
        assert_eq!(first_row(ReviewScroll::ToHunk, 100, 20, 50, 3), 47);
        assert_eq!(first_row(ReviewScroll::ToHunk, 100, 20, 95, 3), 80);
        assert_eq!(first_row(ReviewScroll::At(500), 100, 20, 0, 3), 80);
        let file: Vec<WholeFileRow> = (0..128).map(|i| (' ', format!("l{i}"), None)).collect();
        let rows = whole_rows(&file, "h_1", 40);
        assert_eq!(position(&rows, 0, 23), " lines 1-23 of 128 ↓ ");
        assert_eq!(position(&rows, 50, 23), " lines 51-73 of 128 ↑↓ ");
        assert_eq!(position(&rows, 105, 23), " lines 106-128 of 128 ↑ ");
        assert_eq!(position(&rows, 0, 200), "");
    }
}
