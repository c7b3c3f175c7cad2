//! Blocks fitted to a width: text word-wrapped under its hanging indent,
//! code behind a gutter in its highlight colours (long lines continue on
//! the next row), tables in aligned columns (cells wrapped when the table is
//! too wide, one record per row when even that fails), rules.

use std::collections::HashMap;

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::parse::{Align, Block, dim};
use crate::tui::highlight::StyledLine;
use crate::tui::wrap::{Run, cut, runs_from, runs_width, wrap, wrap_with_starts};

/// Highlighted code by `code_key`.
pub type Colours = HashMap<u64, Vec<StyledLine>>;

/// The key of a code block's colours: its language and text.
pub fn code_key(lang: &str, text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    lang.hash(&mut h);
    text.hash(&mut h);
    h.finish()
}

fn line(runs: Vec<Run>) -> Line<'static> {
    Line::from(
        runs.into_iter()
            .map(|(style, text)| Span::styled(text, style))
            .collect::<Vec<_>>(),
    )
}

fn joined(mut a: Vec<Run>, b: Vec<Run>) -> Vec<Run> {
    a.extend(b);
    a
}

/// A block's prefix (indent, bullet, quote bar, gutter) cut to leave its
/// text at least two columns (a wide character's): in a pane narrower than
/// the prefix, the prefix gives way, never the edge.
fn fit(prefix: &[Run], width: usize) -> Vec<Run> {
    let room = width.saturating_sub(2);
    if runs_width(prefix) <= room {
        return prefix.to_vec();
    }
    match room {
        0 => Vec::new(),
        _ => cut(prefix, room).swap_remove(0),
    }
}

/// Appends the lines of `blocks` at `width` columns to `out`.
pub fn layout(blocks: &[Block], width: usize, colours: &Colours, out: &mut Vec<Line<'static>>) {
    for block in blocks {
        match block {
            Block::Text { lead, indent, runs } => text(lead, indent, runs, width, out),
            Block::Code { indent, lang, text } => {
                code(indent, text, colours.get(&code_key(lang, text)), width, out)
            }
            Block::Table {
                indent,
                align,
                head,
                rows,
            } => table(indent, align, head, rows, width, out),
            Block::Rule { indent } => {
                let indent = &fit(indent, width);
                let room = width.saturating_sub(runs_width(indent)).max(1);
                out.push(line(joined(
                    indent.clone(),
                    vec![(dim(), "─".repeat(room))],
                )));
            }
            Block::Blank { indent } => {
                let bars: Vec<Run> = fit(indent, width)
                    .into_iter()
                    .map(|(s, t)| (s, t.trim_end().to_string()))
                    .filter(|(_, t)| !t.is_empty())
                    .collect();
                out.push(line(bars));
            }
        }
    }
}

fn text(lead: &[Run], indent: &[Run], runs: &[Run], width: usize, out: &mut Vec<Line<'static>>) {
    text_from(lead, indent, runs, width, (0, 0), out);
}

/// The lines of a text block from its line `first`, which starts at byte
/// `at` of its text; returns where each of them starts (relative to `at`).
pub fn text_from(
    lead: &[Run],
    indent: &[Run],
    runs: &[Run],
    width: usize,
    (first, at): (usize, usize),
    out: &mut Vec<Line<'static>>,
) -> Vec<usize> {
    let (lead, indent) = (&fit(lead, width), &fit(indent, width));
    let margin = runs_width(lead).max(runs_width(indent));
    let room = width.saturating_sub(margin).max(1);
    let (lines, starts) = if at == 0 {
        wrap_with_starts(runs, room)
    } else {
        wrap_with_starts(&runs_from(runs, at), room)
    };
    for (i, l) in lines.into_iter().enumerate() {
        let prefix = if first + i == 0 { lead } else { indent };
        out.push(line(joined(prefix.to_vec(), l)));
    }
    starts
}

fn code(
    indent: &[Run],
    text: &str,
    colours: Option<&Vec<StyledLine>>,
    width: usize,
    out: &mut Vec<Line<'static>>,
) {
    let gutter = fit(&joined(indent.to_vec(), vec![(dim(), "▎ ".into())]), width);
    let more = fit(
        &joined(
            indent.to_vec(),
            vec![(dim(), format!("{} ", crate::tui::wrap::MORE))],
        ),
        width,
    );
    let room = width.saturating_sub(runs_width(&gutter)).max(1);
    for (i, raw) in text.split('\n').enumerate() {
        let runs: Vec<Run> = match colours.and_then(|c| c.get(i)) {
            Some(styled) => styled
                .iter()
                .map(|(c, t)| (Style::new().fg(*c), t.clone()))
                .collect(),
            None => vec![(Style::new(), raw.to_string())],
        };
        // A line that fits is shown as it is; a longer one is cut at the
        // edge (not at words: code has no safe place to break).
        for (j, piece) in cut(&runs, room).into_iter().enumerate() {
            let prefix = if j == 0 { gutter.clone() } else { more.clone() };
            out.push(line(joined(prefix, piece)));
        }
    }
}

