//! Git tools (SPEC 5), offered only when the agent root is inside a git
//! work tree: reading (`git_status`, `git_diff`, `git_log`, `git_branch`)
//! with gitoxide in-process, changing (`git_add`, `git_commit`, `git_push`)
//! through the git CLI in the same confined runner as `run_command`.

mod read;
mod write;

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::runner::{self, Ran, Spawn};
use super::{Registry, ToolContext, ToolError};

pub const GIT_STATUS: &str = "git_status";
pub const GIT_DIFF: &str = "git_diff";
pub const GIT_LOG: &str = "git_log";
pub const GIT_BRANCH: &str = "git_branch";
pub use crate::protocol::names::{GIT_ADD, GIT_COMMIT, GIT_PUSH};

/// A tool path as the agent root's repository sees it (relative to the
/// root); a path in a scope outside the root is not in this repository.
pub(crate) fn root_relative(ctx: &ToolContext<'_>, path: &str) -> Result<String, ToolError> {
    let resolved = ctx.workspace.resolve(path)?;
    if resolved.scope == 0 {
        return Ok(resolved.rel);
    }
    match resolved.abs.strip_prefix(ctx.workspace.root()) {
        Ok(inside) => Ok(inside
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/")),
        Err(_) => Err(ToolError::invalid(
            "path",
            format!(
                "`{}` is in the scope `{}`, outside the agent root; the git tools work on the agent root's repository",
                resolved.rel,
                ctx.workspace.scope_of(&resolved)
            ),
        )),
    }
}

/// Adds the git tools when `root` is inside a git work tree (`git_push`
/// only when `allow_push`).
pub fn register(registry: &mut Registry, root: &Path, allow_push: bool) -> Result<(), String> {
    if Repo::open(root).is_err() {
        return Ok(());
    }
    registry.register(Box::new(read::Status))?;
    registry.register(Box::new(read::Diff))?;
    registry.register(Box::new(read::Log))?;
    registry.register(Box::new(read::Branch))?;
    registry.register(Box::new(write::Add))?;
    registry.register(Box::new(write::Commit))?;
    if allow_push {
        registry.register(Box::new(write::Push))?;
    }
    Ok(())
}

/// The repository around an agent root.
pub(super) struct Repo {
    pub repo: gix::Repository,
    /// The agent root relative to the work tree's top, `/`-terminated
    /// (empty when the root is the top).
    pub prefix: String,
}

impl Repo {
    pub fn open(root: &Path) -> Result<Repo, ToolError> {
        let not_a_repo = |why: String| ToolError::Git {
            code: "not_a_git_repository",
            message: format!(
                "the agent root is not inside a git work tree ({why}); the git tools only \
                 work in one"
            ),
        };
        let repo = gix::discover(root).map_err(|e| not_a_repo(e.to_string()))?;
        let workdir = repo
            .workdir()
            .ok_or_else(|| not_a_repo("the repository is bare".into()))?;
        let workdir = workdir
            .canonicalize()
            .map_err(|e| not_a_repo(e.to_string()))?;
        let root = root.canonicalize().map_err(|e| not_a_repo(e.to_string()))?;
        let prefix = match root.strip_prefix(&workdir) {
            Ok(rel) if rel.as_os_str().is_empty() => String::new(),
            Ok(rel) => format!("{}/", rel.to_string_lossy()),
            Err(_) => return Err(not_a_repo("the root lies outside its work tree".into())),
        };
        Ok(Repo { repo, prefix })
    }

    /// A repository path as the model sees it (relative to the agent
    /// root), or `None` when it lies outside the root.
    pub fn root_path_of(&self, path: &str) -> Option<String> {
        path.strip_prefix(&self.prefix).map(str::to_string)
    }

    /// Where git keeps its data (for a linked work tree: both its own git
    /// dir and the common one).
    pub fn git_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = vec![self.repo.git_dir().to_path_buf()];
        let common = self.repo.common_dir().to_path_buf();
        if !dirs.contains(&common) {
            dirs.push(common);
        }
        dirs
    }

    /// Where HEAD is: the checked-out branch (`None` when detached) and
    /// the commit's short id (`None` before the first commit).
    pub fn head(&self) -> Result<(Option<String>, Option<String>), ToolError> {
        let head = self.repo.head().map_err(git_error)?;
        let branch = match head.referent_name() {
            Some(name) if !head.is_detached() => Some(name.shorten().to_string()),
            _ => None,
        };
        Ok((branch, head.id().map(|id| id.shorten_or_id().to_string())))
    }

    /// The checked-out branch's short name, or a typed error when HEAD is
    /// detached (a commit there would belong to no branch).
    pub fn branch_or_refuse(&self, doing: &str) -> Result<String, ToolError> {
        match self.head()? {
            (Some(branch), _) => Ok(branch),
            (None, commit) => {
                let at = commit.map(|c| format!(" at {c}")).unwrap_or_default();
                Err(ToolError::Git {
                    code: "detached_head",
                    message: format!(
                        "HEAD is detached{at}: {doing} here would belong to no branch; ask the \
                         user to check out a branch first"
                    ),
                })
            }
        }
    }
}

/// A gitoxide failure as a tool error.
pub(super) fn git_error(e: impl std::fmt::Display) -> ToolError {
    ToolError::Git {
        code: "git_error",
        message: e.to_string(),
    }
}

/// Runs `git ARGS` in the agent root through the confined runner. `write`:
/// it may write the repository's git data; `network`: it may connect out.
pub(super) fn git_cli(
    ctx: &ToolContext<'_>,
    args: &[&str],
    writable: Vec<PathBuf>,
    network: bool,
) -> Result<Ran, ToolError> {
    let mut argv: Vec<String> = ["git", "--no-pager", "-c", "core.quotePath=false"]
        .iter()
        .map(|s| (*s).to_string())
        .collect();
    argv.extend(args.iter().map(|s| (*s).to_string()));
    let mut env = vec![
        ("GIT_TERMINAL_PROMPT", "0".to_string()),
        ("GIT_EDITOR", "true".to_string()),
        ("LC_ALL", "C".to_string()),
    ];
    if writable.is_empty() {
        // Reading must not even refresh the index.
        env.push(("GIT_OPTIONAL_LOCKS", "0".to_string()));
    }
    let limit = ctx.exec.timeout_secs.max(1);
    let spawn = Spawn {
        argv: &argv,
        cwd: ctx.workspace.root(),
        writable,
        network,
        timeout: Duration::from_secs(limit),
        cap: usize::try_from(ctx.exec.max_output_bytes).unwrap_or(usize::MAX),
        secrets: &ctx.secrets,
        env,
        cancel: ctx.cancel.as_ref(),
        tee: None,
        tee_past_cap: false,
        stdin: None,
    };
    let ran = runner::run(&spawn)?;
    if ran.timed_out {
        return Err(ToolError::Git {
            code: "timed_out",
            message: format!("`git {}` did not finish within {limit} s", args.join(" ")),
        });
    }
    Ok(ran)
}

/// The error for a git command that exited non-zero: its stderr's tail.
pub(super) fn failed(args: &[&str], ran: &Ran) -> ToolError {
    let stderr = ran.stderr_text();
    let out = if stderr.trim().is_empty() {
        ran.stdout_text()
    } else {
        stderr
    };
    let tail: Vec<&str> = out.trim().lines().rev().take(12).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    ToolError::Git {
        code: "git_failed",
        message: format!(
            "`git {}` failed (exit {}): {}",
            args.first().copied().unwrap_or_default(),
            ran.exit_code
                .map_or_else(|| "killed".into(), |c| c.to_string()),
            tail.join("\n")
        ),
    }
}
