//! The symbol layer's answers: `find_symbol`, `find_references`,
//! `file_outline`, `repo_map`, and `code_search`'s `symbol` mode.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::View;
use super::graph::pagerank;
use super::model::Symbol;
use super::search::{SearchHit, SearchRequest, prior, round, sort};
use super::snippets::{clip, read_text, window};
use super::tokens::distinct_terms;
use crate::workspace::{PathFilter, Workspace};

#[derive(Debug, Clone, Serialize)]
pub struct SymbolHit {
    pub name: String,
    pub kind: String,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub signature: String,
    pub container: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Reference {
    pub path: String,
    pub line: u32,
    pub snippet: String,
    pub in_symbol: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct OutlineNode {
    pub name: String,
    pub kind: String,
    pub start_line: u32,
    pub end_line: u32,
    pub signature: String,
    pub children: Vec<OutlineNode>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Outline {
    pub path: String,
    pub symbols: Vec<OutlineNode>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RepoMap {
    pub map: String,
    pub tokens: usize,
    pub files: usize,
}

/// How well `name` answers `query` (0: not at all).
fn name_match(name: &str, query: &str, lower_query: &str, exact: bool) -> f32 {
    if name == query {
        return 4.0;
    }
    if exact {
        return 0.0;
    }
    let lower = name.to_ascii_lowercase();
    if lower == lower_query {
        3.0
    } else if lower.starts_with(lower_query) {
        2.0
    } else if lower.contains(lower_query) {
        1.0
    } else if lower_query.len() >= 3 && subsequence(lower_query, &lower) {
        0.5
    } else {
        0.0
    }
}

/// Every character of `needle`, in order, somewhere in `hay`.
pub fn subsequence(needle: &str, hay: &str) -> bool {
    let mut hay = hay.chars();
    needle.chars().all(|c| hay.any(|h| h == c))
}

fn kind_weight(kind: &str) -> f32 {
    match kind {
        "class" | "interface" | "function" | "method" | "module" | "type" | "struct" | "enum"
        | "trait" | "macro" | "fn" | "mod" | "union" | "typedef" => 1.0,
        _ => 0.8,
    }
}

fn rank_boost(rank: f32) -> f32 {
    1.0 + 0.1 * rank.max(0.01).ln().max(0.0)
}

/// `find_symbol`: definitions named like `name`, best first.
pub fn find_symbol(
    view: &View,
    name: &str,
    kind: Option<&str>,
    exact: bool,
    limit: usize,
) -> (Vec<SymbolHit>, bool) {
    let lower = name.to_ascii_lowercase();
    let mut found: Vec<(f32, u32, &Symbol)> = view
        .all_symbols()
        .filter(|(_, s)| kind.is_none_or(|k| super::tags::kind_is(&s.kind, k)))
        .filter_map(|(doc, s)| {
            let m = name_match(&s.name, name, &lower, exact);
            (m > 0.0).then(|| {
                let d = view.doc(doc);
                (
                    m * kind_weight(&s.kind) * prior(d).max(0.3) * rank_boost(d.rank),
                    doc,
                    s,
                )
            })
        })
        .collect();
    found.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| view.doc(a.1).path.cmp(&view.doc(b.1).path))
            .then(a.2.start_line.cmp(&b.2.start_line))
    });
    let truncated = found.len() > limit;
    let hits = found
        .into_iter()
        .take(limit)
        .map(|(_, doc, s)| hit(view, doc, s))
        .collect();
    (hits, truncated)
}

fn hit(view: &View, doc: u32, s: &Symbol) -> SymbolHit {
    SymbolHit {
        name: s.name.clone(),
        kind: s.kind.clone(),
        path: view.doc(doc).path.clone(),
        start_line: s.start_line,
        end_line: s.end_line,
        signature: s.signature.clone(),
        container: view.container_of(doc, s).map(|c| c.name.clone()),
    }
}

/// `code_search` in `symbol` mode: files by their best definition named
/// like the query.
pub fn symbol_files(ws: &Workspace, view: &View, req: &SearchRequest<'_>) -> Vec<SearchHit> {
    let query = req.query.trim();
    let lower = query.to_ascii_lowercase();
    let mut best: HashMap<u32, (f32, Vec<&Symbol>)> = HashMap::new();
    for (doc, s) in view.all_symbols() {
        let m = name_match(&s.name, query, &lower, false);
        if m == 0.0 {
            continue;
        }
        let d = view.doc(doc);
        if req.filter.is_some_and(|f| !f.matches(&d.path)) {
            continue;
        }
        let score = m * kind_weight(&s.kind) * prior(d) * rank_boost(d.rank);
        let entry = best.entry(doc).or_insert((0.0, Vec::new()));
        entry.0 = entry.0.max(score);
        entry.1.push(s);
    }
    let mut order: Vec<(u32, f32)> = best.iter().map(|(d, (s, _))| (*d, *s)).collect();
    sort(view, &mut order);
    order.truncate(req.limit + 1);
    order
        .into_iter()
        .map(|(doc, score)| {
            let symbols = &best[&doc].1;
            let why = symbols
                .iter()
                .take(3)
                .map(|s| format!("defines {} {} (line {})", s.kind, s.name, s.start_line))
                .collect();
            let text = read_text(ws, &view.doc(doc).path).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            let snippets = symbols
                .iter()
                .take(2)
                .filter(|s| (s.start_line as usize) <= lines.len() && s.start_line > 0)
                .map(|s| {
                    let i = s.start_line as usize - 1;
                    let mut w = window(&lines, i + 1, 1);
                    if w.start_line > s.start_line {
                        w = window(&lines, i, 0);
                    }
                    w
                })
                .collect();
            SearchHit {
                path: view.doc(doc).path.clone(),
                score: round(score),
                why,
                snippets,
            }
        })
        .collect()
}

/// `find_references`: lines naming `name` (as a whole word) in the files
/// whose code refers to it or holds its terms; approximate by nature.
pub fn find_references(
    ws: &Workspace,
    view: &View,
    name: &str,
    filter: Option<&PathFilter>,
    limit: usize,
) -> (Vec<Reference>, bool) {
    let mut docs: HashSet<u32> = view.referrers(name).into_iter().collect();
    let terms = distinct_terms(name);
    if let Some(joined) = terms.last() {
        docs.extend(view.postings(joined).into_iter().map(|p| p.0));
    }
    let mut docs: Vec<u32> = docs
        .into_iter()
        .filter(|d| filter.is_none_or(|f| f.matches(&view.doc(*d).path)))
        .collect();
    docs.sort_by(|a, b| {
        let (da, db) = (view.doc(*a), view.doc(*b));
        (prior(db) * rank_boost(db.rank))
            .total_cmp(&(prior(da) * rank_boost(da.rank)))
            .then_with(|| da.path.cmp(&db.path))
    });
    let mut out = Vec::new();
    for doc in docs {
        let Some(text) = read_text(ws, &view.doc(doc).path) else {
            continue;
        };
        let symbols = view.symbols_of(doc);
        for (i, line) in text.lines().enumerate() {
            let number = i as u32 + 1;
            if !whole_word(line, name) {
                continue;
            }
            if symbols
                .iter()
                .any(|s| s.name == name && s.start_line == number)
            {
                continue;
            }
            if out.len() == limit {
                return (out, true);
            }
            let in_symbol = symbols
                .iter()
                .filter(|s| s.start_line <= number && number <= s.end_line)
                .min_by_key(|s| s.end_line - s.start_line)
                .map(|s| s.name.clone());
            out.push(Reference {
                path: view.doc(doc).path.clone(),
                line: number,
                snippet: clip(line.trim()),
                in_symbol,
            });
        }
    }
    (out, false)
}

/// `name` in `line` with no identifier character on either side.
fn whole_word(line: &str, name: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    line.match_indices(name).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + name.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// `file_outline`: the file's definitions, nested by their line ranges.
pub fn file_outline(view: &View, doc: u32) -> Outline {
    let mut roots: Vec<OutlineNode> = Vec::new();
    // The chain of open nodes, as paths of child indices from the roots.
    let mut open: Vec<(u32, u32)> = Vec::new();
    for s in view.symbols_of(doc) {
        while open
            .last()
            .is_some_and(|&(start, end)| !(start <= s.start_line && s.end_line <= end))
        {
            open.pop();
        }
        let node = OutlineNode {
            name: s.name.clone(),
            kind: s.kind.clone(),
            start_line: s.start_line,
            end_line: s.end_line,
            signature: s.signature.clone(),
            children: Vec::new(),
        };
        insert(&mut roots, open.len(), node);
        open.push((s.start_line, s.end_line));
    }
    Outline {
        path: view.doc(doc).path.clone(),
        symbols: roots,
    }
}

/// Puts `node` `depth` levels down the last branch of `list`.
fn insert(list: &mut Vec<OutlineNode>, depth: usize, node: OutlineNode) {
    match list.last_mut() {
        Some(last) if depth > 0 => insert(&mut last.children, depth - 1, node),
        _ => list.push(node),
    }
}

/// `repo_map`: the top-level definitions of the files that rank highest
/// (by PageRank over the file graph, personalized for the focus), as
/// signature lines within `max_tokens` (four characters a token).
pub fn repo_map(
    view: &View,
    focus_paths: &[String],
    focus_symbols: &[String],
    max_tokens: usize,
) -> RepoMap {
    let mut focus: Vec<u32> = focus_paths.iter().filter_map(|p| view.find(p)).collect();
    let skip: HashSet<u32> = focus.iter().copied().collect();
    if !focus_symbols.is_empty() {
        focus.extend(
            view.all_symbols()
                .filter(|(_, s)| focus_symbols.contains(&s.name))
                .map(|(d, _)| d),
        );
    }
    let ranks: Vec<f32> = if focus.is_empty() {
        (0..view.id_space() as u32)
            .map(|i| view.doc(i).rank)
            .collect()
    } else {
        pagerank(view.id_space(), &view.edges(), Some(&focus))
    };
    let mut order: Vec<(u32, f32)> = view
        .ids()
        .filter(|d| !skip.contains(d) && !view.symbols_of(*d).is_empty())
        .map(|d| (d, ranks[d as usize] * prior(view.doc(d))))
        .collect();
    sort(view, &mut order);
    let mut map = String::new();
    let mut files = 0;
    let budget = max_tokens.saturating_mul(4);
    for (doc, _) in order {
        let mut block = format!("{}:\n", view.doc(doc).path);
        let mut lines = 0;
        for s in view.symbols_of(doc) {
            if s.container.is_some() && !matches!(s.kind.as_str(), "method") {
                continue;
            }
            let line = format!("{:>5}│ {}\n", s.start_line, clip(&s.signature));
            if map.len() + block.len() + line.len() > budget {
                break;
            }
            block.push_str(&line);
            lines += 1;
        }
        if lines == 0 {
            if map.len() + block.len() > budget {
                break;
            }
            continue;
        }
        map.push_str(&block);
        files += 1;
    }
    let tokens = map.len().div_ceil(4);
    RepoMap { map, tokens, files }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_words_only() {
        assert!(whole_word("let x = read_file(p);", "read_file"));
        assert!(!whole_word("let x = read_file_sync(p);", "read_file"));
        assert!(!whole_word("$read_file", "read_file"));
        assert!(whole_word("a.read_file", "read_file"));
    }

    #[test]
    fn names_match_best_first() {
        assert_eq!(name_match("readFile", "readFile", "readfile", false), 4.0);
        assert_eq!(name_match("ReadFile", "readFile", "readfile", false), 3.0);
        assert_eq!(
            name_match("readFileSync", "readFile", "readfile", false),
            2.0
        );
        assert_eq!(name_match("fsReadFile", "readFile", "readfile", false), 1.0);
        assert_eq!(name_match("rdFl", "xyz", "xyz", false), 0.0);
        assert_eq!(name_match("read_the_file", "rdfl", "rdfl", false), 0.5);
        assert_eq!(
            name_match("readFileSync", "readFile", "readfile", true),
            0.0
        );
    }
}
