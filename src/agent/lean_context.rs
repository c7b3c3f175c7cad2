//! What a small window's job starts with and where it stops (issue 30):
//! the project's outline in the system prompt, the files the instruction
//! names already read (within 40 % of the window for the whole first
//! request), and an end to calls that keep coming back with the same
//! result. Small models guess paths and repeat themselves; these spare
//! them the guessing and the window the repeats.

use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use serde_json::{Value, json};

use super::job::Job;
use crate::context::message_tokens;
use crate::llm::{Message, ToolCall, ToolResult};
use crate::protocol::EventBody;
use crate::tools::{LIST_FILES, READ_FILE};

/// Most paths the outline names.
const OUTLINE_PATHS: usize = 25;
/// Most characters of the outline's paths.
const OUTLINE_CHARS: usize = 400;
/// Entries listed to build the outline (and to find named files by name).
const LISTED: u64 = 200;
/// Most files an instruction gets read for it.
const MAX_NAMED: usize = 3;
/// The share of the window the first request may fill, attachments included.
const FIRST_REQUEST_SHARE: f64 = 0.4;
/// Turns that repeated a call with the same result after which tools are
/// withdrawn (the model answers with what it has).
const MAX_REPEATS: u32 = 2;
/// How a small model can still change a file without calling a tool
/// (`answer_edits` reads it back as an edit).
pub(super) const WHOLE_FILE_HINT: &str =
    " To change a file, write its path on a line, then its whole new text in one fenced block.";

/// The project's files as the outline and the name lookup use them.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Listing {
    /// Every file, when the listing is complete and short; else empty.
    files: Vec<String>,
    /// The top level (folders with a trailing `/`), when `files` is empty.
    top: Vec<String>,
    /// Every path seen (files only), for finding a file named by its name.
    known: Vec<String>,
    /// Whether `known` is every file of the project.
    complete: bool,
}

impl Listing {
    /// `list_files`' result read into a listing.
    fn from_result(result: &Value) -> Listing {
        let entries = result["files"].as_array().map_or(&[][..], Vec::as_slice);
        let truncated = result["truncated"].as_bool().unwrap_or(true);
        let known: Vec<String> = entries
            .iter()
            .filter(|e| e["kind"] == "file")
            .filter_map(|e| e["path"].as_str().map(str::to_string))
            .collect();
        let chars: usize = known.iter().map(|p| p.len() + 2).sum();
        if !truncated && known.len() <= OUTLINE_PATHS && chars <= OUTLINE_CHARS {
            return Listing {
                files: known.clone(),
                top: Vec::new(),
                known,
                complete: true,
            };
        }
        let mut top: Vec<String> = Vec::new();
        for e in entries {
            let Some(path) = e["path"].as_str().filter(|p| !p.contains('/')) else {
                continue;
            };
            top.push(match e["kind"].as_str() {
                Some("dir") => format!("{path}/"),
                _ => path.to_string(),
            });
        }
        top.truncate(OUTLINE_PATHS);
        Listing {
            files: Vec::new(),
            top,
            known,
            complete: !truncated,
        }
    }

    /// The outline line for the system prompt (empty for an empty project).
    pub(super) fn outline(&self) -> String {
        match (self.files.is_empty(), self.top.is_empty()) {
            (false, _) => format!("Project files: {}.\n", self.files.join(", ")),
            (true, false) => format!("Project top level: {}, ...\n", self.top.join(", ")),
            (true, true) => String::new(),
        }
    }
}

/// The files `instruction` names, as paths of `listing` (a path as
/// written, `@`/`./` and quotes aside, or a file name that only one known
/// file has; when the listing is not the whole project, also any word that
/// looks like a path, for the read to find or not), in order, at most
/// `MAX_NAMED`.
fn named_files(instruction: &str, listing: &Listing) -> Vec<String> {
    let known = &listing.known;
    let mut named: Vec<String> = Vec::new();
    for word in instruction.split_whitespace() {
        let word = word
            .trim_matches(|c: char| "`'\"()[]{}<>,;:!?*".contains(c))
            .trim_end_matches('.')
            .trim_start_matches('@')
            .trim_start_matches("./");
        if !(word.contains('.') || word.contains('/')) {
            continue;
        }
        let found = if known.iter().any(|k| k == word) || !listing.complete {
            Some(word.to_string())
        } else if word.contains('/') {
            None
        } else {
            let mut same = known.iter().filter(|k| k.rsplit('/').next() == Some(word));
            match (same.next(), same.next()) {
                (Some(only), None) => Some(only.clone()),
                _ => None,
            }
        };
        if let Some(path) = found.filter(|p| !named.contains(p)) {
            named.push(path);
        }
        if named.len() == MAX_NAMED {
            break;
        }
    }
    named
}

