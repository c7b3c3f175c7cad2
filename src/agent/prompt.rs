//! The system prompt: agent root, mode rules, and the project's AGENTS.md
//! (bounded, with truncation noted).

use crate::protocol::Mode;
use crate::workspace::{Access, ReadRange, Workspace, read_text_range};

const TEMPLATE: &str = include_str!("../../assets/prompts/system.md");
/// Most bytes of AGENTS.md included in the prompt.
pub const MAX_AGENTS_MD_BYTES: usize = 32 * 1024;

fn mode_rules(mode: Mode) -> &'static str {
    match mode {
        Mode::Ask => {
            "Answer the user's question. You may list, read and search the project; you cannot \
             change files or run commands in this mode."
        }
        Mode::Plan => {
            "Produce a plan, not changes. Read and search the project as needed, then answer with \
             a numbered list of concrete steps (which files and functions to change, in order, and \
             how to verify). You cannot change files or run commands in this mode."
        }
        Mode::Agent => {
            "Carry out the user's request. File changes only ever happen through the user's \
             hunk-by-hunk review: propose them with propose_edits when that tool is offered, and \
             never claim to have changed a file yourself. Commands run only when the user approves \
             them."
        }
    }
}

/// Most bytes of AGENTS.md in the lean prompt (small windows).
pub const LEAN_AGENTS_MD_BYTES: usize = 1024;

fn lean_mode_rules(mode: Mode) -> &'static str {
    match mode {
        Mode::Ask => "Answer the question; you cannot change files or run commands.",
        Mode::Plan => "Answer with a numbered plan of concrete steps; change nothing.",
        Mode::Agent => {
            "Edit with propose_edits, or write a file's path on a line, then its whole \
             new text in a fence."
        }
    }
}

/// The system prompt for a small window: the same rules in a few lines.
pub fn lean_system_prompt(workspace: &Workspace, mode: Mode) -> String {
    // The root's own name only: small models copy an absolute root into
    // their paths, which tools refuse.
    let name = workspace
        .root()
        .file_name()
        .map_or_else(|| "/".into(), |n| n.to_string_lossy());
    let mut prompt = format!(
        "You are agent-tui, a coding agent in the project `{name}`; tool paths are relative \
         to its root, never absolute. Mode: {}. {} Read before you answer; name files and \
         lines. Be brief.\n",
        mode.as_str(),
        lean_mode_rules(mode)
    );
    if workspace.scopes().len() > 1 {
        prompt.push_str("Other folders are reached as `@<id>/<path>` (list_scopes lists them).\n");
    }
    if let Some(section) = agents_md(workspace, LEAN_AGENTS_MD_BYTES) {
        prompt.push_str(&section);
    }
    prompt
}

/// The full system prompt for a job in `mode` on `workspace`.
pub fn system_prompt(workspace: &Workspace, mode: Mode) -> String {
    let mut prompt = TEMPLATE
        .replace("{root}", &workspace.root().display().to_string())
        .replace("{mode}", mode.as_str())
        .replace("{mode_rules}", mode_rules(mode));
    if workspace.scopes().len() > 1 {
        prompt.push('\n');
        prompt.push_str(&scopes_section(workspace));
    }
    if let Some(section) = agents_md(workspace, MAX_AGENTS_MD_BYTES) {
        prompt.push('\n');
        prompt.push_str(&section);
    }
    // The user's own file: in the full prompt only (a small window's lean
    // prompt keeps its budget without it).
    if let Some((from, text)) = super::memory::user_text(super::memory::user_file().as_deref()) {
        prompt.push_str(&format!(
            "\nThe user's own instructions, from {from} (the project's win where they differ):\n\n{text}\n"
        ));
    }
    prompt.push_str(
        "\nA subfolder may have instructions of its own: they come with the result of your first \
         read or edit of a file under it (`instructions`); follow them for that folder.\n",
    );
    prompt
}

/// The folders beside the agent root, each with its prefix and access.
fn scopes_section(workspace: &Workspace) -> String {
    let mut section = String::from(
        "Scopes: besides the agent root (`@root`; plain paths mean it), the tools reach these \
         folders. Name a file in one as `@<id>/<path>`, e.g. `@docs/README.md`; list_files and \
         search_project cover them all and list_scopes lists them. Nothing outside a scope can \
         be reached.\n",
    );
    for scope in workspace.scopes() {
        let access = match scope.access {
            Access::ReadWrite => "read-write",
            Access::ReadOnly => "read-only: read and search it, never propose edits to it",
        };
        section.push_str(&format!(
            "- `{scope}`: {} ({access})\n",
            scope.root.display()
        ));
    }
    section
}

/// The root's memory file section (AGENTS.md, else CLAUDE.md, else
/// GEMINI.md; at most `max_bytes` of it), if the root has a readable one.
fn agents_md(workspace: &Workspace, max_bytes: usize) -> Option<String> {
    super::memory::NAMES
        .iter()
        .find_map(|name| memory_section(workspace, name, max_bytes))
}

fn memory_section(workspace: &Workspace, name: &str, max_bytes: usize) -> Option<String> {
    let resolved = workspace.resolve(name).ok()?;
    let range = ReadRange {
        start_line: 1,
        end_line: Some(usize::MAX),
        max_lines: usize::MAX,
        max_bytes,
    };
    let file = workspace.open_file(&resolved).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let slice = read_text_range(file, range).ok()?;
    let mut section = format!(
        "Project instructions from {name} at the agent root (follow them unless the user says otherwise):\n\n",
    );
    section.push_str(slice.content.trim_end());
    section.push('\n');
    if slice.end_line < slice.total_lines || slice.truncated {
        section.push_str(&format!(
            "\n({name} is longer than {} KiB: only its first {} of {} lines are shown; read the rest with read_file if needed.)\n",
            max_bytes / 1024,
            slice.end_line,
            slice.total_lines
        ));
    }
    Some(section)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_root_mode_and_includes_agents_md() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("AGENTS.md"), "Use tabs.\n").unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let p = system_prompt(&ws, Mode::Plan);
        assert!(p.contains(&ws.root().display().to_string()));
        assert!(p.contains("Mode: plan."));
        assert!(p.contains("numbered list"));
        assert!(p.contains("Use tabs."));
        assert!(!p.contains("only its first"));
    }

    #[test]
    fn long_agents_md_is_truncated_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (0..5000).map(|i| format!("rule number {i}\n")).collect();
        std::fs::write(dir.path().join("AGENTS.md"), text).unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let p = system_prompt(&ws, Mode::Ask);
        assert!(p.len() < MAX_AGENTS_MD_BYTES + 4096);
        assert!(
            p.contains("of 5000 lines are shown"),
            "{}",
            &p[p.len() - 300..]
        );
    }

    #[test]
    fn no_agents_md_no_section() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        assert!(!system_prompt(&ws, Mode::Agent).contains("AGENTS.md"));
    }
}
