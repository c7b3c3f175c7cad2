//! `[sessions]`: how much each session records, and how long sessions are
//! kept (until deleted, unless `max_age_days` is set; nothing by count).

use serde::{Deserialize, Serialize};

/// How much session history is kept: all of it, unless `max_age_days`
/// says otherwise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SessionLimits {
    /// Jobs one session may hold; then start a new session.
    pub max_jobs_per_session: usize,
    /// Tool-call and usage events recorded per job; the rest always are,
    /// and streamed text never is (the completed message is).
    pub max_events_per_job: usize,
    /// Sessions idle longer than this many days are removed (never one
    /// awaiting review). Unset: sessions stay until deleted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_age_days: Option<u64>,
    /// Gone: sessions are no longer evicted by count (refused with a hint).
    #[serde(skip_serializing)]
    pub max_sessions: Option<u64>,
    /// Gone: replaced by `max_age_days` (refused with a hint).
    #[serde(skip_serializing)]
    pub completed_ttl_hours: Option<u64>,
}

impl Default for SessionLimits {
    fn default() -> Self {
        SessionLimits {
            max_jobs_per_session: 200,
            max_events_per_job: 20_000,
            max_age_days: None,
            max_sessions: None,
            completed_ttl_hours: None,
        }
    }
}

impl SessionLimits {
    /// What is wrong with the table (the settings it replaced included).
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.max_sessions.is_some() {
            out.push(
                "sessions.max_sessions is gone: sessions are no longer deleted by count; they \
                 stay until `agent-tui sessions delete ID` or sessions.max_age_days"
                    .into(),
            );
        }
        if self.completed_ttl_hours.is_some() {
            out.push(
                "sessions.completed_ttl_hours is gone: use sessions.max_age_days (days; unset \
                 keeps sessions until deleted)"
                    .into(),
            );
        }
        if self.max_age_days == Some(0) {
            out.push(
                "sessions.max_age_days must be at least 1 (leave it unset to keep sessions)".into(),
            );
        }
        out
    }
}
