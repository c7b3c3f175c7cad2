//! Syntax highlighting with syntect, run off the UI task: text in, coloured
//! spans out (plain data, so the app stays free of I/O and the result can be
//! cached).

use std::sync::OnceLock;

use ratatui::style::Color;
use syntect::easy::HighlightLines;
use syntect::highlighting::{Theme, ThemeSet};
use syntect::parsing::SyntaxSet;

/// One line as (colour, text) runs.
pub type StyledLine = Vec<(Color, String)>;

fn assets() -> &'static (SyntaxSet, Theme) {
    static ASSETS: OnceLock<(SyntaxSet, Theme)> = OnceLock::new();
    ASSETS.get_or_init(|| {
        let syntaxes = SyntaxSet::load_defaults_newlines();
        let mut themes = ThemeSet::load_defaults().themes;
        let theme = themes.remove("base16-ocean.dark").unwrap_or_default();
        (syntaxes, theme)
    })
}

/// Loads the syntax definitions off the UI task, once, before they are
/// needed: when a job starts (its answer's code blocks, its review's hunks).
/// Until then a browsing session does not hold them (about 2 MB).
pub fn warm() {
    static ASKED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !ASKED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        tokio::task::spawn_blocking(|| {
            assets();
        });
    }
}

/// Highlights `text` as the language of `path` (by extension), at most
/// `max_lines` lines. Unknown languages come back uncoloured.
pub fn highlight(path: &str, text: &str, max_lines: usize) -> Vec<StyledLine> {
    let (syntaxes, _) = assets();
    let ext = path.rsplit('.').next().unwrap_or_default();
    let syntax = syntaxes
        .find_syntax_by_extension(ext)
        .unwrap_or_else(|| syntaxes.find_syntax_plain_text());
    lines_of(syntax, text, max_lines)
}

/// Highlights a review's hunks, each as the language of its file: (hunk
/// id, file path, code) in, (hunk id, coloured lines) out.
pub fn highlight_hunks(hunks: Vec<(String, String, String)>) -> Vec<(String, Vec<StyledLine>)> {
    hunks
        .into_iter()
        .map(|(id, path, code)| {
            let n = code.lines().count().max(1);
            (id, highlight(&path, &code, n))
        })
        .collect()
}

/// Highlights a code block by its fence's language tag (`rust`, `py`,
/// `shell` ...); an unknown or missing tag comes back uncoloured.
pub fn highlight_code(lang: &str, text: &str, max_lines: usize) -> Vec<StyledLine> {
    let (syntaxes, _) = assets();
    let lang = lang.to_ascii_lowercase();
    let name = match lang.as_str() {
        "shell" | "console" | "zsh" | "sh" => "bash",
        "jsonc" | "json5" => "json",
        "ts" | "typescript" | "tsx" => "js",
        other => other,
    };
    let syntax = syntaxes
        .find_syntax_by_token(name)
        .unwrap_or_else(|| syntaxes.find_syntax_plain_text());
    lines_of(syntax, text, max_lines)
}

fn lines_of(
    syntax: &syntect::parsing::SyntaxReference,
    text: &str,
    max_lines: usize,
) -> Vec<StyledLine> {
    let (syntaxes, theme) = assets();
    let mut highlighter = HighlightLines::new(syntax, theme);
    let mut out = Vec::new();
    for line in syntect::util::LinesWithEndings::from(text).take(max_lines) {
        let runs = match highlighter.highlight_line(line, syntaxes) {
            Ok(runs) => runs
                .into_iter()
                .map(|(style, s)| {
                    let c = style.foreground;
                    (
                        Color::Rgb(c.r, c.g, c.b),
                        s.trim_end_matches(['\n', '\r']).to_string(),
                    )
                })
                .collect(),
            Err(_) => vec![(
                Color::Reset,
                line.trim_end_matches(['\n', '\r']).to_string(),
            )],
        };
        out.push(runs);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_gets_colours_and_text_survives() {
        let lines = highlight("a.rs", "fn main() {\n    let x = 1;\n}\n", 100);
        assert_eq!(lines.len(), 3);
        let text: String = lines[1].iter().map(|(_, s)| s.as_str()).collect();
        assert_eq!(text, "    let x = 1;");
        let colours: std::collections::HashSet<String> = lines
            .iter()
            .flatten()
            .map(|(c, _)| format!("{c:?}"))
            .collect();
        assert!(colours.len() > 1, "{colours:?}");
        assert_eq!(highlight("x.unknownext", "a\nb\n", 1).len(), 1);
    }

    #[test]
    fn code_blocks_by_language_tag() {
        let distinct = |lines: Vec<StyledLine>| {
            lines
                .iter()
                .flatten()
                .map(|(c, _)| format!("{c:?}"))
                .collect::<std::collections::HashSet<_>>()
                .len()
        };
        assert!(distinct(highlight_code("python", "def f(x):\n    return 1\n", 10)) > 1);
        assert!(distinct(highlight_code("shell", "echo \"hi\" | grep h\n", 10)) > 1);
        assert_eq!(distinct(highlight_code("nosuchlang", "a b c\n", 10)), 1);
    }
}
