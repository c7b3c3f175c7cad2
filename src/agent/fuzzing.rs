//! Fuzz doors of what the engine reads from files and commands
//! (`fuzz/`, `tests/fuzz_corpus.rs`): unified diffs (`fs/patch`), custom
//! command files and hook output. Each takes any bytes and panics only
//! when a property fails.

use super::commands::{Format, expand, invocation, parse};
use super::patch;

/// Two texts from one input: split at the first 0xFF byte (else halved).
fn two(data: &[u8]) -> Option<(&str, &str)> {
    let at = data
        .iter()
        .position(|b| *b == 0xFF)
        .unwrap_or(data.len() / 2);
    let (a, b) = data.split_at(at);
    let b = b.strip_prefix(&[0xFF]).unwrap_or(b);
    Some((std::str::from_utf8(a).ok()?, std::str::from_utf8(b).ok()?))
}

/// `fs/patch`: any patch text is read or refused (and applied to any file
/// or refused) without a panic; a diff made of two texts turns the first
/// into the second.
pub fn patch(data: &[u8]) {
    let Some((old, new)) = two(data) else {
        return;
    };
    if let Ok(files) = patch::parse(old) {
        for file in &files {
            let _ = patch::apply(file, Some(new));
            let _ = patch::apply(file, None);
        }
    }
    // Made the way `diff -u` makes it (lines end in \n here: a `\r` or a
    // missing last newline is the diff tool's business, marked `\ No
    // newline at end of file`).
    if old.contains('\r') || new.contains('\r') {
        return;
    }
    let diff = similar::TextDiff::from_lines(old, new);
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header("a/f.txt", "b/f.txt")
        .to_string();
    if text.is_empty() {
        return;
    }
    let files = match patch::parse(&text) {
        Ok(files) => files,
        Err(e) => panic!("our own diff does not parse: {e:?}\n{text}"),
    };
    assert_eq!(files.len(), 1, "{text}");
    let current = if old.is_empty() && files[0].create {
        None
    } else {
        Some(old)
    };
    match patch::apply(&files[0], current) {
        Ok(out) => assert_eq!(out, new, "the diff applied\n{text}"),
        Err(e) => panic!("our own diff does not apply: {e}\n{text}"),
    }
}

/// Custom command files (SPEC 19), Markdown with front matter or Gemini's
/// TOML: read or skipped without a panic; a Markdown template is the
/// file's own text; expanding arguments keeps them whole.
pub fn commands(data: &[u8]) {
    let Some((file, args)) = two(data) else {
        return;
    };
    for (name, format) in [("fix.md", Format::Markdown), ("fix.toml", Format::Toml)] {
        let Some(command) = parse(name, file, format, "project") else {
            continue;
        };
        assert_eq!(command.name, "fix");
        if format == Format::Markdown {
            assert!(file.contains(command.template.as_str()), "{command:?}");
        }
        let expanded = expand(&command, args);
        let template = &command.template;
        let numbered = (1..=9).any(|n| template.contains(&format!("${n}")));
        let whole = template.contains("$ARGUMENTS") || template.contains("{{args}}");
        if whole || !numbered {
            assert!(expanded.contains(args.trim()), "{expanded:?} lost {args:?}");
        }
        let commands = [command];
        let _ = invocation(&commands, &format!("/fix {args}"));
        let _ = invocation(&commands, args);
    }
}

/// A hook's output (SPEC 21): one JSON object by the contract or a clear
/// error, never a panic; what it decided is what it wrote.
pub fn hook_output(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // As `hook_run` reads it: trimmed, then one JSON object.
    let text = text.trim();
    let read = crate::protocol::object::from_object::<crate::protocol::HookAnswer>(text.as_bytes());
    if let Ok(answer) = read {
        let value: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
        assert!(value.is_object(), "{text:?} is not one JSON object");
        if let Some(reason) = &answer.reason {
            assert_eq!(value["reason"].as_str(), Some(reason.as_str()));
        }
    }
}
