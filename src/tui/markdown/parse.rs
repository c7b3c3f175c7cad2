//! Markdown to blocks: pulldown-cmark's events become styled runs in blocks
//! (text with a hanging indent, code, tables, rules, gaps), each carrying
//! the prefix its containers give it (quote bars, list markers). Widths are
//! not known here; `layout` fits the blocks to a pane.

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Color, Modifier, Style};

use crate::tui::wrap::Run;

/// A table column's alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Center,
    Right,
}

/// One block of an answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// Wrapped text: `lead` starts its first line, `indent` the others.
    Text {
        lead: Vec<Run>,
        indent: Vec<Run>,
        runs: Vec<Run>,
    },
    /// Code (fenced or indented); `lang` is the fence's first word.
    Code {
        indent: Vec<Run>,
        lang: String,
        text: String,
    },
    Table {
        indent: Vec<Run>,
        align: Vec<Align>,
        head: Vec<Vec<Run>>,
        rows: Vec<Vec<Vec<Run>>>,
    },
    Rule {
        indent: Vec<Run>,
    },
    /// The gap between two blocks.
    Blank {
        indent: Vec<Run>,
    },
}

pub fn dim() -> Style {
    Style::new().fg(Color::DarkGray)
}

fn heading_style(level: HeadingLevel) -> Style {
    let bold = Style::new().add_modifier(Modifier::BOLD);
    match level {
        HeadingLevel::H1 => bold
            .fg(Color::LightMagenta)
            .add_modifier(Modifier::UNDERLINED),
        HeadingLevel::H2 => bold.fg(Color::LightMagenta),
        HeadingLevel::H3 => bold,
        HeadingLevel::H4 | HeadingLevel::H5 | HeadingLevel::H6 => {
            bold.add_modifier(Modifier::ITALIC)
        }
    }
}

pub fn inline_code_style() -> Style {
    Style::new().fg(Color::LightYellow)
}

/// A block container the text is inside.
enum Container {
    Quote,
    /// A list; `next` is the number of the next item of an ordered one.
    List {
        next: Option<u64>,
    },
    /// A list item; its marker leads the item's first line only.
    Item {
        marker: String,
        used: bool,
    },
}

/// A table being read.
struct TableBuild {
    align: Vec<Align>,
    head: Vec<Vec<Run>>,
    rows: Vec<Vec<Vec<Run>>>,
    row: Vec<Vec<Run>>,
}

struct Builder {
    blocks: Vec<Block>,
    containers: Vec<Container>,
    /// Inline styles, innermost last.
    styles: Vec<Style>,
    /// Inline text of the block (or table cell) being read.
    runs: Vec<Run>,
    code: Option<(String, String)>,
    table: Option<TableBuild>,
    /// The link being read: its destination and its text so far.
    link: Option<(String, String)>,
    /// A gap is due before the next block.
    gap: bool,
}

/// Parses markdown into blocks.
pub fn parse(text: &str) -> Vec<Block> {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut b = Builder {
        blocks: Vec::new(),
        containers: Vec::new(),
        styles: Vec::new(),
        runs: Vec::new(),
        code: None,
        table: None,
        link: None,
        gap: false,
    };
    // Where the last cell of a table row ended: what a row holds past its
    // table's columns, which the parser drops, is shown as more cells.
    let mut cell_end = 0;
    for (event, range) in Parser::new_ext(text, options).into_offset_iter() {
        match &event {
            Event::End(TagEnd::TableCell) => cell_end = range.end,
            Event::End(TagEnd::TableRow) => {
                b.excess_cells(text.get(cell_end.min(range.end)..range.end).unwrap_or(""));
            }
            _ => {}
        }
        b.event(event);
    }
    b.flush();
    if let Some((lang, text)) = b.code.take() {
        b.push_code(lang, text);
    }
    b.blocks
}

impl Builder {
    fn style(&self) -> Style {
        self.styles
            .iter()
            .fold(Style::new(), |acc, s| acc.patch(*s))
    }

    fn text(&mut self, text: &str, style: Style) {
        if let Some((_, link_text)) = &mut self.link {
            link_text.push_str(text);
        }
        match self.runs.last_mut() {
            Some((s, t)) if *s == style => t.push_str(text),
            _ => self.runs.push((style, text.to_string())),
        }
    }

