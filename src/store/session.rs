//! What the store keeps of a session: its row, its records (events and
//! conversation records, one JSON document each, in order) and the summary
//! rows a record changes (`IndexUpdate`). The store does not read the
//! records: the engine decides what each one changes and replays them.

use std::io;
use std::time::SystemTime;

/// One record appended to a session, with what it changes in the summary
/// rows that lists and look-ups read.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordRow {
    /// The job it belongs to, if any.
    pub job_id: Option<String>,
    /// Its `type` (`job.started`, `conversation.append`, ...).
    pub kind: String,
    /// An event's cursor within its job.
    pub cursor: Option<i64>,
    pub ts: String,
    /// The record as JSON.
    pub body: String,
    pub index: IndexUpdate,
}

/// What a record changes in the summary rows.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum IndexUpdate {
    #[default]
    None,
    /// A job started: its row, and the session's last prompt.
    JobStarted { prompt: String },
    /// A job waits its turn: its row (status `queued`).
    JobQueued { prompt: String },
    /// A job's status changed (`running`, `completed` ...).
    JobStatus(&'static str),
    /// A job's review changed: whether it still waits, the bundle as JSON,
    /// and the job's new status if the review settled it (all rejected).
    Review {
        pending: bool,
        bundle: String,
        status: Option<&'static str>,
    },
}

/// A session as stored: its row and its records, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSession {
    pub session_id: String,
    pub root: String,
    pub created_at: String,
    pub records: Vec<String>,
}

/// Refuses ids that are not `[A-Za-z0-9_]+` (they name rows, and once
/// files); `what` names the kind of id in the message.
pub fn check_id(what: &str, id: &str) -> io::Result<()> {
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a {what} id: {id}"),
        ));
    }
    Ok(())
}

/// The time now, as sessions record it (RFC 3339, milliseconds).
pub fn now() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_plain() {
        assert!(check_id("session", "s_1_ab").is_ok());
        assert!(check_id("session", "../x").is_err());
        assert!(check_id("session", "").is_err());
    }
}
