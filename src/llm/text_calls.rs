//! Tool calls a model wrote as text although it was offered native tools
//! (Qwen's and Hermes' `<tool_call>{"name": …, "arguments": …}</tool_call>`,
//! the tags often lost as special tokens, or a bare JSON object): servers
//! such as llama-cpp-python pass such replies on as plain content, so the
//! job would take the call for its answer. The reply's text is held back
//! while it can still be a call and read back as one when it is.
#![deny(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;

use super::json_action::{self, Action};

/// The openings a text call can start with (after white space); the
/// last, a fence, is looked for only in a small window's replies (a large
/// model's answer that opens with code streams at once).
const OPENINGS: [&str; 4] = ["<tool_call>", "<tools>", "{", "```"];
/// The tags models wrap a call in, dropped before it is read.
const TAGS: [&str; 4] = ["<tool_call>", "</tool_call>", "<tools>", "</tools>"];

/// Holds a reply's text back while it can still be a call written as
/// text; lets it through at once when it cannot.
#[derive(Debug, Default)]
pub struct Gate {
    held: String,
    open: bool,
    fences: bool,
}

impl Gate {
    /// A gate that also holds text opening with a fence when `fences`.
    pub fn new(fences: bool) -> Gate {
        Gate {
            fences,
            ..Gate::default()
        }
    }

    /// Takes one piece of answer text; returns what may be shown now.
    pub fn pass<'t>(&mut self, text: &'t str) -> Option<std::borrow::Cow<'t, str>> {
        if self.open {
            return Some(text.into());
        }
        self.held.push_str(text);
        let start = self.held.trim_start();
        let openings = if self.fences {
            &OPENINGS[..]
        } else {
            &OPENINGS[..OPENINGS.len() - 1]
        };
        if start.is_empty() || could_be_call(start, openings) {
            return None;
        }
        self.open = true;
        Some(std::mem::take(&mut self.held).into())
    }

    /// What is still held at the end of the reply (`None` once let through).
    pub fn held(self) -> Option<String> {
        (!self.open).then_some(self.held)
    }
}

/// Whether text that starts this way may still turn out to be a call.
fn could_be_call(start: &str, openings: &[&str]) -> bool {
    openings
        .iter()
        .any(|o| start.starts_with(o) || o.starts_with(start))
}

/// What a reply that may hold a call written as text turned out to be.
#[derive(Debug, PartialEq)]
pub enum TextCall {
    /// A call of an offered tool: its name and arguments (an object, or
    /// the text of one when the model wrote it as a string that does not
    /// parse).
    Call(String, Value),
    /// An attempt at a call of an offered tool that cannot be read (tagged
    /// as a call, or naming the tool): what is wrong with it.
    Broken(String),
    /// No call: the reply is an answer.
    Answer,
}

/// What `reply` is, the tools offered being `offered`. Anything written
/// after a call (models go on to imagine its result) is dropped.
pub fn read_call(reply: &str, offered: &[&str]) -> TextCall {
    let start = reply.trim_start();
    if !could_be_call(start, &OPENINGS) {
        return TextCall::Answer;
    }
    let tagged = ["<tool_call>", "<tools>"]
        .iter()
        .any(|tag| start.starts_with(tag));
    let body = untagged(start);
    let (name, arguments) = match any_call(&body) {
        Ok(call) => call,
        Err(problem) => return broken(tagged, &body, offered, &problem),
    };
    if offered.contains(&name.as_str()) {
        TextCall::Call(name, arguments)
    } else if tagged {
        TextCall::Broken(format!("`{name}` is not one of the tools offered"))
    } else {
        TextCall::Answer
    }
}

/// `text` without the tags models wrap a call in: those around it only,
/// never one inside (an argument may well hold `<tool_call>`: a file of a
/// project like this one).
fn untagged(text: &str) -> String {
    let mut rest = text.trim();
    loop {
        let before = rest.len();
        for tag in TAGS {
            rest = rest.strip_prefix(tag).unwrap_or(rest).trim_start();
            rest = rest.strip_suffix(tag).unwrap_or(rest).trim_end();
        }
        if rest.len() == before {
            return rest.to_string();
        }
    }
}

/// The call `body` holds, whatever tool it names: `{"name", "arguments"}`,
/// the OpenAI wire's shape, or either with its arguments written as a
/// string whose quotes were not escaped; else what is wrong with it.
fn any_call(body: &str) -> Result<(String, Value), String> {
    let problem = match json_action::extract_action(body) {
        Action::Call { name, arguments } => return Ok((name, arguments)),
        Action::Final(_) => "it is not valid JSON".to_string(),
        Action::Invalid(problem) => problem,
    };
    openai_shaped(body)
        .or_else(|| unescaped_arguments(body))
        .ok_or(problem)
}

