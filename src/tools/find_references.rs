//! `find_references {name, path_glob?, limit?}`: lines that use a name as
//! a whole word, in the files the code index says refer to it or hold it.
//! Approximate: by name, not by type.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{
    Tool, ToolContext, ToolError, ToolSpec, bounded, index_view, named_glob_filter, parse_args,
};

pub const FIND_REFERENCES: &str = "find_references";

pub struct FindReferences;

#[derive(Deserialize)]
struct Args {
    name: String,
    path_glob: Option<String>,
    limit: Option<usize>,
}

impl Tool for FindReferences {
    fn spec(&self) -> ToolSpec {
        ToolSpec::read(
            FIND_REFERENCES,
            "Lines that use a name as a whole word, each with the symbol it is in, source first; \
                approximate (by name, not type); definitions left out.",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 1, "description": "The identifier."},
                    "path_glob": {"type": "string", "description": "Only paths matching this glob."},
                    "limit": {"type": "integer", "minimum": 1, "description": "Default 50."}
                },
                "required": ["name"],
                "additionalProperties": false
            }),
        )
    }

    fn run(&self, ctx: &ToolContext<'_>, args: Value) -> Result<Value, ToolError> {
        let args: Args = parse_args(args)?;
        let filter = named_glob_filter("path_glob", args.path_glob.as_deref())?;
        let view = index_view(ctx)?;
        let limit = bounded(args.limit, 50, ctx.limits.max_search_results_cap.max(200));
        let (references, truncated) = crate::index::find_references(
            ctx.workspace,
            &view,
            args.name.trim(),
            filter.as_ref(),
            limit,
        );
        Ok(json!({"references": references, "approximate": true, "truncated": truncated}))
    }
}