    /// The prefix of a line: `first` gives unused item markers (and uses them).
    fn prefix(&mut self, first: bool) -> Vec<Run> {
        let mut out: Vec<Run> = Vec::new();
        for c in &mut self.containers {
            let (style, piece) = match c {
                Container::Quote => (dim(), "│ ".to_string()),
                Container::List { .. } => continue,
                Container::Item { marker, used } => {
                    let width = unicode_width::UnicodeWidthStr::width(marker.as_str());
                    if first && !*used {
                        *used = true;
                        let style = if marker.ends_with(". ") {
                            Style::new()
                        } else {
                            dim()
                        };
                        (style, marker.clone())
                    } else {
                        (Style::new(), " ".repeat(width))
                    }
                }
            };
            match out.last_mut() {
                Some((s, t)) if *s == style => t.push_str(&piece),
                _ => out.push((style, piece)),
            }
        }
        out
    }

    /// Starts a block: the gap before it, if one is due.
    fn open(&mut self) {
        if self.gap && !self.blocks.is_empty() {
            let indent = self.prefix(false);
            self.blocks.push(Block::Blank { indent });
        }
        self.gap = false;
    }

    /// Ends the text read so far as a block.
    fn flush(&mut self) {
        if self.runs.is_empty() {
            return;
        }
        self.open();
        let lead = self.prefix(true);
        let indent = self.prefix(false);
        let runs = std::mem::take(&mut self.runs);
        self.blocks.push(Block::Text { lead, indent, runs });
    }

    fn push_code(&mut self, lang: String, text: String) {
        self.open();
        self.prefix(true);
        let indent = self.prefix(false);
        let text = text.trim_end_matches('\n').replace('\t', "    ");
        self.blocks.push(Block::Code { indent, lang, text });
        self.gap = true;
    }

