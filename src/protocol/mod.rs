//! The wire vocabulary between the front ends and the engine: modes, tool
//! tiers, failure codes, the operations a front end sends (`Op`), the
//! events it receives (`event`, SPEC section 6), and the reviews,
//! checkpoints and sessions those carry. Serde types only, no logic beyond
//! naming; it imports nothing of the engine, so every layer may use it.

use serde::{Deserialize, Serialize};

pub mod checkpoint;
pub mod event;
pub mod review;
pub mod session;

pub use checkpoint::{Checkpoint, CheckpointKind, Recovery, ThreeWay};
pub use event::{
    BatchedCall, CompactReason, Event, EventBody, FallbackReason, McpServerStatus, McpState, Usage,
};
pub use review::{DiffBundle, FileDiff, Hunk, HunkState, ProposedEdit};
pub use session::SessionSummary;

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

/// Why a job failed: `job.failed`'s `data.code`. Front ends and routing
/// act on it (an unreachable server, a trigger to fall back ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobFailure {
    MissingApiKey,
    ClientSetup,
    ConnectFailed,
    Timeout,
    HttpStatus,
    StreamCut,
    StreamError,
    BadResponse,
    ContextOverflow,
    NoProvider,
    EmptyAnswer,
    RequestLimit,
    MalformedToolCalls,
    SessionFull,
    InternalError,
}

impl JobFailure {
    /// The model server could not be reached at all.
    pub fn unreachable(self) -> bool {
        matches!(self, JobFailure::ConnectFailed | JobFailure::Timeout)
    }

    /// The server answered, but badly (an error status, a broken stream).
    pub fn degraded(self) -> bool {
        matches!(
            self,
            JobFailure::HttpStatus | JobFailure::StreamCut | JobFailure::StreamError
        )
    }

    /// The provider's fault (not the job's or the session's).
    pub fn from_provider(self) -> bool {
        matches!(
            self,
            JobFailure::Timeout
                | JobFailure::ConnectFailed
                | JobFailure::HttpStatus
                | JobFailure::StreamCut
                | JobFailure::StreamError
                | JobFailure::BadResponse
                | JobFailure::MissingApiKey
                | JobFailure::ClientSetup
                | JobFailure::EmptyAnswer
        )
    }
}

/// Why an apply wrote nothing: `apply.failed`'s `data.code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApplyFailure {
    /// A file or an edit's lines changed since the proposal (exit 3).
    Conflict,
    NothingAccepted,
    NoReview,
    CheckpointFailed,
    IoError,
}

/// Why a rollback wrote nothing: `checkpoint.rollback.failed`'s `data.code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RollbackFailure {
    NotFound,
    /// A hunk's region changed since (exit 3).
    Conflict,
    UnknownHunk,
    UnknownFile,
    IoError,
}

impl ApplyFailure {
    pub fn as_str(self) -> &'static str {
        match self {
            ApplyFailure::Conflict => "conflict",
            ApplyFailure::NothingAccepted => "nothing_accepted",
            ApplyFailure::NoReview => "no_review",
            ApplyFailure::CheckpointFailed => "checkpoint_failed",
            ApplyFailure::IoError => "io_error",
        }
    }
}

impl RollbackFailure {
    pub fn as_str(self) -> &'static str {
        match self {
            RollbackFailure::NotFound => "not_found",
            RollbackFailure::Conflict => "conflict",
            RollbackFailure::UnknownHunk => "unknown_hunk",
            RollbackFailure::UnknownFile => "unknown_file",
            RollbackFailure::IoError => "io_error",
        }
    }
}

/// Where a job is in its life (SPEC section 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobStatus {
    Queued,
    Running,
    WaitingForUser,
    AwaitingReview,
    Completed,
    Failed,
    Cancelled,
}

impl JobStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Queued => "queued",
            JobStatus::Running => "running",
            JobStatus::WaitingForUser => "waiting_for_user",
            JobStatus::AwaitingReview => "awaiting_review",
            JobStatus::Completed => "completed",
            JobStatus::Failed => "failed",
            JobStatus::Cancelled => "cancelled",
        }
    }
}

/// What a front end asks of the engine.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// Start a job; its events carry `job_id`.
    StartJob {
        job_id: String,
        prompt: String,
        mode: Mode,
        /// Overrides `agent.max_tool_calls_per_job` for this job.
        max_tool_calls: Option<u32>,
    },
    /// Answer a `clarification.requested` of this job.
    Answer { job_id: String, text: String },
    /// Allow (once) or deny the call an `approval.requested` asked about.
    /// `reason` says who decided when it was not the user (a headless run).
    Approve {
        job_id: String,
        tool_call_id: String,
        approved: bool,
        reason: Option<String>,
    },
    /// Stop the job: the model stream and any running tool end promptly.
    Cancel { job_id: String },
    /// Summarize the session's conversation now (`/compact`); runs as a
    /// job of its own: `job.started`, `context.compacted`, `job.completed`.
    Compact { job_id: String },
    /// Record hunk decisions on the job's pending bundle.
    Decide {
        job_id: String,
        accept: Vec<String>,
        reject: Vec<String>,
        /// Accept every undecided hunk not in `reject`.
        accept_all: bool,
    },
    /// Replace a hunk's proposed text with the reviewer's own (`new_text`:
    /// the new side of its changed lines, each ending in `\n`) and accept
    /// it; the hunk is then `origin: "user"`.
    EditHunk {
        job_id: String,
        hunk_id: String,
        new_text: String,
    },
    /// Write the accepted hunks (hash-checked, checkpointed).
    Apply { job_id: String },
    /// Undo a checkpoint: all of it, or only `hunks`.
    Rollback {
        checkpoint_id: String,
        hunks: Vec<String>,
        /// Only these files, each back to its bytes before the checkpoint
        /// (empty: all of them, unless `hunks` picks hunks).
        files: Vec<String>,
    },
}
