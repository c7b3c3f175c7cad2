//! An assistant's answer as markdown, parsed as it streams: the text is cut
//! into chunks at blank lines outside code fences (where a new top-level
//! block starts), finished chunks are parsed once, and only the growing tail
//! is parsed again, lazily, when the answer is drawn. An open fence in the
//! tail is code to its end without a parser pass. Lines laid out for a width
//! are kept until the width, the text or the code colours change.

mod layout;
mod parse;

use std::cell::{Ref, RefCell};

use ratatui::text::Line;

pub use layout::{Colours, code_key};
pub use parse::Block;

/// A code fence open in the text scanned so far.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Fence {
    ch: u8,
    len: usize,
    /// Where its opening line starts, and where its code starts.
    start: usize,
    body: usize,
    lang: String,
}

/// Where scanning for chunk boundaries is.
#[derive(Debug, Clone, Default)]
struct Scan {
    /// Complete lines before this offset have been scanned.
    at: usize,
    fence: Option<Fence>,
    /// The last scanned line was blank (outside a fence).
    after_blank: bool,
}

/// Lines laid out for one width.
#[derive(Debug, Clone, Default)]
pub struct Laid {
    width: usize,
    colours: u64,
    /// How many stable blocks `stable` holds the lines of.
    blocks: usize,
    stable: Vec<Line<'static>>,
    /// The text length `tail` was laid out for.
    raw_len: usize,
    tail: Vec<Line<'static>>,
    /// The tail's blocks as laid out; when the tail grows by its last text
    /// block only, that block is re-wrapped from its last line.
    tail_blocks: Vec<Block>,
    /// Where the last block's lines begin in `tail`, and where each starts
    /// in its text (empty unless it is a text block).
    last_first_line: usize,
    last_starts: Vec<usize>,
}

/// Whether `new` is `old` with only its last text block grown at its end.
fn grown(old: &[Block], new: &[Block]) -> bool {
    let n = new.len();
    if old.len() != n || n == 0 || old[..n - 1] != new[..n - 1] {
        return false;
    }
    let (
        Block::Text {
            lead: l1,
            indent: i1,
            runs: r1,
        },
        Block::Text {
            lead: l2,
            indent: i2,
            runs: r2,
        },
    ) = (&old[n - 1], &new[n - 1])
    else {
        return false;
    };
    if l1 != l2 || i1 != i2 || r1.len() > r2.len() {
        return false;
    }
    let Some(((s1, t1), head)) = r1.split_last() else {
        return true;
    };
    head == &r2[..head.len()]
        && r2[head.len()].0 == *s1
        && r2[head.len()].1.starts_with(t1.as_str())
}

impl Laid {
    pub fn len(&self) -> usize {
        self.stable.len() + self.tail.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, i: usize) -> Option<&Line<'static>> {
        self.stable
            .get(i)
            .or_else(|| self.tail.get(i.checked_sub(self.stable.len())?))
    }
}

/// An answer's text, its parsed blocks and its laid-out lines.
#[derive(Debug, Clone, Default)]
pub struct Answer {
    raw: String,
    /// Blocks of `raw[..stable_end]`, never parsed again.
    stable: Vec<Block>,
    stable_end: usize,
    scan: Scan,
    /// Code blocks that became stable since the last `take_code`.
    new_code: Vec<(String, String)>,
    laid: RefCell<Laid>,
}

impl PartialEq for Answer {
    fn eq(&self, other: &Answer) -> bool {
        self.raw == other.raw
    }
}

impl Eq for Answer {}

impl From<&str> for Box<Answer> {
    fn from(text: &str) -> Box<Answer> {
        Box::new(Answer::from(text))
    }
}

impl From<&str> for Answer {
    fn from(text: &str) -> Answer {
        let mut answer = Answer::default();
        answer.push_str(text);
        answer.finish();
        answer
    }
}

/// A fence line (up to three spaces, then three or more ` or ~): its
/// character, length and info string.
fn fence_of(line: &str) -> Option<(u8, usize, &str)> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let ch = *trimmed.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = trimmed.bytes().take_while(|b| *b == ch).count();
    let info = &trimmed[len..];
    (len >= 3 && !(ch == b'`' && info.contains('`'))).then_some((ch, len, info.trim()))
}

