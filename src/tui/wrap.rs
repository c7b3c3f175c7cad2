//! Word wrap of styled text for the transcript: lines break between words,
//! a word is split only when it alone is wider than the line, and widths are
//! display columns (a wide character counts two). Nothing is lost: the
//! lines, joined, are the input without its line breaks.

use ratatui::style::Style;
use unicode_width::UnicodeWidthChar;

/// A stretch of text in one style.
pub type Run = (Style, String);

fn width_of(c: char) -> usize {
    c.width().unwrap_or(0)
}

/// Display width of a piece of text (printable ASCII: its length).
fn str_width(s: &str) -> usize {
    if s.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        s.len()
    } else {
        s.chars().map(width_of).sum()
    }
}

/// Lines being filled.
struct Filler {
    width: usize,
    lines: Vec<Vec<Run>>,
    /// Where each line starts in the input's text (bytes).
    starts: Vec<usize>,
    line: Vec<Run>,
    /// Columns used, trailing spaces included.
    used: usize,
    has_word: bool,
}

impl Filler {
    fn append(&mut self, style: Style, text: &str, width: usize) {
        match self.line.last_mut() {
            Some((s, t)) if *s == style => t.push_str(text),
            _ => self.line.push((style, text.to_string())),
        }
        self.used += width;
    }

    /// Ends the line; the next one starts at byte `next`.
    fn break_line(&mut self, next: usize) {
        self.lines.push(std::mem::take(&mut self.line));
        self.starts.push(next);
        self.used = 0;
        self.has_word = false;
    }

    /// Places a word (pieces in their styles, `w` columns wide) that starts
    /// at byte `at`.
    fn word(&mut self, pieces: &[(Style, &str)], w: usize, at: usize) {
        if pieces.is_empty() {
            return;
        }
        // A word that does not fit goes to a fresh line (if it fits there,
        // or the line already holds a word).
        if self.used + w > self.width && self.used > 0 && (self.has_word || w <= self.width) {
            self.break_line(at);
        }
        self.has_word = true;
        if self.used + w <= self.width {
            for (style, text) in pieces {
                self.append(*style, text, 0);
            }
            self.used += w;
            return;
        }
        // Wider than a whole line: cut it into pieces that fill lines.
        let mut at = at;
        for (style, text) in pieces {
            for (i, c) in text.char_indices() {
                let cw = width_of(c);
                if self.used + cw > self.width && self.used > 0 {
                    self.break_line(at + i);
                    self.has_word = true;
                }
                self.append(*style, &text[i..i + c.len_utf8()], cw);
            }
            at += text.len();
        }
    }
}

/// Breaks `runs` into lines of at most `width` columns (trailing spaces do
/// not count; a character wider than the whole line gets a line of its own).
/// A `\n` in the text ends a line; a tab counts as a space.
pub fn wrap(runs: &[Run], width: usize) -> Vec<Vec<Run>> {
    wrap_with_starts(runs, width).0
}

/// `wrap`, with the byte offset in the runs' joined text where each line
/// starts. Wrapping is greedy, so wrapping the text from a line's start
/// gives the same lines as wrapping all of it: a growing text can be
/// re-wrapped from its last line.
pub fn wrap_with_starts(runs: &[Run], width: usize) -> (Vec<Vec<Run>>, Vec<usize>) {
    let mut fill = Filler {
        width: width.max(1),
        lines: Vec::new(),
        starts: vec![0],
        line: Vec::new(),
        used: 0,
        has_word: false,
    };
    let mut word: Vec<(Style, &str)> = Vec::new();
    let mut word_width = 0;
    let mut word_at = 0;
    let mut offset = 0;
    for (style, text) in runs {
        let mut rest = text.as_str();
        while let Some(c) = rest.chars().next() {
            if c == '\n' || c == ' ' || c == '\t' {
                fill.word(&word, word_width, word_at);
                word.clear();
                word_width = 0;
            }
            let taken = if c == '\n' {
                fill.break_line(offset + 1);
                1
            } else if c == ' ' || c == '\t' {
                // Spaces stay on the line they follow, even past the edge.
                let n = rest
                    .bytes()
                    .take_while(|b| *b == b' ' || *b == b'\t')
                    .count();
                fill.append(*style, &" ".repeat(n), n);
                n
            } else {
                let end = rest.find([' ', '\t', '\n']).unwrap_or(rest.len());
                if word.is_empty() {
                    word_at = offset;
                }
                word.push((*style, &rest[..end]));
                word_width += str_width(&rest[..end]);
                end
            };
            rest = &rest[taken..];
            offset += taken;
        }
    }
    fill.word(&word, word_width, word_at);
    fill.lines.push(fill.line);
    (fill.lines, fill.starts)
}

/// The runs from byte `at` of their joined text on.
pub fn runs_from(runs: &[Run], at: usize) -> Vec<Run> {
    let mut skip = at;
    let mut out = Vec::new();
    for (style, text) in runs {
        if skip >= text.len() {
            skip -= text.len();
            continue;
        }
        out.push((*style, text[skip..].to_string()));
        skip = 0;
    }
    out
}

/// Cuts runs into pieces of at most `room` columns, by characters (not at
/// words: code has no safe place to break). Each piece after the first is
/// what goes on after a continuation mark (`┆`); joined, they are the input.
pub fn cut(runs: &[Run], room: usize) -> Vec<Vec<Run>> {
    let mut pieces: Vec<Vec<Run>> = vec![Vec::new()];
    let mut used = 0;
    for (style, text) in runs {
        for c in text.chars() {
            let w = width_of(c);
            if used + w > room && used > 0 {
                pieces.push(Vec::new());
                used = 0;
            }
            used += w;
            if let Some(piece) = pieces.last_mut() {
                match piece.last_mut() {
                    Some((s, t)) if s == style => t.push(c),
                    _ => piece.push((*style, c.to_string())),
                }
            }
        }
    }
    pieces
}

/// The continuation mark of a line cut by `cut` (as the chat's code shows).
pub const MORE: &str = "┆";

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
            // Each line starts where the starts say; wrapping from any of
            // them gives the same lines after it.
            let (again, starts) = wrap_with_starts(&plain(&text), width);
            prop_assert_eq!(&again, &lines);
            for (k, at) in starts.iter().enumerate() {
                let rest = wrap(&runs_from(&plain(&text), *at), width);
                prop_assert_eq!(&rest[..], &lines[k..]);
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
