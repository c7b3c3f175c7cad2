//! The reading git tools, all `auto`: status (branch, ahead/behind, files
//! in porcelain letters), diff (the git CLI: gitoxide renders no patch
//! text), log and branches. Paths are relative to the agent root; files
//! outside it are not shown.

use std::collections::BTreeMap;

use gix::bstr::BString;
use gix::diff::index::ChangeRef;
use gix::status::index_worktree::iter::Summary;
use gix::status::{Item, UntrackedFiles};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{GIT_BRANCH, GIT_DIFF, GIT_LOG, GIT_STATUS, Repo, failed, git_cli, git_error};
use crate::tools::{Tool, ToolContext, ToolError, ToolSpec, bounded, parse_args};

/// Files listed by `git_status` before it says `truncated`.
const MAX_STATUS_FILES: usize = 500;
/// Commits `git_log` looks at when filtering by path.
const MAX_LOG_SCAN: usize = 20_000;

pub struct Status;
pub struct Diff;
pub struct Log;
pub struct Branch;

fn no_args() -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}

/// One file's two status letters (index, work tree), as `git status -s`.
#[derive(Default)]
struct Row {
    index: char,
    worktree: char,
    from: Option<String>,
}

impl Tool for Status {
    fn spec(&self) -> ToolSpec {
        ToolSpec::read(
            GIT_STATUS,
            "The git status of the project: branch (null when HEAD is detached), commits \
             ahead of and behind its upstream, and each changed file with two letters like \
             `git status -s`: index (staged) and worktree (M modified, A added, D deleted, \
             R renamed, ? untracked, space unchanged).",
            no_args(),
        )
    }

    fn run(&self, ctx: &ToolContext<'_>, _: Value) -> Result<Value, ToolError> {
        let repo = Repo::open(ctx.workspace.root())?;
        let head = head_info(&repo)?;
        let rows = status_rows(&repo)?;
        let total = rows.len();
        let files: Vec<Value> = rows
            .into_iter()
            .take(MAX_STATUS_FILES)
            .map(|(path, row)| {
                let mut file = json!({
                    "path": path,
                    "index": row.index.to_string(),
                    "worktree": row.worktree.to_string(),
                });
                if let Some(from) = row.from {
                    file["from"] = json!(from);
                }
                file
            })
            .collect();
        let mut out = head;
        out["files"] = json!(files);
        out["truncated"] = json!(total > MAX_STATUS_FILES);
        Ok(out)
    }
}

/// Branch, detached, head commit, upstream, ahead and behind.
fn head_info(repo: &Repo) -> Result<Value, ToolError> {
    let (branch, commit) = repo.head()?;
    let (upstream, ahead, behind) = match ahead_behind(&repo.repo)? {
        Some((name, ahead, behind)) => (Some(name), ahead, behind),
        None => (None, 0, 0),
    };
    Ok(json!({
        "branch": branch,
        "detached": branch.is_none() && commit.is_some(),
        "head": commit,
        "upstream": upstream,
        "ahead": ahead,
        "behind": behind,
    }))
}

/// The upstream's short name and the commits ahead of and behind it.
fn ahead_behind(r: &gix::Repository) -> Result<Option<(String, usize, usize)>, ToolError> {
    use gix::remote::Direction;
    let Some(head_ref) = r.head_ref().map_err(git_error)? else {
        return Ok(None);
    };
    let Some(upstream) = head_ref.remote_tracking_ref_name(Direction::Fetch) else {
        return Ok(None);
    };
    let upstream = upstream.map_err(git_error)?;
    let Some(up_ref) = r.try_find_reference(upstream.as_ref()).map_err(git_error)? else {
        return Ok(None);
    };
    let name = up_ref.name().shorten().to_string();
    let up = up_ref.into_fully_peeled_id().map_err(git_error)?.detach();
    let local = head_ref.into_fully_peeled_id().map_err(git_error)?.detach();
    let count = |tip: gix::ObjectId, hide: gix::ObjectId| -> Result<usize, ToolError> {
        let mut n = 0;
        for info in r
            .rev_walk([tip])
            .with_hidden([hide])
            .all()
            .map_err(git_error)?
        {
            info.map_err(git_error)?;
            n += 1;
        }
        Ok(n)
    };
    if up == local {
        return Ok(Some((name, 0, 0)));
    }
    Ok(Some((name, count(local, up)?, count(up, local)?)))
}

/// The repository's status items (submodules not looked into).
fn status_items(repo: &Repo, untracked: UntrackedFiles) -> Result<gix::status::Iter, ToolError> {
    repo.repo
        .status(gix::progress::Discard)
        .map_err(git_error)?
        .untracked_files(untracked)
        .index_worktree_submodules(gix::status::Submodule::AsConfigured { check_dirty: true })
        .into_iter(Vec::<BString>::new())
        .map_err(git_error)
}