impl Answer {
    pub fn text(&self) -> &str {
        &self.raw
    }

    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }

    /// Forgets everything (a retried request's text is void).
    pub fn clear(&mut self) {
        *self = Answer::default();
    }

    /// Appends streamed text; finished chunks are parsed now.
    pub fn push_str(&mut self, text: &str) {
        self.raw.push_str(text);
        while let Some(end) = self.raw[self.scan.at..].find('\n') {
            let start = self.scan.at;
            let end = start + end + 1;
            self.scan_line(start, end);
            self.scan.at = end;
        }
    }

    fn scan_line(&mut self, start: usize, end: usize) {
        let line = self.raw[start..end].trim_end_matches(['\n', '\r']);
        let fence = fence_of(line).map(|(ch, len, info)| (ch, len, info.to_string()));
        if let Some(open) = &self.scan.fence {
            if let Some((ch, len, info)) = fence
                && ch == open.ch
                && len >= open.len
                && info.is_empty()
            {
                self.scan.fence = None;
            }
            return;
        }
        if line.trim().is_empty() {
            self.scan.after_blank = true;
            return;
        }
        // A line at the left edge after a blank one starts a new top-level
        // block: everything before it is a finished chunk.
        let at_edge = !line.starts_with([' ', '\t']);
        if self.scan.after_blank && at_edge && start > self.stable_end {
            self.commit(start);
        }
        self.scan.after_blank = false;
        if let Some((ch, len, info)) = fence {
            self.scan.fence = Some(Fence {
                ch,
                len,
                start,
                body: end,
                lang: info
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_string(),
            });
        }
    }

    /// Parses `raw[stable_end..end]` into the stable blocks.
    fn commit(&mut self, end: usize) {
        let blocks = parse::parse(&self.raw[self.stable_end..end]);
        self.stable_end = end;
        if blocks.is_empty() {
            return;
        }
        if !self.stable.is_empty() {
            self.stable.push(Block::Blank { indent: Vec::new() });
        }
        for b in &blocks {
            if let Block::Code { lang, text, .. } = b {
                self.new_code.push((lang.clone(), text.clone()));
            }
        }
        self.stable.extend(blocks);
    }

    /// The stream ended: the tail becomes stable too.
    pub fn finish(&mut self) {
        if self.stable_end < self.raw.len() {
            self.commit(self.raw.len());
        }
        self.scan = Scan {
            at: self.raw.len(),
            ..Scan::default()
        };
    }

    /// Code blocks finished since the last call, as (language, code).
    pub fn take_code(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.new_code)
    }

    /// The last code block of the answer, if any.
    pub fn last_code(&self) -> Option<String> {
        self.stable
            .iter()
            .chain(self.tail_blocks().iter())
            .rev()
            .find_map(|b| match b {
                Block::Code { text, .. } => Some(text.clone()),
                _ => None,
            })
    }

    /// Blocks of the text after the stable part.
    fn tail_blocks(&self) -> Vec<Block> {
        let tail_start = self.stable_end;
        // The unfinished last line may be the closing fence.
        let last = &self.raw[self.scan.at..];
        let closing = self.scan.fence.as_ref().is_some_and(|f| {
            fence_of(last)
                .is_some_and(|(ch, len, info)| ch == f.ch && len >= f.len && info.is_empty())
        });
        match &self.scan.fence {
            Some(f) if f.start >= tail_start && !closing => {
                let mut blocks = parse::parse(&self.raw[tail_start..f.start]);
                if !blocks.is_empty() {
                    blocks.push(Block::Blank { indent: Vec::new() });
                }
                let text = self.raw[f.body..]
                    .trim_end_matches('\n')
                    .replace('\t', "    ");
                blocks.push(Block::Code {
                    indent: Vec::new(),
                    lang: f.lang.clone(),
                    text,
                });
                blocks
            }
            _ => parse::parse(&self.raw[tail_start..]),
        }
    }

    /// The answer's lines at `width`; `generation` changes whenever
    /// `colours` gains entries.
    pub fn lines(&self, width: usize, colours: &Colours, generation: u64) -> Ref<'_, Laid> {
        {
            let mut laid = self.laid.borrow_mut();
            if laid.width != width || laid.colours != generation {
                *laid = Laid {
                    width,
                    colours: generation,
                    raw_len: usize::MAX,
                    ..Laid::default()
                };
            }
            if laid.blocks < self.stable.len() {
                let from = laid.blocks;
                layout::layout(&self.stable[from..], width, colours, &mut laid.stable);
                laid.blocks = self.stable.len();
                laid.raw_len = usize::MAX;
            }
            if laid.raw_len != self.raw.len() {
                let mut blocks = self.tail_blocks();
                if !self.stable.is_empty() && !blocks.is_empty() {
                    blocks.insert(0, Block::Blank { indent: Vec::new() });
                }
                lay_tail(&mut laid, blocks, width, colours);
                laid.raw_len = self.raw.len();
            }
        }
        self.laid.borrow()
    }
}

