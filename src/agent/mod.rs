//! The engine and its one door. `EngineBuilder` opens config, store,
//! providers, tools and MCP hub and settles interrupted writes; the
//! `Engine` handle it returns takes commands (typed replies), answers
//! queries and hands out event subscriptions. Behind it one task owns the
//! sessions it drives, their jobs (each running the agent loop, `job.rs`,
//! on its own task) and reviews.

mod accounts;
mod answer_edits;
mod approval;
mod builder;
mod choice;
mod code_index;
mod commands;
mod compaction;
mod counting;
mod doctor;
mod doctor_routing;
mod door;
mod emit;
mod engine;
mod event_log;
mod exec;
mod feedback;
mod files;
#[doc(hidden)]
pub mod fuzzing; // fuzz doors: any bytes in, a panic only when a property fails
mod hook_apply;
mod hook_calls;
mod hook_door;
mod hook_run;
mod hooks;
mod images;
mod job;
mod job_request;
mod jobs;
mod lean;
mod lean_context;
mod live;
mod mcp_calls;
mod memory;
mod outcome;
mod patch;
mod prompt;
mod publish;
mod queries;
mod recovery;
mod review_ops;
mod review_rollback;
mod review_work;
mod routing;
mod session_state;
mod sessions;
mod so_far;
mod subscription;
mod tool_calls;
mod undone;
mod verify_ops;

/// Front ends run their tasks this way too: a blocking store call inside
/// is a bug that debug builds catch.
pub use crate::store::{no_blocking, now_ms};
pub use accounts::{Accounts, Notice, new_token, token_sha256};
pub use builder::{
    BuildError, EngineBuilder, FrontEnd, Providers, Recording, check_providers, process_env,
};
pub use code_index::BuildProgress;
pub use door::{Engine, PendingReply};
pub use exec::{ExecStream, command_allowed};
pub use files::{complete_folder, expand_home};
pub use hook_calls::HookWho;
pub use images::image_from_file;
pub use job::NO_USER_ANSWER;
pub use prompt::{MAX_AGENTS_MD_BYTES, system_prompt};
pub use recovery::log_line;
pub use session_state::{JobRecord, LegacySessions, Record, SessionState, read_session};
pub use subscription::{Filter, Subscription};

use crate::config::Config;
use crate::llm::Provider;
use crate::store::RootStore;
use crate::tools::Registry;
use crate::workspace::Workspace;

pub(crate) use recovery::settle_interrupted;

/// What every job of an engine shares.
pub(crate) struct EngineContext {
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
    /// The root's file index, for checkpoints of what commands change
    /// (the model's and a front end's `exec`); with `state` only.
    pub tracker: Option<std::sync::Arc<crate::checkpoint::ExecTracker>>,
    /// The root's code index in the state home (`None`: turned off, or no
    /// state home).
    pub index: Option<std::sync::Arc<crate::index::CodeIndex>>,
    /// The hooks that run here (SPEC 21).
    pub hooks: hooks::Hooks,
    /// Which front end drives it (`tui`, `exec`, `serve` …), as hooks read.
    pub front_name: &'static str,
    /// Observer hooks running (detached); shutting down waits for them.
    pub observers: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl EngineContext {
    /// Variables no command or hook may see: every provider's key.
    pub fn secret_names(&self) -> Vec<String> {
        self.config
            .providers
            .values()
            .filter_map(|p| p.api_key_env.clone())
            .collect()
    }

    /// What a tool run by this engine may use.
    pub fn tool_context(&self) -> crate::tools::ToolContext<'_> {
        let mut ctx = crate::tools::ToolContext::new(&self.workspace, &self.config);
        ctx.index = self.index.as_deref();
        ctx.store = self.state.as_ref().map(|s| &s.store);
        ctx
    }
}

/// The code index of `root` in the state home, unless it is turned off;
/// `follow`: kept current by inotify (a TUI, a server).
pub(crate) fn code_index(
    root: &std::path::Path,
    config: &crate::config::IndexConfig,
    follow: bool,
) -> Option<std::sync::Arc<crate::index::CodeIndex>> {
    if !config.enabled {
        return None;
    }
    let home = crate::store::StateDirs::locate(&process_env)?.home;
    let dir = home.join("index").join(crate::store::root_key(root));
    let index = crate::index::CodeIndex::new(dir, config.clone());
    Some(std::sync::Arc::new(if follow {
        index.followed()
    } else {
        index
    }))
}

/// Where `-v` logs go: the state home's `logs/` (`None`: no state home).
pub fn log_dir() -> Option<std::path::PathBuf> {
    crate::store::StateDirs::locate(&process_env).map(|d| d.home.join("logs"))
}

/// The command wrapper that confines `run_command` (`agent-tui __confine`).
pub mod confine {
    pub use crate::tools::confine::{
        CONFINE_ARG, install_wrapper, keep_to_ourselves, wrapper_main,
    };
}

/// A fresh job id for a front end's `StartJob`: sortable by time, with 64
/// random bits (many clients start jobs at once on a server).
/// A path the sandbox refused, as the door's error: what it never allows
/// (out of the root, `.git`, a read-only scope) is `Forbidden`, a scope
/// that is not there `NotFound`, the rest (a path no file can have)
/// `Invalid`.
pub(crate) fn path_refused(e: crate::workspace::SandboxError) -> crate::protocol::EngineError {
    use crate::protocol::EngineError;
    match e.code() {
        "outside_root" | "forbidden_path" | "read_only_scope" => {
            EngineError::forbidden(e.to_string())
        }
        "unknown_scope" => EngineError::not_found(e.to_string()),
        _ => EngineError::invalid(e.to_string()),
    }
}

pub fn new_job_id() -> String {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!("job_{millis}_{:016x}", fastrand::u64(..))
}

/// The state home (`$AGENT_TUI_HOME`, else the data dir), if one can be
/// found: where `serve` writes its one-run token.
pub fn state_home() -> Option<std::path::PathBuf> {
    crate::store::StateDirs::locate(&process_env).map(|d| d.home)
}
