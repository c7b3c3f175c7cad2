//! Hooks on the wire (SPEC 21): what a hook may answer on stdout, what one
//! run came to (`hook.completed`, `hooks test`) and what `hooks list` shows.

use serde::{Deserialize, Serialize};

/// A hook's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HookDecision {
    Pass,
    Block,
    /// Ask the user (a `tool.before` gate): it never approves on its own.
    Ask,
    /// `job.end`: go on with `message`.
    Continue,
}

impl HookDecision {
    pub fn as_str(self) -> &'static str {
        match self {
            HookDecision::Pass => "pass",
            HookDecision::Block => "block",
            HookDecision::Ask => "ask",
            HookDecision::Continue => "continue",
        }
    }
}

/// The one JSON object a hook may print on exit 0; a field it does not
/// know is an error (shown, never dropped).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookAnswer {
    #[serde(default)]
    pub decision: Option<HookDecision>,
    /// Why it blocked (what the model or the user is told).
    #[serde(default)]
    pub reason: Option<String>,
    /// Added for the model (a `prompt.submit` or `tool.before` that passes).
    #[serde(default)]
    pub context: Option<String>,
    /// `job.end`'s next instruction when it continues.
    #[serde(default)]
    pub message: Option<String>,
}

/// What one run of a hook came to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookOutcome {
    pub name: String,
    pub event: String,
    /// The definition that ran (a project hook: the trusted one).
    pub def_sha256: String,
    pub decision: HookDecision,
    /// `None`: it did not end by itself (timeout, cancel) or never ran.
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    pub timed_out: bool,
    pub confined: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// What went wrong (a crash, a timeout, output that broke the
    /// contract); the decision is then `on_error`'s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `apply.before`: the files it changed (their new bytes are applied).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed_files: Vec<String>,
}

impl HookOutcome {
    /// A run of hook `name` at `event` that passed and said nothing (yet).
    pub fn passed(name: &str, event: &str, def_sha256: &str) -> HookOutcome {
        HookOutcome {
            name: name.to_string(),
            event: event.to_string(),
            def_sha256: def_sha256.to_string(),
            decision: HookDecision::Pass,
            exit_code: None,
            duration_ms: 0,
            timed_out: false,
            confined: false,
            reason: None,
            context: None,
            message: None,
            error: None,
            changed_files: Vec::new(),
        }
    }
}

/// `hooks test`: the runs, in order (stopped at the first that decides), and
/// the hooks of the event whose `match` took none of the input.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookTest {
    pub runs: Vec<HookOutcome>,
    #[serde(default)]
    pub unmatched: Vec<HookSkip>,
}

/// A hook that did not run, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookSkip {
    pub name: String,
    pub reason: String,
}

/// Where a hook is defined and whether it may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookTrust {
    /// The user's config: runs as written.
    Config,
    /// A project hook, trusted as it is.
    Trusted,
    /// A project hook trusted before, changed since: the trusted copy runs.
    Changed,
    /// A project hook never trusted: runs nothing.
    Untrusted,
}

/// A line of `hooks list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookInfo {
    pub name: String,
    pub event: String,
    /// `config` or the project file's path.
    pub source: String,
    pub trust: HookTrust,
    pub def_sha256: String,
    pub command: Vec<String>,
    pub timeout_secs: u64,
    pub on_error: String,
    pub network: bool,
    /// Files of the project the definition names (its scripts), with
    /// whether each is as trusted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scripts: Vec<HookScript>,
}

/// A script a project hook names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookScript {
    pub path: String,
    pub sha256: String,
    pub changed: bool,
}
