//! Sessions on the wire: a line of `sessions list` (`SessionSummary`).

use serde::{Deserialize, Serialize};

/// One line of `sessions list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionSummary {
    pub session_id: String,
    pub created_at: String,
    pub updated_at: String,
    pub jobs: usize,
    pub pending_review: bool,
    pub last_prompt: Option<String>,
}
