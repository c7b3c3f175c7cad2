//! What a verify (SPEC 17) reports: the project's own check run on the
//! accepted hunks in a scratch copy of the root, told apart from a tree
//! that already failed it (the baseline), and whether the review's
//! decisions have moved on since.

use serde::{Deserialize, Serialize};

use super::review::DiffBundle;

/// How a verify came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerifyOutcome {
    /// The command exited 0 with the accepted hunks in.
    Passed,
    /// It failed with the hunks in, and passes without them: the hunks
    /// broke it.
    Failed,
    /// It fails on the unmodified tree as well.
    AlreadyFailing,
    /// It ran past `[verify] timeout_secs` and was stopped.
    TimedOut,
    /// Someone stopped it.
    Cancelled,
    /// It could not run: no command, a file changed under the review, the
    /// copy could not be made, the program would not start (`error` says).
    Error,
}

impl VerifyOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            VerifyOutcome::Passed => "passed",
            VerifyOutcome::Failed => "failed",
            VerifyOutcome::AlreadyFailing => "already failing",
            VerifyOutcome::TimedOut => "timed out",
            VerifyOutcome::Cancelled => "cancelled",
            VerifyOutcome::Error => "could not run",
        }
    }

    /// What the check did with the hunks, to follow "the verify": `failed
    /// on these hunks`, `failed on these hunks, as it does without them
    /// (already failing)` (a refused apply says it).
    pub fn verdict(self) -> &'static str {
        match self {
            VerifyOutcome::Passed => "passed on these hunks",
            VerifyOutcome::Failed => "failed on these hunks",
            VerifyOutcome::AlreadyFailing => {
                "failed on these hunks, as it does without them (already failing)"
            }
            VerifyOutcome::TimedOut => "timed out on these hunks",
            VerifyOutcome::Cancelled => "was cancelled",
            VerifyOutcome::Error => "could not run",
        }
    }
}

/// The same command on the unmodified tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Baseline {
    pub passed: bool,
    pub exit_code: Option<i32>,
    /// Taken from the cache (the tree's content was verified before).
    pub cached: bool,
}

/// `verify.completed`: one verify's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyResult {
    pub passed: bool,
    pub outcome: VerifyOutcome,
    pub command: String,
    /// `None`: killed (timeout, cancel) or never started.
    pub exit_code: Option<i32>,
    /// The command's own time.
    pub duration_ms: u64,
    /// Everything else: the copy, the hunks written into it, its removal.
    #[serde(default)]
    pub overhead_ms: u64,
    /// The last lines of its output, stdout and stderr as they came.
    pub output_tail: String,
    /// The accepted hunks it ran with.
    pub hunk_ids: Vec<String>,
    /// Which review decisions it ran with (`DiffBundle::verify_key`): a
    /// result whose key differs from the review's now is stale.
    #[serde(default)]
    pub decisions: String,
    /// Run only when the hunks' verify failed; `None` otherwise.
    #[serde(default)]
    pub baseline: Option<Baseline>,
    /// Writes only in the copy, no network unless allowed (Landlock).
    #[serde(default)]
    pub confined: bool,
    /// How the copy was made: `reflink` (clones on the root's
    /// filesystem), `memory` (copied into a tmpfs) or `copy`.
    #[serde(default)]
    pub copy: String,
    /// Why it could not run (`outcome: error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Accepted files outside the agent root (`@scope/…`): not in the copy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_verified: Vec<String>,
    /// The root's files as the copy was made (their stats, as a key): a
    /// project changed since makes the result stale too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<String>,
}

impl VerifyResult {
    /// Whether the review's decisions moved on since it ran.
    pub fn stale_for(&self, bundle: &DiffBundle) -> bool {
        self.decisions != bundle.verify_key()
    }

    /// Whether an apply of `bundle`'s decisions is asked about once more
    /// (the TUI) or refused without `--force` (the command line): the
    /// check ran on exactly these decisions and did not pass.
    pub fn blocks_apply(&self, bundle: &DiffBundle) -> bool {
        self.ran() && !self.passed && !self.stale_for(bundle)
    }

    /// Whether the check ran to a verdict (not stopped, not kept from
    /// starting): a result that did not leaves the one before it standing.
    pub fn ran(&self) -> bool {
        !matches!(
            self.outcome,
            VerifyOutcome::Cancelled | VerifyOutcome::Error
        )
    }

    /// One line for a status bar or a terminal: `verify failed (exit 101,
    /// 3.2 s, hunks h1 h2)`.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if let Some(code) = self.exit_code {
            parts.push(format!("exit {code}"));
        }
        parts.push(format!("{:.1} s", self.duration_ms as f64 / 1000.0));
        if !self.hunk_ids.is_empty() {
            parts.push(format!("hunks {}", self.hunk_ids.join(" ")));
        }
        format!(
            "verify {} (`{}`, {})",
            self.outcome.as_str(),
            self.command,
            parts.join(", ")
        )
    }
}
