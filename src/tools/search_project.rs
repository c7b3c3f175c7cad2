//! `search_project {query, glob?, limit?, regex?, case_sensitive?}`: matches
//! across the project as snippets with their line ranges.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolSpec, bounded, glob_filter, parse_args};
use crate::workspace::{SearchOptions, SkipFile, search};

/// Lines shown before and after each match.
const CONTEXT_LINES: usize = 2;

pub struct SearchProject;

#[derive(Deserialize)]
struct Args {
    query: String,
    glob: Option<String>,
    limit: Option<usize>,
    #[serde(default)]
    regex: bool,
    case_sensitive: Option<bool>,
}

impl Tool for SearchProject {
    fn spec(&self) -> ToolSpec {
        ToolSpec::read(
            "search_project",
            "Search the text of every project file (skipping .gitignored, hidden and \
                binary files). Returns snippets with two lines of context around each match, in \
                path order, each with its start_line and end_line.",
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1, "description": "Text to find; a regular expression when `regex` is true."},
                    "glob": {"type": "string", "description": "Only files matching this glob: \"*.rs\" matches file names at any depth, \"src/**/*.rs\" whole paths."},
                    "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of snippets (capped by the configuration)."},
                    "regex": {"type": "boolean", "description": "Treat query as a regular expression (Rust regex syntax). Default false: literal text."},
                    "case_sensitive": {"type": "boolean", "description": "Default: case-insensitive unless the query contains an upper-case letter."}
                },
                "required": ["query"],
                "additionalProperties": false
            }),
        )
    }

    fn run(&self, ctx: &ToolContext<'_>, args: Value) -> Result<Value, ToolError> {
        let args: Args = parse_args(args)?;
        let limits = ctx.limits;
        let filter = glob_filter(args.glob.as_deref())?;
        let options = SearchOptions {
            query: &args.query,
            regex: args.regex,
            case_sensitive: args.case_sensitive,
            filter: filter.as_ref(),
            limit: bounded(
                args.limit,
                limits.max_search_results_default,
                limits.max_search_results_cap,
            ),
            context_lines: CONTEXT_LINES,
            max_snippet_lines: limits.max_search_snippet_lines,
            skip: None,
        };
        // A stored code index names the root's files that cannot match
        // (never building one for this: a search reads what it must).
        let skips = ctx
            .index
            .and_then(|index| index.search_skips(&args.query, args.regex));
        let skip = |rel: &str, meta: &std::fs::Metadata| {
            skips.as_ref().is_some_and(|s| s.skips(rel, meta))
        };
        // Every scope, the agent root's hits first, within one limit.
        let mut hits = Vec::new();
        let mut truncated = false;
        for start in ctx.workspace.scope_starts() {
            let left = options.limit - hits.len();
            if left == 0 {
                truncated = true;
                break;
            }
            let outcome = search(
                ctx.workspace,
                &start,
                &SearchOptions {
                    limit: left,
                    skip: (start.scope == 0).then_some(&skip as &SkipFile<'_>),
                    ..options
                },
            )
            .map_err(|e| {
                ToolError::invalid("query", format!("not a valid regular expression: {e}"))
            })?;
            hits.extend(outcome.hits);
            if outcome.truncated {
                truncated = true;
                break;
            }
        }
        let results: Vec<Value> = hits
            .into_iter()
            .map(|h| {
                json!({
                    "file_path": h.file_path,
                    "start_line": h.start_line,
                    "end_line": h.end_line,
                    "snippet": h.snippet,
                })
            })
            .collect();
        Ok(json!({"results": results, "truncated": truncated}))
    }
}
