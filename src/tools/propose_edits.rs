//! `propose_edits {edits: [...]}`: the model's way to change files. It never
//! writes: the agent loop validates the edits and turns them into hunks the
//! user reviews. Run directly, it refuses.

use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolSpec};
use crate::protocol::{Mode, Tier};

pub const PROPOSE_EDITS: &str = "propose_edits";

pub struct ProposeEdits;

impl Tool for ProposeEdits {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: PROPOSE_EDITS,
            description: "Propose changes to files. Nothing is written: the user reviews every hunk \
                and applies the ones they accept. Line numbers are 1-based and inclusive and refer \
                to the file as it is now (read it first). replace: lines start_line..end_line become \
                new_text. insert: new_text goes before start_line (total_lines + 1 appends). delete: \
                lines start_line..end_line are removed. create: a new file with new_text. Give \
                old_text (the current text of the lines) so a moved region is still found. The \
                result lists the hunk ids, or says which edit is wrong and why.",
            schema: json!({
                "type": "object",
                "properties": {
                    "edits": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "properties": {
                                "file_path": {"type": "string", "minLength": 1, "description": "Path relative to the agent root."},
                                "operation": {"type": "string", "enum": ["replace", "insert", "delete", "create"]},
                                "start_line": {"type": "integer", "minimum": 0},
                                "end_line": {"type": "integer", "minimum": 0},
                                "old_text": {"type": "string", "description": "Current text of lines start_line..end_line."},
                                "new_text": {"type": "string", "description": "Replacement, inserted text, or the new file's content."},
                                "rationale": {"type": "string", "description": "Why, in one sentence; shown to the user."}
                            },
                            "required": ["file_path", "operation"],
                            "additionalProperties": false
                        }
                    }
                },
                "required": ["edits"],
                "additionalProperties": false
            }),
            tier: Tier::Write,
            modes: vec![Mode::Agent],
        }
    }

    fn run(&self, _: &ToolContext<'_>, _: Value) -> Result<Value, ToolError> {
        Err(ToolError::NeedsJob(PROPOSE_EDITS.to_string()))
    }
}