fn pad(runs: Vec<Run>, width: usize, align: Align) -> Vec<Run> {
    let gap = width.saturating_sub(runs_width(&runs));
    let (left, right) = match align {
        Align::Left => (0, gap),
        Align::Right => (gap, 0),
        Align::Center => (gap / 2, gap - gap / 2),
    };
    let mut out = vec![(Style::new(), " ".repeat(left))];
    out.extend(runs);
    out.push((Style::new(), " ".repeat(right)));
    out
}

/// Column widths that fit `room`: the natural ones, or the widest shrunk
/// step by step but never below its longest word; `None` when even the
/// longest words do not fit side by side.
fn widths(natural: &[usize], words: &[usize], room: usize) -> Option<Vec<usize>> {
    let mut w = natural.to_vec();
    if w.iter().sum::<usize>() <= room {
        return Some(w);
    }
    let floor: Vec<usize> = natural
        .iter()
        .zip(words)
        .map(|(n, m)| (*n).min(*m))
        .collect();
    if floor.iter().sum::<usize>() > room {
        return None;
    }
    while w.iter().sum::<usize>() > room {
        let (i, _) = w
            .iter()
            .enumerate()
            .filter(|(i, n)| **n > floor[*i])
            .max_by_key(|(_, n)| **n)?;
        w[i] -= 1;
    }
    Some(w)
}

/// The widest word of some runs.
fn longest_word(runs: &[Run]) -> usize {
    let text: String = runs.iter().map(|(_, t)| t.as_str()).collect();
    text.split_whitespace()
        .map(unicode_width::UnicodeWidthStr::width)
        .max()
        .unwrap_or(0)
}

fn table(
    indent: &[Run],
    align: &[Align],
    head: &[Vec<Run>],
    rows: &[Vec<Vec<Run>>],
    width: usize,
    out: &mut Vec<Line<'static>>,
) {
    let columns = head.len().max(rows.iter().map(Vec::len).max().unwrap_or(0));
    if columns == 0 {
        return;
    }
    let indent = &fit(indent, width);
    let cell = |row: &[Vec<Run>], j: usize| row.get(j).cloned().unwrap_or_default();
    let mut natural = vec![1; columns];
    let mut words = vec![1; columns];
    for row in std::iter::once(head).chain(rows.iter().map(Vec::as_slice)) {
        for j in 0..columns {
            natural[j] = natural[j].max(runs_width(&cell(row, j)));
            words[j] = words[j].max(longest_word(&cell(row, j)));
        }
    }
    let room = width
        .saturating_sub(runs_width(indent))
        .saturating_sub(3 * (columns - 1));
    let Some(w) = widths(&natural, &words, room) else {
        return records(indent, head, rows, width, out);
    };
    let bold = Style::new().add_modifier(ratatui::style::Modifier::BOLD);
    let emit = |row: &[Vec<Run>], strong: bool, out: &mut Vec<Line<'static>>| {
        let cells: Vec<Vec<Vec<Run>>> = (0..columns)
            .map(|j| {
                let mut runs = cell(row, j);
                if strong {
                    runs = runs.into_iter().map(|(s, t)| (bold.patch(s), t)).collect();
                }
                wrap(&runs, w[j])
                    .into_iter()
                    .map(|l| {
                        let mut l = l;
                        if let Some((_, t)) = l.last_mut() {
                            let trimmed = t.trim_end().len();
                            t.truncate(trimmed);
                        }
                        l
                    })
                    .collect()
            })
            .collect();
        let height = cells.iter().map(Vec::len).max().unwrap_or(1);
        for k in 0..height {
            let mut runs = indent.to_vec();
            for (j, c) in cells.iter().enumerate() {
                if j > 0 {
                    runs.push((dim(), " │ ".into()));
                }
                let a = align.get(j).copied().unwrap_or(Align::Left);
                runs.extend(pad(c.get(k).cloned().unwrap_or_default(), w[j], a));
            }
            out.push(line(runs));
        }
    };
    emit(head, true, out);
    let rule: Vec<String> = w.iter().map(|n| "─".repeat(*n)).collect();
    out.push(line(joined(
        indent.to_vec(),
        vec![(dim(), rule.join("─┼─"))],
    )));
    for row in rows {
        emit(row, false, out);
    }
}

