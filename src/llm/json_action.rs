//! Text-protocol tool calling for models without native tool calls: renders the tool list and rules for the system prompt, and extracts the model's action (tool call, final answer, or invalid attempt) from its plain-text reply.
//!
//! The protocol: to call a tool the model replies with exactly one JSON object
//! `{"tool": "<name>", "arguments": {...}}`, optionally inside a ```` ```json ```` fence;
//! to finish it replies with plain text containing no such object.
//!
//! Extraction is lenient where it is safe: prose around the object is ignored, the keys
//! `tool_name`/`name` and `args`/`parameters`/`input` are accepted as aliases, a trailing
//! comma before `}` or `]` is tolerated, and `arguments` given as a JSON-encoded string
//! is decoded. When a reply holds several tool-call objects, the first valid one (fenced
//! blocks first, then bare objects in text order) is used and the rest are ignored.
#![deny(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Map, Value};

/// One tool as the prompt describes it.
pub struct PromptTool<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub parameters: &'a Value,
}

/// What the model did in one reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A tool call. `arguments` is always a JSON object (missing "arguments" → {}).
    Call { name: String, arguments: Value },
    /// No tool call: the reply is the final answer (trimmed).
    Final(String),
    /// The reply tried to call a tool but it cannot be used; the String says precisely
    /// what is wrong, written to be sent back to the model as a correction.
    Invalid(String),
}

/// One-sentence statement of the format, shared by the prompt and the correction.
const FORMAT_SENTENCE: &str = "To call a tool, reply with exactly one JSON object of the form \
{\"tool\": \"<tool name>\", \"arguments\": {...}} (optionally inside a ```json code block); \
to give your final answer, reply with plain text that contains no such object.";

/// Keys accepted for the tool name, in priority order (`name` only counts next to an
/// arguments key, see [`tool_value`]).
const TOOL_KEYS: [&str; 2] = ["tool", "tool_name"];
/// Keys accepted for the arguments, in priority order.
const ARG_KEYS: [&str; 4] = ["arguments", "args", "parameters", "input"];

