//! The review as the TUI holds it: the bundle, where the reviewer is, each
//! hunk's patch parsed once and its colours (computed off the UI task).

use crate::protocol::{DiffBundle, VerifyResult};
use crate::tui::highlight::StyledLine;

/// Where the review's verify (SPEC 17) stands.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum VerifyState {
    #[default]
    NotRun,
    /// Running on these hunks (Esc stops it).
    Running {
        command: String,
        hunk_ids: Vec<String>,
    },
    Done(VerifyResult),
}

impl VerifyState {
    /// Whether a verify runs now.
    pub fn running(&self) -> bool {
        matches!(self, VerifyState::Running { .. })
    }
}

/// A refusal of the review (shown under its files until the next
/// decision), by what was refused: its box is titled by that.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// An apply failed: nothing was written.
    Apply(String),
    /// A verify could not run.
    Verify(String),
    /// A hunk's edit was not kept, or cannot be made.
    Edit(String),
    /// The engine could not take the command (the session is busy elsewhere,
    /// the engine stopped).
    Engine(String),
}

impl Refusal {
    /// The title of its box.
    pub fn title(&self) -> &'static str {
        match self {
            Refusal::Apply(_) => "nothing written",
            Refusal::Verify(_) => "verify not run",
            Refusal::Edit(_) => "edit not kept",
            Refusal::Engine(_) => "not done",
        }
    }

    pub fn text(&self) -> &str {
        match self {
            Refusal::Apply(t) | Refusal::Verify(t) | Refusal::Edit(t) | Refusal::Engine(t) => t,
        }
    }
}

/// Where the hunk view or the whole-file view is scrolled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReviewScroll {
    /// The current hunk in view: its first row, or in the whole file the
    /// hunk a few rows below the top (the top itself when the file fits).
    #[default]
    ToHunk,
    /// This many rows below the top (kept within the view when drawn).
    At(usize),
}

/// How a file of the review shows in the tree: ● something still to decide
/// or to apply, ✓ applied, ✗ every hunk rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Badge {
    Pending,
    Applied,
    Rejected,
}

impl Badge {
    /// The badge of a file of a bundle: pending while a hunk is undecided,
    /// conflicted or accepted but not written; else applied when one was
    /// written; else (all rejected) rejected.
    pub fn of(file: &crate::protocol::FileDiff) -> Option<Badge> {
        use crate::protocol::HunkState as S;
        let any = |pred: &dyn Fn(&S) -> bool| file.hunks.iter().any(|h| pred(&h.state));
        if file.hunks.is_empty() {
            None
        } else if any(&|s| !matches!(s, S::Applied | S::Rejected)) {
            Some(Badge::Pending)
        } else if any(&|s| matches!(s, S::Applied)) {
            Some(Badge::Applied)
        } else {
            Some(Badge::Rejected)
        }
    }
}

/// The pending diff and where the reviewer is in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewView {
    pub job_id: String,
    pub bundle: DiffBundle,
    /// Index into the flattened hunks.
    pub cursor: usize,
    /// Each hunk's patch, parsed once when the bundle arrives (not per frame).
    pub rows: std::collections::HashMap<String, Vec<PatchRow>>,
    /// Syntax colours of each hunk's patch lines, computed off the UI task
    /// (`Load::HunkColours`); a hunk without them yet is drawn plain.
    pub colours: std::collections::HashMap<String, Vec<StyledLine>>,
    /// The whole file with every hunk inline: (path, rows of (marker, text, hunk)).
    pub whole_file: Option<(String, Vec<WholeFileRow>)>,
    pub verify: VerifyState,
    /// The last verify that ran to a verdict (one stopped or kept from
    /// starting leaves it standing).
    pub verdict: Option<VerifyResult>,
    /// The project's files changed since that verdict's copy (a review
    /// read back from the store says so): it is stale.
    pub tree_changed: bool,
    /// Ctrl+S after a failed verify (or during one) asked once more; the
    /// next applies.
    pub apply_confirm: bool,
    /// Enter with hunks of this review not applied said so once; the next
    /// sends the instruction anyway (the review stays pending).
    pub send_confirm: bool,
    /// Where the hunk (or whole-file) view is scrolled.
    pub scroll: ReviewScroll,
}

/// A row of the whole-file view: ' ' unchanged, '-' removed, '+' added.
pub type WholeFileRow = (char, String, Option<String>);

/// One line of a hunk's patch: its marker (`@`, `+`, `-`, ` `, `\`), its
/// old and new line numbers where it has them, and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchRow {
    pub marker: char,
    pub old: Option<usize>,
    pub new: Option<usize>,
    pub text: String,
}

