//! `[notify]` (SPEC 19): which moments the agent tells the terminal about
//! (it waits for the user: an approval, a clarification, a review, a
//! verify's result; or a job failed), when (only while the terminal is not
//! focused, by default), and a command fed each one as JSON.

use serde::{Deserialize, Serialize};

/// A moment a person may want to hear of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NotifyKind {
    Approval,
    Clarification,
    Review,
    Verify,
    Failed,
}

impl NotifyKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NotifyKind::Approval => "approval",
            NotifyKind::Clarification => "clarification",
            NotifyKind::Review => "review",
            NotifyKind::Verify => "verify",
            NotifyKind::Failed => "failed",
        }
    }
}

/// When the terminal is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum NotifyWhen {
    /// Only while the terminal reports it is not focused (or cannot say).
    #[default]
    Unfocused,
    Always,
    Never,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NotifyConfig {
    pub on: Vec<NotifyKind>,
    pub when: NotifyWhen,
    /// argv run for each notification, the event's JSON on its stdin; empty: none.
    pub command: Vec<String>,
}

impl Default for NotifyConfig {
    fn default() -> Self {
        NotifyConfig {
            on: vec![
                NotifyKind::Approval,
                NotifyKind::Clarification,
                NotifyKind::Review,
                NotifyKind::Verify,
                NotifyKind::Failed,
            ],
            when: NotifyWhen::Unfocused,
            command: Vec::new(),
        }
    }
}

impl NotifyConfig {
    /// Whether a moment of `kind` is told, the terminal focused or not.
    pub fn wants(&self, kind: NotifyKind, focused: bool) -> bool {
        self.on.contains(&kind)
            && match self.when {
                NotifyWhen::Always => true,
                NotifyWhen::Unfocused => !focused,
                NotifyWhen::Never => false,
            }
    }

    pub fn problems(&self) -> Vec<String> {
        match self.command.first() {
            Some(program) if program.trim().is_empty() => {
                vec!["notify.command: its first word (the program) is empty".into()]
            }
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn told_when_unfocused_by_default_and_never_when_asked() {
        let c = NotifyConfig::default();
        assert!(c.wants(NotifyKind::Review, false));
        assert!(!c.wants(NotifyKind::Review, true));
        let c = NotifyConfig {
            when: NotifyWhen::Never,
            ..NotifyConfig::default()
        };
        assert!(!c.wants(NotifyKind::Failed, false));
        let c = NotifyConfig {
            on: vec![NotifyKind::Failed],
            when: NotifyWhen::Always,
            ..NotifyConfig::default()
        };
        assert!(c.wants(NotifyKind::Failed, true));
        assert!(!c.wants(NotifyKind::Approval, false));
    }

    #[test]
    fn a_bad_value_is_refused_by_name() {
        let e = toml::from_str::<NotifyConfig>("when = \"sometimes\"").unwrap_err();
        assert!(e.to_string().contains("sometimes"), "{e}");
        let e = toml::from_str::<NotifyConfig>("on = [\"review\", \"lunch\"]").unwrap_err();
        assert!(e.to_string().contains("lunch"), "{e}");
    }
}
