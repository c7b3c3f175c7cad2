//! A page's HTML made Markdown here, with no model involved: headings,
//! links with their URLs, lists, tables, quotes and code kept; scripts,
//! styles, navigation, forms and embedded media dropped. Streamed from
//! html5ever's tokenizer (the WHATWG one: entities, the raw text of scripts
//! and styles, any broken markup) with no tree, so the time is linear in
//! the page whatever its nesting. (A tree-building converter took 190 ms
//! for a 2 MB page here, four times the budget, and 1.8 s for 20,000
//! nested `<div>`: its scope checks walk the open elements.)

use std::cell::RefCell;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer,
};

/// Elements whose content is never text a reader wants.
const DROPPED: [&str; 16] = [
    "script", "style", "noscript", "template", "nav", "aside", "form", "iframe", "svg", "canvas",
    "button", "head", "select", "textarea", "object", "dialog",
];
/// Dropped outside `main` / `article` only (a site's banner and links; an
/// article's own header holds its title).
const CHROME: [&str; 2] = ["header", "footer"];
/// Elements with no end tag.
const VOID: [&str; 14] = [
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr", "param",
];
/// Blocks set apart by a blank line.
const BLOCKS: [&str; 12] = [
    "p",
    "section",
    "article",
    "main",
    "figure",
    "figcaption",
    "details",
    "address",
    "dl",
    "center",
    "fieldset",
    "body",
];
/// Blocks that start a new line only.
const LINES: [&str; 5] = ["div", "dt", "dd", "summary", "caption"];

/// `html` as Markdown (blank runs squeezed, no trailing spaces).
pub fn to_markdown(html: &str) -> String {
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(html));
    let tokenizer = Tokenizer::new(Sink(RefCell::new(Writer::default())), Default::default());
    let _ = tokenizer.feed(&input);
    tokenizer.end();
    let mut writer = tokenizer.sink.0.into_inner();
    writer.finish();
    squeeze(&writer.out)
}

struct Sink(RefCell<Writer>);

impl TokenSink for Sink {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        let mut w = self.0.borrow_mut();
        match token {
            Token::TagToken(tag) => return w.tag(&tag),
            Token::CharacterTokens(text) => w.text(&text),
            Token::NullCharacterToken
            | Token::CommentToken(_)
            | Token::DoctypeToken(_)
            | Token::ParseError(_)
            | Token::EOFToken => {}
        }
        TokenSinkResult::Continue
    }
}

/// Lists and quotes deeper than this are drawn at this depth: a line's
/// prefix stays short however deep a page nests, where it would make the
/// Markdown grow with the square of the page (found by the html fuzz
/// target: 1,036 bytes of nested lists became 4,434).
const MAX_NESTING: usize = 6;

#[derive(Debug, Clone, Copy)]
enum List {
    Bullet,
    Ordered(u32),
}

/// Where a table is: cells of its first row are counted for the line
/// under it.
#[derive(Debug, Default)]
struct Table {
    row: bool,
    cell: bool,
    rows: u32,
    cells: u32,
}

#[derive(Debug, Default)]
struct Writer {
    out: String,
    /// Dropped elements open (their content is skipped).
    skip: Vec<String>,
    /// `main` / `article` open.
    main: u32,
    pre: u32,
    quote: u32,
    lists: Vec<List>,
    /// Open links: their target and where their text starts.
    links: Vec<Option<(String, usize)>>,
    tables: Vec<Table>,
    /// White space seen since the last word.
    space: bool,
    /// An opening mark (`` ` ``, `*`, `[`) was just written: no space after it.
    opened: bool,
}

