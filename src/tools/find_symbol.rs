//! `find_symbol {name, kind?, exact?, limit?}`: definitions by name, from
//! the code index's tree-sitter symbols.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolSpec, bounded, index_view, parse_args};

pub const FIND_SYMBOL: &str = "find_symbol";

pub struct FindSymbol;

#[derive(Deserialize)]
struct Args {
    name: String,
    kind: Option<String>,
    #[serde(default)]
    exact: bool,
    limit: Option<usize>,
}

impl Tool for FindSymbol {
    fn spec(&self) -> ToolSpec {
        ToolSpec::read(
            FIND_SYMBOL,
            "Find where functions, methods, classes, types and modules are defined, by name: the \
                exact name first, then case-insensitive, prefix, substring and fuzzy matches. Each \
                has its kind, path, line range, signature and container.",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 1, "description": "The name, or part of it."},
                    "kind": {"type": "string", "description": "Only this kind: function, method, class, interface, module, type, macro, constant …"},
                    "exact": {"type": "boolean", "description": "Only this exact name (case-sensitive). Default false."},
                    "limit": {"type": "integer", "minimum": 1, "description": "Definitions to return (default 20, capped by the configuration)."}
                },
                "required": ["name"],
                "additionalProperties": false
            }),
        )
    }

    fn run(&self, ctx: &ToolContext<'_>, args: Value) -> Result<Value, ToolError> {
        let args: Args = parse_args(args)?;
        let view = index_view(ctx)?;
        let limit = bounded(args.limit, 20, ctx.limits.max_search_results_cap);
        let (symbols, truncated) =
            crate::index::find_symbol(&view, &args.name, args.kind.as_deref(), args.exact, limit);
        Ok(json!({"symbols": symbols, "truncated": truncated}))
    }
}
