//! `code_search {query, mode?, path_glob?, limit?}`: files of the project
//! ranked for a question in words, an identifier, a literal or a regex,
//! each with why it ranks and its best lines (the code index).

use serde::Deserialize;
use serde_json::{Value, json};

use super::{
    Tool, ToolContext, ToolError, ToolSpec, bounded, index_view, named_glob_filter, parse_args,
};
use crate::index::{Mode, SearchRequest, search};

pub const CODE_SEARCH: &str = "code_search";

pub struct CodeSearch;

#[derive(Deserialize)]
struct Args {
    query: String,
    mode: Option<String>,
    path_glob: Option<String>,
    limit: Option<usize>,
}

impl Tool for CodeSearch {
    fn spec(&self) -> ToolSpec {
        ToolSpec::read(
            CODE_SEARCH,
            "Files ranked for a question in words, an identifier, literal text or a regex, each \
                with why it ranks and its best lines. Use it before reading files one by one.",
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1, "description": "Words, an identifier, text or a regex."},
                    "mode": {"type": "string", "enum": ["auto", "text", "regex", "symbol"], "description": "auto (default); text: a literal; regex; symbol: files defining a name like it."},
                    "path_glob": {"type": "string", "description": "Only paths matching this glob."},
                    "limit": {"type": "integer", "minimum": 1, "description": "Files to return (default 10)."}
                },
                "required": ["query"],
                "additionalProperties": false
            }),
        )
    }

    fn run(&self, ctx: &ToolContext<'_>, args: Value) -> Result<Value, ToolError> {
        let args: Args = parse_args(args)?;
        let mode = match args.mode.as_deref().unwrap_or("auto") {
            "auto" => Mode::Auto,
            "text" => Mode::Text,
            "regex" => Mode::Regex,
            "symbol" => Mode::Symbol,
            other => {
                return Err(ToolError::invalid(
                    "mode",
                    format!("`{other}` is not a mode; use auto, text, regex or symbol"),
                ));
            }
        };
        let filter = named_glob_filter("path_glob", args.path_glob.as_deref())?;
        let view = index_view(ctx)?;
        let embedder = ctx.index.and_then(|i| i.embedder().ok().flatten());
        let request = SearchRequest {
            embedder: embedder.as_deref(),
            query: &args.query,
            mode,
            filter: filter.as_ref(),
            limit: bounded(args.limit, 10, ctx.limits.max_search_results_cap),
        };
        let (results, truncated) = search(ctx.workspace, &view, &request).map_err(|e| {
            ToolError::invalid("query", format!("not a valid regular expression: {e}"))
        })?;
        Ok(json!({
            "results": results,
            "truncated": truncated,
            "index": {"fresh": true, "files": view.indexed()},
        }))
    }
}