    fn event(&mut self, event: Event<'_>) {
        if let Some((_, code)) = &mut self.code {
            match event {
                Event::Text(t) => code.push_str(&t),
                Event::End(TagEnd::CodeBlock) => {
                    if let Some((lang, text)) = self.code.take() {
                        self.push_code(lang, text);
                    }
                }
                _ => {}
            }
            return;
        }
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.text(&t, self.style()),
            Event::Code(t) => self.text(&t, self.style().patch(inline_code_style())),
            Event::InlineMath(t) | Event::DisplayMath(t) => self.text(&t, self.style()),
            Event::Html(t) | Event::InlineHtml(t) => {
                self.text(t.trim_end_matches('\n'), self.style().patch(dim()))
            }
            Event::SoftBreak => self.text(" ", self.style()),
            Event::HardBreak => self.text("\n", self.style()),
            Event::Rule => {
                self.flush();
                self.open();
                let indent = self.prefix(false);
                self.blocks.push(Block::Rule { indent });
                self.gap = true;
            }
            Event::TaskListMarker(done) => {
                let mark = if done { "☑ " } else { "☐ " };
                self.text(mark, dim());
            }
            Event::FootnoteReference(name) => self.text(&format!("[^{name}]"), dim()),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.flush(),
            Tag::Heading { level, .. } => {
                self.flush();
                self.styles.push(heading_style(level));
            }
            Tag::BlockQuote(_) => {
                self.flush();
                self.open();
                self.containers.push(Container::Quote);
            }
            Tag::CodeBlock(kind) => {
                self.flush();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info
                        .split_whitespace()
                        .next()
                        .unwrap_or_default()
                        .to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::HtmlBlock => self.flush(),
            Tag::List(start) => {
                self.flush();
                self.open();
                self.containers.push(Container::List { next: start });
            }
            Tag::Item => self.start_item(),
            Tag::Table(align) => self.start_table(align),
            Tag::TableHead | Tag::TableRow | Tag::TableCell => self.runs.clear(),
            Tag::Emphasis => self
                .styles
                .push(Style::new().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.styles.push(Style::new().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self
                .styles
                .push(Style::new().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } => {
                let link = Style::new()
                    .fg(Color::LightBlue)
                    .add_modifier(Modifier::UNDERLINED);
                self.styles.push(link);
                self.link = Some((dest_url.to_string(), String::new()));
            }
            Tag::Image { dest_url, .. } => {
                self.text("[image: ", dim());
                self.styles.push(dim());
                self.link = Some((dest_url.to_string(), String::new()));
            }
            Tag::FootnoteDefinition(name) => {
                self.flush();
                self.text(&format!("[^{name}]: "), dim());
            }
            Tag::Superscript
            | Tag::Subscript
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::MetadataBlock(_) => self.styles.push(Style::new()),
        }
    }

    /// A list item: its marker (numbered, or a bullet by depth).
    fn start_item(&mut self) {
        self.flush();
        self.open();
        let depth = self
            .containers
            .iter()
            .filter(|c| matches!(c, Container::List { .. }))
            .count();
        let marker = match self.containers.last_mut() {
            Some(Container::List { next: Some(n) }) => {
                *n += 1;
                format!("{}. ", *n - 1)
            }
            _ => ["• ", "◦ ", "▪ "][(depth.max(1) - 1) % 3].to_string(),
        };
        self.containers.push(Container::Item {
            marker,
            used: false,
        });
    }

    fn start_table(&mut self, align: Vec<Alignment>) {
        self.flush();
        self.table = Some(TableBuild {
            align: align
                .into_iter()
                .map(|a| match a {
                    Alignment::Center => Align::Center,
                    Alignment::Right => Align::Right,
                    Alignment::None | Alignment::Left => Align::Left,
                })
                .collect(),
            head: Vec::new(),
            rows: Vec::new(),
            row: Vec::new(),
        });
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::HtmlBlock => {
                self.flush();
                self.gap = true;
            }
            TagEnd::Heading(_) => {
                self.styles.pop();
                self.flush();
                self.gap = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.containers.pop();
                self.gap = true;
            }
            TagEnd::CodeBlock => {}
            TagEnd::List(_) => {
                self.flush();
                self.containers.pop();
                if !self
                    .containers
                    .iter()
                    .any(|c| matches!(c, Container::Item { .. }))
                {
                    self.gap = true;
                }
            }
            TagEnd::Item => {
                self.flush();
                self.containers.pop();
            }
            TagEnd::TableCell | TagEnd::TableHead | TagEnd::TableRow | TagEnd::Table => {
                self.end_table_part(tag)
            }
            TagEnd::Link | TagEnd::Image => self.end_link(tag == TagEnd::Image),
            TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Superscript
            | TagEnd::Subscript
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::MetadataBlock(_) => {
                self.styles.pop();
            }
            TagEnd::FootnoteDefinition => {
                self.flush();
                self.gap = true;
            }
        }
    }
}

/// The cells of a row's text past its table's columns (`| x | y |`), split
/// at pipes not escaped, each cell's inline markdown read.
fn cells_of(rest: &str) -> Vec<Vec<Run>> {
    let rest = rest.trim();
    let rest = rest.strip_prefix('|').unwrap_or(rest);
    let rest = match rest.strip_suffix('|') {
        Some(r) if !r.ends_with('\\') => r,
        _ => rest,
    };
    if rest.trim().is_empty() {
        return Vec::new();
    }
    let (mut cells, mut cell) = (Vec::new(), String::new());
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cell.push('|');
                chars.next();
            }
            '|' => cells.push(std::mem::take(&mut cell)),
            _ => cell.push(c),
        }
    }
    cells.push(cell);
    cells
        .iter()
        .map(|cell| {
            parse(cell.trim())
                .into_iter()
                .flat_map(|block| match block {
                    Block::Text { runs, .. } => runs,
                    _ => Vec::new(),
                })
                .collect()
        })
        .collect()
}

impl Builder {
    /// What a table row holds past its columns (the parser drops it, as
    /// GitHub does): shown as more cells, so no text the model wrote is
    /// hidden.
    fn excess_cells(&mut self, rest: &str) {
        if let Some(t) = &mut self.table {
            t.row.extend(cells_of(rest));
        }
    }

