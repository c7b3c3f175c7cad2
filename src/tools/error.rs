//! What a tool call can go wrong with, as stable codes and actionable text.

use serde_json::{Value, json};
use thiserror::Error;

use crate::workspace::{DecodeError, SandboxError};

#[derive(Debug, Error)]
pub enum ToolError {
    #[error("unknown tool `{name}`{}{}; available tools: {}",
        suggestion.as_ref().map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default(),
        why.map(|w| format!(" ({w})")).unwrap_or_default(),
        known.join(", "))]
    UnknownTool {
        name: String,
        known: Vec<String>,
        suggestion: Option<String>,
        /// Why a tool of that kind is not offered here.
        why: Option<&'static str>,
    },
    #[error("invalid arguments: {0}")]
    ArgumentsNotJson(String),
    #[error("invalid argument `{field}`: {message}")]
    InvalidArgument { field: String, message: String },
    #[error(transparent)]
    Path(#[from] SandboxError),
    #[error("`{path}` does not exist{}; use list_files to see what exists{}",
        if suggestions.is_empty() { String::new() } else {
            format!(" (did you mean {}?)", suggestions.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", "))
        },
        if *scoped { ", and list_scopes for the folders beside the agent root (`@name/…`)" } else { "" })]
    NotFound {
        path: String,
        suggestions: Vec<String>,
        /// Whether there are scopes beside the agent root.
        scoped: bool,
    },
    #[error("`{path}` is a directory; use list_files with prefix `{path}` to see its files")]
    IsADirectory { path: String },
    #[error("`{path}` is not a regular file")]
    NotAFile { path: String },
    #[error("`{path}` is a binary file (it contains NUL bytes); only text files can be read")]
    Binary { path: String },
    #[error("`{path}`: line {line} is not valid UTF-8; only UTF-8 text files can be read")]
    NotUtf8 { path: String, line: usize },
    #[error("`{path}`: {message}")]
    OutOfRange { path: String, message: String },
    #[error(
        "`{0}` asks the user a question, so it only works inside a job (agent-tui exec or the TUI)"
    )]
    NeedsJob(String),
    /// A git tool's failure: `code` says which (`not_a_git_repository`,
    /// `nothing_staged`, `detached_head`, `git_failed`, ...).
    #[error("{message}")]
    Git { code: &'static str, message: String },
    /// A web tool's failure: `code` says which (`address_refused`,
    /// `bad_url`, `timeout`, `unsupported_type`, ...).
    #[error("{message}")]
    Web { code: &'static str, message: String },
    #[error("the tool failed unexpectedly: {0}")]
    Internal(String),
    /// A command was not run: its changes could not be made undoable.
    #[error(
        "the command was not run: the files' bytes before it could not be kept, so it could not be \
         undone ({0}); fix that (a full disk, a damaged store) and run it again"
    )]
    NotUndoable(String),
    /// The code index could not answer (turned off, no state home, a
    /// build that failed).
    #[error("{0}")]
    Index(String),
    #[error("`{path}`: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

impl From<crate::web::WebError> for ToolError {
    fn from(e: crate::web::WebError) -> ToolError {
        ToolError::Web {
            code: e.code(),
            message: e.to_string(),
        }
    }
}

impl ToolError {
    /// Stable, machine-readable code for the JSON error object.
    pub fn code(&self) -> &'static str {
        match self {
            ToolError::UnknownTool { .. } => "unknown_tool",
            ToolError::ArgumentsNotJson(_) | ToolError::InvalidArgument { .. } => {
                "invalid_arguments"
            }
            ToolError::Path(e) => e.code(),
            ToolError::NotFound { .. } => "not_found",
            ToolError::IsADirectory { .. } | ToolError::NotAFile { .. } => "not_a_file",
            ToolError::Binary { .. } => "binary_file",
            ToolError::NotUtf8 { .. } => "not_utf8",
            ToolError::OutOfRange { .. } => "out_of_range",
            ToolError::Io { .. } => "io_error",
            ToolError::Index(_) => "index_unavailable",
            ToolError::NeedsJob(_) => "needs_job",
            ToolError::Internal(_) => "internal_error",
            ToolError::NotUndoable(_) => "not_undoable",
            ToolError::Git { code, .. } | ToolError::Web { code, .. } => code,
        }
    }

    /// `{"error": {"code", "message"}}`, the shape tool failures take in JSON.
    pub fn to_json(&self) -> Value {
        json!({"error": {"code": self.code(), "message": self.to_string()}})
    }

    pub(crate) fn invalid(field: &str, message: impl Into<String>) -> ToolError {
        ToolError::InvalidArgument {
            field: field.to_string(),
            message: message.into(),
        }
    }

    pub(crate) fn io(path: &str, source: std::io::Error) -> ToolError {
        ToolError::Io {
            path: path.to_string(),
            source,
        }
    }

    pub(crate) fn decode(path: &str, e: DecodeError) -> ToolError {
        let path = path.to_string();
        match e {
            DecodeError::Binary => ToolError::Binary { path },
            DecodeError::NotUtf8 { line } => ToolError::NotUtf8 { path, line },
            DecodeError::StartPastEnd { .. } => ToolError::OutOfRange {
                path,
                message: e.to_string(),
            },
            DecodeError::Io(source) => ToolError::Io { path, source },
        }
    }
}
