//! Edits a small model wrote into its answer instead of calling
//! `propose_edits` (issue 30): a file's path on the line before a fenced
//! block (or in the fence's info string) and the file's whole new text in
//! the block, the "whole file" format models under a billion parameters
//! fall back on when the edit tool's schema is beyond them. Such a block
//! becomes one `propose_edits` call like any other, so every hunk is
//! reviewed; a block that is only a piece of the file, unlike it, or for a
//! file the job never saw is left as answer text.

use std::time::Instant;

use serde_json::{Value, json};
use similar::TextDiff;

use super::job::Job;
use crate::llm::{Message, ToolCall};
use crate::protocol::Mode;
use crate::tools::{PROPOSE_EDITS, READ_FILE};

/// A file longer than this many lines must come back at least half as
/// long: shorter, the block is a piece of it, not the whole.
const PIECE_LINES: usize = 6;
/// The least share of lines a whole-file block keeps of the file it
/// replaces; less, and it is some other text.
const LEAST_ALIKE: f32 = 0.5;

/// One fenced block of an answer and the path named for it, if any.
#[derive(Debug, PartialEq)]
pub(super) struct Block {
    pub label: Option<String>,
    pub body: String,
}

/// The answer's fenced blocks, each with the path written on the line
/// before it or in its info string (```` ```js sum.js ````). A block left
/// open runs to the end of the answer.
pub(super) fn blocks(answer: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<(Option<String>, String)> = None;
    let mut previous = "";
    for line in answer.lines() {
        let fence = line.trim_start().strip_prefix("```");
        match (open.take(), fence) {
            (Some((label, body)), Some(rest)) if rest.trim().is_empty() => {
                out.push(Block { label, body });
            }
            (Some((label, mut body)), _) => {
                body.push_str(line);
                body.push('\n');
                open = Some((label, body));
            }
            (None, Some(info)) => {
                let label = info_path(info).or_else(|| label_of(previous));
                open = Some((label, String::new()));
            }
            (None, None) => {}
        }
        if !line.trim().is_empty() {
            previous = line;
        }
    }
    if let Some((label, body)) = open {
        out.push(Block { label, body });
    }
    out
}

/// An answer that is one JSON object naming a file and its text
/// (`{"file_path": …, "content": …}`, the shape of a read's result, which
/// models copy to say what a file is to become), tags and fences aside;
/// or a call of a tool of the model's own making with those arguments
/// (`write_file`).
pub(super) fn file_object(answer: &str) -> Option<Block> {
    if let Some((_, arguments)) = crate::llm::loose_call(answer) {
        return file_block(&arguments);
    }
    let text = answer.trim();
    let (start, end) = (text.find('{')?, text.rfind('}')?);
    let outside = format!("{}{}", &text[..start], &text[end + 1..]);
    let noise = ["<tool_response>", "</tool_response>", "```json", "```"];
    let rest = noise.iter().fold(outside, |t, n| t.replace(n, ""));
    if !rest.trim().is_empty() || start > end {
        return None;
    }
    let value: Value = serde_json::from_str(&text[start..=end]).ok()?;
    file_block(&value)
}

/// A block from an object's `file_path` and `content` (or `new_text`).
fn file_block(value: &Value) -> Option<Block> {
    let path = value["file_path"].as_str()?;
    let body = value["content"].as_str().or(value["new_text"].as_str())?;
    Some(Block {
        label: Some(clean_path(path)),
        body: body.to_string(),
    })
}

/// A path in a fence's info string: the word after the language, or the
/// only word when it looks like a path (`js sum.js`, `python:a/b.py`).
fn info_path(info: &str) -> Option<String> {
    let words: Vec<&str> = info
        .split(|c: char| c.is_whitespace() || c == ':')
        .filter(|w| !w.is_empty())
        .collect();
    words
        .iter()
        .rev()
        .find(|w| looks_like_path(w))
        .map(|w| clean_path(w))
}