    /// The end of a table's cell, head, row, or of the table itself.
    fn end_table_part(&mut self, tag: TagEnd) {
        if tag == TagEnd::Table {
            if let Some(t) = self.table.take() {
                self.open();
                self.prefix(true);
                let indent = self.prefix(false);
                self.blocks.push(Block::Table {
                    indent,
                    align: t.align,
                    head: t.head,
                    rows: t.rows,
                });
                self.gap = true;
            }
            return;
        }
        let cell = (tag == TagEnd::TableCell).then(|| std::mem::take(&mut self.runs));
        let Some(t) = &mut self.table else { return };
        match (cell, tag) {
            (Some(cell), _) => t.row.push(cell),
            (None, TagEnd::TableHead) => t.head = std::mem::take(&mut t.row),
            (None, _) => {
                let row = std::mem::take(&mut t.row);
                t.rows.push(row);
            }
        }
    }

    /// The end of a link (its URL after it, unless it is the text) or of
    /// an image's alt text.
    fn end_link(&mut self, image: bool) {
        self.styles.pop();
        let Some((url, text)) = self.link.take() else {
            return;
        };
        if image {
            self.text(&format!("] ({url})"), dim());
            return;
        }
        let same = url == text || url.strip_prefix("mailto:") == Some(&text);
        if !same && !url.is_empty() {
            self.text(&format!(" ({url})"), dim());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(blocks: &[Block]) -> Vec<String> {
        let join = |runs: &[Run]| runs.iter().map(|(_, t)| t.as_str()).collect::<String>();
        blocks
            .iter()
            .map(|b| match b {
                Block::Text { lead, runs, .. } => format!("T[{}]{}", join(lead), join(runs)),
                Block::Code { lang, text, .. } => format!("C[{lang}]{text}"),
                Block::Table { head, rows, .. } => format!("Tab{}x{}", head.len(), rows.len()),
                Block::Rule { .. } => "R".into(),
                Block::Blank { indent } => format!("B[{}]", join(indent)),
            })
            .collect()
    }

    #[test]
    fn blocks_of_a_typical_answer() {
        let md = "# Plan\n\nDo **this** and `that`:\n\n1. first\n2. second\n   - nested\n\n> quoted\n> text\n\n```rust\nfn main() {}\n```\n\n---\n| a | b |\n|---|--:|\n| 1 | 2 |\n";
        assert_eq!(
            texts(&parse(md)),
            [
                "T[]Plan",
                "B[]",
                "T[]Do this and that:",
                "B[]",
                "T[1. ]first",
                "T[2. ]second",
                "T[   ◦ ]nested",
                "B[]",
                "T[│ ]quoted text",
                "B[]",
                "C[rust]fn main() {}",
                "B[]",
                "R",
                "B[]",
                "Tab2x1",
            ]
        );
    }

    /// Found by the `markdown` fuzz target: a row with more cells than
    /// its table has columns lost them (pulldown-cmark drops them, as GFM
    /// says); they are shown as more cells instead.
    #[test]
    fn a_row_longer_than_its_table_keeps_its_cells() {
        let blocks = parse("| a | b |\n|---|---|\n| 1 | 2 | `three` | f\\|our |\n| 5 |\n");
        let Block::Table { head, rows, .. } = &blocks[0] else {
            panic!("{blocks:?}")
        };
        let join = |runs: &[Run]| runs.iter().map(|(_, t)| t.as_str()).collect::<String>();
        assert_eq!(head.len(), 2);
        let cells: Vec<Vec<String>> = rows
            .iter()
            .map(|r| r.iter().map(|c| join(c)).collect())
            .collect();
        assert_eq!(cells, [vec!["1", "2", "three", "f|our"], vec!["5", ""]]);
        let code = &rows[0][2][0];
        assert_eq!(code.0, inline_code_style());
    }

    #[test]
    fn links_show_their_url_unless_it_is_the_text() {
        let blocks = parse("see [the docs](https://x.dev/a) or <https://x.dev>");
        assert_eq!(
            texts(&blocks),
            ["T[]see the docs (https://x.dev/a) or https://x.dev"]
        );
    }

    #[test]
    fn an_unclosed_fence_is_code_to_the_end() {
        assert_eq!(
            texts(&parse("text\n\n```py\nx = 1\ny")),
            ["T[]text", "B[]", "C[py]x = 1\ny"]
        );
    }
}
