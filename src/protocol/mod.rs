//! The wire vocabulary between the front ends and the engine: modes, tool
//! tiers, failure codes, the commands a front end sends and what the engine
//! answers (`api`), the events it receives (`event`, SPEC section 6), and
//! the reviews, checkpoints, sessions and audit records those carry. Serde
//! types only, no logic beyond naming and reading them; it imports nothing
//! of the engine, so every layer may use it.

use serde::{Deserialize, Serialize};

pub mod api;
pub mod audit;
pub mod checkpoint;
pub mod event;
pub mod hooks;
pub mod image;
pub mod index;
pub mod models;
pub mod object;
pub mod paths;
pub mod pins;
pub mod review;
pub mod server;
pub mod session;
pub mod verify;
pub mod words;

pub use api::{
    CheckpointView, Command, CustomCommandInfo, EngineError, EntryKind, EventsPage, ExecChunk,
    FileRow, FileText, FolderEntry, JobSummary, MemoryFile, PendingReview, Reply, RequestId,
    ScopeInfo, SessionRef, Transcript, UserWrite,
};
pub use audit::{AuditRecord, StoreCheck, Verification};
pub use checkpoint::{Checkpoint, CheckpointKind, Recovery, ThreeWay};
pub use event::{
    BatchedCall, CompactReason, Event, EventBody, FallbackReason, McpServerStatus, McpState, Usage,
};
pub use hooks::{
    HookAnswer, HookDecision, HookInfo, HookOutcome, HookScript, HookSkip, HookTest, HookTrust,
};
pub use image::{ImageError, ImageInput, ImageMeta, ImageRule};
pub use index::{Found, IndexBuilt, IndexState, IndexStatus};
pub use models::{ModelChoice, ProviderModels, Reach};
pub use paths::PathList;
pub use review::{DiffBundle, FileDiff, Hunk, HunkState, ProposedEdit};
pub use server::{HostInfo, Idempotent, JobUsage, Owner, Role, TokenInfo, UsageRow};
pub use session::SessionSummary;
pub use verify::{Baseline, VerifyOutcome, VerifyResult};

/// Names of tools and tool families that front ends show specially.
pub mod names {
    pub const RUN_COMMAND: &str = "run_command";
    pub const GIT_ADD: &str = "git_add";
    pub const GIT_COMMIT: &str = "git_commit";
    pub const GIT_PUSH: &str = "git_push";
    /// MCP tools are `mcp__<server>__<tool>`.
    pub const MCP_PREFIX: &str = "mcp__";
}

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
    /// The `serve` host running it stopped answering (SPEC 16); another
    /// host ended it.
    HostLost,
    /// Images went with it and its model cannot see them (SPEC 20).
    NoVision,
    /// A `prompt.submit` hook blocked the instruction (SPEC 21).
    BlockedByHook,
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
    /// An `apply.before` hook blocked it (SPEC 21).
    BlockedByHook,
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
            ApplyFailure::BlockedByHook => "blocked_by_hook",
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