/// Text to append to the system prompt: the protocol rules and every tool with its
/// name, description and JSON Schema of arguments (pretty-printed JSON). Deterministic.
pub fn render_tool_instructions(tools: &[PromptTool<'_>]) -> String {
    let mut out = String::from("# Tools\n\n");
    if tools.is_empty() {
        out.push_str("No tools are available. Reply with your final answer as plain text.\n");
        return out;
    }
    out.push_str("You can call the tools listed below by writing JSON in your reply.\n\n");
    out.push_str(FORMAT_SENTENCE);
    out.push_str("\n\nA tool call looks exactly like this:\n\n```json\n");
    out.push_str(
        "{\"tool\": \"<tool name>\", \"arguments\": {\"<argument>\": \"<value>\"}}\n```\n\n",
    );
    out.push_str("Rules:\n");
    for rule in [
        "Call at most one tool per reply. Write the JSON object once; you may add a short sentence before it.",
        "\"tool\" is the exact name of one of the tools below.",
        "\"arguments\" is a JSON object matching the tool's schema; use {} when the tool takes no arguments.",
        "Write strict JSON: double-quoted keys and strings (plain ASCII quotes), no comments, no trailing commas; escape newlines in strings as \\n.",
        "After a call, stop and wait: the tool's result arrives in the next message. Never write a tool's result yourself.",
        "When the task is done, reply with the final answer as plain text, without any tool-call object.",
    ] {
        out.push_str("- ");
        out.push_str(rule);
        out.push('\n');
    }
    out.push_str("\n## Available tools\n");
    for tool in tools {
        out.push_str("\n### ");
        out.push_str(tool.name);
        out.push('\n');
        let description = tool.description.trim();
        if !description.is_empty() {
            out.push_str(description);
            out.push('\n');
        }
        out.push_str("Arguments (JSON Schema):\n```json\n");
        out.push_str(&format!("{:#}", tool.parameters));
        out.push_str("\n```\n");
    }
    out
}

/// `render_tool_instructions` for a small window: the format in two
/// sentences and each tool on one line, its arguments as a signature
/// (`name {file_path: string, start_line?: integer}`).
pub fn render_brief_tool_instructions(tools: &[PromptTool<'_>]) -> String {
    let mut out = String::from(
        "# Tools\nTo call a tool, reply with only {\"tool\": \"<name>\", \"arguments\": {...}} \
         (strict JSON, one call per reply) and wait for its result. When done, reply \
         {\"answer\": \"<your answer>\"}.\n",
    );
    // One worked call: small models copy a shape far better than a rule.
    let shown = tools
        .iter()
        .find(|t| t.name == "read_file")
        .or_else(|| tools.first());
    if let Some(first) = shown {
        out.push_str(&format!(
            "Example: {{\"tool\": \"{}\", \"arguments\": {}}}\n",
            first.name,
            example_arguments(first.parameters)
        ));
    }
    for tool in tools {
        out.push_str(&format!(
            "- {} {}: {}\n",
            tool.name,
            signature(tool.parameters),
            tool.description.trim()
        ));
    }
    out
}

/// Arguments for a tool's example call: each required property with a
/// placeholder of its type.
fn example_arguments(schema: &Value) -> Value {
    let mut args = serde_json::Map::new();
    for name in schema["required"].as_array().into_iter().flatten() {
        let Some(name) = name.as_str() else { continue };
        let value = match schema["properties"][name]["type"].as_str() {
            Some("integer" | "number") => Value::from(1),
            Some("boolean") => Value::from(true),
            Some("array") => Value::Array(Vec::new()),
            Some("object") => Value::Object(serde_json::Map::new()),
            _ if name.contains("path") => Value::from("README.md"),
            _ => Value::from("..."),
        };
        args.insert(name.to_string(), value);
    }
    Value::Object(args)
}

/// A JSON Schema as a short signature: objects as `{a: type, b?: type}`
/// (`?`: optional), arrays as `[item]`, enums as `a|b`.
fn signature(schema: &Value) -> String {
    if let Some(options) = schema["enum"].as_array() {
        let names: Vec<String> = options
            .iter()
            .map(|o| o.as_str().map_or_else(|| o.to_string(), str::to_string))
            .collect();
        return names.join("|");
    }
    match schema["type"].as_str() {
        Some("object") | None if schema["properties"].is_object() => {
            let required: Vec<&str> = schema["required"]
                .as_array()
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let fields: Vec<String> = schema["properties"]
                .as_object()
                .map(|props| {
                    props
                        .iter()
                        .map(|(name, p)| {
                            let optional = if required.contains(&name.as_str()) {
                                ""
                            } else {
                                "?"
                            };
                            format!("{name}{optional}: {}", signature(p))
                        })
                        .collect()
                })
                .unwrap_or_default();
            format!("{{{}}}", fields.join(", "))
        }
        Some("array") => format!("[{}]", signature(&schema["items"])),
        Some(kind) => kind.to_string(),
        None => "any".to_string(),
    }
}

/// Extracts the action from a complete reply.
pub fn extract_action(reply: &str) -> Action {
    let trimmed = reply.trim();
    if trimmed.is_empty() {
        return Action::Invalid(
            "the reply was empty; it contained neither a tool call nor a final answer.".to_string(),
        );
    }
    let mut first_problem: Option<String> = None;
    for candidate in candidates(reply) {
        match classify(candidate, false) {
            Verdict::Call { name, arguments } => return Action::Call { name, arguments },
            Verdict::Problem(p) => {
                if first_problem.is_none() {
                    first_problem = Some(p);
                }
            }
            Verdict::NotCall => {}
        }
    }
    if let Some(problem) = first_problem {
        return Action::Invalid(problem);
    }
    // A reply made of nothing but a JSON object (fence lines aside) is an attempted call
    // even when it lacks a tool key or does not parse.
    let bare = strip_json_fence_lines(trimmed);
    let bare = bare.as_deref().map(str::trim).unwrap_or_default();
    if bare.starts_with('{') {
        match classify(bare, true) {
            Verdict::Call { name, arguments } => return Action::Call { name, arguments },
            Verdict::Problem(p) => return Action::Invalid(p),
            Verdict::NotCall => {
                return Action::Invalid(
                    "the reply is only a JSON object, but it has no \"tool\" key naming the tool to call."
                        .to_string(),
                );
            }
        }
    }
    Action::Final(trimmed.to_string())
}

/// The corrective user message sent after an Invalid reply (includes the problem and
/// restates the exact format in one or two sentences).
pub fn correction_message(problem: &str) -> String {
    format!(
        "Your previous reply could not be used: {}\n{}",
        problem.trim(),
        FORMAT_SENTENCE
    )
}

/// Result of looking at one candidate.
enum Verdict {
    Call {
        name: String,
        arguments: Value,
    },
    /// An attempted call that cannot be used; the text explains why.
    Problem(String),
    /// Not a tool call (ordinary text, code, or JSON without a tool key).
    NotCall,
}

/// All candidates in priority order: JSON-ish fenced blocks, then top-level `{...}` spans
/// (plus, if a `{` is never closed, the text from the outermost such brace to the end).
fn candidates(reply: &str) -> Vec<&str> {
    let mut out = fenced_blocks(reply);
    out.extend(object_spans(reply));
    out
}

/// Contents of fenced code blocks whose info string is empty or `json` (any case).
/// An unterminated block runs to the end of the reply.
fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    // (start of content, whether the block is json-ish)
    let mut open: Option<(usize, bool)> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let line_start = offset;
        offset += line.len();
        let t = line.trim();
        let Some(info) = t.strip_prefix("```") else {
            continue;
        };
        let info = info.trim_start_matches('`').trim();
        if open.is_none() && info.ends_with("```") {
            continue; // a one-line fence: the brace scan sees its contents
        }
        match open {
            Some((start, jsonish)) if info.is_empty() => {
                if jsonish {
                    out.push(&text[start..line_start]);
                }
                open = None;
            }
            Some(_) => {} // a fence line with an info string inside a block: content
            None => {
                let jsonish = info.is_empty() || info.eq_ignore_ascii_case("json");
                open = Some((offset, jsonish));
            }
        }
    }
    if let Some((start, true)) = open {
        out.push(&text[start..]);
    }
    out
}

