//! The git tools that change the repository, run by the git CLI in the
//! confined runner (writes: the agent root and the repository's git data):
//! `git_add` and `git_commit` (`[approvals] git`, batch by default) and
//! `git_push` (offered only with `[git] allow_push`, always asked).

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::{Value, json};

use super::read::{staged_paths, staged_split};
use super::{GIT_ADD, GIT_COMMIT, GIT_PUSH, Repo, failed, git_cli, git_error};
use crate::protocol::{Mode, Tier};
use crate::tools::{Tool, ToolContext, ToolError, ToolSpec, parse_args};

pub struct Add;
pub struct Commit;
pub struct Push;

fn write_spec(name: &'static str, description: &'static str, schema: Value) -> ToolSpec {
    ToolSpec {
        name,
        description,
        schema,
        tier: Tier::Exec,
        modes: vec![Mode::Agent],
    }
}

/// Where a git command that changes the repository may write.
fn writable(ctx: &ToolContext<'_>, repo: &Repo) -> Vec<PathBuf> {
    let mut out = vec![ctx.workspace.root().to_path_buf()];
    out.extend(repo.git_dirs());
    out
}

#[derive(Deserialize)]
struct AddArgs {
    paths: Vec<String>,
}

impl Tool for Add {
    fn spec(&self) -> ToolSpec {
        write_spec(
            GIT_ADD,
            "Stage files for the next commit (`git add`), including deletions. Paths are \
             files or folders relative to the agent root. The user approves the git changes \
             of one turn together.",
            json!({
                "type": "object",
                "properties": {
                    "paths": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1}
                },
                "required": ["paths"],
                "additionalProperties": false
            }),
        )
    }

    fn run(&self, ctx: &ToolContext<'_>, args: Value) -> Result<Value, ToolError> {
        let args: AddArgs = parse_args(args)?;
        let repo = Repo::open(ctx.workspace.root())?;
        let mut specs = Vec::new();
        for path in &args.paths {
            let rel = super::root_relative(ctx, path)?;
            let rel = if rel.is_empty() { ".".to_string() } else { rel };
            // Literal: `*` or `:` in a name is a name, not a pattern.
            specs.push(format!(":(literal){rel}"));
        }
        let mut argv = vec!["add", "--"];
        argv.extend(specs.iter().map(String::as_str));
        let ran = git_cli(ctx, &argv, writable(ctx, &repo), false)?;
        if ran.exit_code != Some(0) {
            return Err(failed(&argv, &ran));
        }
        let repo = Repo::open(ctx.workspace.root())?;
        Ok(json!({ "staged": staged_paths(&repo)?, "confined": ran.confined }))
    }
}

#[derive(Deserialize)]
struct CommitArgs {
    message: String,
}

impl Tool for Commit {
    fn spec(&self) -> ToolSpec {
        write_spec(
            GIT_COMMIT,
            "Commit what is staged (see git_status: the index letter) on the current branch, \
             with this message. Nothing staged is an error: git_add first.",
            json!({
                "type": "object",
                "properties": {
                    "message": {"type": "string", "minLength": 1, "description": "The commit message: a subject line, optionally a blank line and a body."}
                },
                "required": ["message"],
                "additionalProperties": false
            }),
        )
    }

