//! Pinned files as an instruction carries them: a marker after the user's
//! own text tells the model to read them; a resumed session reads it back
//! (the user's text is shown without it, and the files are pinned again).

/// What precedes the pinned paths (joined by ", ") up to a closing `]`.
const MARKER: &str = "\n\n[Pinned context: the user pinned these files; read them with read_file: ";

/// `text` as sent to the model with `pinned` (nothing added when none is).
pub fn with_pinned(text: &str, pinned: &[String]) -> String {
    if pinned.is_empty() {
        return text.to_string();
    }
    format!("{text}{MARKER}{}]", pinned.join(", "))
}

/// A sent instruction split into the user's own text and the files it
/// pinned (none when it carries no marker).
pub fn split_pinned(prompt: &str) -> (&str, Vec<String>) {
    let found = prompt.rfind(MARKER).and_then(|at| {
        let list = prompt[at + MARKER.len()..].strip_suffix(']')?;
        Some((at, list))
    });
    match found {
        Some((at, list)) => {
            let paths = list
                .split(", ")
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect();
            (&prompt[..at], paths)
        }
        None => (prompt, Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_goes_on_and_comes_off() {
        let pinned = vec!["a.rs".to_string(), "src/b.rs:3-9".to_string()];
        let sent = with_pinned("fix it\nplease", &pinned);
        assert!(sent.ends_with("read_file: a.rs, src/b.rs:3-9]"), "{sent}");
        assert_eq!(split_pinned(&sent), ("fix it\nplease", pinned));
        assert_eq!(with_pinned("plain", &[]), "plain");
        assert_eq!(split_pinned("plain [x]"), ("plain [x]", Vec::new()));
    }
}