/// A reply that is only a call, tagged or not, of any tool (one the model
/// made up, such as `write_file`, included): its name and arguments.
pub fn loose_call(reply: &str) -> Option<(String, Value)> {
    let start = reply.trim_start();
    if !could_be_call(start, &OPENINGS) {
        return None;
    }
    any_call(&untagged(start)).ok()
}

/// A call whose arguments were written as a string without escaping the
/// quotes inside it (`{"name": "write_file", "arguments": "{"file_path":
/// …}"}`, as Qwen2.5-Coder-1.5B wrote): the string's text is the object.
fn unescaped_arguments(body: &str) -> Option<(String, Value)> {
    const KEY: &str = "\"arguments\"";
    let body = body.trim();
    let at = body.find(KEY)?;
    let head = body[..at].trim_end().trim_end_matches(',');
    let open = head
        .matches('{')
        .count()
        .checked_sub(head.matches('}').count())?;
    let mut rest = body[at + KEY.len()..]
        .trim_start()
        .strip_prefix(':')?
        .trim_start()
        .strip_prefix('"')?
        .trim_end();
    for _ in 0..open {
        rest = rest.strip_suffix('}')?.trim_end();
    }
    let arguments: Value = serde_json::from_str(rest.strip_suffix('"')?).ok()?;
    let closed: Value = serde_json::from_str(&format!("{head}{}", "}".repeat(open))).ok()?;
    let name = closed["name"]
        .as_str()
        .or(closed["function"]["name"].as_str())?;
    arguments.is_object().then(|| (name.to_string(), arguments))
}

/// A reply that could not be read as a call: broken when it was tagged as
/// one or names an offered tool in quotes, else an answer.
fn broken(tagged: bool, body: &str, offered: &[&str], problem: &str) -> TextCall {
    let names_tool = offered.iter().any(|n| body.contains(&format!("\"{n}\"")));
    if tagged || names_tool {
        TextCall::Broken(problem.trim().to_string())
    } else {
        TextCall::Answer
    }
}

