//! The engine's door on the wire: the commands a front end sends (each
//! with a request id, answered by a typed reply or a typed error), which
//! session a job runs in, and what the queries answer.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::checkpoint::ThreeWay;
use super::event::Event;
use super::review::DiffBundle;
use super::{JobStatus, Mode};

/// Numbers a command for logs and replies; unique within an engine.
pub type RequestId = u64;

/// The session a job runs in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionRef {
    /// A new session, created with the job.
    New,
    /// The root's most recently updated session.
    Latest,
    /// This session: its conversation, reviews and cursors.
    Id(String),
}

/// What a front end asks the engine to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum Command {
    /// Start a job; its events carry `job_id` (unique in the engine).
    StartJob {
        session: SessionRef,
        job_id: String,
        prompt: String,
        mode: Mode,
        /// Overrides `agent.max_tool_calls_per_job` for this job.
        max_tool_calls: Option<u32>,
        /// Another provider or model for this job (`/model`); a custom
        /// command's own front matter wins over it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        choice: Option<super::ModelChoice>,
        /// Images that go with the prompt (SPEC 20).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<super::ImageInput>,
        /// The server's workspace it runs in (hooks are told).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        workspace: Option<String>,
    },
    /// A new, empty session, driven by this engine (the server's `POST
    /// …/sessions`); its first job names it.
    CreateSession,
    /// Summarize the session's conversation now (`/compact`); runs as a
    /// job of its own: `job.started`, `context.compacted`, `job.completed`.
    Compact { session: SessionRef, job_id: String },
    /// Answer a `clarification.requested` of this job.
    Answer { job_id: String, text: String },
    /// Add to what a running job was asked: the model gets `text` at its
    /// next step boundary (`user.steer`), before it answers if it was about to.
    Steer { job_id: String, text: String },
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
    /// Run the project's check (`[verify]`) on the accepted hunks in a
    /// scratch copy of the root (SPEC 17): `verify.started`, then
    /// `verify.completed`; the reply is the result. A verify of the same
    /// job still running is cancelled first.
    Verify { job_id: String },
    /// Stop the job's running verify (`verify.completed {outcome:
    /// cancelled}`); nothing running is not an error.
    CancelVerify { job_id: String },
    /// Send the job's last failed verify back to the model as feedback:
    /// a new job (`new_job_id`) in its session, in agent mode, asked for a
    /// corrected proposal.
    VerifyFeedback { job_id: String, new_job_id: String },
    /// Undo a checkpoint: all of it, only `hunks`, or only `files`. The
    /// model of session `tell` (if any) hears of it, and its events are
    /// recorded there.
    Rollback {
        checkpoint_id: String,
        hunks: Vec<String>,
        files: Vec<String>,
        tell: Option<String>,
    },
    /// Delete a session with its records (not while it is driven).
    DeleteSession { session_id: String },
    /// Run one tool directly (`agent-tui tool`): its JSON result.
    CallTool { name: String, arguments: Value },
    /// Append to the root's audit log what a front end did for someone
    /// (the server: who started a job, ran a command, called a tool).
    Audit {
        session_id: Option<String>,
        job_id: Option<String>,
        action: String,
        target: String,
        outcome: String,
    },
    /// End a job whose `serve` host stopped answering with `job.failed
    /// {code: "host_lost"}`, unless it ended or runs here; its session is
    /// taken (once the lost host's lease ran out) and goes on.
    EndLostJob { session_id: String, job_id: String },
    /// The MCP servers of the root, started (the engine's own hub, which
    /// its jobs use too): each one's state and tools.
    McpTools,
    /// Call tool `tool` of MCP server `server` directly (the server's
    /// `mcp/call`); a server that failed to start is named with its error.
    McpCall {
        server: String,
        tool: String,
        arguments: Value,
    },
    /// A person's own write of whole files (the server's `fs/write` and
    /// `fs/patch`): each checked against the hash it was read with,
    /// written atomically under the root's lock, checkpointed like an
    /// apply, audited as done by `by`.
    WriteFiles { files: Vec<UserWrite>, by: String },
    /// Stop: running jobs end (`job.cancelled`), an apply or rollback under
    /// way finishes, everything is in the store, sessions are let go.
    Shutdown,
}