/// A line that is only a path, as models write it above a block:
/// `sum.js:`, `**src/a.rs**`, `# docs/guide.md`, `File: a.py`, `/Cargo.toml`.
fn label_of(line: &str) -> Option<String> {
    let mut text = line.trim().trim_start_matches('#').trim();
    for prefix in ["file:", "path:", "filename:"] {
        if let Some(rest) = text
            .get(..prefix.len())
            .filter(|head| head.eq_ignore_ascii_case(prefix))
            .and_then(|_| text.get(prefix.len()..))
        {
            text = rest.trim();
        }
    }
    let text = text
        .trim_matches(|c: char| c == '*' || c == '`' || c == '"' || c == '\'')
        .trim_end_matches(':')
        .trim_matches(|c: char| c == '*' || c == '`');
    looks_like_path(text).then(|| clean_path(text))
}

/// One word with a dot or a slash in it, no spaces.
fn looks_like_path(word: &str) -> bool {
    !word.is_empty()
        && !word.contains(char::is_whitespace)
        && (word.contains('.') || word.contains('/'))
        && !word.starts_with("http")
        && word.chars().any(char::is_alphanumeric)
}

fn clean_path(word: &str) -> String {
    word.trim_start_matches("./")
        .trim_start_matches('/')
        .to_string()
}

/// The file a block is for: a file the job read, named as it is or as the
/// end of a longer path (`path/to/src/a.rs`); a path the instruction names
/// (a new file); or, for the answer's only block without a name, the only
/// file the job read.
pub(super) fn target(
    block: &Block,
    only_block: bool,
    read: &[String],
    instruction: &str,
) -> Option<String> {
    let Some(label) = &block.label else {
        return (only_block && read.len() == 1).then(|| read[0].clone());
    };
    if read.contains(label) {
        return Some(label.clone());
    }
    let mut ends: Vec<&String> = read
        .iter()
        .filter(|r| label.ends_with(&format!("/{r}")))
        .collect();
    if ends.len() == 1 {
        return ends.pop().cloned();
    }
    instruction
        .split(|c: char| c.is_whitespace() || matches!(c, '`' | '\'' | '"' | ',' | '@'))
        .any(|w| clean_path(w.trim_end_matches(['.', ':', ';'])) == *label)
        .then(|| label.clone())
}

/// The `propose_edits` edit that makes `old` (the file's whole text, `None`
/// for a file that does not exist) into `new`, or `None` when the block is
/// no whole new version of it: unchanged, a piece of a longer file, or
/// mostly other text.
pub(super) fn whole_file_edit(path: &str, old: Option<&str>, new: &str) -> Option<Value> {
    let Some(old) = old else {
        return (!new.trim().is_empty())
            .then(|| json!({"file_path": path, "operation": "create", "new_text": new}));
    };
    let mut new = new.to_string();
    if !old.ends_with('\n') {
        new = new.trim_end_matches('\n').to_string();
    }
    if new.trim_end() == old.trim_end() {
        return None;
    }
    let (old_lines, new_lines) = (old.lines().count(), new.lines().count());
    if old_lines > PIECE_LINES && new_lines * 2 < old_lines {
        return None;
    }
    if old_lines == 0 {
        return Some(
            json!({"file_path": path, "operation": "insert", "start_line": 1, "new_text": new}),
        );
    }
    if TextDiff::from_lines(old, new.as_str()).ratio() < LEAST_ALIKE {
        return None;
    }
    Some(json!({
        "file_path": path,
        "operation": "replace",
        "start_line": 1,
        "end_line": old_lines,
        "new_text": new,
        "rationale": "written out whole in the answer",
    }))
}

