//! What an instruction pins, as the model reads it: files after a marker
//! that says to read them with `read_file`, web pages (`/web URL`) after
//! one that says to read them with `web_fetch`. A front end writes them; a
//! resumed session and the engine read them back (a pinned page is the
//! user's own choice: its fetch is not asked again).

/// Precedes the pinned files (joined by ", ") up to a closing `]`.
pub const FILES: &str =
    "\n\n[Pinned context: the user pinned these files; read them with read_file: ";
/// Precedes the pinned web pages, the same way.
pub const PAGES: &str =
    "\n\n[Pinned pages: the user pinned these web pages; read them with web_fetch: ";

/// A pin that is a web page.
pub fn is_page(pin: &str) -> bool {
    pin.starts_with("http://") || pin.starts_with("https://")
}

/// `text` as sent with `pinned` (files and pages; nothing added for none).
pub fn with_pinned(text: &str, pinned: &[String]) -> String {
    let (pages, files): (Vec<&String>, Vec<&String>) = pinned.iter().partition(|p| is_page(p));
    let mut out = text.to_string();
    for (marker, list) in [(FILES, files), (PAGES, pages)] {
        if !list.is_empty() {
            let list: Vec<&str> = list.iter().map(|s| s.as_str()).collect();
            out.push_str(&format!("{marker}{}]", list.join(", ")));
        }
    }
    out
}

/// A sent instruction split into the user's own text and what it pinned
/// (files first, then pages).
pub fn split_pinned(prompt: &str) -> (&str, Vec<String>) {
    let (rest, pages) = cut(prompt, PAGES);
    let (own, mut files) = cut(rest, FILES);
    files.extend(pages);
    (own, files)
}

/// The web pages `prompt` pins.
pub fn pinned_pages(prompt: &str) -> Vec<String> {
    cut(prompt, PAGES).1
}

/// `prompt` without a trailing `marker…]` list, and the list.
fn cut<'a>(prompt: &'a str, marker: &str) -> (&'a str, Vec<String>) {
    let found = prompt.rfind(marker).and_then(|at| {
        let list = prompt[at + marker.len()..].strip_suffix(']')?;
        Some((at, list))
    });
    match found {
        Some((at, list)) => (
            &prompt[..at],
            list.split(", ")
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect(),
        ),
        None => (prompt, Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_markers_go_on_and_come_off() {
        let pinned = vec![
            "a.rs".to_string(),
            "https://docs.rs/x".to_string(),
            "src/b.rs:3-9".to_string(),
        ];
        let sent = with_pinned("fix it\nplease", &pinned);
        assert!(sent.contains("read_file: a.rs, src/b.rs:3-9]"), "{sent}");
        assert!(sent.ends_with("web_fetch: https://docs.rs/x]"), "{sent}");
        let (own, back) = split_pinned(&sent);
        assert_eq!(own, "fix it\nplease");
        assert_eq!(back, vec!["a.rs", "src/b.rs:3-9", "https://docs.rs/x"]);
        assert_eq!(pinned_pages(&sent), vec!["https://docs.rs/x"]);
        assert_eq!(with_pinned("plain", &[]), "plain");
        assert_eq!(split_pinned("plain [x]"), ("plain [x]", Vec::new()));
        // Sessions from before pages could be pinned read back as they were.
        let old = format!("do it{FILES}a.rs]");
        assert_eq!(split_pinned(&old), ("do it", vec!["a.rs".to_string()]));
    }
}