/// Lays out the tail's blocks: a grown last text block from its last
/// line on (wrapping is greedy, so the lines before it stand), else all.
fn lay_tail(laid: &mut Laid, blocks: Vec<Block>, width: usize, colours: &Colours) {
    let n = blocks.len();
    let resume = grown(&laid.tail_blocks, &blocks) && !laid.last_starts.is_empty();
    let (first, at) = if resume {
        let k = laid.last_starts.len() - 1;
        let at = laid.last_starts[k];
        laid.tail.truncate(laid.last_first_line + k);
        laid.last_starts.truncate(k);
        (k, at)
    } else {
        laid.tail.clear();
        layout::layout(
            &blocks[..n.saturating_sub(1)],
            width,
            colours,
            &mut laid.tail,
        );
        laid.last_first_line = laid.tail.len();
        laid.last_starts.clear();
        (0, 0)
    };
    match blocks.last() {
        Some(Block::Text { lead, indent, runs }) => {
            let starts = layout::text_from(lead, indent, runs, width, (first, at), &mut laid.tail);
            laid.last_starts.extend(starts.into_iter().map(|s| s + at));
        }
        Some(last) => layout::layout(std::slice::from_ref(last), width, colours, &mut laid.tail),
        None => {}
    }
    laid.tail_blocks = blocks;
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rendered(answer: &Answer, width: usize) -> Vec<String> {
        let laid = answer.lines(width, &Colours::new(), 0);
        (0..laid.len())
            .filter_map(|i| laid.get(i))
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    const SAMPLE: &str = "# Title\n\nSome *text* here.\n\n- one\n- two\n\n```rust\nfn a() {}\n\nfn b() {}\n```\n\nAfter the code.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n> quote\n\nEnd.";

    #[test]
    fn streamed_pieces_render_like_the_whole() {
        let whole = Answer::from(SAMPLE);
        let mut streamed = Answer::default();
        for piece in SAMPLE.as_bytes().chunks(7) {
            streamed.push_str(std::str::from_utf8(piece).unwrap_or_default());
            rendered(&streamed, 50);
        }
        assert_eq!(rendered(&streamed, 50), rendered(&whole, 50));
        streamed.finish();
        assert_eq!(rendered(&streamed, 50), rendered(&whole, 50));
        assert_eq!(
            streamed.last_code().as_deref(),
            Some("fn a() {}\n\nfn b() {}")
        );
    }

    #[test]
    fn an_open_fence_renders_as_code_while_streaming() {
        let mut a = Answer::default();
        a.push_str("Intro.\n\n```py\nx = 1\n\n");
        assert_eq!(rendered(&a, 30), ["Intro.", "", "▎ x = 1"]);
        a.push_str("y = 2\n```\n\nDone.\n");
        assert_eq!(
            a.take_code(),
            [("py".to_string(), "x = 1\n\ny = 2".to_string())]
        );
    }

    #[test]
    fn a_growing_paragraph_is_rewrapped_from_its_last_line_only() {
        let text: String = (0..400).map(|i| format!("word{i} ")).collect();
        let mut a = Answer::default();
        for piece in text.as_bytes().chunks(13) {
            a.push_str(std::str::from_utf8(piece).unwrap_or_default());
            rendered(&a, 40);
        }
        assert_eq!(rendered(&a, 40), rendered(&Answer::from(text.as_str()), 40));
        assert!(a.laid.borrow().last_starts.len() > 50);
    }

    proptest! {
        #[test]
        fn streamed_in_any_pieces_renders_like_the_whole(
            cuts in proptest::collection::vec(0usize..SAMPLE.len(), 0..12),
            width in 20usize..90,
        ) {
            let mut cuts = cuts;
            cuts.sort_unstable();
            let mut a = Answer::default();
            let mut at = 0;
            for cut in cuts.into_iter().chain([SAMPLE.len()]) {
                a.push_str(&SAMPLE[at..cut.max(at)]);
                at = cut.max(at);
                rendered(&a, width);
            }
            prop_assert_eq!(rendered(&a, width), rendered(&Answer::from(SAMPLE), width));
        }

        #[test]
        fn any_cut_into_two_pieces_renders_like_the_whole(cut in 0usize..SAMPLE.len(), width in 20usize..90) {
            let mut a = Answer::default();
            a.push_str(&SAMPLE[..cut]);
            rendered(&a, width);
            a.push_str(&SAMPLE[cut..]);
            prop_assert_eq!(rendered(&a, width), rendered(&Answer::from(SAMPLE), width));
        }
    }
}
