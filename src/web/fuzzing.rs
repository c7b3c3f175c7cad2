//! Fuzz door of web pages made Markdown (`fuzz/`, `tests/fuzz_corpus.rs`):
//! any HTML becomes Markdown without a panic, no larger than a few times
//! the page, with blank runs squeezed and no trailing spaces.

/// The property over one page.
pub fn html(data: &[u8]) {
    let page = String::from_utf8_lossy(data);
    let markdown = super::html::to_markdown(&page);
    assert!(
        markdown.len() <= 4 * page.len() + 64,
        "{} bytes of Markdown from {} of HTML",
        markdown.len(),
        page.len()
    );
    assert!(!markdown.contains("\n\n\n"), "a blank run: {markdown:?}");
    for line in markdown.lines() {
        assert_eq!(
            line.trim_end_matches([' ', '\t']),
            line,
            "trailing space: {line:?}"
        );
    }
}