impl Writer {
    fn tag(&mut self, tag: &Tag) -> TokenSinkResult<()> {
        let name: &str = &tag.name;
        let start = tag.kind == TagKind::StartTag;
        let raw = match name {
            "script" => Some(RawKind::ScriptData),
            "style" | "xmp" | "iframe" | "noembed" | "noframes" | "noscript" => {
                Some(RawKind::Rawtext)
            }
            "title" | "textarea" => Some(RawKind::Rcdata),
            _ => None,
        };
        let dropped = DROPPED.contains(&name) || (CHROME.contains(&name) && self.main == 0);
        if dropped || !self.skip.is_empty() {
            self.track_skip(name, start, tag.self_closing, dropped);
        } else if start {
            self.open(tag);
        } else {
            self.close(name);
        }
        match raw {
            // The tokenizer reads their content as text, not markup.
            Some(kind) if start && !tag.self_closing => TokenSinkResult::RawData(kind),
            _ => TokenSinkResult::Continue,
        }
    }

    fn track_skip(&mut self, name: &str, start: bool, self_closing: bool, dropped: bool) {
        if start && dropped && !self_closing && !VOID.contains(&name) {
            self.skip.push(name.to_string());
        } else if !start && let Some(at) = self.skip.iter().rposition(|n| n == name) {
            self.skip.truncate(at);
        }
    }

