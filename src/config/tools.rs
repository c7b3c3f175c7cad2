//! What tools may do: `[exec]` (commands), `[git]`, `[approvals]` (who
//! decides a call that changes things) and `[mcp_servers.NAME]`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExecConfig {
    /// Command prefixes (argv words) that `allowlisted-auto` runs unasked.
    pub allow: Vec<String>,
    pub timeout_secs: u64,
    pub max_output_bytes: u64,
    /// Whether commands may use the network (TCP; Landlock denies it otherwise).
    pub network: bool,
    /// Folders outside the agent root commands may write to (`~/` is the
    /// home directory), e.g. a package cache.
    pub writable: Vec<String>,
}

impl ExecConfig {
    /// `writable` with `~/` expanded.
    pub fn writable_paths(&self) -> Vec<std::path::PathBuf> {
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        self.writable
            .iter()
            .filter_map(|w| match (w.strip_prefix("~/"), &home) {
                (Some(rest), Some(home)) => Some(home.join(rest)),
                (Some(_), None) => None,
                (None, _) => Some(std::path::PathBuf::from(w)),
            })
            .collect()
    }
}

impl Default for ExecConfig {
    fn default() -> Self {
        ExecConfig {
            allow: vec![
                "cargo test".into(),
                "cargo build".into(),
                "git status".into(),
            ],
            timeout_secs: 120,
            max_output_bytes: 1_048_576,
            network: false,
            writable: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalPolicy {
    /// Ask the user for every call.
    #[default]
    Individual,
    /// The calls of one model turn are asked together, in one dialog.
    Batch,
    /// Run calls that match the allow list without asking; ask for the rest.
    AllowlistedAuto,
    /// Run without asking (inline shell code is still asked).
    Auto,
    /// Refuse every call of this kind.
    Never,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ApprovalsConfig {
    /// `run_command`.
    pub exec: ApprovalPolicy,
    /// MCP tools.
    pub mcp: ApprovalPolicy,
    /// `git_add` and `git_commit` (`git_push` is always asked).
    pub git: ApprovalPolicy,
}

impl Default for ApprovalsConfig {
    fn default() -> Self {
        ApprovalsConfig {
            exec: ApprovalPolicy::Individual,
            mcp: ApprovalPolicy::Individual,
            git: ApprovalPolicy::Batch,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GitConfig {
    /// Offer `git_push` to the model (asked one by one).
    pub allow_push: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    #[serde(default)]
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}
