//! What `agent-tui serve` keeps about its users: tokens (only their
//! sha256 ever reaches the store), who made each session and job, and the
//! first answer to an `Idempotency-Key`.

use serde::{Deserialize, Serialize};

/// What a token's holder may do: a user sees their own sessions and the
/// workspaces that name them; an admin sees everything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Admin,
    #[default]
    User,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::User => "user",
        }
    }

    pub fn parse(text: &str) -> Option<Role> {
        match text {
            "admin" => Some(Role::Admin),
            "user" => Some(Role::User),
            _ => None,
        }
    }
}

/// A token as `serve token list` shows it (never the token itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenInfo {
    pub name: String,
    pub role: Role,
    pub created_at: String,
    /// When it was revoked; a revoked token is refused.
    pub revoked_at: Option<String>,
}

/// Who made a session or a job through the server, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    pub user: String,
    pub workspace_id: String,
    /// The session (for a job: the one it runs in).
    pub session_id: String,
    pub created_at: String,
}

/// What the store knows of an `Idempotency-Key` when a request arrives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Idempotent {
    /// First seen now: the request runs, and its answer is kept.
    New,
    /// Answered before: the kept status and body, sent again.
    Answered { status: u16, body: String },
    /// The first request with this key is still running.
    InFlight,
    /// The key was used for another request (another path or body).
    Mismatch,
}

/// What a finished job used, kept with its user and workspace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobUsage {
    pub status: String,
    pub provider: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// At the provider's `price_*_per_mtok` (0 when it has no prices).
    pub cost_usd: f64,
}

/// Tokens and cost of one user in one workspace over a period.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UsageRow {
    pub user: String,
    pub workspace_id: String,
    pub jobs: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
}

/// A `serve` host sharing the store, as `health` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostInfo {
    pub host: String,
    pub started_at: String,
    /// Its last heartbeat (RFC 3339, like `started_at`).
    pub last_seen: String,
    /// The jobs it runs now.
    pub running_jobs: Vec<String>,
}
