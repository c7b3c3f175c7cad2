//! Engine events (SPEC section 6): `{"cursor", "type", "data", "ts",
//! "job_id"}`, one variant per type, and the small types they carry.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::checkpoint::{CheckpointKind, Recovery};
use super::review::{DiffBundle, ProposedEdit};
use super::{ApplyFailure, JobFailure, JobStatus, Mode, RollbackFailure};

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
    /// The job waits for the session's running job to end (SPEC 19); it
    /// starts with `job.started` then. Sent again when its text is changed.
    #[serde(rename = "job.queued")]
    JobQueued {
        prompt: String,
        mode: Mode,
        /// The provider and model it runs on, when not the engine's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        choice: Option<super::ModelChoice>,
        /// Images that go with it (SPEC 20).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<super::ImageMeta>,
    },
    /// A hook started (SPEC 21).
    #[serde(rename = "hook.started")]
    HookStarted { name: String, event: String },
    /// What a hook's run came to (SPEC 21).
    #[serde(rename = "hook.completed")]
    HookCompleted(Box<super::HookOutcome>),
    #[serde(rename = "job.started")]
    JobStarted {
        prompt: String,
        mode: Mode,
        root: String,
        provider: String,
        model: String,
        /// Images that go with the prompt (SPEC 20).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<super::ImageMeta>,
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
        /// Run by agent-tui, not asked by the model: in a small window a
        /// file the instruction names is read before the first request.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        attached: bool,
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
    /// be asked (e.g. `no_user` in a headless run); `user`: the server's
    /// user who decided (absent when decided on this machine).
    #[serde(rename = "approval.resolved")]
    ApprovalResolved {
        tool_call_id: String,
        approved: bool,
        by: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        user: Option<String>,
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
    /// The user added to the running job's task; the model got `text` at
    /// this step boundary.
    #[serde(rename = "user.steer")]
    UserSteer { text: String },
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
    /// A verify (SPEC 17) began: the accepted hunks it runs with.
    #[serde(rename = "verify.started")]
    VerifyStarted {
        hunk_ids: Vec<String>,
        command: String,
    },
    #[serde(rename = "verify.completed")]
    VerifyCompleted(crate::protocol::VerifyResult),
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
    RecoveryCompleted(Recovery),
    #[serde(rename = "checkpoint.created")]
    CheckpointCreated {
        checkpoint_id: String,
        kind: CheckpointKind,
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
    /// `tool_protocol = "auto"`: the server's chat template drops the tool
    /// definitions (a one-token probe before the first request with tools;
    /// `reason` gives the counts), so for the rest of the run tools are
    /// described in the prompt.
    #[serde(rename = "provider.tools_in_prompt")]
    ToolsInPrompt { provider: String, reason: String },
    /// A small window's reply went round in a loop: its end was one block
    /// of `chars` bytes `copies` times in a row, so the stream was stopped
    /// there and the reply kept with the block once.
    #[serde(rename = "llm.repeat_stopped")]
    RepeatStopped {
        provider: String,
        chars: u32,
        copies: u32,
    },
    /// `hybrid_auto`: the job goes on with the remote provider.
    #[serde(rename = "provider.fallback")]
    ProviderFallback {
        from: String,
        to: String,
        reason: FallbackReason,
        /// The model the job goes on with (`to`'s).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        model: String,
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
    /// Streamed text: sent to whoever follows live, never stored.
    pub fn live_only(&self) -> bool {
        matches!(
            self,
            EventBody::LlmDelta { .. } | EventBody::LlmReasoning { .. }
        )
    }

    /// The status a job is in once this event has been emitted, if it changes it.
    pub fn status(&self) -> Option<JobStatus> {
        match self {
            EventBody::JobQueued { .. } => Some(JobStatus::Queued),
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
            | EventBody::UserSteer { .. }
            | EventBody::HookStarted { .. }
            | EventBody::HookCompleted(_)
            | EventBody::LlmReasoning { .. }
            | EventBody::UsageUpdated { .. }
            | EventBody::ContextCompacted { .. }
            | EventBody::ProviderFallback { .. }
            | EventBody::ToolsInPrompt { .. }
            | EventBody::RepeatStopped { .. }
            | EventBody::ToolCallRequested { .. }
            | EventBody::ToolCallCompleted { .. }
            | EventBody::EditsProposed { .. }
            | EventBody::DiffGenerated { .. }
            | EventBody::ReviewUpdated { .. }
            | EventBody::ApplyStarted { .. }
            | EventBody::VerifyStarted { .. }
            | EventBody::VerifyCompleted(_)
            | EventBody::ApplyFailed { .. }
            | EventBody::CheckpointCreated { .. }
            | EventBody::McpServers { .. }
            | EventBody::RecoveryCompleted(_)
            | EventBody::RollbackStarted { .. }
            | EventBody::RollbackCompleted { .. }
            | EventBody::RollbackFailed { .. } => None,
        }
    }

    /// Its `type` as the JSON says it.
    pub fn kind(&self) -> &'static str {
        match self {
            EventBody::JobQueued { .. } => "job.queued",
            EventBody::JobStarted { .. } => "job.started",
            EventBody::HookStarted { .. } => "hook.started",
            EventBody::HookCompleted(_) => "hook.completed",
            EventBody::LlmDelta { .. } => "llm.delta",
            EventBody::LlmReasoning { .. } => "llm.reasoning",
            EventBody::ToolCallRequested { .. } => "tool.call.requested",
            EventBody::ToolCallCompleted { .. } => "tool.call.completed",
            EventBody::ApprovalRequested { .. } => "approval.requested",
            EventBody::ApprovalResolved { .. } => "approval.resolved",
            EventBody::ClarificationRequested { .. } => "clarification.requested",
            EventBody::ClarificationReceived { .. } => "clarification.received",
            EventBody::UserSteer { .. } => "user.steer",
            EventBody::EditsProposed { .. } => "edits.proposed",
            EventBody::DiffGenerated { .. } => "diff.generated",
            EventBody::ReviewUpdated { .. } => "review.updated",
            EventBody::ApplyStarted { .. } => "apply.started",
            EventBody::ApplyCompleted { .. } => "apply.completed",
            EventBody::ApplyFailed { .. } => "apply.failed",
            EventBody::VerifyStarted { .. } => "verify.started",
            EventBody::VerifyCompleted(_) => "verify.completed",
            EventBody::McpServers { .. } => "mcp.servers",
            EventBody::RecoveryCompleted(_) => "recovery.completed",
            EventBody::CheckpointCreated { .. } => "checkpoint.created",
            EventBody::RollbackStarted { .. } => "checkpoint.rollback.started",
            EventBody::RollbackCompleted { .. } => "checkpoint.rollback.completed",
            EventBody::RollbackFailed { .. } => "checkpoint.rollback.failed",
            EventBody::JobCompleted { .. } => "job.completed",
            EventBody::ProviderFallback { .. } => "provider.fallback",
            EventBody::ToolsInPrompt { .. } => "provider.tools_in_prompt",
            EventBody::RepeatStopped { .. } => "llm.repeat_stopped",
            EventBody::UsageUpdated { .. } => "usage.updated",
            EventBody::ContextCompacted { .. } => "context.compacted",
            EventBody::JobFailed { .. } => "job.failed",
            EventBody::JobCancelled {} => "job.cancelled",
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