    fn open(&mut self, tag: &Tag) {
        let name: &str = &tag.name;
        match name {
            "main" | "article" => {
                self.main += 1;
                self.block();
            }
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                self.block();
                let level = usize::from(name.as_bytes()[1] - b'0');
                self.put(&format!("{} ", "#".repeat(level)));
            }
            "pre" => {
                self.block();
                self.put("```");
                self.pre += 1;
                self.out.push('\n');
            }
            "code" | "kbd" | "samp" | "tt" if self.pre == 0 => self.mark("`"),
            "em" | "i" | "cite" | "dfn" if self.pre == 0 => self.mark("*"),
            "strong" | "b" if self.pre == 0 => self.mark("**"),
            "a" => {
                let href = attr(tag, "href").filter(|h| !h.starts_with("javascript:"));
                self.space_before();
                self.prefix();
                self.opened = true;
                let at = self.out.len();
                self.links.push(href.map(|h| (h, at)));
            }
            "img" => {
                if let (Some(src), Some(alt)) = (attr(tag, "src"), attr(tag, "alt"))
                    && !alt.trim().is_empty()
                {
                    self.put(&format!("![{}]({src})", alt.trim()));
                }
            }
            "br" => self.newline(),
            "hr" => {
                self.block();
                self.put("---");
                self.block();
            }
            "blockquote" => {
                self.block();
                self.quote += 1;
            }
            "ul" | "ol" => {
                self.line();
                let list = match name {
                    "ol" => {
                        List::Ordered(attr(tag, "start").and_then(|s| s.parse().ok()).unwrap_or(1))
                    }
                    _ => List::Bullet,
                };
                self.lists.push(list);
            }
            "li" => self.item(),
            "table" => {
                self.block();
                self.tables.push(Table::default());
            }
            "tr" => self.row(),
            "td" | "th" => self.cell(),
            _ if BLOCKS.contains(&name) => self.block(),
            _ if LINES.contains(&name) => self.line(),
            _ => {}
        }
    }

    fn close(&mut self, name: &str) {
        match name {
            "main" | "article" => {
                self.main = self.main.saturating_sub(1);
                self.block();
            }
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => self.block(),
            "pre" if self.pre > 0 => {
                self.pre -= 1;
                if !self.out.ends_with('\n') {
                    self.out.push('\n');
                }
                self.put("```");
                self.block();
            }
            "code" | "kbd" | "samp" | "tt" if self.pre == 0 => self.out.push('`'),
            "em" | "i" | "cite" | "dfn" if self.pre == 0 => self.out.push('*'),
            "strong" | "b" if self.pre == 0 => self.out.push_str("**"),
            "a" => match self.links.pop() {
                Some(Some((href, at))) if self.out.len() > at => {
                    self.out.insert(at, '[');
                    self.out.push_str(&format!("]({href})"));
                }
                _ => {}
            },
            "blockquote" => {
                self.block();
                self.quote = self.quote.saturating_sub(1);
            }
            "ul" | "ol" => {
                self.lists.pop();
                if self.lists.is_empty() {
                    self.block();
                } else {
                    self.line();
                }
            }
            "td" | "th" => self.end_cell(),
            "tr" => self.end_row(),
            "table" => {
                self.end_row();
                self.tables.pop();
                self.block();
            }
            _ if BLOCKS.contains(&name) => self.block(),
            _ if LINES.contains(&name) => self.line(),
            _ => {}
        }
    }

    fn text(&mut self, text: &str) {
        if !self.skip.is_empty() {
            return;
        }
        if self.pre > 0 {
            for (i, part) in text.split('\n').enumerate() {
                if i > 0 {
                    self.out.push('\n');
                }
                self.prefix();
                self.out.push_str(part);
            }
            return;
        }
        for (i, word) in text.split(char::is_whitespace).enumerate() {
            if i > 0 {
                self.space = true;
            }
            if !word.is_empty() {
                self.put(word);
            }
        }
    }

    /// `text` at the current place: a space first if one was seen, the
    /// line's prefix first on a new line.
    fn put(&mut self, text: &str) {
        self.space_before();
        self.prefix();
        self.out.push_str(text);
        self.opened = false;
    }

    /// An opening mark, after the space before it.
    fn mark(&mut self, mark: &str) {
        self.put(mark);
        self.opened = true;
    }

    fn space_before(&mut self) {
        if self.space && !self.opened && !self.out.is_empty() && !self.out.ends_with(['\n', ' ']) {
            self.out.push(' ');
        }
        self.space = false;
    }

    /// On a fresh line: the quotes' `> ` and, inside a table cell, nothing.
    fn prefix(&mut self) {
        if self.quote > 0 && (self.out.is_empty() || self.out.ends_with('\n')) {
            let depth = usize::try_from(self.quote).unwrap_or(MAX_NESTING);
            self.out.push_str(&"> ".repeat(depth.min(MAX_NESTING)));
        }
    }

    fn in_cell(&self) -> bool {
        self.tables.last().is_some_and(|t| t.cell)
    }

    /// Ends the line (a space inside a table cell, whose row is one line).
    fn newline(&mut self) {
        if self.in_cell() {
            self.space = true;
            return;
        }
        self.out.push('\n');
        self.space = false;
    }

    fn line(&mut self) {
        if self.in_cell() {
            self.space = true;
        } else if !self.out.is_empty() && !self.out.ends_with('\n') {
            self.out.push('\n');
        }
        self.space = false;
    }

    fn block(&mut self) {
        if self.in_cell() {
            self.space = true;
            return;
        }
        self.line();
        if !self.out.is_empty() && !self.out.ends_with("\n\n") {
            self.out.push('\n');
        }
    }

    fn item(&mut self) {
        self.line();
        let depth = self.lists.len().saturating_sub(1).min(MAX_NESTING - 1);
        let marker = match self.lists.last_mut() {
            Some(List::Ordered(n)) => {
                let marker = format!("{n}. ");
                *n = n.saturating_add(1);
                marker
            }
            Some(List::Bullet) | None => "- ".to_string(),
        };
        self.prefix();
        self.out.push_str(&"  ".repeat(depth));
        self.out.push_str(&marker);
        self.space = false;
    }

    fn row(&mut self) {
        self.end_row();
        let Some(t) = self.tables.last_mut() else {
            return;
        };
        t.row = true;
        t.cells = 0;
        self.line();
        self.prefix();
        self.out.push('|');
    }

    fn cell(&mut self) {
        if self.tables.last().is_some_and(|t| !t.row) {
            self.row();
        }
        self.end_cell();
        if let Some(t) = self.tables.last_mut() {
            t.cell = true;
            t.cells += 1;
        }
        self.out.push(' ');
        self.space = false;
    }

    fn end_cell(&mut self) {
        if let Some(t) = self.tables.last_mut()
            && t.cell
        {
            t.cell = false;
            self.out.push_str(" |");
        }
    }

    /// Closes the open row; under the first, the line Markdown needs.
    fn end_row(&mut self) {
        self.end_cell();
        let Some(t) = self.tables.last_mut() else {
            return;
        };
        if !t.row {
            return;
        }
        t.row = false;
        t.rows += 1;
        if t.rows == 1 {
            let cells = t.cells.max(1) as usize;
            self.out.push('\n');
            self.prefix();
            self.out.push('|');
            self.out.push_str(&" --- |".repeat(cells));
        }
        self.out.push('\n');
    }
}

