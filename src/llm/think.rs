//! Thinking kept apart from the answer: streamed pieces batched per kind, and
//! a `<think>…</think>` block that opens a reply (models served without a
//! reasoning parser write their thinking inline) split off as it streams.

use super::{Delta, TextSink};

/// Streamed text and thinking waiting to be handed on, so a burst of events
/// becomes one delta of each kind.
#[derive(Debug, Default)]
pub struct Pending {
    text: String,
    reasoning: String,
}

impl Pending {
    pub fn push(&mut self, delta: Delta<'_>) {
        match delta {
            Delta::Text(t) => self.text.push_str(t),
            Delta::Reasoning(t) => self.reasoning.push_str(t),
        }
    }

    /// Hands on what is waiting (thinking first) and empties the buffers.
    pub fn flush(&mut self, sink: TextSink<'_>) {
        if !self.reasoning.is_empty() {
            sink(Delta::Reasoning(&self.reasoning));
            self.reasoning.clear();
        }
        if !self.text.is_empty() {
            sink(Delta::Text(&self.text));
            self.text.clear();
        }
    }
}

const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Nothing but whitespace yet: a `<think>` may still open the reply.
    #[default]
    Start,
    /// Inside the opening think block.
    Thinking,
    /// The answer: everything passes as text.
    Answer,
}

/// Splits a reply's content into thinking and answer as it streams.
#[derive(Debug, Default)]
pub struct ThinkTags {
    phase: Phase,
    /// Text held back: a possible `<think>` at the start, or a possible
    /// `</think>` cut between two pieces.
    held: String,
    /// The answer after a think block starts at its first visible character.
    trim: bool,
}

impl ThinkTags {
    /// Feeds one piece of content; `out` receives what is known to be
    /// thinking or answer.
    pub fn split(&mut self, piece: &str, out: &mut dyn FnMut(Delta<'_>)) {
        if self.phase == Phase::Answer {
            let piece = if self.trim { piece.trim_start() } else { piece };
            if !piece.is_empty() {
                self.trim = false;
                out(Delta::Text(piece));
            }
            return;
        }
        self.held.push_str(piece);
        if self.phase == Phase::Start {
            let start = self.held.trim_start();
            if start.starts_with(OPEN) {
                let at = self.held.len() - start.len() + OPEN.len();
                self.held.drain(..at);
                self.phase = Phase::Thinking;
            } else if OPEN.starts_with(start) {
                return;
            } else {
                self.phase = Phase::Answer;
                out(Delta::Text(&std::mem::take(&mut self.held)));
                return;
            }
        }
        // Thinking: up to `</think>`, keeping back a tail that may begin it.
        if let Some(at) = self.held.find(CLOSE) {
            let rest = self.held.split_off(at);
            if !self.held.is_empty() {
                out(Delta::Reasoning(&self.held));
            }
            self.held.clear();
            self.phase = Phase::Answer;
            self.trim = true;
            self.split(&rest[CLOSE.len()..], out);
            return;
        }
        let keep = (1..CLOSE.len())
            .rev()
            .find(|n| {
                self.held.len() >= *n
                    && self.held.is_char_boundary(self.held.len() - n)
                    && CLOSE.starts_with(&self.held[self.held.len() - n..])
            })
            .unwrap_or(0);
        let tail = self.held.split_off(self.held.len() - keep);
        if !self.held.is_empty() {
            out(Delta::Reasoning(&self.held));
        }
        self.held = tail;
    }

    /// The reply ended: whatever is held goes out as what it was.
    pub fn end(&mut self, out: &mut dyn FnMut(Delta<'_>)) {
        let held = std::mem::take(&mut self.held);
        match self.phase {
            Phase::Start | Phase::Answer if !held.is_empty() => out(Delta::Text(&held)),
            Phase::Thinking if !held.is_empty() => out(Delta::Reasoning(&held)),
            Phase::Start | Phase::Answer | Phase::Thinking => {}
        }
        self.phase = Phase::Answer;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn run(pieces: &[&str]) -> (String, String) {
        let mut tags = ThinkTags::default();
        let (mut text, mut thinking) = (String::new(), String::new());
        let mut out = |d: Delta<'_>| match d {
            Delta::Text(t) => text.push_str(t),
            Delta::Reasoning(t) => thinking.push_str(t),
        };
        for p in pieces {
            tags.split(p, &mut out);
        }
        tags.end(&mut out);
        (thinking, text)
    }

    #[test]
    fn a_leading_think_block_is_thinking() {
        assert_eq!(
            run(&["<think>", "weigh it", "</think>", "\n\nThe answer."]),
            ("weigh it".into(), "The answer.".into())
        );
        assert_eq!(
            run(&["  <thi", "nk>a</th", "ink>b"]),
            ("a".into(), "b".into())
        );
    }

    #[test]
    fn think_tags_later_in_the_answer_are_text() {
        assert_eq!(
            run(&["Use ", "<think> tags"]),
            (String::new(), "Use <think> tags".into())
        );
        assert_eq!(run(&["<th"]), (String::new(), "<th".into()));
        assert_eq!(run(&["<think>cut off"]), ("cut off".into(), String::new()));
    }

    proptest! {
        #[test]
        fn any_split_gives_the_same_result(body in "[a-z<>/ ]{0,30}", answer in "[a-z<> ]{0,20}", cut in 0usize..60) {
            let whole = format!("<think>{body}</think>{answer}");
            let expect = run(&[&whole]);
            let cut = cut.min(whole.len());
            prop_assert_eq!(run(&[&whole[..cut], &whole[cut..]]), expect);
        }
    }
}
