//! Everything agent-tui keeps on disk outside the project. For now: where it
//! lives (`$AGENT_TUI_HOME` or the platform data dir, one folder per root).

pub mod audit;
mod paths;

pub use paths::{StateDirs, root_key};
