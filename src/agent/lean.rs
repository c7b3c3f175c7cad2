//! The lean request for small context windows (issue 30): below
//! `LEAN_WINDOW` tokens the system prompt is a few sentences and each tool
//! is its name, one line and its schema without the property texts or the
//! rarely needed optional arguments, so an agent-mode request fits a
//! 2,048-token window with room for the work. 8,192 tokens (also the
//! window assumed when nothing says otherwise) and more keep the full
//! texts, unchanged.

use serde_json::Value;

use crate::llm::{ToolCall, ToolDef};

/// The one tool that stands for the others in a lean request.
pub const MORE_TOOLS: &str = "more_tools";

/// The tools a lean request offers one by one; the rest (git, MCP,
/// scopes) are listed by name in the prompt and called via `more_tools`.
const CORE: &[&str] = &[
    "list_files",
    "read_file",
    "search_project",
    "code_search",
    "clarify_user",
    "propose_edits",
    "run_command",
];

/// The code index's lookups beside `code_search`, named on one line.
const INDEX_LOOKUPS: &[&str] = &["find_symbol", "find_references", "file_outline", "repo_map"];

/// Windows smaller than this get the lean request.
pub const LEAN_WINDOW: u32 = 8192;

/// Whether a window of `tokens` gets the lean request.
pub fn is_lean(tokens: u32) -> bool {
    tokens < LEAN_WINDOW
}

/// One line for each built-in tool (others: their first sentence).
fn brief(name: &str) -> Option<&'static str> {
    Some(match name {
        "list_files" => "List project files (under prefix).",
        "read_file" => "Read a file (or lines start_line..end_line).",
        "search_project" => "Search files for text (regex: true for a regex).",
        "code_search" => "Find the files for a question or a name, best first.",
        "list_scopes" => "List the folders beside the project the tools reach.",
        "clarify_user" => "Ask the user one short question.",
        "propose_edits" => {
            "Propose edits for review. Lines 1-based, inclusive; insert \
             goes before start_line; old_text: those lines; new_text: the full new text."
        }
        "run_command" => "Run a program (no shell) once the user approves.",
        _ => return None,
    })
}

/// Optional arguments a small window's request leaves out (the tools
/// still take them).
fn rarely_needed(tool: &str) -> &'static [&'static str] {
    match tool {
        "list_files" => &["limit", "glob"],
        "read_file" => &["max_bytes"],
        "search_project" => &["limit", "case_sensitive", "glob"],
        "code_search" => &["limit", "mode", "path_glob"],
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

/// A listed tool's summary: its first sentence up to the first colon or
/// parenthesis, at most 60 characters.
fn summary(description: &str) -> String {
    let first = first_sentence(description);
    let end = first.find([':', '(']).unwrap_or(first.len());
    let cut: String = first[..end].trim_end().chars().take(60).collect();
    cut.trim_end_matches('.').to_string()
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

/// `tools` as the lean request offers them, and the prompt's list of the
/// others (empty when there are none): each by name, its arguments as a
/// signature and one line, called through `more_tools`.
pub fn lean_tools(tools: Vec<ToolDef>) -> (Vec<ToolDef>, String) {
    let (core, more): (Vec<ToolDef>, Vec<ToolDef>) = tools
        .into_iter()
        .partition(|t| CORE.contains(&t.name.as_str()));
    let mut offered: Vec<ToolDef> = core
        .into_iter()
        .map(|t| ToolDef {
            description: brief(&t.name)
                .map_or_else(|| first_sentence(&t.description), str::to_string),
            parameters: without(strip(&t.parameters), rarely_needed(&t.name)),
            name: t.name,
        })
        .collect();
    if more.is_empty() {
        return (offered, String::new());
    }
    let mut listed = format!(
        "More tools: call {MORE_TOOLS} with {{\"tool\": <name>, \"arguments\": {{...}}}}.\n"
    );
    // The code index's lookups share one line, as do the git tools (their
    // names say what they do).
    let index = |n: &str| INDEX_LOOKUPS.contains(&n);
    let git = |n: &str| n.starts_with("git_");
    for (member, line) in [
        (
            &index as &dyn Fn(&str) -> bool,
            "definitions, uses, outlines, a map",
        ),
        (&git, "git, as named"),
    ] {
        let names: Vec<&str> = more
            .iter()
            .map(|t| t.name.as_str())
            .filter(|n| member(n))
            .collect();
        if !names.is_empty() {
            listed.push_str(&format!("- {}: {line}\n", names.join(", ")));
        }
    }
    for t in more.iter().filter(|t| !index(&t.name) && !git(&t.name)) {
        listed.push_str(&format!("- {}: {}\n", t.name, summary(&t.description)));
    }
    offered.push(ToolDef {
        name: MORE_TOOLS.to_string(),
        description: "Call a tool the prompt lists.".to_string(),
        parameters: serde_json::json!({"type": "object", "properties": {
            "tool": {"type": "string"}, "arguments": {"type": "object"}}, "required": ["tool"]}),
    });
    (offered, listed)
}

/// A `more_tools` call as the tool it names (others as they are).
pub fn unwrap(call: &ToolCall) -> ToolCall {
    match (call.name == MORE_TOOLS, call.arguments["tool"].as_str()) {
        (true, Some(name)) => ToolCall {
            tool_call_id: call.tool_call_id.clone(),
            name: name.to_string(),
            arguments: match &call.arguments["arguments"] {
                Value::Null => Value::Object(serde_json::Map::new()),
                args => args.clone(),
            },
        },
        _ => call.clone(),
    }
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
        let call = ToolCall {
            tool_call_id: "c1".into(),
            name: MORE_TOOLS.into(),
            arguments: json!({"tool": "git_status"}),
        };
        let inner = unwrap(&call);
        assert_eq!(
            (inner.name.as_str(), inner.arguments.clone()),
            ("git_status", json!({}))
        );
        let tools = vec![
            ToolDef {
                name: "read_file".into(),
                description: "x".into(),
                parameters: json!({}),
            },
            ToolDef {
                name: "git_log".into(),
                description: "Show commits. More.".into(),
                parameters: json!({"type": "object", "properties": {"limit": {"type": "integer"}}}),
            },
        ];
        let (offered, listed) = lean_tools(tools);
        let names: Vec<&str> = offered.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["read_file", MORE_TOOLS]);
        assert!(listed.contains("- git_log: git, as named\n"), "{listed}");
        let tools = vec![ToolDef {
            name: "mcp__fs__read".into(),
            description: "Read a file: whole. More.".into(),
            parameters: json!({}),
        }];
        let (_, listed) = lean_tools(tools);
        assert!(
            listed.contains("- mcp__fs__read: Read a file\n"),
            "{listed}"
        );
        assert_eq!(
            summary("The git status of the project: branch (null when)"),
            "The git status of the project"
        );
        assert!(first_sentence(&"word ".repeat(50)).chars().count() <= 100);
    }
}
