//! `file_outline {path}`: a file's definitions, nested, with line ranges.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{
    Tool, ToolContext, ToolError, ToolSpec, index_path, index_view, not_found, parse_args,
};

pub const FILE_OUTLINE: &str = "file_outline";

pub struct FileOutline;

#[derive(Deserialize)]
struct Args {
    path: String,
}

impl Tool for FileOutline {
    fn spec(&self) -> ToolSpec {
        ToolSpec::read(
            FILE_OUTLINE,
            "A file's definitions, nested, with line ranges and signatures.",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "minLength": 1, "description": "Relative to the agent root."}
                },
                "required": ["path"],
                "additionalProperties": false
            }),
        )
    }

    fn run(&self, ctx: &ToolContext<'_>, args: Value) -> Result<Value, ToolError> {
        let args: Args = parse_args(args)?;
        let rel = index_path(ctx, "path", &args.path)?;
        let view = index_view(ctx)?;
        let Some(doc) = view.find(&rel) else {
            let resolved = ctx.workspace.resolve(&args.path)?;
            return match ctx.workspace.metadata(&resolved) {
                Ok(m) if m.is_dir() => Err(ToolError::IsADirectory { path: rel }),
                Ok(_) => Err(ToolError::Index(format!(
                    "`{rel}` is not in the code index (ignored, excluded or not a regular file); use read_file"
                ))),
                Err(_) => Err(not_found(ctx, &resolved)),
            };
        };
        let outline = crate::index::file_outline(&view, doc);
        let mut out = json!(outline);
        if view.doc(doc).lang.is_none() {
            out["note"] = json!("no symbols are read from this kind of file");
        }
        Ok(out)
    }
}
