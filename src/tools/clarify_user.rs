//! `clarify_user {question}`: ask the user one question. The agent loop
//! intercepts it (the job waits for the answer); run directly, it refuses.

use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolSpec};

pub const CLARIFY_USER: &str = "clarify_user";

pub struct ClarifyUser;

impl Tool for ClarifyUser {
    fn spec(&self) -> ToolSpec {
        ToolSpec::read(
            CLARIFY_USER,
            "Ask the user one short question when the request is ambiguous in a way that changes \
             the result. The job waits for the answer, which comes back as {\"answer\": ...}; the \
             answer \"no_user_answer\" means nobody answered: then make a sensible choice and say so.",
            json!({
                "type": "object",
                "properties": {
                    "question": {"type": "string", "minLength": 1, "description": "The question, in one or two sentences."}
                },
                "required": ["question"],
                "additionalProperties": false
            }),
        )
    }

    fn run(&self, _: &ToolContext<'_>, _: Value) -> Result<Value, ToolError> {
        Err(ToolError::NeedsJob(CLARIFY_USER.to_string()))
    }
}
