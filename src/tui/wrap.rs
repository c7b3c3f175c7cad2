//! Word wrap of styled text for the transcript: lines break between words,
//! a word is split only when it alone is wider than the line, and widths are
//! display columns (a wide character counts two). Nothing is lost: the
//! lines, joined, are the input without its line breaks.

use ratatui::style::Style;
use unicode_width::UnicodeWidthChar;

/// A stretch of text in one style.
pub type Run = (Style, String);

/// One piece of the input: a word (no spaces), the spaces between words,
/// or a forced line break.
enum Atom {
    Word(Vec<Run>, usize),
    Space(Vec<Run>, usize),
    Break,
}

fn width_of(c: char) -> usize {
    c.width().unwrap_or(0)
}

fn push(runs: &mut Vec<Run>, style: Style, c: char) {
    match runs.last_mut() {
        Some((s, text)) if *s == style => text.push(c),
        _ => runs.push((style, c.to_string())),
    }
}

fn atoms(runs: &[Run]) -> Vec<Atom> {
    let mut out: Vec<Atom> = Vec::new();
    for (style, text) in runs {
        for c in text.chars() {
            if c == '\n' {
                out.push(Atom::Break);
                continue;
            }
            let space = c == ' ' || c == '\t';
            let c = if c == '\t' { ' ' } else { c };
            match (out.last_mut(), space) {
                (Some(Atom::Space(runs, w)), true) | (Some(Atom::Word(runs, w)), false) => {
                    push(runs, *style, c);
                    *w += width_of(c);
                }
                _ => {
                    let mut runs = Vec::new();
                    push(&mut runs, *style, c);
                    let w = width_of(c);
                    out.push(if space {
                        Atom::Space(runs, w)
                    } else {
                        Atom::Word(runs, w)
                    });
                }
            }
        }
    }
    out
}

/// A line being filled.
#[derive(Default)]
struct Line {
    runs: Vec<Run>,
    /// Columns used, trailing spaces included.
    width: usize,
    has_word: bool,
}

impl Line {
    fn append(&mut self, runs: Vec<Run>, width: usize) {
        for (style, text) in runs {
            match self.runs.last_mut() {
                Some((s, t)) if *s == style => t.push_str(&text),
                _ => self.runs.push((style, text)),
            }
        }
        self.width += width;
    }
}

/// Breaks `runs` into lines of at most `width` columns (trailing spaces do
/// not count; a character wider than the whole line gets a line of its own).
/// A `\n` in the text ends a line.
pub fn wrap(runs: &[Run], width: usize) -> Vec<Vec<Run>> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = Line::default();
    for atom in atoms(runs) {
        match atom {
            Atom::Break => lines.push(std::mem::take(&mut line).runs),
            // Spaces stay on the line they follow, even past the edge.
            Atom::Space(runs, w) => line.append(runs, w),
            Atom::Word(runs, w) => {
                // A word that does not fit goes to a fresh line (if it fits
                // there, or the line already holds a word).
                if line.width + w > width && line.width > 0 && (line.has_word || w <= width) {
                    lines.push(std::mem::take(&mut line).runs);
                }
                if line.width + w <= width {
                    line.append(runs, w);
                    line.has_word = true;
                    continue;
                }
                // Wider than a whole line: cut it into pieces that fill lines.
                for (style, text) in runs {
                    for c in text.chars() {
                        let cw = width_of(c);
                        if line.width + cw > width && line.width > 0 {
                            lines.push(std::mem::take(&mut line).runs);
                        }
                        line.append(vec![(style, c.to_string())], cw);
                        line.has_word = true;
                    }
                }
            }
        }
    }
    lines.push(line.runs);
    lines
}

/// Display width of some runs.
pub fn runs_width(runs: &[Run]) -> usize {
    runs.iter().flat_map(|(_, t)| t.chars()).map(width_of).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn plain(text: &str) -> Vec<Run> {
        vec![(Style::new(), text.to_string())]
    }

    fn texts(lines: &[Vec<Run>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.iter().map(|(_, t)| t.as_str()).collect())
            .collect()
    }

    #[test]
    fn words_are_not_split() {
        let lines = wrap(
            &plain("the matter of wrapping extraordinarily long words"),
            12,
        );
        assert_eq!(
            texts(&lines),
            [
                "the matter ",
                "of wrapping ",
                "extraordinar",
                "ily long ",
                "words"
            ]
        );
        let lines = wrap(&plain("it matters here"), 9);
        assert_eq!(texts(&lines), ["it ", "matters ", "here"]);
        let lines = wrap(&plain("     indented words"), 8);
        assert_eq!(texts(&lines), ["     ", "indented ", "words"]);
    }

    #[test]
    fn styles_cross_words_and_breaks_are_kept() {
        let bold = Style::new().add_modifier(ratatui::style::Modifier::BOLD);
        let runs = vec![
            (Style::new(), "a very ".into()),
            (bold, "bold".into()),
            (Style::new(), "ly done\nnext".into()),
        ];
        let lines = wrap(&runs, 9);
        assert_eq!(texts(&lines), ["a very ", "boldly ", "done", "next"]);
        assert_eq!(lines[1][0], (bold, "bold".to_string()));
    }

    #[test]
    fn wide_characters_count_two_columns() {
        let lines = wrap(&plain("日本語 テキスト"), 6);
        assert_eq!(texts(&lines), ["日本語 ", "テキス", "ト"]);
        assert_eq!(texts(&wrap(&plain("日"), 1)), ["日"]);
    }

    proptest! {
        #[test]
        fn nothing_is_lost_and_short_words_stay_whole(
            text in "[ab日 \n]{0,60}",
            width in 1usize..20,
        ) {
            let lines = wrap(&plain(&text), width);
            let joined: String = texts(&lines).concat();
            prop_assert_eq!(joined, text.replace('\n', ""));
            for line in &texts(&lines) {
                let visible: usize = line.trim_end().chars().map(width_of).sum();
                prop_assert!(visible <= width || line.trim_end().chars().count() == 1, "{:?}", line);
            }
            let out = texts(&lines);
            for word in text.split([' ', '\n']).filter(|w| !w.is_empty()) {
                let w: usize = word.chars().map(width_of).sum();
                if w <= width {
                    prop_assert!(out.iter().any(|l| l.contains(word)), "{:?} split in {:?}", word, out);
                }
            }
        }
    }
}
