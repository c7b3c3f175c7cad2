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
            "Where functions, methods, classes, types and modules are defined, by name: exact \
                first, then case-insensitive, prefix, substring and fuzzy matches.",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 1, "description": "The name or part of it."},
                    "kind": {"type": "string", "description": "Only this kind: function, method, class, interface, type …"},
                    "exact": {"type": "boolean", "description": "Only this exact name."},
                    "limit": {"type": "integer", "minimum": 1, "description": "Default 20."}
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
