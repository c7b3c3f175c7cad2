//! `[hooks]` (SPEC 21): the user's own commands at the agent's named
//! points. The config's hooks are the user's and run as written; a
//! project's `.agent-tui/hooks.toml` (the same `[hooks]` table) runs only
//! once trusted (`agent-tui hooks trust`).

use serde::{Deserialize, Serialize};

/// The points a hook runs at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum HookEvent {
    #[serde(rename = "session.start")]
    SessionStart,
    #[serde(rename = "prompt.submit")]
    PromptSubmit,
    #[serde(rename = "tool.before")]
    ToolBefore,
    #[serde(rename = "tool.after")]
    ToolAfter,
    #[serde(rename = "approval.requested")]
    ApprovalRequested,
    #[serde(rename = "apply.before")]
    ApplyBefore,
    #[serde(rename = "verify.completed")]
    VerifyCompleted,
    #[serde(rename = "apply.after")]
    ApplyAfter,
    #[serde(rename = "job.end")]
    JobEnd,
    #[serde(rename = "compact.before")]
    CompactBefore,
    #[serde(rename = "rollback.after")]
    RollbackAfter,
}

impl HookEvent {
    pub const ALL: [HookEvent; 11] = [
        HookEvent::SessionStart,
        HookEvent::PromptSubmit,
        HookEvent::ToolBefore,
        HookEvent::ToolAfter,
        HookEvent::ApprovalRequested,
        HookEvent::ApplyBefore,
        HookEvent::VerifyCompleted,
        HookEvent::ApplyAfter,
        HookEvent::JobEnd,
        HookEvent::CompactBefore,
        HookEvent::RollbackAfter,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "session.start",
            HookEvent::PromptSubmit => "prompt.submit",
            HookEvent::ToolBefore => "tool.before",
            HookEvent::ToolAfter => "tool.after",
            HookEvent::ApprovalRequested => "approval.requested",
            HookEvent::ApplyBefore => "apply.before",
            HookEvent::VerifyCompleted => "verify.completed",
            HookEvent::ApplyAfter => "apply.after",
            HookEvent::JobEnd => "job.end",
            HookEvent::CompactBefore => "compact.before",
            HookEvent::RollbackAfter => "rollback.after",
        }
    }

    /// Its name as written, if it is one.
    pub fn parse(name: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|e| e.as_str() == name)
    }

    /// A gate: the job waits for it, and its block stops what was about to
    /// happen (the first block wins).
    pub fn is_gate(self) -> bool {
        matches!(
            self,
            HookEvent::PromptSubmit | HookEvent::ToolBefore | HookEvent::ApplyBefore
        )
    }

    /// Waited for: a gate, or `job.end` (which may ask to go on).
    pub fn is_waited(self) -> bool {
        self.is_gate() || self == HookEvent::JobEnd
    }

    /// What its hooks' `match` may name: a call's tool, command and paths,
    /// or the files an apply or a verify is about (`path` only).
    pub fn matches_on(self) -> MatchOn {
        match self {
            HookEvent::ToolBefore | HookEvent::ToolAfter => MatchOn::Calls,
            HookEvent::ApplyBefore | HookEvent::ApplyAfter | HookEvent::VerifyCompleted => {
                MatchOn::Files
            }
            HookEvent::SessionStart
            | HookEvent::PromptSubmit
            | HookEvent::ApprovalRequested
            | HookEvent::JobEnd
            | HookEvent::CompactBefore
            | HookEvent::RollbackAfter => MatchOn::Nothing,
        }
    }
}

/// What a hook's `match` can be about at its event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchOn {
    /// A tool call: `tool`, `command` and `path`.
    Calls,
    /// The files being applied or verified: `path`.
    Files,
    /// Nothing: a `match` is an error.
    Nothing,
}

/// What a failing hook (timeout, crash, output that is not the contract)
/// means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    Block,
    Pass,
}

/// Which calls a `tool.before` / `tool.after` hook is for: globs (`*`
/// any run of characters, `/` too; `?` one) over the tool's name, a
/// command's line and the paths it names. Unset: any.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookMatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// One hook as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookDef {
    pub name: String,
    pub on: HookEvent,
    #[serde(default, rename = "match", skip_serializing_if = "HookMatch::is_any")]
    pub matcher: HookMatch,
    /// argv: no shell unless the user writes one (`["sh", "-c", "…"]`);
    /// `"{files}"` becomes one argument per file the call names.
    pub command: Vec<String>,
    #[serde(default = "default_timeout")]
    pub timeout_secs: u64,
    /// Unset: `block` for gates, `pass` for the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_error: Option<OnError>,
    #[serde(default)]
    pub network: bool,
    /// Folders outside every project root it may write in too (`~/…`
    /// allowed; made when missing), such as a log of its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writable: Vec<String>,
}