/// A piece of a command the server runs for a client (`exec`), in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ExecChunk {
    Stdout {
        text: String,
    },
    Stderr {
        text: String,
    },
    /// How it ended (`exit_code` null: killed by timeout or cancel).
    Exit {
        exit_code: Option<i32>,
        duration_ms: u64,
        truncated: bool,
        timed_out: bool,
        confined: bool,
        /// The files it changed (`changed_files_total` of them; the list
        /// is capped).
        changed_files: Vec<serde_json::Value>,
        changed_files_total: u64,
        /// The checkpoint that undoes its changes (rollback like an
        /// apply's); `None` when it changed nothing.
        checkpoint_id: Option<String>,
        /// Why its changes could not be kept for a rollback, if so.
        checkpoint_error: Option<String>,
    },
    /// It could not start.
    Error {
        message: String,
    },
}

/// One file of a person's own write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserWrite {
    pub file_path: String,
    /// `sha256:<hex>` (or the bare hex) of the file as it was read;
    /// `None`: it must not exist yet.
    pub expected_hash: Option<String>,
    /// The whole new content.
    pub content: String,
}

/// What a command did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum Reply {
    /// The job runs; `session_id` is `null` when nothing is recorded.
    Started {
        job_id: String,
        session_id: Option<String>,
    },
    /// Done; events say the rest.
    Done,
    /// A new session (`CreateSession`).
    SessionCreated { session_id: String },
    /// `WriteFiles` wrote these files; the checkpoint undoes it.
    Written {
        checkpoint_id: String,
        files: Vec<String>,
    },
    /// The review after the change.
    Review { bundle: DiffBundle },
    /// The accepted hunks are written.
    Applied {
        checkpoint_id: String,
        files: Vec<String>,
        hunk_ids: Vec<String>,
        bundle: DiffBundle,
    },
    RolledBack {
        checkpoint_id: String,
        rollback_checkpoint_id: String,
        files: Vec<String>,
    },
    /// A tool's JSON result.
    Tool { result: Value },
    /// A verify's result.
    Verified {
        result: Box<crate::protocol::VerifyResult>,
    },
    /// The MCP servers: `[{name, state, tools: [{name, tool, description,
    /// input_schema}]}]`.
    McpServers { servers: Vec<Value> },
}

/// Why the engine refused or failed a command or a query; `code()` is
/// what front ends act on (exit codes, HTTP statuses).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum EngineError {
    /// No such session, job, checkpoint or file.
    #[error("{message}")]
    NotFound { message: String },
    /// The request itself is wrong (unknown hunk ids, a bad argument).
    #[error("{message}")]
    Invalid {
        message: String,
        /// Ids that named nothing, when that is the fault.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        unknown: Vec<String>,
    },
    /// What the sandbox never allows: a path out of the root, into `.git`,
    /// or a write to a read-only scope.
    #[error("{message}")]
    Forbidden { message: String },
    /// The state moved on: files changed since the proposal, a hunk's
    /// region changed since the checkpoint, a question already answered.
    #[error("{message}")]
    Conflict {
        message: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        conflicts: Vec<Value>,
    },
    /// Another process drives the session (it holds its lease).
    #[error("{message}")]
    Busy { message: String },
    /// The operation ran and failed (a write, a checkpoint, a tool).
    #[error("{message}")]
    Failed {
        message: String,
        /// A finer code: `io_error`, `checkpoint_failed`, a tool's code ...
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// A tool's JSON error, when a tool failed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<Value>,
    },
    /// The store or the engine cannot be reached (stopped, shut down).
    #[error("{message}")]
    Unavailable { message: String },
}

impl EngineError {
    pub fn code(&self) -> &'static str {
        match self {
            EngineError::NotFound { .. } => "not_found",
            EngineError::Invalid { .. } => "invalid",
            EngineError::Forbidden { .. } => "forbidden",
            EngineError::Conflict { .. } => "conflict",
            EngineError::Busy { .. } => "busy",
            EngineError::Failed { .. } => "failed",
            EngineError::Unavailable { .. } => "unavailable",
        }
    }

    pub fn not_found(message: impl Into<String>) -> EngineError {
        EngineError::NotFound {
            message: message.into(),
        }
    }

    pub fn invalid(message: impl Into<String>) -> EngineError {
        EngineError::Invalid {
            message: message.into(),
            unknown: Vec::new(),
        }
    }

    pub fn forbidden(message: impl Into<String>) -> EngineError {
        EngineError::Forbidden {
            message: message.into(),
        }
    }

    pub fn failed(message: impl Into<String>) -> EngineError {
        EngineError::Failed {
            message: message.into(),
            reason: None,
            detail: None,
        }
    }

    pub fn unavailable(message: impl Into<String>) -> EngineError {
        EngineError::Unavailable {
            message: message.into(),
        }
    }
}