/// Top-level balanced `{...}` spans in text order, found with a brace matcher that skips
/// braces inside JSON strings. Objects nested in an unclosed `{` are still reported (so a
/// stray brace in prose does not hide a real call), followed by the unclosed remainder.
fn object_spans(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut stack: Vec<usize> = Vec::new();
    let mut closed: Vec<(usize, usize)> = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'{' => stack.push(i),
            b'}' => {
                if let Some(start) = stack.pop() {
                    closed.push((start, i + 1));
                }
            }
            b'"' if !stack.is_empty() => in_string = true,
            _ => {}
        }
    }
    // Spans nest properly, so after sorting by start an outer span precedes its inner
    // ones; keep only spans not inside an earlier kept span.
    closed.sort_unstable();
    let mut out = Vec::new();
    let mut kept_end = 0;
    for (start, end) in closed {
        if start >= kept_end {
            out.push(&text[start..end]);
            kept_end = end;
        }
    }
    if let Some(&start) = stack.first() {
        out.push(&text[start..]);
    }
    out
}

/// Looks at one candidate. `whole_reply` marks the candidate as the entire reply, in
/// which case a parse failure is always an attempted call.
fn classify(candidate: &str, whole_reply: bool) -> Verdict {
    let text = candidate.trim();
    if !text.starts_with('{') {
        return Verdict::NotCall;
    }
    match parse_lenient(text) {
        Ok(Value::Object(map)) => classify_object(&map),
        Ok(_) => Verdict::NotCall,
        Err(err) => {
            if whole_reply || has_tool_key_token(text) {
                Verdict::Problem(parse_problem(text, &err))
            } else {
                Verdict::NotCall
            }
        }
    }
}

/// Parses strictly, then retries with trailing commas removed and line
/// breaks or tabs written raw inside strings escaped (small models write
/// code that way); on failure returns the strict parse error.
fn parse_lenient(text: &str) -> Result<Value, serde_json::Error> {
    serde_json::from_str(text).or_else(|err| {
        let escaped = escape_raw_controls(text);
        let text = escaped.as_deref().unwrap_or(text);
        let fixed = strip_trailing_commas(text);
        if escaped.is_none() && fixed.is_none() {
            return Err(err);
        }
        serde_json::from_str(fixed.as_deref().unwrap_or(text)).map_err(|_| err)
    })
}

/// Where a scan of JSON text stands: inside a string or not, and just
/// after a backslash in one.
#[derive(Default)]
struct Scan {
    in_string: bool,
    escaped: bool,
}

