//! `list_scopes {}`: the folders tools can reach: the agent root (`@root`)
//! and the ones added beside it, each with its id, folder and access.

use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolSpec};

pub const LIST_SCOPES: &str = "list_scopes";

pub struct ListScopes;

impl Tool for ListScopes {
    fn spec(&self) -> ToolSpec {
        ToolSpec::read(
            LIST_SCOPES,
            "List the folders the tools can reach: the agent root (id \"root\"; plain paths mean it) \
             and the folders added beside it, reached as \"@<id>/path\". Each has its folder on disk \
             and its access (read_only: nothing there may be edited; read_write).",
            json!({
                "type": "object",
                "properties": {},
                "additionalProperties": false
            }),
        )
    }

    fn run(&self, ctx: &ToolContext<'_>, _: Value) -> Result<Value, ToolError> {
        let scopes: Vec<Value> = ctx
            .workspace
            .scopes()
            .iter()
            .map(|s| {
                json!({
                    "id": s.to_string(),
                    "path": s.root.display().to_string(),
                    "access": s.access.as_str(),
                    "primary": s.primary(),
                })
            })
            .collect();
        Ok(json!({ "scopes": scopes }))
    }
}
