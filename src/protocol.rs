//! Shared vocabulary between the front ends and the engine: modes, tool tiers.
//! Serde types only, no logic beyond naming.

use serde::{Deserialize, Serialize};

/// The chat mode a job runs in; it decides which tools the model is offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Ask,
    Plan,
    Agent,
}

impl Mode {
    pub const ALL: [Mode; 3] = [Mode::Ask, Mode::Plan, Mode::Agent];

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Ask => "ask",
            Mode::Plan => "plan",
            Mode::Agent => "agent",
        }
    }
}

/// How much trust a tool call needs: reads run on their own, writes are
/// reviewed, exec is approved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    Read,
    Write,
    Exec,
}
