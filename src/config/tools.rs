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
    /// What runs a command line: `none` (the program itself, argv split
    /// like a POSIX shell; the default), or on Windows `cmd` (`cmd /C`)
    /// or `powershell` (`-NoProfile -NonInteractive -Command`).
    pub shell: Shell,
}

/// The shell `[exec] shell` names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Shell {
    #[default]
    None,
    Cmd,
    Powershell,
}

impl Shell {
    /// The argv that runs `line` in this shell (`None`: no shell).
    pub fn wrap(self, line: &str) -> Option<Vec<String>> {
        let words: &[&str] = match self {
            Shell::None => return None,
            Shell::Cmd => &["cmd", "/D", "/S", "/C"],
            Shell::Powershell => &["powershell", "-NoProfile", "-NonInteractive", "-Command"],
        };
        let mut argv: Vec<String> = words.iter().map(|w| (*w).to_string()).collect();
        argv.push(line.to_string());
        Some(argv)
    }
}

impl ExecConfig {
    /// What is wrong with `[exec]`, each problem naming its key.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (i, prefix) in self.allow.iter().enumerate() {
            if prefix.trim().is_empty() {
                out.push(format!(
                    "exec.allow[{i}] is empty, which would allow every command"
                ));
            }
        }
        // A relative folder would be taken from wherever a command runs
        // (`../` is the root's parent): only absolute or `~/` ones.
        for (i, w) in self.writable.iter().enumerate() {
            if !(w.starts_with('/') || w.starts_with("~/") || std::path::Path::new(w).is_absolute())
            {
                out.push(format!(
                    "exec.writable[{i}] = {w:?} must be an absolute path or start with ~/"
                ));
            }
        }
        out
    }

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
            shell: Shell::None,
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
    /// `web_fetch` and `web_search` (`[web] allow_domains` run unasked).
    pub web: ApprovalPolicy,
}

impl Default for ApprovalsConfig {
    fn default() -> Self {
        ApprovalsConfig {
            exec: ApprovalPolicy::Individual,
            mcp: ApprovalPolicy::Individual,
            git: ApprovalPolicy::Batch,
            web: ApprovalPolicy::Individual,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GitConfig {
    /// Offer `git_push` to the model (asked one by one).
    pub allow_push: bool,
}

/// One MCP server: a command spoken to over stdio, or a streamable HTTP
/// `url`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct McpServerConfig {
    pub command: String,
    pub args: Vec<String>,
    /// Set for the server's process (API keys of ours never reach it).
    pub env: BTreeMap<String, String>,
    /// A streamable HTTP server instead of a command.
    pub url: Option<String>,
    pub startup_timeout_secs: u64,
    pub tool_timeout_secs: u64,
    pub enabled: bool,
}

impl Default for McpServerConfig {
    fn default() -> Self {
        McpServerConfig {
            command: String::new(),
            args: Vec::new(),
            env: BTreeMap::new(),
            url: None,
            startup_timeout_secs: 10,
            tool_timeout_secs: 60,
            enabled: true,
        }
    }
}

impl McpServerConfig {
    /// What is wrong with server `name`'s table, each naming its key.
    pub fn problems(&self, name: &str) -> Vec<String> {
        let key = format!("mcp_servers.{name}");
        let mut out = Vec::new();
        if name.is_empty()
            || name.contains("__")
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            out.push(format!(
                "{key}: a server name may hold only letters, digits, `-` and single `_` \
                 (its tools are named mcp__<server>__<tool>)"
            ));
        }
        match (self.command.is_empty(), &self.url) {
            (true, None) => out.push(format!("{key}: set `command` (stdio) or `url` (HTTP)")),
            (false, Some(_)) => out.push(format!("{key}: set `command` or `url`, not both")),
            (true, Some(url)) if !(url.starts_with("http://") || url.starts_with("https://")) => {
                out.push(format!("{key}.url: must start with http:// or https://"));
            }
            _ => {}
        }
        if self.startup_timeout_secs == 0 || self.tool_timeout_secs == 0 {
            out.push(format!("{key}: timeouts must be at least 1 second"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shell_takes_the_line_whole_and_an_unknown_one_is_named() {
        assert_eq!(Shell::None.wrap("dir /b"), None);
        assert_eq!(
            Shell::Cmd.wrap("dir /b | findstr rs").unwrap(),
            ["cmd", "/D", "/S", "/C", "dir /b | findstr rs"]
        );
        assert_eq!(
            Shell::Powershell
                .wrap("Get-ChildItem")
                .unwrap()
                .last()
                .unwrap(),
            "Get-ChildItem"
        );
        let path = std::path::Path::new("c.toml");
        let parsed = crate::config::load::parse("[exec]\nshell = \"cmd\"\n", path).unwrap();
        assert_eq!(parsed.exec.shell, Shell::Cmd);
        let err = crate::config::load::parse("[exec]\nshell = \"bash\"\n", path).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("shell") && text.contains("bash"), "{text}");
    }
}