impl Writer {
    /// The page ended: open tables and code blocks are closed.
    fn finish(&mut self) {
        while !self.tables.is_empty() {
            self.end_row();
            self.tables.pop();
        }
        while self.pre > 0 {
            self.close("pre");
        }
    }
}

/// Attribute `name` of `tag`.
fn attr(tag: &Tag, name: &str) -> Option<String> {
    tag.attrs
        .iter()
        .find(|a| &*a.name.local == name)
        .map(|a| a.value.to_string())
}

/// At most one blank line in a row, no trailing spaces, no blank ends.
fn squeeze(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.lines() {
        let line = line.trim_end();
        // A list item whose content was all dropped (icons, buttons).
        let bare_item = line.trim_start() == "-"
            || line
                .trim_start()
                .strip_suffix('.')
                .is_some_and(|n| n.parse::<u32>().is_ok());
        if line.is_empty() || bare_item {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_becomes_clean_markdown() {
        let page = r#"<html><head><title>T</title><style>body{color:red}</style>
            <script>alert("<b>x</b>")</script></head><body>
            <nav><a href="/home">Home</a></nav><header>Site banner</header>
            <main><h1>Release notes</h1><p>See <a href="https://docs.rs/x">the docs</a>
            &amp; <em>more</em>. Use <code>parse</code> to <code> read</code>.</p>
            <ul><li>one<ul><li>inner</li></ul></li><li>two</li></ul>
            <ol start="3"><li>three</li><li>four</li></ol>
            <table><thead><tr><th>A</th><th>B</th></tr></thead>
            <tbody><tr><td>1</td><td>2</td></tr></tbody></table>
            <blockquote><p>Quoted</p></blockquote>
            <pre><code>let x = 1;
let y = 2;</code></pre></main><footer>© site</footer></body></html>"#;
        let md = to_markdown(page);
        let want = "# Release notes\n\nSee [the docs](https://docs.rs/x) & *more*. Use `parse` to `read`.\n\n\
                    - one\n  - inner\n- two\n\n3. three\n4. four\n\n\
                    | A | B |\n| --- | --- |\n| 1 | 2 |\n\n> Quoted\n\n\
                    ```\nlet x = 1;\nlet y = 2;\n```";
        assert_eq!(md, want);
    }

    #[test]
    fn deep_nesting_and_broken_markup_do_not_crash() {
        let deep = format!("{}text{}", "<div>".repeat(100_000), "</div>".repeat(10));
        assert_eq!(to_markdown(&deep), "text");
        let broken = to_markdown("<p><b>unclosed <i>tags <table><td>x<td>y");
        assert!(
            broken.contains("unclosed") && broken.contains("| x | y |"),
            "{broken}"
        );
        assert_eq!(to_markdown(""), "");
        assert_eq!(to_markdown("<a href=\"/x\"><img src=i.png></a>"), "");
    }

    #[test]
    fn nesting_past_the_limit_keeps_lines_short() {
        let lists = to_markdown(&"<ul><li>x".repeat(2_000));
        let widest = lists.lines().map(str::len).max().unwrap();
        assert_eq!(widest, 2 * (MAX_NESTING - 1) + "- x".len(), "{widest}");
        assert_eq!(lists.lines().count(), 2_000);
        let quotes = to_markdown(&format!("{}deep", "<blockquote>".repeat(2_000)));
        assert_eq!(quotes, "> ".repeat(MAX_NESTING) + "deep");
        let last = to_markdown("<ol start=\"4294967295\"><li>a<li>b</ol>");
        assert_eq!(last, "4294967295. a\n4294967295. b");
    }
}
