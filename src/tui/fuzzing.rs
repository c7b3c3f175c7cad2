//! Fuzz door of the answer's markdown layout (`fuzz/`,
//! `tests/fuzz_corpus.rs`): at any width a laid-out line never exceeds it,
//! streaming an answer in pieces lays it out as it does whole, and no
//! letter of plain text is lost.

use unicode_width::UnicodeWidthStr;

use super::markdown::{Answer, Colours};

/// The lines of `answer` at `width`, as text.
fn lines_of(answer: &Answer, width: usize) -> Vec<String> {
    let colours = Colours::new();
    let laid = answer.lines(width, &colours, 0);
    (0..laid.len())
        .filter_map(|i| laid.get(i))
        .map(|line| line.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect()
}

/// Letters, counted (not digits: an ordered list's `1.` `1.` is shown
/// numbered `1.` `2.`).
fn letters(text: &str) -> std::collections::BTreeMap<char, usize> {
    let mut out = std::collections::BTreeMap::new();
    for c in text.chars().filter(char::is_ascii_alphabetic) {
        *out.entry(c).or_default() += 1;
    }
    out
}

/// The property over one answer: the first byte is the width (1..=160),
/// the second how it streams.
pub fn markdown(data: &[u8]) {
    let [w, seed, rest @ ..] = data else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let width = 1 + usize::from(*w) % 160;
    let whole = Answer::from(text);
    let laid = lines_of(&whole, width);
    // Wide characters cannot fit a column of 1. Spaces after a line's
    // last word may run past the edge (wrapping keeps them where they
    // were written); the frame clips them, and nothing shows there. A
    // control character is never drawn (ratatui's buffer drops it).
    if width >= 2 {
        for line in &laid {
            let drawn: String = line.chars().filter(|c| !c.is_control()).collect();
            let shown = drawn.trim_end_matches([' ', '\t']);
            assert!(
                shown.width() <= width,
                "{} columns at width {width}: {line:?}",
                shown.width()
            );
        }
    }
    // Streamed in pieces, looked at between them (as the TUI draws).
    let mut streamed = Answer::default();
    let mut at = 0;
    let mut s = usize::from(*seed);
    while at < text.len() {
        s = s.wrapping_mul(31).wrapping_add(7);
        let mut end = (at + 1 + s % 23).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        streamed.push_str(&text[at..end]);
        let _ = lines_of(&streamed, width);
        at = end;
    }
    streamed.finish();
    assert_eq!(
        lines_of(&streamed, width),
        laid,
        "streamed vs whole at {width}"
    );
    // Plain text (no entity, tag, link, escape or code fence, whose info
    // string names a language and is not shown, that hides letters).
    let plain = !text.contains(['&', '<', '[', '\\', '!', ']', '(', ')'])
        && !text.contains("```")
        && !text.contains("~~~");
    if plain && width >= 8 {
        let shown = letters(&laid.concat());
        for (c, n) in letters(text) {
            let m = shown.get(&c).copied().unwrap_or(0);
            assert!(m >= n, "{c:?}: {n} written, {m} shown at {width}: {text:?}");
        }
    }
}
