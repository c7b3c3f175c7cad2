//! Properties of `web_fetch`'s HTML to Markdown (SPEC 20) over generated
//! pages: no panic, no word of the page's text lost, no word of a script,
//! style, navigation or form kept, and output bounded by the input; on any
//! string at all, no panic and the same bound.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agent_tui::web::html::to_markdown;
use proptest::prelude::*;

/// A page as a tree: text, an element around children, a table, or an
/// element whose content is dropped.
#[derive(Debug, Clone)]
enum Node {
    Text(u8),
    El(&'static str, Vec<Node>),
    Table(Vec<Vec<u8>>),
    Dropped(&'static str, u8),
}

const KEPT: [&str; 16] = [
    "p",
    "div",
    "span",
    "em",
    "strong",
    "code",
    "h2",
    "blockquote",
    "section",
    "article",
    "a",
    "pre",
    "li",
    "ul",
    "ol",
    "main",
];
const DROPPED: [&str; 5] = ["script", "style", "nav", "form", "noscript"];

fn node() -> impl Strategy<Value = Node> {
    let leaf = prop_oneof![
        (1u8..4).prop_map(Node::Text),
        (0..DROPPED.len(), 1u8..3).prop_map(|(i, n)| Node::Dropped(DROPPED[i], n)),
        proptest::collection::vec(proptest::collection::vec(1u8..3, 1..4), 1..4)
            .prop_map(Node::Table),
    ];
    leaf.prop_recursive(6, 64, 5, |inner| {
        (0..KEPT.len(), proptest::collection::vec(inner, 0..5))
            .prop_map(|(i, children)| Node::El(KEPT[i], children))
    })
}

/// The page's HTML, with the words that must be kept and those that must go.
struct Page {
    html: String,
    kept: Vec<String>,
    gone: Vec<String>,
    next: usize,
}

impl Page {
    fn word(&mut self) -> String {
        self.next += 1;
        format!("q{}z", self.next)
    }

    fn words(&mut self, n: u8, kept: bool) -> String {
        let words: Vec<String> = (0..n).map(|_| self.word()).collect();
        if kept {
            self.kept.extend(words.iter().cloned());
        } else {
            self.gone.extend(words.iter().cloned());
        }
        words.join(" ")
    }

    fn render(&mut self, node: &Node) {
        match node {
            Node::Text(n) => {
                let text = self.words(*n, true);
                self.html.push_str(&format!(" {text} "));
            }
            Node::Dropped(tag, n) => {
                let text = self.words(*n, false);
                self.html.push_str(&format!("<{tag}>{text}</{tag}>"));
            }
            Node::Table(rows) => {
                self.html.push_str("<table>");
                for row in rows {
                    self.html.push_str("<tr>");
                    for cell in row {
                        let text = self.words(*cell, true);
                        self.html.push_str(&format!("<td>{text}</td>"));
                    }
                    self.html.push_str("</tr>");
                }
                self.html.push_str("</table>");
            }
            Node::El(tag, children) => {
                let open = if *tag == "a" {
                    "<a href=\"https://example.org/x\">".to_string()
                } else {
                    format!("<{tag}>")
                };
                self.html.push_str(&open);
                for child in children {
                    self.render(child);
                }
                self.html.push_str(&format!("</{tag}>"));
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn no_text_is_lost_and_nothing_dropped_is_kept(nodes in proptest::collection::vec(node(), 1..6)) {
        let mut page = Page { html: "<html><body>".into(), kept: Vec::new(), gone: Vec::new(), next: 0 };
        for n in &nodes {
            page.render(n);
        }
        page.html.push_str("</body></html>");
        let md = to_markdown(&page.html);
        for word in &page.kept {
            prop_assert!(md.contains(word.as_str()), "{word} lost from {}\n->\n{md}", page.html);
        }
        for word in &page.gone {
            prop_assert!(!md.contains(word.as_str()), "{word} kept from {}\n->\n{md}", page.html);
        }
        prop_assert!(md.len() <= 3 * page.html.len() + 64);
    }

    #[test]
    fn any_input_converts_within_bounds(text in "(<[a-z/!]{0,8}[ a-z=\"]{0,12}>|[^<]{0,20}|&[a-z#0-9]{0,6};?){0,60}") {
        let md = to_markdown(&text);
        prop_assert!(md.len() <= 3 * text.len() + 64, "{text:?} -> {md:?}");
    }
}