/// A session with its jobs, as `sessions show` prints it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transcript {
    pub session_id: String,
    pub root: String,
    pub created_at: String,
    pub jobs: Vec<JobSummary>,
}

/// One job of a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobSummary {
    pub job_id: String,
    pub prompt: String,
    pub status: Option<JobStatus>,
    pub answer: Option<String>,
    /// How many edits it proposed.
    pub edits: usize,
    pub bundle: Option<DiffBundle>,
    /// How many of its events are recorded.
    pub events: usize,
    /// The images that went with its prompt.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<super::ImageMeta>,
    /// The provider and model that answered (the remote one after a
    /// `hybrid_auto` fallback); empty for a job that never started.
    #[serde(default)]
    pub provider: String,
    #[serde(default)]
    pub model: String,
}

/// A memory file the model is given (`/memory`, SPEC 19).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryFile {
    /// Relative to the root, or the user's file's own path.
    pub path: String,
    /// Its size in tokens (estimated), as the model is given it.
    pub tokens: u64,
    /// When the model is given it.
    pub given: String,
}

/// A custom command (`/NAME`, SPEC 19) as front ends list it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CustomCommandInfo {
    pub name: String,
    pub description: String,
    /// The mode its jobs run in, when the file sets one.
    pub mode: Option<Mode>,
    /// Where it was read from.
    pub source: String,
}

/// The review a session waits on: its job and bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingReview {
    pub session_id: String,
    pub job_id: String,
    pub bundle: DiffBundle,
    /// The job's last verify, if one ran (stale when its `decisions`
    /// differ from the bundle's `verify_key`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<crate::protocol::VerifyResult>,
    /// The project's files changed since that verify copied them: its
    /// result is stale whatever the decisions.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tree_changed: bool,
}

/// A job's stored events after a cursor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventsPage {
    pub job_id: String,
    pub status: Option<JobStatus>,
    /// The cursor to ask from next time (the last event's, or the one asked).
    pub next_cursor: u64,
    pub events: Vec<Event>,
}

/// One folder added beside the agent root, or the root (`list_scopes`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScopeInfo {
    /// `@root`, `@docs` ...
    pub id: String,
    pub path: String,
    /// `read_only` or `read_write`.
    pub access: String,
    pub primary: bool,
}

/// What a folder entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    Dir,
    File,
}

/// One entry of a folder, for a file tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FolderEntry {
    /// As tools spell it: relative to the agent root, or `@scope/…`.
    pub path: String,
    pub name: String,
    pub kind: EntryKind,
}

/// The start of a text file, for a preview.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileText {
    pub path: String,
    pub content: String,
    pub total_lines: usize,
}

/// One line of a file with a review's hunks inline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRow {
    /// ` ` unchanged, `-` removed, `+` added.
    pub sign: char,
    pub text: String,
    /// The hunk a changed line belongs to.
    pub hunk_id: Option<String>,
}

/// The files of a checkpoint in three versions (`checkpoints show`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointView {
    pub checkpoint: super::checkpoint::Checkpoint,
    pub three_way: Vec<ThreeWay>,
}

/// One line of `doctor`: what was found, and whether it needs fixing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DoctorFact {
    pub label: String,
    pub text: String,
    pub problem: bool,
}

/// What `doctor` found, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DoctorReport {
    pub version: String,
    pub facts: Vec<DoctorFact>,
    /// A mistake in the config or the flags that stopped the checks.
    pub usage_error: Option<String>,
}

impl DoctorReport {
    /// Nothing needs fixing.
    pub fn healthy(&self) -> bool {
        self.usage_error.is_none() && self.facts.iter().all(|f| !f.problem)
    }
}

/// An MCP server as `mcp list` found it: started, its state and tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpServerReport {
    pub name: String,
    /// `stdio` or `http`.
    pub transport: String,
    /// `running`, `failed`, `disabled` ... with what the state carries.
    pub state: Value,
    /// Its state in words.
    pub label: String,
    pub tools: Vec<McpToolInfo>,
}

/// One tool of an MCP server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpToolInfo {
    /// As the model sees it: `mcp__<server>__<tool>`.
    pub name: String,
    pub tool: String,
    pub description: String,
}