/// `result` as a small window's model reads it: without `file_hash`
/// (74 of SmolLM2's tokens, which no tool takes back; the event
/// and `agent-tui tool` keep it).
pub(super) fn lean_result(result: ToolResult) -> ToolResult {
    match result.result {
        Some(Value::Object(mut map)) if result.ok && map.contains_key("file_hash") => {
            map.remove("file_hash");
            ToolResult::new(result.tool_call_id, result.name, Ok(Value::Object(map)))
        }
        _ => result,
    }
}

/// A lean job's calls that came back with the same result as before: the
/// calls seen (tool and arguments -> a fingerprint of the result) and the
/// turns that repeated one.
#[derive(Debug, Default)]
pub(super) struct Repeats {
    seen: HashMap<String, u64>,
    turns: u32,
}

impl Repeats {
    /// Notes `result` of `call`; true when the same call gave the same
    /// result before in this job.
    pub(super) fn repeated(&mut self, call: &ToolCall, result: &ToolResult) -> bool {
        let mut hasher = DefaultHasher::new();
        result.content.hash(&mut hasher);
        let print = hasher.finish();
        let key = format!("{} {}", call.name, call.arguments);
        self.seen.insert(key, print) == Some(print)
    }

    /// A turn repeated the calls of `tools`: what the model is told (at
    /// `MAX_REPEATS` such turns, that tools are withdrawn; in agent mode,
    /// how an edit can still be made without them).
    pub(super) fn note(&mut self, tools: &[String], agent: bool) -> String {
        self.turns += 1;
        let names = tools.join("`, `");
        if self.withdrawn() {
            format!(
                "[agent-tui] `{names}` came back again with the same arguments and result. No \
                 more tools: answer now with what you have.{}",
                if agent { WHOLE_FILE_HINT } else { "" }
            )
        } else {
            format!(
                "[agent-tui] You called `{names}` with the same arguments before and got the \
                 same result (above). Do not repeat it: use that result, call another tool, or \
                 answer."
            )
        }
    }

    /// Whether tools are withdrawn: the next request asks for the answer.
    pub(super) fn withdrawn(&self) -> bool {
        self.turns >= MAX_REPEATS
    }
}

