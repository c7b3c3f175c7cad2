//! The engine: owns the session, the jobs and their reviews; takes `Op`s
//! from a front end and sends back `Event`s. Each job runs the agent loop
//! (`job.rs`) on its own task; review, apply and rollback run in the engine.

mod approval;
mod compaction;
mod counting;
mod emit;
mod engine;
mod event_log;
pub use engine::EngineError;
mod feedback;
mod job;
mod mcp_calls;
mod prompt;
mod recording;
mod recovery;
mod review_ops;
mod review_work;
mod routing;
mod session_state;
mod tool_calls;

pub use session_state::{JobRecord, LegacySessions, Record, SessionState, read_session};

pub use job::{NO_USER_ANSWER, UserReply};
pub use prompt::{MAX_AGENTS_MD_BYTES, system_prompt};
pub use recovery::{log_line, settle_interrupted};

use std::sync::Arc;

use tokio::sync::mpsc;

use crate::config::Config;
use crate::llm::Provider;
use crate::protocol::{Event, Op};
use crate::store::RootStore;
use crate::tools::Registry;
use crate::workspace::Workspace;

/// Which session the engine records into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionChoice {
    /// Record nothing (tests, benchmarks).
    None,
    /// A new session, created with the first job.
    New,
    /// Continue this session: its conversation, reviews and cursors.
    Resume(String),
}

/// What every job of an engine shares.
pub struct EngineContext {
    pub workspace: Workspace,
    pub config: Config,
    pub registry: Registry,
    /// `None`: jobs fail with a setup hint; review, apply and rollback work.
    pub provider: Option<Box<dyn Provider>>,
    /// `hybrid_auto`: the provider a job goes on with when a trigger of
    /// `config.routing` fires on `provider`.
    pub fallback: Option<Box<dyn Provider>>,
    /// The store's part for this root: sessions, checkpoints, snapshots and
    /// the audit chain. `None`: nothing is recorded (tests, benchmarks).
    pub state: Option<RootStore>,
    pub session: SessionChoice,
    /// Interrupted operations settled when the root's state was opened:
    /// the engine reports each (`recovery.completed`) before anything else.
    pub recovered: Vec<crate::checkpoint::Recovery>,
}

/// The front end's ends of the two channels.
pub struct EngineHandle {
    pub ops: mpsc::UnboundedSender<Op>,
    pub events: mpsc::UnboundedReceiver<Event>,
}

/// Starts the engine on the current tokio runtime. Fails only if the
/// session to resume cannot be read.
pub fn spawn(ctx: EngineContext) -> Result<EngineHandle, EngineError> {
    let (op_tx, op_rx) = mpsc::unbounded_channel();
    let (event_tx, event_rx) = mpsc::unbounded_channel();
    let engine = engine::Engine::new(Arc::new(ctx), event_tx)?;
    tokio::spawn(engine.run(op_rx));
    Ok(EngineHandle {
        ops: op_tx,
        events: event_rx,
    })
}