/// Parses a hunk's unified-diff text; numbers follow its `@@` header.
pub fn patch_rows(patch: &str) -> Vec<PatchRow> {
    let header = patch.lines().next().unwrap_or_default();
    let num = |sign: char| -> usize {
        header
            .split_whitespace()
            .find(|w| w.starts_with(sign))
            .and_then(|w| w[1..].split(',').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(1)
    };
    let (mut old, mut new) = (num('-').max(1), num('+').max(1));
    patch
        .lines()
        .map(|l| {
            let text = l.trim_end_matches('\r').to_string();
            let marker = text.chars().next().unwrap_or(' ');
            let (o, n) = match marker {
                '@' | '\\' => (None, None),
                '+' => {
                    new += 1;
                    (None, Some(new - 1))
                }
                '-' => {
                    old += 1;
                    (Some(old - 1), None)
                }
                _ => {
                    old += 1;
                    new += 1;
                    (Some(old - 1), Some(new - 1))
                }
            };
            PatchRow {
                marker,
                old: o,
                new: n,
                text,
            }
        })
        .collect()
}

/// What to highlight for a hunk: (hunk id, file path, its lines' code).
pub type HunkCode = (String, String, String);

impl ReviewView {
    /// The last verdict when it failed and still matches the decisions:
    /// applying asks once more, `f` can send it to the model.
    pub fn failed_verdict(&self) -> Option<&VerifyResult> {
        self.verdict
            .as_ref()
            .filter(|r| r.blocks_apply(&self.bundle))
    }

    /// A verify's result arrived.
    pub fn verified(&mut self, result: &VerifyResult) {
        self.verify = VerifyState::Done(result.clone());
        if result.ran() || self.verdict.is_none() {
            self.verdict = Some(result.clone());
            self.tree_changed = false;
        }
        self.apply_confirm = false;
    }

    /// The review of `bundle`; colours of hunks unchanged since `before`
    /// are kept (a decision does not highlight anything again).
    pub fn new(
        job_id: String,
        bundle: DiffBundle,
        cursor: usize,
        before: Option<&ReviewView>,
    ) -> ReviewView {
        let mut rows = std::collections::HashMap::new();
        let mut colours = std::collections::HashMap::new();
        for hunk in bundle.hunks() {
            rows.insert(hunk.hunk_id.clone(), patch_rows(&hunk.patch));
            let same = before.and_then(|b| {
                let old = b.bundle.hunks().find(|h| h.hunk_id == hunk.hunk_id)?;
                (old.patch == hunk.patch).then(|| b.colours.get(&hunk.hunk_id))?
            });
            if let Some(c) = same {
                colours.insert(hunk.hunk_id.clone(), c.clone());
            }
        }
        ReviewView {
            job_id,
            bundle,
            cursor,
            rows,
            colours,
            whole_file: None,
            verify: before.map(|b| b.verify.clone()).unwrap_or_default(),
            verdict: before.and_then(|b| b.verdict.clone()),
            tree_changed: before.is_some_and(|b| b.tree_changed),
            apply_confirm: false,
            send_confirm: false,
            // A decision keeps the view where it was on the same hunk.
            scroll: before
                .filter(|b| b.cursor == cursor)
                .map_or(ReviewScroll::ToHunk, |b| b.scroll),
        }
    }

    /// The hunks still to highlight, each as its code without the
    /// `+`/`-`/space prefixes (headers as empty lines).
    pub fn uncoloured(&self) -> Vec<HunkCode> {
        self.bundle
            .files
            .iter()
            .flat_map(|f| f.hunks.iter().map(move |h| (f, h)))
            .filter(|(_, h)| !self.colours.contains_key(&h.hunk_id))
            .map(|(f, h)| {
                let code: Vec<&str> = h
                    .patch
                    .lines()
                    .map(|l| {
                        if l.starts_with('@') || l.starts_with('\\') {
                            ""
                        } else {
                            l.get(1..).unwrap_or_default()
                        }
                    })
                    .collect();
                (h.hunk_id.clone(), f.file_path.clone(), code.join("\n"))
            })
            .collect()
    }

    /// (file index, hunk index) of every hunk, in order.
    pub fn positions(&self) -> Vec<(usize, usize)> {
        self.bundle
            .files
            .iter()
            .enumerate()
            .flat_map(|(f, file)| (0..file.hunks.len()).map(move |h| (f, h)))
            .collect()
    }

    pub fn current(&self) -> Option<(usize, usize)> {
        self.positions().get(self.cursor).copied()
    }

    /// Moves the cursor to hunk `cursor` (kept in range); the view follows it.
    pub fn go_to(&mut self, cursor: usize) {
        let n = self.positions().len();
        let cursor = cursor.min(n.saturating_sub(1));
        if cursor != self.cursor {
            self.cursor = cursor;
            self.scroll = ReviewScroll::ToHunk;
        }
    }

    /// Hunks decided (accepted, rejected or applied) / all hunks.
    pub fn progress(&self) -> (usize, usize) {
        let all: Vec<_> = self.bundle.hunks().collect();
        (
            all.iter().filter(|h| h.state.accepted().is_some()).count(),
            all.len(),
        )
    }
}
