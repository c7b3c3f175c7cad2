//! Shared vocabulary between the front ends and the engine: modes, tool tiers,
//! the operations a front end sends (`Op`) and the events it receives
//! (`Event`, SPEC section 6). Serde types only, no logic beyond naming.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::review::{DiffBundle, ProposedEdit};

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

/// Where an MCP server is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum McpState {
    Stopped,
    Running,
    Failed,
    Disabled,
}

/// An MCP server as a job found it (`mcp.servers`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpServerStatus {
    pub name: String,
    pub state: McpState,
    pub tools: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A call asked about together with another (`approval.requested`'s
/// `batch`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchedCall {
    pub tool_call_id: String,
    pub name: String,
    pub arguments: Value,
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

/// One engine event: `{"cursor", "type", "data", "ts", "job_id"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Strictly increasing within a job, starting at 1.
    pub cursor: u64,
    #[serde(flatten)]
    pub body: EventBody,
    /// RFC 3339, UTC, milliseconds.
    pub ts: String,
    pub job_id: String,
}

/// The `type` and `data` of an event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data")]
pub enum EventBody {
    #[serde(rename = "job.started")]
    JobStarted {
        prompt: String,
        mode: Mode,
        root: String,
        provider: String,
        model: String,
    },
    /// Streamed answer text. `attempt` starts at 1 and grows when a failed
    /// model request is retried, so a consumer can drop the partial text of
    /// the attempt that failed.
    #[serde(rename = "llm.delta")]
    LlmDelta { text: String, attempt: u32 },
    /// Streamed thinking of the model: shown apart (collapsed), never part
    /// of the answer and never sent back. `attempt` as in `llm.delta`.
    #[serde(rename = "llm.reasoning")]
    LlmReasoning { text: String, attempt: u32 },
    #[serde(rename = "tool.call.requested")]
    ToolCallRequested {
        tool_call_id: String,
        name: String,
        arguments: Value,
    },
    #[serde(rename = "tool.call.completed")]
    ToolCallCompleted {
        tool_call_id: String,
        name: String,
        ok: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<Value>,
        duration_ms: u64,
    },
    /// A tool call that needs the user's approval first (`individual`
    /// tier); the job waits (`waiting_for_user`).
    #[serde(rename = "approval.requested")]
    ApprovalRequested {
        tool_call_id: String,
        name: String,
        arguments: Value,
        /// The agent root (absolute) and the directory it would run in.
        root: String,
        cwd: String,
        /// How a command would be confined ("confined by Landlock ...",
        /// "unconfined: ..."); empty for calls that are not commands.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        sandbox: String,
        /// More calls of the same model turn decided with this one (the
        /// `batch` tier): one answer allows or denies them all.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        batch: Vec<BatchedCall>,
    },
    /// `by`: `user`, `allowlist` (allowlisted-auto), or why nobody could
    /// be asked (e.g. `no_user` in a headless run).
    #[serde(rename = "approval.resolved")]
    ApprovalResolved {
        tool_call_id: String,
        approved: bool,
        by: String,
    },
    #[serde(rename = "clarification.requested")]
    ClarificationRequested {
        tool_call_id: String,
        question: String,
    },
    #[serde(rename = "clarification.received")]
    ClarificationReceived {
        tool_call_id: String,
        answer: String,
    },
    #[serde(rename = "edits.proposed")]
    EditsProposed { edits: Vec<ProposedEdit> },
    #[serde(rename = "diff.generated")]
    DiffGenerated { bundle: DiffBundle },
    /// Decisions changed; `unknown` lists hunk ids that matched nothing.
    #[serde(rename = "review.updated")]
    ReviewUpdated {
        bundle: DiffBundle,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        unknown: Vec<String>,
        /// Why the last change to the review was refused (an edited hunk).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    #[serde(rename = "apply.started")]
    ApplyStarted { hunk_ids: Vec<String> },
    #[serde(rename = "apply.completed")]
    ApplyCompleted {
        checkpoint_id: String,
        files: Vec<String>,
        hunk_ids: Vec<String>,
        /// The review after the apply: undecided hunks of written files
        /// rebased onto them (or conflicted).
        bundle: DiffBundle,
        /// The job's edits with those of the rebased hunks moved to the
        /// written text (they replace the earlier list).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        edits: Vec<ProposedEdit>,
    },
    #[serde(rename = "apply.failed")]
    ApplyFailed {
        error: String,
        code: ApplyFailure,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        conflicts: Vec<Value>,
    },
    /// The MCP servers of the session and where each is: sent when a job
    /// starts them and when one fails.
    #[serde(rename = "mcp.servers")]
    McpServers { servers: Vec<McpServerStatus> },
    /// An apply or rollback interrupted earlier (a crash, a kill, a failed
    /// write) was settled when the root's state was opened, before anything
    /// else: finished, or undone file by file.
    #[serde(rename = "recovery.completed")]
    RecoveryCompleted(crate::checkpoint::Recovery),
    #[serde(rename = "checkpoint.created")]
    CheckpointCreated {
        checkpoint_id: String,
        kind: crate::checkpoint::CheckpointKind,
        files: Vec<String>,
    },
    #[serde(rename = "checkpoint.rollback.started")]
    RollbackStarted {
        checkpoint_id: String,
        hunks: Vec<String>,
    },
    #[serde(rename = "checkpoint.rollback.completed")]
    RollbackCompleted {
        checkpoint_id: String,
        /// The checkpoint recorded before the rollback wrote anything.
        rollback_checkpoint_id: String,
        files: Vec<String>,
    },
    #[serde(rename = "checkpoint.rollback.failed")]
    RollbackFailed {
        checkpoint_id: String,
        error: String,
        code: RollbackFailure,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        conflicts: Vec<String>,
    },
    /// The job's answer; `status` is `awaiting_review` when it proposed edits.
    #[serde(rename = "job.completed")]
    JobCompleted {
        answer: String,
        usage: Usage,
        status: JobStatus,
        /// The tool budget ran out and the answer came from one last
        /// request without tools.
        #[serde(default)]
        budget_exhausted: bool,
        /// The provider that answered (`hybrid_auto`: the remote one after
        /// a fallback).
        #[serde(default)]
        provider: String,
        /// Why the job left its local provider, if it did.
        #[serde(default)]
        fallback_reason: Option<FallbackReason>,
    },
    /// `hybrid_auto`: the job goes on with the remote provider.
    #[serde(rename = "provider.fallback")]
    ProviderFallback {
        from: String,
        to: String,
        reason: FallbackReason,
    },
    /// After every model response: this job's tokens so far, and how full
    /// the context window is now.
    #[serde(rename = "usage.updated")]
    UsageUpdated {
        input_tokens: u64,
        output_tokens: u64,
        /// Tokens of the conversation as the next request would carry it.
        context_tokens: u64,
        context_window: u32,
        /// The server reported no usage; these are agent-tui's estimates.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        estimated: bool,
    },
    /// Older turns were replaced by a summary.
    #[serde(rename = "context.compacted")]
    ContextCompacted {
        reason: CompactReason,
        tokens_before: u64,
        tokens_after: u64,
        /// Messages the summary replaced.
        #[serde(default)]
        messages_summarized: usize,
    },
    #[serde(rename = "job.failed")]
    JobFailed { error: String, code: JobFailure },
    #[serde(rename = "job.cancelled")]
    JobCancelled {},
}

impl EventBody {
    /// The status a job is in once this event has been emitted, if it changes it.
    pub fn status(&self) -> Option<JobStatus> {
        match self {
            EventBody::JobStarted { .. } | EventBody::ClarificationReceived { .. } => {
                Some(JobStatus::Running)
            }
            EventBody::ClarificationRequested { .. } | EventBody::ApprovalRequested { .. } => {
                Some(JobStatus::WaitingForUser)
            }
            EventBody::ApprovalResolved { .. } => Some(JobStatus::Running),
            EventBody::JobCompleted { status, .. } => Some(*status),
            EventBody::ApplyCompleted { .. } => Some(JobStatus::Completed),
            EventBody::JobFailed { .. } => Some(JobStatus::Failed),
            EventBody::JobCancelled {} => Some(JobStatus::Cancelled),
            EventBody::LlmDelta { .. }
            | EventBody::LlmReasoning { .. }
            | EventBody::UsageUpdated { .. }
            | EventBody::ContextCompacted { .. }
            | EventBody::ProviderFallback { .. }
            | EventBody::ToolCallRequested { .. }
            | EventBody::ToolCallCompleted { .. }
            | EventBody::EditsProposed { .. }
            | EventBody::DiffGenerated { .. }
            | EventBody::ReviewUpdated { .. }
            | EventBody::ApplyStarted { .. }
            | EventBody::ApplyFailed { .. }
            | EventBody::CheckpointCreated { .. }
            | EventBody::McpServers { .. }
            | EventBody::RecoveryCompleted(_)
            | EventBody::RollbackStarted { .. }
            | EventBody::RollbackCompleted { .. }
            | EventBody::RollbackFailed { .. } => None,
        }
    }

