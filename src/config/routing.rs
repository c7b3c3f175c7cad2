//! `[routing]` (SPEC section 12): which provider a job runs on, and for
//! `hybrid_auto` when it leaves the local one for the remote one.

use serde::{Deserialize, Serialize};

/// How jobs pick their provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RoutingMode {
    /// The remote provider only (`[routing] remote`, else the usual choice).
    #[default]
    Remote,
    /// The local provider only.
    Local,
    /// Local first; the remote one on a trigger.
    HybridAuto,
}

impl RoutingMode {
    pub fn as_str(self) -> &'static str {
        match self {
            RoutingMode::Remote => "remote",
            RoutingMode::Local => "local",
            RoutingMode::HybridAuto => "hybrid_auto",
        }
    }

    /// Parses `remote`, `local` or `hybrid_auto` (for `--routing`).
    pub fn parse(text: &str) -> Result<RoutingMode, String> {
        match text {
            "remote" => Ok(RoutingMode::Remote),
            "local" => Ok(RoutingMode::Local),
            "hybrid_auto" => Ok(RoutingMode::HybridAuto),
            other => Err(format!(
                "unknown routing mode \"{other}\"; use remote, local or hybrid_auto"
            )),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RoutingConfig {
    pub mode: RoutingMode,
    /// Provider names from `[providers]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<String>,
    /// Requests sent to the local provider (the first and its retries)
    /// before a provider error falls back.
    pub hybrid_max_local_attempts: u32,
    /// Malformed tool calls or edits before falling back (0: never).
    pub hybrid_remote_on_schema_fail: u32,
    pub hybrid_remote_on_context_overflow: bool,
    pub hybrid_remote_on_budget_without_edits: bool,
    /// A local request not finished within this falls back (0: never).
    pub hybrid_remote_on_timeout_ms: u64,
}

impl Default for RoutingConfig {
    fn default() -> Self {
        RoutingConfig {
            mode: RoutingMode::Remote,
            local: None,
            remote: None,
            hybrid_max_local_attempts: 1,
            hybrid_remote_on_schema_fail: 2,
            hybrid_remote_on_context_overflow: true,
            hybrid_remote_on_budget_without_edits: true,
            hybrid_remote_on_timeout_ms: 60_000,
        }
    }
}

impl RoutingConfig {
    /// What is wrong with the table, given the known provider names.
    pub fn problems(&self, known: &[String]) -> Vec<String> {
        let mut out = Vec::new();
        for (key, name) in [("local", &self.local), ("remote", &self.remote)] {
            if let Some(name) = name
                && !known.contains(name)
            {
                out.push(format!(
                    "routing.{key} = \"{name}\" names no provider; known: {}",
                    known.join(", ")
                ));
            }
        }
        let needs = match self.mode {
            RoutingMode::Remote => vec![],
            RoutingMode::Local => vec![("local", &self.local)],
            RoutingMode::HybridAuto => vec![("local", &self.local), ("remote", &self.remote)],
        };
        for (key, name) in needs {
            if name.is_none() {
                out.push(format!(
                    "routing.mode = \"{}\" needs routing.{key} (a provider name)",
                    self.mode.as_str()
                ));
            }
        }
        if self.hybrid_max_local_attempts == 0 {
            out.push("routing.hybrid_max_local_attempts must be at least 1".into());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_need_their_providers() {
        let known = vec!["ollama".to_string(), "openai".to_string()];
        let hybrid = RoutingConfig {
            mode: RoutingMode::HybridAuto,
            local: Some("ollama".into()),
            ..RoutingConfig::default()
        };
        assert_eq!(
            hybrid.problems(&known),
            ["routing.mode = \"hybrid_auto\" needs routing.remote (a provider name)"]
        );
        let wrong = RoutingConfig {
            local: Some("llama".into()),
            ..RoutingConfig::default()
        };
        assert!(
            wrong.problems(&known)[0].starts_with("routing.local = \"llama\" names no provider")
        );
        assert!(RoutingConfig::default().problems(&known).is_empty());
        assert_eq!(
            RoutingMode::parse("hybrid_auto"),
            Ok(RoutingMode::HybridAuto)
        );
        assert!(RoutingMode::parse("auto").is_err());
    }
}