impl Job<'_> {
    /// In a small window's agent-mode job that proposed no edit, the files
    /// its answer writes out whole, proposed as edits for review (the call
    /// and its result join the conversation before the answer).
    pub(super) async fn propose_from_answer(&mut self, answer: &str) {
        let proposed = self
            .bundle
            .as_ref()
            .is_some_and(|b| b.hunks().next().is_some());
        if !self.lean() || self.spec.mode != Mode::Agent || proposed {
            return;
        }
        let found = file_object(answer).map_or_else(|| blocks(answer), |b| vec![b]);
        let read = self.files_read();
        let mut edits: Vec<Value> = Vec::new();
        for block in &found {
            let Some(path) = target(block, found.len() == 1, &read, &self.spec.prompt) else {
                continue;
            };
            if edits.iter().any(|e| e["file_path"] == path.as_str()) {
                continue;
            }
            let Some(old) = self.whole_text(&path).await else {
                continue;
            };
            edits.extend(whole_file_edit(&path, old.as_deref(), &block.body));
        }
        if edits.is_empty() {
            return;
        }
        let call = ToolCall {
            tool_call_id: "answer_edits".into(),
            name: PROPOSE_EDITS.into(),
            arguments: json!({"edits": edits}),
        };
        self.announce(&call);
        let started = Instant::now();
        let outcome = self.propose(&call).await;
        let result = self.reported(call.clone(), started, outcome);
        self.add(Message::Assistant {
            text: String::new(),
            tool_calls: vec![call],
        });
        self.add(Message::Tool(result));
    }

    /// The files this job read (its own reads and those read for it).
    fn files_read(&self) -> Vec<String> {
        let from = self.instruction_at.unwrap_or(0);
        let mut read: Vec<String> = Vec::new();
        for message in self.conv.messages().iter().skip(from) {
            if let Message::Tool(r) = message
                && r.ok
                && r.name == READ_FILE
                && let Some(path) = r.result.as_ref().and_then(|v| v["file_path"].as_str())
                && !read.iter().any(|p| p == path)
            {
                read.push(path.to_string());
            }
        }
        read
    }

    /// A file's whole text (`Some(None)`: there is no such file); `None`
    /// when it cannot be read whole.
    async fn whole_text(&mut self, path: &str) -> Option<Option<String>> {
        let call = ToolCall {
            tool_call_id: "answer_edits_read".into(),
            name: READ_FILE.into(),
            arguments: json!({"file_path": path}),
        };
        match self.run_registered(&call).await {
            Ok(v) if v["end_line"] == v["total_lines"] || v["total_lines"] == 0 => {
                v["content"].as_str().map(|c| Some(c.to_string()))
            }
            Ok(_) => None,
            Err(e) => (e["code"] == "not_found").then_some(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(label: Option<&str>, body: &str) -> Block {
        Block {
            label: label.map(str::to_string),
            body: body.to_string(),
        }
    }

    #[test]
    fn blocks_are_found_with_the_path_above_them_or_in_the_fence() {
        // What Qwen2.5-Coder-0.5B and -1.5B wrote for the shipped tasks.
        let answer = "Cargo.toml:\n```\n[package]\nversion = \"0.2.0\"\n```\n\nand\n\n\
                      ```js sum.js\nexport const a = 1;\n```\n**docs/guide.md**\n\n```\n# Guide\nYou will receive an email.";
        assert_eq!(
            blocks(answer),
            vec![
                block(Some("Cargo.toml"), "[package]\nversion = \"0.2.0\"\n"),
                block(Some("sum.js"), "export const a = 1;\n"),
                block(
                    Some("docs/guide.md"),
                    "# Guide\nYou will receive an email.\n"
                ),
            ]
        );
        for (line, label) in [
            ("File: `a/b.py`", Some("a/b.py")),
            ("/Cargo.toml", Some("Cargo.toml")),
            ("# src/lib.rs", Some("src/lib.rs")),
            ("Here's the corrected code:", None),
            ("see https://example.com/x.js", None),
            // A multi-byte character where a "File:" prefix would end.
            ("Fiché: a.py", None),
            ("Überblick.md", Some("Überblick.md")),
        ] {
            assert_eq!(label_of(line).as_deref(), label, "{line}");
        }
        assert_eq!(
            info_path("python:tests/test_slug.py").as_deref(),
            Some("tests/test_slug.py")
        );
        assert_eq!(info_path("rust"), None);
    }

    #[test]
    fn an_answer_that_is_a_file_object_is_a_block() {
        // Qwen2.5-Coder-1.5B's answer to js_fix_sum.
        let answer = "<tool_response>\n{\"file_path\":\"sum.js\",\"content\":\"export function sum(values) {\\n  return values.reduce((a, b) => a + b, 0);\\n}\\n\",\"start_line\":1}\n</tool_response>";
        assert_eq!(
            file_object(answer),
            Some(block(
                Some("sum.js"),
                "export function sum(values) {\n  return values.reduce((a, b) => a + b, 0);\n}\n"
            ))
        );
        let fenced = "```json\n{\"file_path\": \"a.md\", \"content\": \"x\"}\n```";
        assert_eq!(file_object(fenced), Some(block(Some("a.md"), "x")));
        for not in [
            "It is {\"file_path\": \"a.md\", \"content\": \"x\"}",
            "{\"file_path\": \"a.md\"}",
            "{\"name\": \"read_file\", \"arguments\": {}}",
            "} {",
        ] {
            assert_eq!(file_object(not), None, "{not}");
        }
    }

    #[test]
    fn a_block_is_for_a_file_read_the_instruction_names_or_the_only_one_read() {
        let read = vec!["src/config.rs".to_string(), "Cargo.toml".to_string()];
        let named = |l: &str| block(Some(l), "x\n");
        assert_eq!(
            target(&named("Cargo.toml"), false, &read, "").as_deref(),
            Some("Cargo.toml")
        );
        assert_eq!(
            target(&named("path/to/src/config.rs"), false, &read, "").as_deref(),
            Some("src/config.rs")
        );
        assert_eq!(target(&named("other.rs"), false, &read, "fix it"), None);
        assert_eq!(
            target(
                &named("tests/test_slug.py"),
                false,
                &read,
                "Add tests/test_slug.py."
            )
            .as_deref(),
            Some("tests/test_slug.py")
        );
        let bare = block(None, "x\n");
        assert_eq!(target(&bare, true, &read, ""), None, "two files read");
        assert_eq!(
            target(&bare, true, &read[..1], "").as_deref(),
            Some("src/config.rs")
        );
        assert_eq!(
            target(&bare, false, &read[..1], ""),
            None,
            "not the only block"
        );
    }

    #[test]
    fn only_a_whole_new_version_of_the_file_is_an_edit() {
        let old = "export function sum(values) {\n  return values.reduce((a, b) => a + b, 1);\n}\n";
        let fixed = old.replace(", 1)", ", 0)");
        let edit = whole_file_edit("sum.js", Some(old), &fixed).unwrap();
        assert_eq!(edit["operation"], "replace");
        assert_eq!(edit["end_line"], 3);
        assert_eq!(edit["new_text"], fixed.as_str());
        // Unchanged (but for the last newline), a piece, other text.
        assert_eq!(whole_file_edit("sum.js", Some(old), old.trim_end()), None);
        let long: String = (0..20).map(|i| format!("line {i}\n")).collect();
        assert_eq!(
            whole_file_edit("a.txt", Some(&long), "line 3\nline four\n"),
            None
        );
        assert_eq!(
            whole_file_edit("sum.js", Some(old), "print('hello world')\nx = 1\ny = 2\n"),
            None
        );
        // A file without a last newline keeps having none.
        let edit = whole_file_edit("a.txt", Some("one\ntwo"), "one\n2\n").unwrap();
        assert_eq!(edit["new_text"], "one\n2");
        // A new file.
        let edit = whole_file_edit("t.py", None, "import x\n").unwrap();
        assert_eq!(edit["operation"], "create");
        assert_eq!(whole_file_edit("t.py", None, "  \n"), None);
    }
}
