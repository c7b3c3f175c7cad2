//! Everything agent-tui keeps on disk outside the project: where it lives
//! (`$AGENT_TUI_HOME` or the platform data dir, one folder per root),
//! content-addressed blobs, sessions, the audit log, atomic writes.

mod atomic;
pub mod audit;
mod blobs;
mod paths;
pub mod session;

pub use atomic::write_atomic;
pub use blobs::BlobStore;
pub use paths::{RootState, StateDirs, root_key};