/// A table too wide for any columns: each row as "header: value" lines.
fn records(
    indent: &[Run],
    head: &[Vec<Run>],
    rows: &[Vec<Vec<Run>>],
    width: usize,
    out: &mut Vec<Line<'static>>,
) {
    let bold = Style::new().add_modifier(ratatui::style::Modifier::BOLD);
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            out.push(line(joined(indent.to_vec(), vec![(dim(), "·".into())])));
        }
        for (j, value) in row.iter().enumerate() {
            let name: Vec<Run> = head
                .get(j)
                .map(|h| h.iter().map(|(s, t)| (bold.patch(*s), t.clone())).collect())
                .unwrap_or_default();
            let mut runs = name;
            runs.push((Style::new(), ": ".into()));
            runs.extend(value.iter().cloned());
            let hang = joined(indent.to_vec(), vec![(Style::new(), "  ".into())]);
            text(indent, &hang, &runs, width, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::markdown::parse::parse;

    fn render(md: &str, width: usize) -> Vec<String> {
        let mut out = Vec::new();
        layout(&parse(md), width, &Colours::new(), &mut out);
        out.iter()
            .map(|l| {
                let text: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
                text.trim_end().to_string()
            })
            .collect()
    }

    #[test]
    fn tables_align_then_wrap_then_become_records() {
        let md = "| name | size |\n|:-----|-----:|\n| a.rs | 10 |\n| long_name.rs | 2000 |\n";
        assert_eq!(
            render(md, 40),
            [
                "name         │ size",
                "─────────────┼─────",
                "a.rs         │   10",
                "long_name.rs │ 2000",
            ]
        );
        // Too narrow for the longest words side by side: records.
        assert_eq!(&render(md, 15)[..3], ["name: a.rs", "size: 10", "·"]);
        // Wider than the pane, but the words fit: cells wrap.
        let md = "| name | what |\n|---|---|\n| a.rs | the entry point of it all |\n";
        assert_eq!(
            render(md, 22),
            [
                "name │ what",
                "─────┼────────────────",
                "a.rs │ the entry point",
                "     │ of it all"
            ]
        );
        let md = "| alpha | beta | gamma |\n|---|---|---|\n| 1111111 | 2222222 | 3333333 |\n| x | y | z |\n";
        assert_eq!(
            render(md, 16),
            [
                "alpha: 1111111",
                "beta: 2222222",
                "gamma: 3333333",
                "·",
                "alpha: x",
                "beta: y",
                "gamma: z"
            ]
        );
    }

    /// Found by the `markdown` fuzz target: a bullet at width 2 drew 3
    /// columns, then an indent and a wide character did. In a pane
    /// narrower than a block's prefix, the prefix gives way and the text
    /// keeps two columns.
    #[test]
    fn prefixes_give_way_in_a_pane_narrower_than_them() {
        use unicode_width::UnicodeWidthStr;
        let md = "# T\n\n- lu\n  - deep 漢字\n\n> > quoted\n\n1. one\n\n```\nab\n```\n\n---\n\n| a | b |\n|---|---|\n| c | d |\n";
        for width in 1..=4 {
            let lines = render(md, width);
            for l in &lines {
                assert!(l.width() <= width.max(2), "{l:?} at {width}: {lines:?}");
            }
            let letters: String = lines
                .concat()
                .chars()
                .filter(char::is_ascii_alphabetic)
                .collect();
            for word in ["lu", "deep", "quoted", "one", "ab"] {
                let mut rest = letters.as_str();
                for c in word.chars() {
                    let at = rest
                        .find(c)
                        .unwrap_or_else(|| panic!("{word} at {width}: {lines:?}"));
                    rest = &rest[at + 1..];
                }
            }
        }
        assert_eq!(render("- lu", 2), ["lu"]);
        assert_eq!(render("- luv", 3), ["•lu", " v"]);
        assert_eq!(render("- luv", 4), ["• lu", "  v"]);
        assert_eq!(render("- 漢字", 3), ["•漢", " 字"]);
    }

    #[test]
    fn long_code_lines_continue_without_breaking_the_gutter() {
        let lines = render("```\nlet abcdefghij = 1;\n```", 12);
        assert_eq!(lines, ["▎ let abcdef", "┆ ghij = 1;"]);
    }
}