fn default_timeout() -> u64 {
    10
}

impl HookMatch {
    pub fn is_any(&self) -> bool {
        self.tool.is_none() && self.command.is_none() && self.path.is_none()
    }
}

impl HookDef {
    /// What its failure means.
    pub fn on_error(&self) -> OnError {
        self.on_error.unwrap_or(if self.on.is_gate() {
            OnError::Block
        } else {
            OnError::Pass
        })
    }
}

/// `[hooks]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HooksConfig {
    /// How many times `job.end` hooks may send a job on.
    pub max_continuations: u32,
    pub run: Vec<HookDef>,
}

impl Default for HooksConfig {
    fn default() -> Self {
        HooksConfig {
            max_continuations: 3,
            run: Vec::new(),
        }
    }
}

/// A project's `.agent-tui/hooks.toml`: a `[hooks]` table, as in the config.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HooksFile {
    #[serde(default)]
    pub hooks: HooksConfig,
}

/// Where a project keeps its hooks, from its root.
pub const PROJECT_FILE: &str = ".agent-tui/hooks.toml";

impl HooksConfig {
    /// What is wrong with the hooks, each problem naming its hook.
    pub fn problems(&self, table: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (i, h) in self.run.iter().enumerate() {
            let at = format!("{table}.run[{i}]");
            let plain = !h.name.is_empty()
                && h.name.len() <= 64
                && h.name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !plain {
                out.push(format!(
                    "{at}.name = {:?}: letters, digits, - and _ only (at most 64)",
                    h.name
                ));
            }
            if !seen.insert(h.name.clone()) {
                out.push(format!("{at}: another hook is named {:?}", h.name));
            }
            if h.command.first().is_none_or(|p| p.trim().is_empty()) {
                out.push(format!("{at}.command is empty: name the program to run"));
            }
            if !(1..=600).contains(&h.timeout_secs) {
                out.push(format!(
                    "{at}.timeout_secs = {}: from 1 to 600",
                    h.timeout_secs
                ));
            }
            for (key, glob) in [
                ("tool", &h.matcher.tool),
                ("command", &h.matcher.command),
                ("path", &h.matcher.path),
            ] {
                if let Some(g) = glob
                    && let Err(e) = globset::Glob::new(g)
                {
                    out.push(format!("{at}.match.{key} = {g:?}: {e}"));
                }
            }
            for w in &h.writable {
                if !(w.starts_with('/') || w == "~" || w.starts_with("~/")) {
                    out.push(format!(
                        "{at}.writable = {w:?}: an absolute folder (or one under ~/)"
                    ));
                }
            }
            let by_call = h.matcher.tool.is_some() || h.matcher.command.is_some();
            match h.on.matches_on() {
                MatchOn::Calls => {}
                MatchOn::Files if by_call => out.push(format!(
                    "{at}.match: a {} hook matches files by path only (tool and command \
                     are for tool.before and tool.after)",
                    h.on.as_str()
                )),
                MatchOn::Files => {}
                MatchOn::Nothing if !h.matcher.is_any() => out.push(format!(
                    "{at}.match: {} hooks match nothing (tool.before and tool.after match \
                     calls; apply.before, apply.after and verify.completed match files by path)",
                    h.on.as_str()
                )),
                MatchOn::Nothing => {}
            }
        }
        out
    }
}

/// Whether `text` matches `glob` (`*` crosses `/`).
pub fn glob_matches(glob: &str, text: &str) -> bool {
    globset::GlobBuilder::new(glob)
        .literal_separator(false)
        .build()
        .is_ok_and(|g| g.compile_matcher().is_match(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_checks() {
        let text = r#"
            max_continuations = 2
            [[run]]
            name = "no-force-push"
            on = "tool.before"
            match = { tool = "run_command", command = "git push*--force*" }
            command = ["./guard.sh"]
            timeout_secs = 5
        "#;
        let hooks: HooksConfig = toml::from_str(text).unwrap();
        assert_eq!(hooks.max_continuations, 2);
        let h = &hooks.run[0];
        assert_eq!(h.on, HookEvent::ToolBefore);
        assert_eq!(h.on_error(), OnError::Block);
        assert!(hooks.problems("hooks").is_empty());
        assert!(glob_matches(
            "git push*--force*",
            "git push origin main --force"
        ));
        assert!(!glob_matches("git push*--force*", "git push origin main"));
        let bad: Result<HooksConfig, _> =
            toml::from_str("[[run]]\nname = \"x\"\non = \"tool.later\"\ncommand = [\"x\"]\n");
        assert!(bad.is_err());
        let unknown: Result<HooksConfig, _> = toml::from_str(
            "[[run]]\nname = \"x\"\non = \"job.end\"\ncommand = [\"x\"]\nshell = true\n",
        );
        assert!(unknown.unwrap_err().to_string().contains("shell"));
    }
}
