//! `repo_map {focus_paths?, focus_symbols?, max_tokens?}`: the project's
//! most relevant definitions as signature lines, within a token budget,
//! ranked by the code index's file graph (personalized for the focus).

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolSpec, index_path, index_view, parse_args};

pub const REPO_MAP: &str = "repo_map";

pub struct RepoMap;

#[derive(Deserialize)]
struct Args {
    #[serde(default)]
    focus_paths: Vec<String>,
    #[serde(default)]
    focus_symbols: Vec<String>,
    max_tokens: Option<usize>,
}

impl Tool for RepoMap {
    fn spec(&self) -> ToolSpec {
        ToolSpec::read(
            REPO_MAP,
            "The project's most central definitions as `line│ signature`, within max_tokens; \
                with focus_paths or focus_symbols, those around them (the focus files left out).",
            json!({
                "type": "object",
                "properties": {
                    "focus_paths": {"type": "array", "items": {"type": "string"}, "description": "Files to map around."},
                    "focus_symbols": {"type": "array", "items": {"type": "string"}, "description": "Names to map around."},
                    "max_tokens": {"type": "integer", "minimum": 64, "maximum": 16384, "description": "Default 1024."}
                },
                "additionalProperties": false
            }),
        )
    }

    fn run(&self, ctx: &ToolContext<'_>, args: Value) -> Result<Value, ToolError> {
        let args: Args = parse_args(args)?;
        let paths = args
            .focus_paths
            .iter()
            .map(|p| index_path(ctx, "focus_paths", p))
            .collect::<Result<Vec<_>, _>>()?;
        let view = index_view(ctx)?;
        let map = crate::index::repo_map(
            &view,
            &paths,
            &args.focus_symbols,
            args.max_tokens.unwrap_or(1024),
        );
        Ok(json!(map))
    }
}
