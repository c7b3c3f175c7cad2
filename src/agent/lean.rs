//! The lean request for small context windows (issue 30): below
//! `LEAN_WINDOW` tokens the system prompt is a few sentences and each tool
//! is its name, one line and its schema without the property texts or the
//! rarely needed optional arguments, so an agent-mode request fits a
//! 2,048-token window with room for the work. 8,192 tokens (also the
//! window assumed when nothing says otherwise) and more keep the full
//! texts, unchanged.

use serde_json::Value;

use crate::llm::ToolDef;

/// Windows smaller than this get the lean request.
pub const LEAN_WINDOW: u32 = 8192;

/// Whether a window of `tokens` gets the lean request.
pub fn is_lean(tokens: u32) -> bool {
    tokens < LEAN_WINDOW
}

/// One line for each built-in tool (others: their first sentence).
fn brief(name: &str) -> Option<&'static str> {
    Some(match name {
        "list_files" => "List project files; prefix and glob narrow it.",
        "read_file" => "Read a file, or lines start_line..end_line of it.",
        "search_project" => "Search the project's files for text (regex: true for a regex).",
        "list_scopes" => "List the folders beside the project the tools reach.",
        "clarify_user" => "Ask the user one short question.",
        "propose_edits" => {
            "Propose edits for the user's review (read the file first). Lines are 1-based, \
             inclusive; insert goes before start_line; old_text: those lines now; new_text: \
             the whole new text."
        }
        "run_command" => "Run one program (no shell) after the user approves it.",
        _ => return None,
    })
}

/// Optional arguments a small window's request leaves out (the tools
/// still take them).
fn rarely_needed(tool: &str) -> &'static [&'static str] {
    match tool {
        "list_files" => &["limit"],
        "read_file" => &["max_bytes"],
        "search_project" => &["limit", "case_sensitive"],
        "run_command" => &["timeout_secs", "cwd"],
        "propose_edits" => &["rationale"],
        _ => &[],
    }
}

/// `schema` without the properties named in `drop` (top level and in an
/// array's items).
fn without(mut schema: Value, drop: &[&str]) -> Value {
    if let Some(props) = schema["properties"].as_object_mut() {
        for name in drop {
            props.remove(*name);
        }
        for p in props.values_mut() {
            if p["items"].is_object() {
                p["items"] = without(p["items"].take(), drop);
            }
        }
    }
    schema
}

/// The first sentence of `text`, at most 100 characters.
fn first_sentence(text: &str) -> String {
    let end = text.find(". ").map_or(text.len(), |i| i + 1);
    let sentence = &text[..end];
    if sentence.chars().count() <= 100 {
        return sentence.to_string();
    }
    let cut: String = sentence.chars().take(99).collect();
    format!("{cut}…")
}

/// `schema` without what only explains or polices it (descriptions,
/// examples, titles, length and extra-property rules: the arguments are
/// still checked against the full schema).
fn strip(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| {
                    !matches!(
                        k.as_str(),
                        "description"
                            | "examples"
                            | "title"
                            | "additionalProperties"
                            | "minLength"
                            | "minItems"
                            | "minimum"
                    )
                })
                .map(|(k, v)| (k.clone(), strip(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strip).collect()),
        other => other.clone(),
    }
}

/// `tools` as the lean request offers them.
pub fn lean_tools(tools: Vec<ToolDef>) -> Vec<ToolDef> {
    tools
        .into_iter()
        .map(|t| ToolDef {
            description: brief(&t.name)
                .map_or_else(|| first_sentence(&t.description), str::to_string),
            parameters: without(strip(&t.parameters), rarely_needed(&t.name)),
            name: t.name,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schemas_lose_their_texts_not_their_shape() {
        let schema = json!({"type": "object", "description": "x", "additionalProperties": false,
            "properties": {
            "path": {"type": "string", "description": "where", "minLength": 1},
            "n": {"type": "integer", "minimum": 1, "examples": [3]}},
            "required": ["path"]});
        assert_eq!(
            strip(&schema),
            json!({"type": "object", "properties": {"path": {"type": "string"},
                "n": {"type": "integer"}}, "required": ["path"]})
        );
        let edits = json!({"type": "object", "properties": {"edits": {"type": "array",
            "items": {"type": "object", "properties": {"file_path": {}, "rationale": {}}}}}});
        assert_eq!(
            without(edits, &["rationale"]),
            json!({"type": "object", "properties": {"edits": {"type": "array",
                "items": {"type": "object", "properties": {"file_path": {}}}}}})
        );
        assert_eq!(first_sentence("Does a thing. Then more."), "Does a thing.");
        assert!(first_sentence(&"word ".repeat(50)).chars().count() <= 100);
    }
}