/// Every changed path under the agent root, sorted, with its two letters.
fn status_rows(repo: &Repo) -> Result<BTreeMap<String, Row>, ToolError> {
    let mut rows: BTreeMap<String, Row> = BTreeMap::new();
    let iter = status_items(repo, UntrackedFiles::Files)?;
    let blank = || Row {
        index: ' ',
        worktree: ' ',
        from: None,
    };
    for item in iter {
        match item.map_err(git_error)? {
            Item::TreeIndex(change) => {
                let (code, from) = match &change {
                    ChangeRef::Addition { .. } => ('A', None),
                    ChangeRef::Deletion { .. } => ('D', None),
                    ChangeRef::Modification { .. } => ('M', None),
                    ChangeRef::Rewrite {
                        source_location,
                        copy,
                        ..
                    } => (
                        if *copy { 'C' } else { 'R' },
                        repo.root_path_of(&source_location.to_string()),
                    ),
                };
                let Some(path) = repo.root_path_of(&change.location().to_string()) else {
                    continue;
                };
                let row = rows.entry(path).or_insert_with(blank);
                row.index = code;
                row.from = from;
            }
            Item::IndexWorktree(item) => {
                let Some(summary) = item.summary() else {
                    continue;
                };
                let Some(path) = repo.root_path_of(&item.rela_path().to_string()) else {
                    continue;
                };
                let (x, y) = match summary {
                    Summary::Added => ('?', '?'),
                    Summary::Removed => (' ', 'D'),
                    Summary::Modified => (' ', 'M'),
                    Summary::TypeChange => (' ', 'T'),
                    Summary::IntentToAdd => (' ', 'A'),
                    Summary::Renamed => (' ', 'R'),
                    Summary::Copied => (' ', 'C'),
                    Summary::Conflict => ('U', 'U'),
                };
                let row = rows.entry(path).or_insert_with(blank);
                // Untracked after a staged deletion (`git rm --cached`)
                // keeps the staged letter.
                if x != ' ' && !(x == '?' && row.index != ' ') {
                    row.index = x;
                }
                row.worktree = y;
            }
        }
    }
    Ok(rows)
}

/// Whether anything is staged (the index differs from HEAD).
/// What is staged in the whole repository: whether anything is under the
/// agent root, and the repository paths staged outside it (a commit would
/// record those too).
pub(super) fn staged_split(repo: &Repo) -> Result<(bool, Vec<String>), ToolError> {
    let (mut inside, mut outside) = (false, Vec::new());
    for item in status_items(repo, UntrackedFiles::None)? {
        if let Item::TreeIndex(change) = item.map_err(git_error)? {
            // A rename is two paths: where it came from counts too.
            let mut paths = vec![change.location().to_string()];
            if let ChangeRef::Rewrite {
                source_location, ..
            } = &change
            {
                paths.push(source_location.to_string());
            }
            for path in paths {
                match repo.root_path_of(&path) {
                    Some(_) => inside = true,
                    None => outside.push(path),
                }
            }
        }
    }
    Ok((inside, outside))
}

/// Staged paths under the agent root (for results).
pub(super) fn staged_paths(repo: &Repo) -> Result<Vec<String>, ToolError> {
    Ok(status_rows(repo)?
        .into_iter()
        .filter(|(_, row)| !matches!(row.index, ' ' | '?'))
        .map(|(path, _)| path)
        .collect())
}

#[derive(Deserialize)]
struct DiffArgs {
    path: Option<String>,
    #[serde(default)]
    staged: bool,
}

impl Tool for Diff {
    fn spec(&self) -> ToolSpec {
        ToolSpec::read(
            GIT_DIFF,
            "The unified diff of uncommitted changes: work tree against the index, or with \
             staged: true the index against HEAD (what git_commit would record). path limits \
             it to one file or folder.",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "A file or folder, relative to the agent root."},
                    "staged": {"type": "boolean", "description": "Diff the index against HEAD instead."}
                },
                "additionalProperties": false
            }),
        )
    }

    fn run(&self, ctx: &ToolContext<'_>, args: Value) -> Result<Value, ToolError> {
        let args: DiffArgs = parse_args(args)?;
        Repo::open(ctx.workspace.root())?;
        let path = match &args.path {
            Some(p) => Some(super::root_relative(ctx, p)?),
            None => None,
        };
        let mut argv = vec!["diff", "--no-color", "--no-ext-diff", "--no-textconv"];
        if args.staged {
            argv.push("--cached");
        }
        let spec;
        argv.push("--");
        match &path {
            Some(p) if !p.is_empty() => {
                spec = format!(":(literal){p}");
                argv.push(&spec);
            }
            // Only what lies under the agent root.
            _ => argv.push("."),
        }
        let ran = git_cli(ctx, &argv, Vec::new(), false)?;
        if ran.exit_code != Some(0) {
            return Err(failed(&argv, &ran));
        }
        let cap = ctx.limits.max_read_bytes_default;
        let patch = ran.stdout_text();
        let truncated = ran.truncated || patch.len() > cap;
        let mut cut = cap.min(patch.len());
        while !patch.is_char_boundary(cut) {
            cut -= 1;
        }
        Ok(json!({ "patch": &patch[..cut], "truncated": truncated }))
    }
}