    /// Whether this event ends the job's run (its agent loop).
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            EventBody::JobCompleted { .. }
                | EventBody::JobFailed { .. }
                | EventBody::JobCancelled {}
        )
    }
}

/// Why a compaction happened (`context.compacted`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactReason {
    /// The conversation reached `[context] compact_at_percent`.
    Threshold,
    /// The provider refused a request as too long.
    Overflow,
    /// The user asked (`/compact`).
    Manual,
}

impl CompactReason {
    pub fn as_str(self) -> &'static str {
        match self {
            CompactReason::Threshold => "threshold",
            CompactReason::Overflow => "overflow",
            CompactReason::Manual => "manual",
        }
    }
}

/// Why a `hybrid_auto` job left its local provider (SPEC section 12).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FallbackReason {
    /// The tool budget was spent in agent mode and no edit was proposed.
    BudgetExhaustedWithoutEdits,
    /// `hybrid_remote_on_schema_fail` malformed tool calls or edits.
    SchemaFailures,
    /// Still too long for the local window after compaction.
    ContextOverflow,
    /// A local request outlasted `hybrid_remote_on_timeout_ms`.
    Timeout,
    /// The local provider failed (connection, HTTP status, broken stream).
    ProviderError,
}

impl FallbackReason {
    pub fn as_str(self) -> &'static str {
        match self {
            FallbackReason::BudgetExhaustedWithoutEdits => "budget_exhausted_without_edits",
            FallbackReason::SchemaFailures => "schema_failures",
            FallbackReason::ContextOverflow => "context_overflow",
            FallbackReason::Timeout => "timeout",
            FallbackReason::ProviderError => "provider_error",
        }
    }
}

/// Tokens used by a job, summed over its model requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Model requests made (compaction requests included).
    #[serde(default)]
    pub requests: u64,
}

impl Usage {
    pub fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.requests += other.requests;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_serialize_to_the_spec_shape() {
        let e = Event {
            cursor: 3,
            body: EventBody::LlmDelta {
                text: "hi".into(),
                attempt: 1,
            },
            ts: "2026-01-01T00:00:00.000Z".into(),
            job_id: "job_1".into(),
        };
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"cursor": 3, "type": "llm.delta", "data": {"text": "hi", "attempt": 1},
                "ts": "2026-01-01T00:00:00.000Z", "job_id": "job_1"})
        );
        let v = serde_json::to_value(EventBody::JobCancelled {}).unwrap();
        assert_eq!(v, serde_json::json!({"type": "job.cancelled", "data": {}}));
        assert!(EventBody::JobCancelled {}.is_terminal());
    }
}