    fn run(&self, ctx: &ToolContext<'_>, args: Value) -> Result<Value, ToolError> {
        let args: CommitArgs = parse_args(args)?;
        if args.message.trim().is_empty() {
            return Err(ToolError::invalid(
                "message",
                "is empty; say what the commit does",
            ));
        }
        let repo = Repo::open(ctx.workspace.root())?;
        let branch = repo.branch_or_refuse("a commit")?;
        let conflicted = unmerged(&repo)?;
        if !conflicted.is_empty() {
            return Err(ToolError::Git {
                code: "unresolved_conflict",
                message: format!(
                    "a merge is under way with unresolved conflicts in {}: resolve them in the \
                     files (propose the edits), git_add them, then commit",
                    conflicted.join(", ")
                ),
            });
        }
        let (inside, outside) = staged_split(&repo)?;
        if !outside.is_empty() {
            // A commit records the whole index: never what lies outside the
            // root, which the model cannot see and the user did not show it.
            let shown: Vec<&str> = outside.iter().take(5).map(String::as_str).collect();
            let more = outside.len().saturating_sub(shown.len());
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            return Err(ToolError::Git {
                code: "staged_outside_root",
                message: format!(
                    "files outside the agent root are staged ({}{more}): a commit would record \
                     them too, so none is made; the user can unstage them (git restore --staged) \
                     or commit them first",
                    shown.join(", ")
                ),
            });
        }
        if !inside {
            return Err(ToolError::Git {
                code: "nothing_staged",
                message: "nothing is staged, so there is nothing to commit; stage files with \
                          git_add first (git_status shows what changed)"
                    .into(),
            });
        }
        let argv = [
            "commit",
            "--quiet",
            "--no-edit",
            "--cleanup=strip",
            "-m",
            &args.message,
        ];
        let ran = git_cli(ctx, &argv, writable(ctx, &repo), false)?;
        if ran.exit_code != Some(0) {
            return Err(failed(&argv, &ran));
        }
        let repo = Repo::open(ctx.workspace.root())?;
        let head = repo.repo.head_commit().map_err(git_error)?;
        let subject = head.message().map_err(git_error)?.summary().to_string();
        Ok(json!({
            "commit": head.id.to_string(),
            "branch": branch,
            "subject": subject,
            "confined": ran.confined,
        }))
    }
}

#[derive(Deserialize)]
struct PushArgs {
    remote: Option<String>,
}

impl Tool for Push {
    fn spec(&self) -> ToolSpec {
        write_spec(
            GIT_PUSH,
            "Push the current branch to a remote (default: its upstream's remote, else \
             `origin`). The user approves each push.",
            json!({
                "type": "object",
                "properties": {
                    "remote": {"type": "string", "minLength": 1, "description": "Remote name, e.g. origin."}
                },
                "additionalProperties": false
            }),
        )
    }

    fn run(&self, ctx: &ToolContext<'_>, args: Value) -> Result<Value, ToolError> {
        use gix::remote::Direction;
        let args: PushArgs = parse_args(args)?;
        let repo = Repo::open(ctx.workspace.root())?;
        let branch = repo.branch_or_refuse("a push")?;
        let configured = repo
            .repo
            .branch_remote_name(branch.as_str(), Direction::Push)
            .map(|n| n.as_bstr().to_string());
        let remote_name = args
            .remote
            .or(configured)
            .unwrap_or_else(|| "origin".to_string());
        let remote = repo
            .repo
            .find_remote(remote_name.as_str())
            .map_err(|_| ToolError::Git {
                code: "unknown_remote",
                message: format!(
                    "there is no remote `{remote_name}`; the remotes are: {}",
                    remote_names(&repo)
                ),
            })?;
        // A remote on this machine is written to: grant exactly its folder.
        let mut write = writable(ctx, &repo);
        if let Some(url) = remote.url(Direction::Push)
            && url.scheme == gix::url::Scheme::File
        {
            write.push(PathBuf::from(url.path.to_string()));
        }
        let refspec = format!("HEAD:refs/heads/{branch}");
        let argv = [
            "push",
            "--porcelain",
            remote_name.as_str(),
            refspec.as_str(),
        ];
        let ran = git_cli(ctx, &argv, write, true)?;
        if ran.exit_code != Some(0) {
            return Err(failed(&argv, &ran));
        }
        Ok(json!({
            "remote": remote_name,
            "branch": branch,
            "output": ran.stdout_text().trim(),
            "confined": ran.confined,
        }))
    }
}

/// The paths of the index's unmerged entries (a merge's conflicts).
fn unmerged(repo: &Repo) -> Result<Vec<String>, ToolError> {
    let index = repo.repo.index_or_empty().map_err(|e| ToolError::Git {
        code: "git_failed",
        message: format!("cannot read the index: {e}"),
    })?;
    let mut paths: Vec<String> = index
        .entries()
        .iter()
        .filter(|e| e.stage() != gix::index::entry::Stage::Unconflicted)
        .map(|e| e.path(&index).to_string())
        .collect();
    paths.dedup();
    Ok(paths)
}

fn remote_names(repo: &Repo) -> String {
    let names: Vec<String> = repo
        .repo
        .remote_names()
        .into_iter()
        .map(|n| n.to_string())
        .collect();
    if names.is_empty() {
        "(none)".into()
    } else {
        names.join(", ")
    }
}
