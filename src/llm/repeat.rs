//! A reply gone round in a loop: a small model at a low temperature often
//! writes the same sentences again and again until its window ends (a
//! 135M model on a 2,048 window spent 3,287 tokens so). `RepeatWatch`
//! looks at the reply's text as it streams and says when its end is one
//! block written three times in a row, at least 256 bytes of it, so the
//! stream is stopped there and the reply kept with the block once. Only
//! prose is watched: code and tool calls may rightly repeat a line.
#![deny(clippy::unwrap_used, clippy::expect_used)]

/// The shortest block counted (shorter loops are runs of a character or
/// two, as in a ruler line of `=`).
const MIN_PERIOD: usize = 8;
/// The longest block looked for.
const MAX_PERIOD: usize = 4096;
/// Copies of the block in a row that make a loop.
const MIN_COPIES: usize = 3;
/// Bytes the copies must take together (short blocks need more copies).
const MIN_SPAN: usize = 256;
/// New bytes between two looks.
const LOOK_EVERY: usize = 32;
/// Bytes of the text's end that a period candidate must match.
const PROBE: usize = 8;

/// Where a reply's text went round: its end is `copies` copies of a block
/// of `period` bytes; `keep` is how much of the text to keep (up to the end
/// of the first copy, wherever the last one broke off).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loop {
    pub period: usize,
    pub copies: usize,
    pub keep: usize,
}

/// Watches one reply's text as it grows.
#[derive(Debug, Default)]
pub struct RepeatWatch {
    looked_at: usize,
}

impl RepeatWatch {
    /// The loop `text` (all of the reply so far) ends in, looked for once
    /// every `LOOK_EVERY` new bytes.
    pub fn look(&mut self, text: &str) -> Option<Loop> {
        if text.len() < self.looked_at + LOOK_EVERY {
            return None;
        }
        self.looked_at = text.len();
        if carries_data(text) {
            return None;
        }
        find_loop(text)
    }
}

/// Whether the text's end is data, where lines may rightly repeat (a zero
/// matrix, a table of like rows): inside a code fence, or a tool call
/// written as JSON (tools described in the text), whose arguments carry
/// files. Only prose is watched.
fn carries_data(text: &str) -> bool {
    let start = text.trim_start();
    let head = &start.as_bytes()[..start.len().min(64)];
    let json_call = start.starts_with('{') && head.windows(6).any(|w| w == b"\"tool\"");
    json_call || text.matches("```").count() % 2 == 1
}

/// The shortest block whose copies end `text`, if they make a loop.
fn find_loop(text: &str) -> Option<Loop> {
    let t = text.as_bytes();
    let n = t.len();
    if n < MIN_SPAN {
        return None;
    }
    // A run of a character or two is not a loop of sentences.
    if (1..MIN_PERIOD).any(|q| periodic_tail(t, q) >= MIN_SPAN) {
        return None;
    }
    let probe = &t[n - PROBE..];
    let longest = MAX_PERIOD.min(n / MIN_COPIES);
    (MIN_PERIOD..=longest)
        .filter(|&p| &t[n - p - PROBE..n - p] == probe)
        .find_map(|p| {
            let span = periodic_tail(t, p);
            let copies = span / p;
            let block = &t[n - p..];
            let loops = copies >= MIN_COPIES
                && copies * p >= MIN_SPAN
                && !block.iter().all(u8::is_ascii_whitespace);
            loops.then(|| {
                let mut keep = n - span + p;
                while !text.is_char_boundary(keep) {
                    keep -= 1;
                }
                Loop {
                    period: p,
                    copies,
                    keep,
                }
            })
        })
}

/// How many bytes at the end of `t` repeat with period `p`.
fn periodic_tail(t: &[u8], p: usize) -> usize {
    let n = t.len();
    if p >= n {
        return 0;
    }
    let matching = (0..n - p).rev().take_while(|&i| t[i] == t[i + p]).count();
    matching + p
}

#[cfg(test)]
mod tests {
    use super::*;

    const SENTENCE: &str = "The answer I think is a very interesting challenge of all. ";

    #[test]
    fn a_paragraph_written_three_times_is_a_loop_and_one_copy_is_kept() {
        let text = format!("Intro line.\n{}", SENTENCE.repeat(5));
        let found = find_loop(&text).unwrap();
        assert_eq!(found.period, SENTENCE.len());
        assert_eq!(found.copies, 5);
        assert_eq!(&text[..found.keep], format!("Intro line.\n{SENTENCE}"));
    }

    #[test]
    fn two_copies_or_a_short_span_are_not_a_loop() {
        assert!(find_loop(&format!("{}{}", "x".repeat(300), SENTENCE.repeat(2))).is_none());
        // Three copies of 20 bytes: too little to tell from a list.
        let row = "| 0 | 0 | 0 | 0 |\n";
        assert!(find_loop(&format!("{}{}", "y".repeat(300), row.repeat(3))).is_none());
        // Runs of one character and blank lines are left alone.
        assert!(find_loop(&"=".repeat(1000)).is_none());
        assert!(find_loop(&format!("a{}", " \n".repeat(400))).is_none());
        assert!(find_loop(&format!("a{}", "        \n".repeat(400))).is_none());
    }

    #[test]
    fn code_and_tool_calls_may_repeat_themselves() {
        let mut watch = RepeatWatch::default();
        let matrix = format!(
            "Here:\n```python\nm = [\n{}",
            "    [0, 0, 0, 0, 0, 0, 0, 0],\n".repeat(20)
        );
        assert!(watch.look(&matrix).is_none());
        let call = format!(
            "{{\"tool\": \"propose_edits\", \"arguments\": {{\"new_text\": \"{}",
            SENTENCE.repeat(10)
        );
        assert!(RepeatWatch::default().look(&call).is_none());
        // Prose after a closed fence is watched again.
        let after = format!("```\nx\n```\n{}", SENTENCE.repeat(5));
        assert!(RepeatWatch::default().look(&after).is_some());
        // So is an answer written as JSON.
        let answer = format!("{{\"answer\": \"{}", SENTENCE.repeat(5));
        assert!(RepeatWatch::default().look(&answer).is_some());
    }

    #[test]
    fn code_that_differs_line_by_line_is_not_a_loop() {
        let code: String = (0..200)
            .map(|i| format!("    assert_eq!(parse(\"{i}\"), Some({i}));\n"))
            .collect();
        assert!(find_loop(&code).is_none());
    }

    #[test]
    fn the_watch_looks_as_the_text_grows_and_finds_the_loop() {
        let mut watch = RepeatWatch::default();
        let mut text = String::from("Sure.\n");
        let mut found = None;
        for _ in 0..20 {
            for word in SENTENCE.split_inclusive(' ') {
                text.push_str(word);
                if found.is_none() {
                    found = watch.look(&text);
                }
            }
        }
        let found = found.unwrap();
        assert!(found.copies >= 3 && found.copies <= 6, "{found:?}");
        assert_eq!(&text[..found.keep], format!("Sure.\n{SENTENCE}"));
    }

    #[test]
    fn multibyte_text_is_cut_on_a_character_boundary() {
        let block = "Ça répète: «encore une fois» — ";
        let text = format!("é{}", block.repeat(12));
        let found = find_loop(&text).unwrap();
        assert!(text.is_char_boundary(found.keep));
    }
}
