//! The tools the model can call: a registry that knows each tool's name,
//! argument schema, tier and modes, and one module per tool.

mod clarify_user;
mod code_search;
pub mod confine {
    //! Commands' confinement, as the platform layer gives it.
    pub use crate::platform::sandbox::*;
}
mod error;
mod file_outline;
mod find_references;
mod find_symbol;
mod git;
mod inline_code;
mod list_files;
mod list_scopes;
mod propose_edits;
mod read_file;
mod registry;
mod repo_map;
mod run_command;
pub(crate) mod runner;
mod search_project;
pub mod verify;
mod web_fetch;
mod web_search;

pub use clarify_user::CLARIFY_USER;
pub use code_search::CODE_SEARCH;
pub use error::ToolError;
pub use file_outline::FILE_OUTLINE;
pub use find_references::FIND_REFERENCES;
pub use find_symbol::FIND_SYMBOL;
pub use git::{GIT_ADD, GIT_BRANCH, GIT_COMMIT, GIT_DIFF, GIT_LOG, GIT_PUSH, GIT_STATUS};
pub use inline_code::inline_code;
pub use list_files::LIST_FILES;
pub use list_scopes::LIST_SCOPES;
pub use propose_edits::PROPOSE_EDITS;
pub use read_file::READ_FILE;
pub use registry::{Registry, ToolSpec};
pub use repo_map::REPO_MAP;
pub use run_command::{RUN_COMMAND, allowed, argv_of};
pub use runner::{Tee, is_secret};
pub use web_fetch::WEB_FETCH;
pub use web_search::WEB_SEARCH;

use serde_json::Value;

use tokio_util::sync::CancellationToken;

use crate::checkpoint::ExecTracker;
use crate::config::{Config, ExecConfig, Limits};
use crate::index::{CodeIndex, View};
use crate::workspace::{PathFilter, Resolved, Workspace, close_matches};

/// What a tool may use while it runs.
pub struct ToolContext<'a> {
    pub workspace: &'a Workspace,
    pub limits: &'a Limits,
    pub exec: &'a ExecConfig,
    /// Environment variables a command must not see (the providers' keys).
    pub secrets: Vec<String>,
    /// Set when the job is cancelled: a running command is stopped.
    pub cancel: Option<CancellationToken>,
    /// Where a command's changes are recorded as a checkpoint (in a job
    /// with a store).
    pub record: Option<ExecRecord<'a>>,
    /// A command's output as it comes (the server's `exec`).
    pub tee: Option<runner::Tee>,
    /// The root's code index (the index tools; `None`: no state home).
    pub index: Option<&'a CodeIndex>,
    /// What `web_fetch` may reach (`[web]`).
    pub web: &'a crate::config::web::WebConfig,
    /// The store: pages `web_fetch` read, kept for conditional requests.
    pub store: Option<&'a crate::store::Store>,
}

/// A job's checkpoint recording for commands.
pub struct ExecRecord<'a> {
    pub tracker: &'a ExecTracker,
    pub session_id: Option<String>,
    pub job_id: String,
}

impl<'a> ToolContext<'a> {
    pub fn new(workspace: &'a Workspace, config: &'a Config) -> ToolContext<'a> {
        ToolContext {
            workspace,
            limits: &config.limits,
            exec: &config.exec,
            secrets: config.secret_env_names(),
            cancel: None,
            record: None,
            tee: None,
            index: None,
            web: &config.web,
            store: None,
        }
    }
}

/// One tool. `run` receives arguments already validated against `spec().schema`.
pub trait Tool: Send + Sync {
    fn spec(&self) -> ToolSpec;
    fn run(&self, ctx: &ToolContext<'_>, args: Value) -> Result<Value, ToolError>;
}

/// Deserializes validated arguments into the tool's typed struct.
pub(crate) fn parse_args<T: serde::de::DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    serde_json::from_value(args).map_err(|e| ToolError::ArgumentsNotJson(e.to_string()))
}

/// Runs `work` to its end on the engine's runtime (a tool runs on its
/// blocking pool): the web tools' requests.
pub(crate) fn on_runtime<F: std::future::Future>(
    tool: &str,
    work: F,
) -> Result<F::Output, ToolError> {
    let handle = tokio::runtime::Handle::try_current()
        .map_err(|_| ToolError::Internal(format!("{tool} needs a runtime")))?;
    Ok(handle.block_on(work))
}

/// `requested` (if any) or `default`, but never above `cap` nor below 1.
pub(crate) fn bounded(requested: Option<usize>, default: usize, cap: usize) -> usize {
    requested.unwrap_or(default).clamp(1, cap.max(1))
}

/// The optional `glob` argument, compiled.
pub(crate) fn glob_filter(glob: Option<&str>) -> Result<Option<PathFilter>, ToolError> {
    named_glob_filter("glob", glob)
}

/// A glob argument called `field`, compiled.
pub(crate) fn named_glob_filter(
    field: &str,
    glob: Option<&str>,
) -> Result<Option<PathFilter>, ToolError> {
    glob.map(|g| PathFilter::new(g).map_err(|e| ToolError::invalid(field, e.to_string())))
        .transpose()
}

/// `not_found` for `missing`, with the closest existing paths as suggestions.
pub(crate) fn not_found(ctx: &ToolContext<'_>, missing: &Resolved) -> ToolError {
    ToolError::NotFound {
        path: missing.display().to_string(),
        suggestions: close_matches(ctx.workspace, &missing.rel, 3),
        scoped: ctx.workspace.scopes().len() > 1,
    }
}

/// The code index brought up to date with the tree, for an index tool.
pub(crate) fn index_view(ctx: &ToolContext<'_>) -> Result<std::sync::Arc<View>, ToolError> {
    let index = ctx.index.ok_or_else(|| {
        ToolError::Index(
            "the code index is not available here (no state home); use search_project".into(),
        )
    })?;
    index
        .view(ctx.workspace)
        .map_err(|e| ToolError::Index(format!("{e}; use search_project")))
}

/// A path argument as the index names files: relative to the agent root.
pub(crate) fn index_path(
    ctx: &ToolContext<'_>,
    field: &str,
    path: &str,
) -> Result<String, ToolError> {
    let resolved = ctx.workspace.resolve(path)?;
    if resolved.scope != 0 {
        return Err(ToolError::invalid(
            field,
            "the code index covers the agent root only; use search_project or read_file for other scopes",
        ));
    }
    Ok(resolved.rel)
}
