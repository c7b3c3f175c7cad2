//! `/hooks` (SPEC 21): the root's hooks with their source and trust, and
//! each one's last run this session (decision, time taken, when), as one
//! note in the chat.

use std::collections::BTreeMap;

use crate::protocol::{HookInfo, HookOutcome, HookTrust};

/// The last run of each hook, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookRuns(BTreeMap<String, String>);

impl HookRuns {
    /// Keeps `run` (at `ts`) as its hook's last.
    pub fn note(&mut self, run: &HookOutcome, ts: &str) {
        let at = ts.get(11..19).unwrap_or(ts);
        let error = if run.error.is_some() { ", failed" } else { "" };
        self.0.insert(
            run.name.clone(),
            format!(
                "{} in {} ms at {at}{error}",
                run.decision.as_str(),
                run.duration_ms
            ),
        );
    }
}

/// The note `/hooks` shows.
pub fn hooks_note(list: &[HookInfo], problems: &[String], runs: &HookRuns) -> String {
    if list.is_empty() && problems.is_empty() {
        return "No hooks: [[hooks.run]] in the config, or .agent-tui/hooks.toml in the \
                project (trusted with agent-tui hooks trust)."
            .into();
    }
    let mut out = String::from("Hooks:");
    for h in list {
        let trust = match h.trust {
            HookTrust::Config => "config",
            HookTrust::Trusted => "project, trusted",
            HookTrust::Changed => "project, CHANGED since trusted: the trusted copy runs",
            HookTrust::Untrusted => "project, not trusted: runs nothing",
        };
        let last = runs
            .0
            .get(&h.name)
            .map_or_else(|| "not run yet".to_string(), |r| format!("last: {r}"));
        out.push_str(&format!(
            "\n  {} · {} · {trust} · {last}\n    {}",
            h.name,
            h.event,
            h.command.join(" ")
        ));
    }
    for p in problems {
        out.push_str(&format!("\n  problem: {p}"));
    }
    out
}

impl super::App {
    /// A hook's run: a line in the chat, and its last run for `/hooks`.
    /// A resumed session's hook run: its line in the chat.
    pub(super) fn hook_replayed(&mut self, run: &HookOutcome) {
        self.transcript.push(hook_entry(run));
    }

    pub(super) fn hook_completed(&mut self, run: &crate::protocol::HookOutcome, ts: &str) {
        self.hook_runs.note(run, ts);
        self.transcript.push(hook_entry(run));
    }
}

/// A hook's run as a chat line, folded like a tool call's: its decision
/// and time, and (expanded) the whole of what it said.
pub(super) fn hook_entry(run: &crate::protocol::HookOutcome) -> super::Entry {
    let why = run
        .reason
        .as_deref()
        .or(run.error.as_deref())
        .unwrap_or_default();
    super::Entry::Tool {
        name: format!("hook {}", run.name),
        summary: format!(
            "{} · {} · {} ms{}",
            run.event,
            run.decision.as_str(),
            run.duration_ms,
            if why.is_empty() {
                String::new()
            } else {
                format!(" · {}", why.lines().next().unwrap_or_default())
            }
        ),
        ok: Some(run.error.is_none() && run.decision != crate::protocol::HookDecision::Block),
        detail: serde_json::to_string_pretty(run).unwrap_or_default(),
    }
}