impl Scan {
    /// Moves past `c`.
    fn feed(&mut self, c: char) {
        if !self.in_string {
            self.in_string = c == '"';
        } else if self.escaped {
            self.escaped = false;
        } else if c == '\\' {
            self.escaped = true;
        } else if c == '"' {
            self.in_string = false;
        }
    }
}

/// The text with control characters inside strings escaped (a raw line
/// break becomes `\n`); None when there is none.
fn escape_raw_controls(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut scan = Scan::default();
    for c in text.chars() {
        if scan.in_string && !scan.escaped && c.is_control() && u32::from(c) < 0x20 {
            changed = true;
            match c {
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                other => out.push_str(&format!("\\u{:04x}", u32::from(other))),
            }
            continue;
        }
        scan.feed(c);
        out.push(c);
    }
    changed.then_some(out)
}

/// Removes commas (outside strings) followed only by whitespace and then `}` or `]`.
/// Returns None when there is none.
fn strip_trailing_commas(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut scan = Scan::default();
    for (i, c) in text.char_indices() {
        if !scan.in_string && c == ',' {
            let rest = text[i + 1..].trim_start();
            if rest.starts_with('}') || rest.starts_with(']') {
                changed = true;
                continue;
            }
        }
        scan.feed(c);
        out.push(c);
    }
    changed.then_some(out)
}

/// Whether the text has something shaped like a `tool`/`tool_name` key (quoted with
/// ASCII, single or typographic quotes, or bare) followed by a colon.
fn has_tool_key_token(text: &str) -> bool {
    const QUOTES: [char; 5] = ['"', '\'', '\u{201c}', '\u{201d}', '\u{2019}'];
    text.match_indices("tool").any(|(i, _)| {
        let before = text[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            return false;
        }
        let mut rest = &text[i + 4..];
        rest = rest.strip_prefix("_name").unwrap_or(rest);
        rest = rest.strip_prefix(QUOTES).unwrap_or(rest);
        rest.trim_start().starts_with(':')
    }) || text.contains("\"arguments\"")
}

/// The correction text for an attempted call that is not valid JSON.
fn parse_problem(text: &str, err: &serde_json::Error) -> String {
    let mut msg = format!("the tool call is not valid JSON ({err}).");
    if err.is_eof() {
        msg.push_str(
            " The JSON ends too early: it looks truncated or has unbalanced braces or quotes.",
        );
    }
    if text.contains(['\u{201c}', '\u{201d}', '\u{2018}', '\u{2019}']) {
        msg.push_str(" It contains typographic quotes (\u{201c} \u{201d} \u{2018} \u{2019}); JSON needs plain ASCII double quotes (\").");
    } else if text.contains('\'') && err.is_syntax() {
        msg.push_str(" JSON keys and strings need double quotes (\"), not single quotes.");
    }
    msg
}

/// The value naming the tool, if the object is shaped like a call. `name` only counts
/// when an arguments key is also present, so ordinary objects with a `name` field are
/// not mistaken for calls.
fn tool_value(map: &Map<String, Value>) -> Option<&Value> {
    TOOL_KEYS.iter().find_map(|k| map.get(*k)).or_else(|| {
        if ARG_KEYS.iter().any(|k| map.contains_key(*k)) {
            map.get("name")
        } else {
            None
        }
    })
}