/// A call written in the OpenAI wire's shape, `{"type": "function",
/// "function": {"name", "arguments"}}`.
fn openai_shaped(body: &str) -> Option<(String, Value)> {
    let start = body.find('{')?;
    let mut values = serde_json::Deserializer::from_str(&body[start..]).into_iter::<Value>();
    let function = values.next()?.ok()?.get("function")?.clone();
    match json_action::extract_action(&function.to_string()) {
        Action::Call { name, arguments } => Some((name, arguments)),
        Action::Final(_) | Action::Invalid(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const OFFERED: [&str; 3] = ["read_file", "propose_edits", "search_project"];

    #[test]
    fn qwen_calls_are_read_with_or_without_their_tags() {
        let bare = r#"{"name": "read_file", "arguments": {"file_path": "sum.js"}}"#;
        let tagged = format!("<tool_call>\n{bare}\n</tool_call>");
        for reply in [bare.to_string(), tagged] {
            assert_eq!(
                read_call(&reply, &OFFERED),
                TextCall::Call("read_file".into(), json!({"file_path": "sum.js"}))
            );
        }
    }

    #[test]
    fn a_tag_inside_an_argument_is_kept() {
        // Found by the json_action fuzz target: tags were dropped anywhere,
        // so an edit writing `<tool_call>` into a file lost it.
        let reply = r#"<tool_call>{"name": "propose_edits", "arguments": {"new_text": "say <tool_call> here"}}</tool_call>"#;
        assert_eq!(
            read_call(reply, &OFFERED),
            TextCall::Call(
                "propose_edits".into(),
                json!({"new_text": "say <tool_call> here"})
            )
        );
    }

    #[test]
    fn arguments_written_as_a_string_and_an_imagined_result_after_the_call() {
        // What Qwen2.5-Coder-0.5B wrote after a read shown to it as a native call.
        let reply = "{\"name\": \"read_file\", \"arguments\": \"{\\\"file_path\\\":\\\"sum.js\\\"}\"}\n{\"start_line\":1,\"end_line\":3}";
        assert_eq!(
            read_call(reply, &OFFERED),
            TextCall::Call("read_file".into(), json!({"file_path": "sum.js"}))
        );
    }

    #[test]
    fn an_edit_whose_arguments_string_has_raw_line_breaks() {
        // What Qwen2.5-Coder-1.5B wrote for js_fix_sum.
        let reply = "{\"name\": \"propose_edits\", \"arguments\": \"{\\\"edits\\\":[{\\\"file_path\\\":\\\"sum.js\\\",\\\"operation\\\":\\\"replace\\\",\\\"start_line\\\":2,\\\"end_line\\\":2,\\\"new_text\\\":\\\"  return values.reduce((a, b) => a + b, 0);\\n\\\"}]}\"}";
        let TextCall::Call(name, arguments) = read_call(reply, &OFFERED) else {
            panic!("not read as a call");
        };
        assert_eq!(name, "propose_edits");
        assert_eq!(
            arguments["edits"][0]["new_text"],
            "  return values.reduce((a, b) => a + b, 0);\n"
        );
    }

    #[test]
    fn a_call_in_the_openai_wire_shape_inside_tools_tags() {
        // What Qwen2.5-Coder-1.5B wrote for rs_empty_mean.
        let reply = "<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"propose_edits\", \"arguments\": \"{\\\"edits\\\":[]}\"}}\n</tools>";
        assert_eq!(
            read_call(reply, &OFFERED),
            TextCall::Call("propose_edits".into(), json!({"edits": []}))
        );
    }

    #[test]
    fn prose_json_without_a_call_and_unoffered_tools_stay_answers() {
        for reply in [
            "The fix is to start from 0: {\"name\": \"read_file\", \"arguments\": {}}",
            r#"{"version": "1.2.0", "name": "demo"}"#,
            r#"{"name": "run_command", "arguments": {"command": "ls"}}"#,
            "```rust\nfn main() {}\n```",
            "",
        ] {
            assert_eq!(read_call(reply, &OFFERED), TextCall::Answer, "{reply}");
        }
    }

    #[test]
    fn arguments_written_as_a_string_with_its_quotes_unescaped() {
        // What Qwen2.5-Coder-1.5B wrote for js_fix_sum once tools were
        // withdrawn: a tool of its own, its arguments' quotes unescaped.
        let reply = "{\"name\": \"write_file\", \"arguments\": \"{\"file_path\":\"sum.js\",\"content\":\"a\\n\"}\"}";
        let expected = (
            "write_file".to_string(),
            json!({"file_path": "sum.js", "content": "a\n"}),
        );
        assert_eq!(loose_call(reply), Some(expected.clone()));
        let wire = "<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"write_file\", \"arguments\": \"{\"file_path\":\"sum.js\",\"content\":\"a\\n\"}\"}}\n</tools>";
        assert_eq!(loose_call(wire), Some(expected));
        // Offered, it is a call.
        let offered = reply.replace("write_file", "read_file");
        assert!(matches!(read_call(&offered, &OFFERED), TextCall::Call(..)));
        assert_eq!(loose_call("The fix: {\"name\": \"x\"}"), None);
    }

    #[test]
    fn a_call_that_cannot_be_read_is_broken_not_an_answer() {
        // What Qwen2.5-Coder-1.5B wrote for toml_bump_version: the quotes
        // inside the arguments' text are not escaped.
        let reply = "<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"search_project\", \"arguments\": \"{\\\"query\\\":\\\"version = \\\"0.1.0\\\"\\\",\\\"regex\\\":false}\"}}\n</tools>";
        for reply in [
            reply,
            "{\"name\": \"read_file\", \"arguments\": {\"file_path\": \"a.txt\"",
            "<tool_call>\n{\"name\": \"run_command\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>",
        ] {
            assert!(
                matches!(read_call(reply, &OFFERED), TextCall::Broken(_)),
                "{reply}"
            );
        }
    }

    #[test]
    fn the_gate_holds_what_may_be_a_call_and_lets_prose_through_whole() {
        let mut gate = Gate::default();
        assert_eq!(gate.pass("  "), None);
        assert_eq!(gate.pass("<tool"), None);
        assert_eq!(gate.pass("_call>{\"name\""), None);
        assert_eq!(gate.held().as_deref(), Some("  <tool_call>{\"name\""));

        let mut gate = Gate::default();
        assert_eq!(gate.pass("\n"), None);
        assert_eq!(gate.pass("The ").as_deref(), Some("\nThe "));
        assert_eq!(gate.pass("{x}").as_deref(), Some("{x}"));
        assert_eq!(gate.held(), None);

        let mut gate = Gate::default();
        assert_eq!(gate.pass("<b>bold</b>").as_deref(), Some("<b>bold</b>"));

        // A fence is held only in a small window's replies.
        assert_eq!(
            Gate::new(false).pass("```rust\n").as_deref(),
            Some("```rust\n")
        );
        let mut gate = Gate::new(true);
        assert_eq!(gate.pass("```json\n"), None);
        assert_eq!(gate.held().as_deref(), Some("```json\n"));
    }
}
