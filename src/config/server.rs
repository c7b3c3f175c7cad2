//! `[server]`: what `agent-tui serve` listens on, whom it lets in (hosts,
//! origins, users) and which workspaces it serves (SPEC section 13).

use serde::{Deserialize, Serialize};

use crate::protocol::Role;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerConfig {
    /// Address and port; `--bind` overrides it.
    pub bind: String,
    /// A request's `Host` must be one of these (a port after it is
    /// ignored): DNS rebinding finds nothing to talk to.
    pub allowed_hosts: Vec<String>,
    /// Browser origins allowed to call the API; none by default.
    pub allowed_origins: Vec<String>,
    /// Requests per token per minute; past it, 429 with Retry-After.
    pub rate_limit_per_minute: u32,
    /// Largest request body; past it, 413.
    pub max_body_bytes: usize,
    /// Jobs one user may have running at once.
    pub max_concurrent_jobs_per_user: usize,
    /// Jobs this host runs at once.
    pub max_jobs_per_host: usize,
    /// On SIGTERM, how long running jobs may go on to their end before
    /// they are cancelled.
    pub shutdown_grace_secs: u64,
    /// This host's name among the hosts sharing the store; unset:
    /// `<hostname>:<port>`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_name: Option<String>,
    /// Dollars a month each user may spend, by user name (stored tokens'
    /// users too); a `[[server.users]]` entry's own budget comes first.
    pub monthly_budgets_usd: std::collections::BTreeMap<String, f64>,
    /// The budget of a user with none of their own; unset: no limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_monthly_budget_usd: Option<f64>,
    /// Fixed users (besides the tokens `serve token add` stores).
    pub users: Vec<ServerUser>,
    /// The folders it serves; none: the root `serve` was started in, as
    /// workspace `default`.
    pub workspaces: Vec<ServerWorkspace>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            bind: "127.0.0.1:8787".into(),
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "[::1]".into()],
            allowed_origins: Vec::new(),
            rate_limit_per_minute: 120,
            max_body_bytes: 1024 * 1024,
            max_concurrent_jobs_per_user: 4,
            max_jobs_per_host: 8,
            shutdown_grace_secs: 20,
            host_name: None,
            monthly_budgets_usd: std::collections::BTreeMap::new(),
            default_monthly_budget_usd: None,
            users: Vec::new(),
            workspaces: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerUser {
    pub name: String,
    #[serde(default)]
    pub role: Role,
    /// The hex sha256 of the user's token (`printf %s TOKEN | sha256sum`).
    pub token_sha256: String,
    /// Dollars a month; past it, runs are refused (429 budget_exceeded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monthly_budget_usd: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerWorkspace {
    pub id: String,
    #[serde(default)]
    pub name: String,
    pub root: String,
    /// User names, or `"*"` for everyone.
    #[serde(default)]
    pub users: Vec<String>,
    /// Commands `POST …/exec` may run here (exact command lines).
    #[serde(default)]
    pub allowed_commands: Vec<String>,
    /// No writes: no apply, rollback, fs write or patch.
    #[serde(default)]
    pub read_only: bool,
}

impl ServerWorkspace {
    /// Whether user `name` may use it.
    pub fn admits(&self, name: &str) -> bool {
        self.users.iter().any(|u| u == "*" || u == name)
    }
}

impl ServerConfig {
    /// What is wrong with the table, each naming its key.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.rate_limit_per_minute == 0 {
            out.push("server.rate_limit_per_minute must be at least 1".into());
        }
        if self.max_body_bytes < 1024 {
            out.push("server.max_body_bytes must be at least 1024".into());
        }
        if self.max_concurrent_jobs_per_user == 0 || self.max_jobs_per_host == 0 {
            out.push(
                "server.max_concurrent_jobs_per_user and server.max_jobs_per_host must be at least 1"
                    .into(),
            );
        }
        let id_ok = |id: &str| {
            !id.is_empty()
                && id.len() <= 64
                && id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
        };
        let mut seen = std::collections::BTreeSet::new();
        for (i, w) in self.workspaces.iter().enumerate() {
            if !id_ok(&w.id) {
                out.push(format!(
                    "server.workspaces[{i}].id = {:?}: 1-64 letters, digits, '-' or '_'",
                    w.id
                ));
            }
            if !seen.insert(w.id.clone()) {
                out.push(format!(
                    "server.workspaces[{i}].id = {:?} is used twice",
                    w.id
                ));
            }
            if w.root.trim().is_empty() {
                out.push(format!("server.workspaces[{i}].root must not be empty"));
            }
        }
        let mut names = std::collections::BTreeSet::new();
        for (i, u) in self.users.iter().enumerate() {
            if u.name.trim().is_empty() || !names.insert(u.name.clone()) {
                out.push(format!(
                    "server.users[{i}].name = {:?} must be set and unique",
                    u.name
                ));
            }
            let hex =
                u.token_sha256.len() == 64 && u.token_sha256.chars().all(|c| c.is_ascii_hexdigit());
            if !hex {
                out.push(format!(
                    "server.users[{i}].token_sha256 must be 64 hex digits (printf %s TOKEN | sha256sum)"
                ));
            }
            if u.monthly_budget_usd.is_some_and(|b| b.is_nan() || b < 0.0) {
                out.push(format!(
                    "server.users[{i}].monthly_budget_usd must be 0 or more"
                ));
            }
        }
        let bad = |b: f64| b.is_nan() || b < 0.0;
        for (name, budget) in &self.monthly_budgets_usd {
            if bad(*budget) {
                out.push(format!(
                    "server.monthly_budgets_usd.{name} must be 0 or more"
                ));
            }
        }
        if self.default_monthly_budget_usd.is_some_and(bad) {
            out.push("server.default_monthly_budget_usd must be 0 or more".into());
        }
        out
    }

    /// The monthly budget of user `name`, if they have one.
    pub fn budget_of(&self, name: &str) -> Option<f64> {
        self.users
            .iter()
            .find(|u| u.name == name)
            .and_then(|u| u.monthly_budget_usd)
            .or_else(|| self.monthly_budgets_usd.get(name).copied())
            .or(self.default_monthly_budget_usd)
    }
}