fn classify_object(map: &Map<String, Value>) -> Verdict {
    let name = match tool_value(map) {
        None => return Verdict::NotCall,
        Some(Value::String(s)) if s.trim().is_empty() => {
            return Verdict::Problem(
                "the \"tool\" value is an empty string; it must be the exact name of one of the available tools."
                    .to_string(),
            );
        }
        Some(Value::String(s)) => s.trim().to_string(),
        Some(other) => {
            return Verdict::Problem(format!(
                "the \"tool\" value must be a string with the tool's name, but it is {}.",
                kind(other)
            ));
        }
    };
    let raw = ARG_KEYS.iter().find_map(|k| map.get(*k));
    let arguments = match raw {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(Value::Object(o)) => Value::Object(o.clone()),
        Some(Value::String(s)) if s.trim().is_empty() => Value::Object(Map::new()),
        Some(Value::String(s)) => match parse_lenient(s.trim()) {
            Ok(Value::Object(o)) => Value::Object(o),
            Ok(_) | Err(_) => {
                return Verdict::Problem(format!(
                    "`arguments` must be a JSON object (for tool \"{name}\"), but it is a string that does not contain a JSON object; write the object directly, not as a quoted string."
                ));
            }
        },
        Some(other) => {
            return Verdict::Problem(format!(
                "`arguments` must be a JSON object (for tool \"{name}\"), but it is {}; use {{}} when the tool takes no arguments.",
                kind(other)
            ));
        }
    };
    Verdict::Call { name, arguments }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The reply without its code-fence marker lines, or None if any fence is tagged with
/// a language other than JSON (such a reply is code, not an attempted call).
fn strip_json_fence_lines(text: &str) -> Option<String> {
    let mut kept = Vec::new();
    for line in text.lines() {
        match line.trim().strip_prefix("```") {
            Some(info) => {
                let info = info.trim_start_matches('`').trim();
                if !(info.is_empty() || info.eq_ignore_ascii_case("json")) {
                    return None;
                }
            }
            None => kept.push(line),
        }
    }
    Some(kept.join("\n"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    #[test]
    fn brief_instructions_are_a_signature_line_per_tool_and_one_example() {
        let schema = serde_json::json!({"type": "object", "properties": {
            "file_path": {"type": "string"}, "start_line": {"type": "integer"},
            "edits": {"type": "array", "items": {"type": "object", "properties": {
                "operation": {"type": "string", "enum": ["replace", "insert"]}},
                "required": ["operation"]}}},
            "required": ["file_path"]});
        let tools = [PromptTool {
            name: "read_file",
            description: "Read a file.",
            parameters: &schema,
        }];
        let text = render_brief_tool_instructions(&tools);
        assert!(
            text.contains(
                "- read_file {file_path: string, start_line?: integer, edits?: [{operation: replace|insert}]}: Read a file."
            ),
            "{text}"
        );
        assert!(
            text.contains(
                r#"Example: {"tool": "read_file", "arguments": {"file_path":"README.md"}}"#
            ),
            "{text}"
        );
    }

    use super::*;
    use serde_json::json;

    fn call(name: &str, arguments: Value) -> Action {
        Action::Call {
            name: name.to_string(),
            arguments,
        }
    }

    #[test]
    fn line_breaks_written_raw_inside_strings_are_read_as_escaped() {
        // Qwen2.5-Coder-1.5B's edit: arguments as a string whose code has
        // raw line breaks in it (and a tab, and a trailing comma).
        let inner =
            "{\"edits\":[{\"file_path\":\"sum.js\",\"new_text\":\"a {\n\treturn 0;\n}\"},]}";
        let reply = json!({"name": "propose_edits", "arguments": inner}).to_string();
        assert_eq!(
            extract_action(&reply),
            call(
                "propose_edits",
                json!({"edits": [{"file_path": "sum.js", "new_text": "a {\n\treturn 0;\n}"}]})
            )
        );
        // Raw breaks in a direct object too; breaks between keys stay as they are.
        let reply = "{\"tool\": \"x\",\n \"arguments\": {\"text\": \"one\ntwo\"}}";
        assert_eq!(
            extract_action(reply),
            call("x", json!({"text": "one\ntwo"}))
        );
    }

    fn invalid_text(a: Action) -> String {
        match a {
            Action::Invalid(s) => s,
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn bare_object_is_call() {
        let a = extract_action(r#"{"tool": "read_file", "arguments": {"path": "a.txt"}}"#);
        assert_eq!(a, call("read_file", json!({"path": "a.txt"})));
    }

    #[test]
    fn json_fence_is_call() {
        let a = extract_action("```json\n{\"tool\": \"ls\", \"arguments\": {\"dir\": \".\"}}\n```");
        assert_eq!(a, call("ls", json!({"dir": "."})));
    }

    #[test]
    fn uppercase_tag_trailing_spaces_and_plain_fence() {
        let a = extract_action("```JSON   \n{\"tool\": \"ls\"}\n```  \n");
        assert_eq!(a, call("ls", json!({})));
        let b = extract_action("Here:\n```\n{\"tool\": \"ls\", \"arguments\": {}}\n```\nDone.");
        assert_eq!(b, call("ls", json!({})));
    }

    #[test]
    fn unterminated_fence_at_end() {
        let a = extract_action(
            "Let me look.\n```json\n{\"tool\": \"grep\", \"arguments\": {\"q\": \"x\"}}\n",
        );
        assert_eq!(a, call("grep", json!({"q": "x"})));
    }

    #[test]
    fn prose_around_call_is_ignored() {
        let a = extract_action(
            "I will read the file first. {\"tool\": \"read_file\", \"arguments\": {\"path\": \"src/main.rs\"}} Then I'll fix it.",
        );
        assert_eq!(a, call("read_file", json!({"path": "src/main.rs"})));
    }

    #[test]
    fn braces_inside_strings_do_not_break_matching() {
        let reply =
            r#"Writing: {"tool": "write", "arguments": {"text": "fn f() { let s = \"}\"; }"}} ok"#;
        let a = extract_action(reply);
        assert_eq!(
            a,
            call("write", json!({"text": "fn f() { let s = \"}\"; }"}))
        );
    }

    #[test]
    fn missing_arguments_is_empty_object() {
        assert_eq!(extract_action(r#"{"tool": "pwd"}"#), call("pwd", json!({})));
        assert_eq!(
            extract_action(r#"{"tool": "pwd", "arguments": null}"#),
            call("pwd", json!({}))
        );
    }

    #[test]
    fn alias_keys_accepted() {
        assert_eq!(
            extract_action(r#"{"tool_name": "a", "args": {"x": 1}}"#),
            call("a", json!({"x": 1}))
        );
        assert_eq!(
            extract_action(r#"{"name": "b", "parameters": {"y": 2}}"#),
            call("b", json!({"y": 2}))
        );
        assert_eq!(
            extract_action(r#"{"tool": "c", "input": {"z": 3}}"#),
            call("c", json!({"z": 3}))
        );
    }

    #[test]
    fn name_without_arguments_key_is_not_a_call_in_prose() {
        let reply = "Your package.json should have {\"name\": \"demo\", \"version\": \"1.0.0\"} at the top.";
        assert_eq!(extract_action(reply), Action::Final(reply.to_string()));
    }

    #[test]
    fn arguments_as_json_string_is_decoded() {
        let a = extract_action(r#"{"tool": "run", "arguments": "{\"cmd\": \"ls -la\"}"}"#);
        assert_eq!(a, call("run", json!({"cmd": "ls -la"})));
    }

    #[test]
    fn arguments_not_object_is_invalid() {
        let msg = invalid_text(extract_action(r#"{"tool": "run", "arguments": ["ls"]}"#));
        assert!(
            msg.starts_with("`arguments` must be a JSON object"),
            "{msg}"
        );
        assert!(msg.contains("an array"), "{msg}");
        let msg = invalid_text(extract_action(r#"{"tool": "run", "arguments": "ls -la"}"#));
        assert!(
            msg.starts_with("`arguments` must be a JSON object"),
            "{msg}"
        );
        let msg = invalid_text(extract_action(r#"{"tool": "run", "arguments": 5}"#));
        assert!(msg.contains("a number"), "{msg}");
    }

    #[test]
    fn empty_tool_name_is_invalid() {
        let msg = invalid_text(extract_action(r#"{"tool": "  ", "arguments": {}}"#));
        assert!(msg.contains("empty string"), "{msg}");
    }

    #[test]
    fn non_string_tool_is_invalid() {
        let msg = invalid_text(extract_action(r#"{"tool": 42}"#));
        assert!(msg.contains("must be a string"), "{msg}");
    }

    #[test]
    fn tool_name_is_trimmed() {
        assert_eq!(extract_action(r#"{"tool": " ls "}"#), call("ls", json!({})));
    }

    #[test]
    fn first_of_several_calls_is_used() {
        let reply =
            "{\"tool\": \"a\", \"arguments\": {}}\nthen\n{\"tool\": \"b\", \"arguments\": {}}";
        assert_eq!(extract_action(reply), call("a", json!({})));
    }

    #[test]
    fn fenced_call_beats_earlier_bare_call() {
        let reply = "Not this {\"tool\": \"bare\"} but:\n```json\n{\"tool\": \"fenced\"}\n```";
        assert_eq!(extract_action(reply), call("fenced", json!({})));
    }

    #[test]
    fn trailing_commas_tolerated() {
        let a = extract_action("{\"tool\": \"ls\", \"arguments\": {\"dirs\": [\"a\", \"b\",],},}");
        assert_eq!(a, call("ls", json!({"dirs": ["a", "b"]})));
    }

    #[test]
    fn comma_inside_string_before_brace_is_kept() {
        let a = extract_action(r#"{"tool": "echo", "arguments": {"s": ",}"},}"#);
        assert_eq!(a, call("echo", json!({"s": ",}"})));
    }

    #[test]
    fn single_quotes_invalid_with_serde_message() {
        let msg = invalid_text(extract_action("{'tool': 'ls', 'arguments': {}}"));
        assert!(msg.contains("not valid JSON"), "{msg}");
        assert!(msg.contains("line 1 column"), "{msg}");
        assert!(msg.contains("single quotes"), "{msg}");
    }

    #[test]
    fn smart_quotes_not_fixed() {
        let msg = invalid_text(extract_action("{\u{201c}tool\u{201d}: \u{201c}ls\u{201d}}"));
        assert!(msg.contains("typographic quotes"), "{msg}");
    }

    #[test]
    fn truncated_call_is_invalid() {
        let msg = invalid_text(extract_action(
            "Sure.\n```json\n{\"tool\": \"read_file\", \"arguments\": {\"path\": \"a",
        ));
        assert!(msg.contains("EOF"), "{msg}");
        assert!(msg.contains("truncated"), "{msg}");
    }

    #[test]
    fn invalid_json_in_prose_with_tool_key_is_invalid() {
        let msg = invalid_text(extract_action(
            "Calling {\"tool\": \"ls\", \"arguments\": {dir: 1}} now",
        ));
        assert!(msg.contains("not valid JSON"), "{msg}");
    }

    #[test]
    fn example_object_in_final_answer_is_final() {
        let reply = "Set the config to {\"a\": 1} and restart.\n";
        assert_eq!(
            extract_action(reply),
            Action::Final(reply.trim().to_string())
        );
        let fenced = "The config:\n```json\n{\"a\": 1, \"b\": [1, 2]}\n```\nThat's all.";
        assert_eq!(extract_action(fenced), Action::Final(fenced.to_string()));
    }

    #[test]
    fn broken_example_json_in_prose_is_final() {
        let reply = "Example:\n```json\n{\"a\": 1, // comment\n}\n```\nDone.";
        assert_eq!(extract_action(reply), Action::Final(reply.to_string()));
    }

    #[test]
    fn only_object_without_tool_is_invalid() {
        let msg = invalid_text(extract_action("  {\"path\": \"a.txt\"}  "));
        assert!(msg.contains("\"tool\""), "{msg}");
        let msg = invalid_text(extract_action("```json\n{\"name\": \"read_file\"}\n```"));
        assert!(msg.contains("no \"tool\" key"), "{msg}");
    }

    #[test]
    fn only_broken_object_is_invalid() {
        let msg = invalid_text(extract_action("{path: \"a.txt\"}"));
        assert!(msg.contains("not valid JSON"), "{msg}");
    }

    #[test]
    fn empty_reply_is_invalid() {
        assert!(invalid_text(extract_action("")).starts_with("the reply was empty"));
        assert!(invalid_text(extract_action(" \n\t ")).starts_with("the reply was empty"));
    }

    #[test]
    fn plain_text_is_final_trimmed() {
        assert_eq!(
            extract_action("\n  All done: tests pass.  \n"),
            Action::Final("All done: tests pass.".into())
        );
    }

    #[test]
    fn code_with_braces_is_final() {
        let reply = "Fixed it:\n```rust\nfn main() { println!(\"{}\", 1); }\n```\nThe bug was an off-by-one.";
        assert_eq!(extract_action(reply), Action::Final(reply.to_string()));
    }

    #[test]
    fn one_line_fence_and_crlf() {
        let a = extract_action("Calling: ```json {\"tool\": \"ls\"}``` now");
        assert_eq!(a, call("ls", json!({})));
        let b = extract_action("```json\r\n{\"tool\": \"ls\",\r\n \"arguments\": {}}\r\n```\r\n");
        assert_eq!(b, call("ls", json!({})));
    }

    #[test]
    fn only_non_json_fence_with_object_is_final() {
        let reply = "```js\n{ a: 1 }\n```";
        assert_eq!(extract_action(reply), Action::Final(reply.to_string()));
    }

    #[test]
    fn stray_brace_in_prose_does_not_hide_call() {
        let reply = "Blocks open with { in Rust. {\"tool\": \"ls\", \"arguments\": {}}";
        assert_eq!(extract_action(reply), call("ls", json!({})));
    }

    #[test]
    fn valid_call_wins_over_earlier_broken_attempt() {
        let reply = "{'tool': 'ls'}\nSorry, properly:\n{\"tool\": \"ls\", \"arguments\": {}}";
        assert_eq!(extract_action(reply), call("ls", json!({})));
    }

    #[test]
    fn unicode_content_survives() {
        let a = extract_action("🙂 {\"tool\": \"write\", \"arguments\": {\"t\": \"café 🙂\"}} é");
        assert_eq!(a, call("write", json!({"t": "café 🙂"})));
    }

    #[test]
    fn extra_keys_ignored_and_order_preserved() {
        let a = extract_action(r#"{"thought": "x", "tool": "t", "arguments": {"b": 1, "a": 2}}"#);
        let Action::Call { arguments, .. } = a else {
            panic!("not a call")
        };
        assert_eq!(
            arguments.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["b", "a"]
        );
    }

    #[test]
    fn render_contains_rules_and_tools_and_is_deterministic() {
        let schema = json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]});
        let empty = json!({"type": "object", "properties": {}});
        let tools = [
            PromptTool {
                name: "read_file",
                description: "Read a file.\n",
                parameters: &schema,
            },
            PromptTool {
                name: "pwd",
                description: "",
                parameters: &empty,
            },
        ];
        let a = render_tool_instructions(&tools);
        assert_eq!(a, render_tool_instructions(&tools));
        assert!(a.contains("### read_file\nRead a file.\nArguments (JSON Schema):\n```json\n{\n  \"type\": \"object\""));
        assert!(a.contains("### pwd\nArguments"));
        assert!(a.contains("{\"tool\": \"<tool name>\", \"arguments\""));
        assert!(a.find("read_file").unwrap() < a.find("### pwd").unwrap());
        // The example call in the prompt must itself extract as a call.
        assert!(matches!(extract_action(&a), Action::Call { .. }));
        assert!(render_tool_instructions(&[]).contains("No tools are available"));
    }

    #[test]
    fn correction_contains_problem_and_format() {
        let m = correction_message("the reply was empty.");
        assert!(m.contains("the reply was empty."));
        assert!(m.contains("{\"tool\": \"<tool name>\", \"arguments\": {...}}"));
        assert!(m.contains("final answer"));
    }

    #[test]
    fn never_panics_on_prefixes_and_noise() {
        let replies = [
            "Sure.\n```json\n{\"tool\": \"read_file\", \"arguments\": {\"path\": \"é/🙂.txt\", \"s\": \"a\\\"}{\"}}\n```\nok",
            "{\"tool\": \"x\", \"arguments\": \"{\\\"a\\\": [1, 2,],}\"}",
            "é🙂 {'tool': \u{201c}x\u{201d}} ``` {\"a\": {\"b\": [}} ```JSON\n{",
        ];
        for r in replies {
            for (i, _) in r.char_indices() {
                let _ = extract_action(&r[..i]);
                let _ = extract_action(&r[i..]);
            }
        }
        let pieces = [
            "{",
            "}",
            "[",
            "]",
            "\"",
            "\\",
            "'",
            ",",
            ":",
            " ",
            "\n",
            "```",
            "```json\n",
            "tool",
            "\"tool\"",
            "arguments",
            "é",
            "🙂",
            "\u{201c}",
            "\u{201d}",
            "a",
            "1",
            "null",
            "\\u12",
            "\\\"",
        ];
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..3000 {
            let mut s = String::new();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 40) as usize;
            for _ in 0..len {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                s.push_str(pieces[(seed % pieces.len() as u64) as usize]);
            }
            match extract_action(&s) {
                Action::Call { arguments, .. } => assert!(arguments.is_object()),
                Action::Final(t) => assert_eq!(t, s.trim()),
                Action::Invalid(m) => assert!(!m.is_empty()),
            }
        }
        // Deep nesting and long unbalanced input stay cheap and safe.
        let _ = extract_action(&"{".repeat(100_000));
        let _ = extract_action(&format!(
            "{}{}",
            "{\"tool\":".repeat(5_000),
            "}".repeat(5_000)
        ));
        let _ = extract_action(&"[".repeat(10_000));
    }
}
