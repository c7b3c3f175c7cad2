//! Memory files (SPEC 19): the instructions a project and its user keep for
//! agents. The root's `AGENTS.md` (else `CLAUDE.md`, else `GEMINI.md`) and
//! the user's `<config dir>/agent-tui/AGENTS.md` go in the system prompt;
//! a subfolder's own file is given with the result of the first call that
//! reads or edits a file under it. Read beneath the root only, bounded.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::workspace::Workspace;

/// The names a folder's instructions go by, in order of precedence.
pub const NAMES: [&str; 3] = ["AGENTS.md", "CLAUDE.md", "GEMINI.md"];
/// Most bytes of a subfolder's file given to the model.
pub const NESTED_BYTES: usize = 8 * 1024;
/// Most bytes of the user's own file.
pub const USER_BYTES: usize = 16 * 1024;

/// The user's own instructions file (`<config dir>/agent-tui/AGENTS.md`).
pub fn user_file() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "agent-tui").map(|d| d.config_dir().join("AGENTS.md"))
}

/// The user's instructions, bounded, and where they were read.
pub fn user_text(path: Option<&Path>) -> Option<(String, String)> {
    let path = path?;
    let text = std::fs::read_to_string(path).ok()?;
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let mut end = text.len().min(USER_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Some((path.display().to_string(), text[..end].to_string()))
}

/// The memory file of folder `dir` (relative, `""` for the root), read
/// beneath the root: its path and text.
pub fn folder_file(ws: &Workspace, dir: &str, max_bytes: usize) -> Option<(String, String)> {
    NAMES.iter().find_map(|name| {
        let rel = if dir.is_empty() {
            (*name).to_string()
        } else {
            format!("{dir}/{name}")
        };
        let bytes = ws.scope_dir(0).read_opt(Path::new(&rel)).ok()??;
        let text = String::from_utf8_lossy(&bytes[..bytes.len().min(max_bytes)]).into_owned();
        (!text.trim().is_empty()).then_some((rel, text))
    })
}

/// The folders between the root and `file` (relative), outermost first,
/// the root left out: `a/b/c.rs` gives `a`, `a/b`.
fn folders_of(file: &str) -> Vec<String> {
    let parts: Vec<&str> = file.split('/').filter(|p| !p.is_empty()).collect();
    (1..parts.len()).map(|n| parts[..n].join("/")).collect()
}

/// The paths a tool call reads or edits (`file_path` arguments).
pub fn touched(arguments: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if let Some(p) = arguments["file_path"].as_str() {
        out.push(p.to_string());
    }
    for edit in arguments["edits"].as_array().into_iter().flatten() {
        if let Some(p) = edit["file_path"].as_str() {
            out.push(p.to_string());
        }
    }
    out
}

/// The subfolders' instructions a call on `paths` brings in that `given`
/// does not hold yet (each added to it), as the result's `instructions`.
pub fn nested_for(ws: &Workspace, paths: &[String], given: &mut Vec<String>) -> Option<Value> {
    let mut found = Vec::new();
    for path in paths {
        if path.starts_with('@') || path.starts_with('/') {
            continue;
        }
        for dir in folders_of(path) {
            if given.contains(&dir) {
                continue;
            }
            given.push(dir.clone());
            if let Some((from, text)) = folder_file(ws, &dir, NESTED_BYTES) {
                found.push(json!({
                    "from": from,
                    "applies_to": format!("{dir}/"),
                    "text": text.trim_end(),
                }));
            }
        }
    }
    (!found.is_empty()).then(|| Value::Array(found))
}

/// The folders whose instructions the conversation already carries (an
/// earlier job's tool result), so they are not given twice.
pub fn given_in(history: &[crate::llm::Message]) -> Vec<String> {
    let mut out = Vec::new();
    for message in history {
        if let crate::llm::Message::Tool(result) = message
            && let Some(v) = &result.result
        {
            for item in v["instructions"].as_array().into_iter().flatten() {
                if let Some(dir) = item["applies_to"].as_str() {
                    out.push(dir.trim_end_matches('/').to_string());
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_files_folders_run_from_the_outermost() {
        assert_eq!(folders_of("a/b/c.rs"), ["a", "a/b"]);
        assert!(folders_of("top.rs").is_empty());
    }

    #[test]
    fn edits_and_reads_name_their_files() {
        let args = json!({"edits": [{"file_path": "x/y.rs"}, {"file_path": "z.rs"}]});
        assert_eq!(touched(&args), ["x/y.rs", "z.rs"]);
        assert_eq!(touched(&json!({"file_path": "a.rs"})), ["a.rs"]);
    }
}