impl Job<'_> {
    /// The project's files, listed without counting as a call.
    pub(super) async fn project_listing(&mut self) -> Listing {
        let call = ToolCall {
            tool_call_id: "outline".into(),
            name: LIST_FILES.into(),
            arguments: json!({"limit": LISTED}),
        };
        match self.run_registered(&call).await {
            Ok(result) => Listing::from_result(&result),
            Err(_) => Listing::default(),
        }
    }

    /// The files the instruction names, read into the conversation (each
    /// as a `read_file` call and its result) while the first request stays
    /// within 40 % of the window. Not counted against the tool budget; its
    /// events say `attached`.
    pub(super) async fn attach_named(&mut self, listing: &Listing) {
        let share = f64::from(self.window.tokens) * FIRST_REQUEST_SHARE;
        let mut used = self.conv.scaled(self.conv.counted() + self.extra.of(true));
        for (n, path) in named_files(&self.spec.prompt, listing)
            .into_iter()
            .enumerate()
        {
            let call = ToolCall {
                tool_call_id: format!("attached_{}", n + 1),
                name: READ_FILE.into(),
                arguments: json!({"file_path": path}),
            };
            let started = std::time::Instant::now();
            let Ok(value) = self.run_registered(&call).await else {
                continue;
            };
            let asked = Message::Assistant {
                text: String::new(),
                tool_calls: vec![call.clone()],
            };
            let result = ToolResult::new(call.tool_call_id.clone(), call.name.clone(), Ok(value));
            let lean = lean_result(result.clone());
            let counter = self.conv.counter();
            let cost = self.conv.scaled(u64::from(
                message_tokens(counter, &asked)
                    + message_tokens(counter, &Message::Tool(lean.clone())),
            ));
            if (used + cost) as f64 > share {
                continue;
            }
            used += cost;
            // Reading it again is a repeat like any other.
            self.repeats.repeated(&call, &lean);
            let read = Message::Tool(lean);
            // Shown like any read, marked as agent-tui's own.
            self.emit.emit(EventBody::ToolCallRequested {
                tool_call_id: call.tool_call_id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
                attached: true,
            });
            self.emit.emit(EventBody::ToolCallCompleted {
                tool_call_id: call.tool_call_id,
                name: call.name,
                ok: true,
                result: result.result,
                error: None,
                duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            });
            self.add(asked);
            self.add(read);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known() -> Listing {
        let known = [
            "sum.js",
            "src/net.rs",
            "docs/guide.md",
            "a/util.py",
            "b/util.py",
        ];
        Listing {
            known: known.iter().map(|s| s.to_string()).collect(),
            complete: true,
            ..Listing::default()
        }
    }

    #[test]
    fn files_are_found_as_written_or_by_a_name_only_one_has() {
        assert_eq!(
            named_files("sum() in sum.js starts from 1. Fix it.", &known()),
            vec!["sum.js"]
        );
        assert_eq!(
            named_files(
                "Read `src/net.rs`, then @docs/guide.md and net.rs.",
                &known()
            ),
            vec!["src/net.rs", "docs/guide.md"]
        );
        // Two files are called util.py: neither is guessed.
        assert!(named_files("fix util.py", &known()).is_empty());
        assert_eq!(named_files("fix a/util.py", &known()), vec!["a/util.py"]);
        // Hostile or absent paths are not known, so never read.
        assert!(named_files("../../etc/passwd and e.g. 1.5", &known()).is_empty());
        // A listing that is not the whole project: what looks like a path is
        // tried (the read refuses what is outside or absent).
        let partial = Listing {
            complete: false,
            ..known()
        };
        assert_eq!(
            named_files("see deep/x.rs and sum.js", &partial),
            vec!["deep/x.rs", "sum.js"]
        );
    }

    #[test]
    fn a_short_complete_listing_names_every_file_else_the_top_level() {
        let result = json!({"files": [
            {"path": "src", "kind": "dir"}, {"path": "src/main.rs", "kind": "file"},
            {"path": "README.md", "kind": "file"}], "truncated": false});
        let listing = Listing::from_result(&result);
        assert_eq!(
            listing.outline(),
            "Project files: src/main.rs, README.md.\n"
        );
        let mut long = result.clone();
        long["truncated"] = json!(true);
        let listing = Listing::from_result(&long);
        assert_eq!(
            listing.outline(),
            "Project top level: src/, README.md, ...\n"
        );
        assert_eq!(listing.known, vec!["src/main.rs", "README.md"]);
        assert_eq!(Listing::from_result(&json!({"files": []})).outline(), "");
    }

    #[test]
    fn only_the_same_call_with_the_same_result_is_a_repeat() {
        let call = ToolCall {
            tool_call_id: "c1".into(),
            name: READ_FILE.into(),
            arguments: json!({"file_path": "a.txt"}),
        };
        let read = |text: &str| {
            ToolResult::new("c1".into(), READ_FILE.into(), Ok(json!({"content": text})))
        };
        let mut r = Repeats::default();
        assert!(!r.repeated(&call, &read("one")));
        // The file changed in between (a command wrote it): not a repeat.
        assert!(!r.repeated(&call, &read("two")));
        assert!(r.repeated(&call, &read("two")));
        assert!(
            r.note(&["read_file".into()], false)
                .contains("Do not repeat it")
        );
        assert!(!r.withdrawn());
        assert!(
            r.note(&["read_file".into()], false)
                .contains("No more tools")
        );
        assert!(r.withdrawn());
    }
}