#[derive(Deserialize)]
struct LogArgs {
    limit: Option<usize>,
    path: Option<String>,
}

impl Tool for Log {
    fn spec(&self) -> ToolSpec {
        ToolSpec::read(
            GIT_LOG,
            "Recent commits reachable from HEAD, newest first: id, author, date, subject. \
             path keeps only commits that changed that file or folder.",
            json!({
                "type": "object",
                "properties": {
                    "limit": {"type": "integer", "minimum": 1, "description": "Most commits returned (default 20, at most 200)."},
                    "path": {"type": "string", "description": "A file or folder, relative to the agent root."}
                },
                "additionalProperties": false
            }),
        )
    }

    fn run(&self, ctx: &ToolContext<'_>, args: Value) -> Result<Value, ToolError> {
        let args: LogArgs = parse_args(args)?;
        let limit = bounded(args.limit, 20, 200);
        let mut repo = Repo::open(ctx.workspace.root())?;
        let path = match &args.path {
            Some(p) => Some(format!("{}{}", repo.prefix, super::root_relative(ctx, p)?)),
            None => None,
        };
        repo.repo.object_cache_size_if_unset(8 * 1024 * 1024);
        let r = &repo.repo;
        let head = r
            .head()
            .map_err(git_error)?
            .try_into_peeled_id()
            .map_err(git_error)?;
        let Some(head) = head else {
            return Ok(json!({ "commits": [], "note": "no commits yet" }));
        };
        let walk = r
            .rev_walk([head])
            .sorting(gix::revision::walk::Sorting::ByCommitTime(
                gix::traverse::commit::simple::CommitTimeOrder::NewestFirst,
            ))
            .all()
            .map_err(git_error)?;
        let mut commits = Vec::new();
        for info in walk.take(MAX_LOG_SCAN) {
            let info = info.map_err(git_error)?;
            let commit = info.object().map_err(git_error)?;
            if let Some(p) = &path
                && !touches(r, &commit, p)?
            {
                continue;
            }
            let author = commit.author().map_err(git_error)?;
            let date = author
                .time()
                .map_err(git_error)?
                .format_or_unix(gix::date::time::format::ISO8601_STRICT);
            let subject = commit.message().map_err(git_error)?.summary().to_string();
            commits.push(json!({
                "id": info.id.to_string(),
                "author": format!("{} <{}>", author.name, author.email),
                "date": date,
                "subject": subject,
            }));
            if commits.len() >= limit {
                break;
            }
        }
        Ok(json!({ "commits": commits }))
    }
}

/// Whether `commit` changed `path` against each of its parents (a root
/// commit: whether it has the path).
fn touches(r: &gix::Repository, commit: &gix::Commit<'_>, path: &str) -> Result<bool, ToolError> {
    let entry = |c: &gix::Commit<'_>| -> Result<Option<gix::ObjectId>, ToolError> {
        let tree = c.tree().map_err(git_error)?;
        Ok(tree
            .lookup_entry_by_path(path)
            .map_err(git_error)?
            .map(|e| e.object_id()))
    };
    let mine = entry(commit)?;
    let mut parents = 0;
    for id in commit.parent_ids() {
        parents += 1;
        let Ok(parent) = r.find_commit(id) else {
            return Ok(true);
        };
        if entry(&parent)? == mine {
            return Ok(false);
        }
    }
    Ok(parents > 0 || mine.is_some())
}

impl Tool for Branch {
    fn spec(&self) -> ToolSpec {
        ToolSpec::read(
            GIT_BRANCH,
            "The current branch (null when HEAD is detached) and every local branch.",
            no_args(),
        )
    }

    fn run(&self, ctx: &ToolContext<'_>, _: Value) -> Result<Value, ToolError> {
        let repo = Repo::open(ctx.workspace.root())?;
        let (current, _) = repo.head()?;
        let refs = repo.repo.references().map_err(git_error)?;
        let mut branches = Vec::new();
        for reference in refs.local_branches().map_err(git_error)? {
            let reference = reference.map_err(git_error)?;
            branches.push(reference.name().shorten().to_string());
        }
        branches.sort();
        Ok(json!({ "current": current, "branches": branches }))
    }
}
