//! `list_files {prefix?, glob?, limit?}`: what exists under the agent root.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolSpec, bounded, glob_filter, not_found, parse_args};
use crate::workspace::{ListOutcome, list, list_all};

pub const LIST_FILES: &str = "list_files";

pub struct ListFiles;

#[derive(Deserialize)]
struct Args {
    prefix: Option<String>,
    glob: Option<String>,
    limit: Option<usize>,
}

impl Tool for ListFiles {
    fn spec(&self) -> ToolSpec {
        ToolSpec::read(
            LIST_FILES,
            "List files and directories under the agent root and every other scope (or under `prefix`, e.g. \"src\" or \"@docs\"), \
                sorted by path, skipping .gitignored files and .git/. Each entry has path, size, \
                modified (RFC 3339) and kind (file, dir, symlink, other).",
            json!({
                "type": "object",
                "properties": {
                    "prefix": {"type": "string", "description": "Directory or path prefix relative to the agent root, e.g. \"src\" or \"src/ma\". Omit for the whole project."},
                    "glob": {"type": "string", "description": "Only entries matching this glob: \"*.rs\" matches file names at any depth, \"src/**/*.rs\" matches whole paths."},
                    "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of entries (capped by the configuration)."}
                },
                "additionalProperties": false
            }),
        )
    }

    fn run(&self, ctx: &ToolContext<'_>, args: Value) -> Result<Value, ToolError> {
        let args: Args = parse_args(args)?;
        let limits = ctx.limits;
        let limit = bounded(
            args.limit,
            limits.max_list_files_default,
            limits.max_list_files_cap,
        );
        let filter = glob_filter(args.glob.as_deref())?;
        let prefix = args.prefix.unwrap_or_default();
        if matches!(prefix.as_str(), "" | "." | "./") && ctx.workspace.scopes().len() > 1 {
            return Ok(listing(&list_all(ctx.workspace, filter.as_ref(), limit)));
        }
        let resolved = ctx.workspace.resolve(&prefix)?;
        let (start, name_prefix) = match ctx.workspace.metadata(&resolved) {
            Ok(_) => (resolved.clone(), None),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                // `src/ma` lists what starts with it inside `src/`.
                let scope = ctx.workspace.scope_of(&resolved);
                let parent = match resolved.inner.rsplit_once('/') {
                    Some((parent, _)) => scope.spell(parent),
                    None => scope.spell(""),
                };
                let parent = ctx.workspace.resolve(&parent)?;
                if prefix.ends_with('/')
                    || !ctx.workspace.metadata(&parent).is_ok_and(|m| m.is_dir())
                {
                    return Err(not_found(ctx, &resolved));
                }
                (parent, Some(resolved.rel.clone()))
            }
            Err(e) => return Err(ToolError::io(resolved.display(), e)),
        };
        let outcome = list(
            ctx.workspace,
            &start,
            name_prefix.as_deref(),
            filter.as_ref(),
            limit,
        );
        if outcome.entries.is_empty() && name_prefix.is_some() {
            return Err(not_found(ctx, &resolved));
        }
        Ok(listing(&outcome))
    }
}

fn listing(outcome: &ListOutcome) -> Value {
    let files: Vec<Value> = outcome
        .entries
        .iter()
        .map(|e| {
            json!({
                "path": e.path,
                "size": e.size,
                "modified": e.modified.map(|t| humantime::format_rfc3339_seconds(t).to_string()),
                "kind": e.kind,
            })
        })
        .collect();
    json!({"files": files, "truncated": outcome.truncated})
}
