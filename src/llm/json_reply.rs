//! The reply a small window's model is held to when tools are described in
//! the text: its JSON Schema (a call of an offered tool with arguments its
//! schema allows, or `{"answer": …}`, for servers that constrain decoding
//! to one), and such an answer unwrapped to its text, also when the
//! reply's limit cut it off.
#![deny(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;

/// The JSON Schema of a reply in a small window: a call of one of the
/// tools with arguments its schema allows (no others), or `{"answer": …}`.
pub fn reply_shapes(tools: &[super::ToolDef]) -> Value {
    let mut shapes: Vec<Value> = tools
        .iter()
        .map(|t| {
            serde_json::json!({"type": "object", "properties": {
                "tool": {"type": "string", "enum": [t.name]},
                "arguments": closed(&t.parameters)},
                "required": ["tool", "arguments"], "additionalProperties": false})
        })
        .collect();
    shapes.push(serde_json::json!({"type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"], "additionalProperties": false}));
    serde_json::json!({ "anyOf": shapes })
}

/// `schema` with every object closed to properties it does not name.
fn closed(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out: serde_json::Map<String, Value> =
                map.iter().map(|(k, v)| (k.clone(), closed(v))).collect();
            if out.get("type").and_then(Value::as_str) == Some("object") {
                out.insert("additionalProperties".into(), Value::Bool(false));
                out.entry("properties")
                    .or_insert_with(|| Value::Object(serde_json::Map::new()));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(closed).collect()),
        other => other.clone(),
    }
}

/// A reply that is only `{"answer": "…"}` as its answer's text (also one
/// cut off inside the answer by the reply's limit); any other reply as it
/// is.
pub fn unwrap_answer(reply: &str) -> String {
    match serde_json::from_str::<Value>(reply.trim()) {
        Ok(Value::Object(map)) if !map.contains_key("tool") => match map.get("answer") {
            Some(Value::String(answer)) => answer.clone(),
            _ => reply.to_string(),
        },
        Ok(_) => reply.to_string(),
        Err(_) => cut_answer(reply).unwrap_or_else(|| reply.to_string()),
    }
}

/// The character a one-letter JSON escape (`\n`, `\t` …) stands for.
pub(super) fn simple_escape(letter: char) -> Option<char> {
    Some(match letter {
        'n' => '\n',
        't' => '\t',
        'r' => '\r',
        'b' => '\u{8}',
        'f' => '\u{c}',
        _ => return None,
    })
}

/// What a reply cut off inside `{"answer": "…` holds of its answer so far;
/// `None` for anything else (a closed string means the reply is malformed
/// some other way).
fn cut_answer(reply: &str) -> Option<String> {
    let rest = reply.trim_start().strip_prefix('{')?.trim_start();
    let rest = rest.strip_prefix("\"answer\"")?.trim_start();
    let mut chars = rest
        .strip_prefix(':')?
        .trim_start()
        .strip_prefix('"')?
        .chars();
    let mut out = String::new();
    while let Some(c) = chars.next() {
        match c {
            '"' => return None,
            '\\' => match chars.next() {
                Some('u') => {
                    let hex: String = chars.by_ref().take(4).collect();
                    let Ok(code) = u32::from_str_radix(&hex, 16) else {
                        break;
                    };
                    if hex.len() < 4 {
                        break;
                    }
                    out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                }
                Some(other) => out.push(simple_escape(other).unwrap_or(other)),
                None => break,
            },
            c => out.push(c),
        }
    }
    Some(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// A last reply held to `{"answer": …}` and cut by the reply's limit
    /// shows what it holds, not the JSON around it.
    #[test]
    fn a_cut_answer_is_unwrapped_as_far_as_it_goes() {
        assert_eq!(unwrap_answer(r#"{"answer": "done"}"#), "done");
        assert_eq!(
            unwrap_answer(r#"{"answer":"It adds \"a\" and b.\nThen it ret"#),
            "It adds \"a\" and b.\nThen it ret"
        );
        // Cut inside an escape: the escape is left out.
        assert_eq!(
            unwrap_answer(r#"{"answer": "caf\u00e9 and \u00"#),
            "café and "
        );
        assert_eq!(unwrap_answer(r#"{"answer": "ends in \"#), "ends in ");
        // Not a cut answer: kept as it is.
        for other in [
            r#"{"answer": "closed" ,"#,
            r#"{"tool": "read_file", "argu"#,
            "plain words",
            r#"{"answer": 3"#,
        ] {
            assert_eq!(unwrap_answer(other), other);
        }
    }
}
