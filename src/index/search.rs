//! `code_search`: files ranked for a query. `auto` scores identifier-split,
//! stemmed terms with BM25 per field (body, path, file name and defined
//! names, each saturating on its own, weighted and added; a
//! query's adjacent words joined as well), scaled by the share of the
//! query matched and by whether the file is non-test source; `symbol`
//! ranks the files defining a name; `text` and `regex` rank the files that
//! contain a literal or a pattern. Each file says why it ranks.

use std::collections::HashMap;

use serde::Serialize;

use super::View;
use super::embed::{self, Embedder};
use super::model::{BODY, DEFS, DocMeta, NAME, NFIELDS, PATH, Postings};
use super::snippets::{read_text, term_snippets, window};
use super::tokens::{QueryTerm, distinct_terms, head, query_terms};
use crate::workspace::{PathFilter, Workspace};

/// Field weights and length normalisation (tuned on the deno tasks). Each
/// field saturates on its own and the fields add up, so a file named for a
/// word outranks one that only says it often.
const WEIGHT: [f32; NFIELDS] = [1.0, 0.5, 0.5, 1.0];
const NORM: [f32; NFIELDS] = [0.3, 0.3, 0.3, 0.5];
const K1: f32 = 1.2;
/// Files that are not source, or are tests, count this much.
const NON_SOURCE: f32 = 0.1;
/// Type declaration files (`.d.ts`) count this much more.
const DECLARATIONS: f32 = 0.5;
/// The best few files lend this share of their score to the files they
/// are linked with in the file graph (a step of PageRank personalized to
/// the query's best answers).
const GRAPH_SHARE: f32 = 0.3;
const GRAPH_SEEDS: usize = 5;
/// The share of the query a file matches, raised to this, scales its score.
const COORDINATION: f32 = 0.5;
pub(super) const SNIPPET_LINE_CHARS: usize = 200;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Auto,
    Text,
    Regex,
    Symbol,
}

pub struct SearchRequest<'a> {
    pub query: &'a str,
    pub mode: Mode,
    pub filter: Option<&'a PathFilter>,
    pub limit: usize,
    /// With a model, `auto` also ranks by meaning and fuses the two.
    pub embedder: Option<&'a Embedder>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SearchHit {
    pub path: String,
    pub score: f64,
    pub why: Vec<String>,
    pub snippets: Vec<Snippet>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Snippet {
    pub start_line: u32,
    pub end_line: u32,
    pub text: String,
}

/// The ranked files (at most `limit`) and whether more matched.
pub fn search(
    ws: &Workspace,
    view: &View,
    req: &SearchRequest<'_>,
) -> Result<(Vec<SearchHit>, bool), regex::Error> {
    let mode = match req.mode {
        Mode::Auto if distinct_terms(req.query).is_empty() => Mode::Text,
        m => m,
    };
    let mut hits = match mode {
        Mode::Auto => ranked(ws, view, req),
        Mode::Symbol => super::outline::symbol_files(ws, view, req),
        Mode::Text | Mode::Regex => {
            let pattern = if mode == Mode::Text {
                let insensitive = !req.query.chars().any(char::is_uppercase);
                format!(
                    "{}{}",
                    if insensitive { "(?i)" } else { "" },
                    regex::escape(req.query)
                )
            } else {
                req.query.to_string()
            };
            let re = regex::RegexBuilder::new(&pattern)
                .size_limit(1 << 22)
                .build()?;
            grep(ws, view, req, &re, mode == Mode::Text)
        }
    };
    let truncated = hits.len() > req.limit;
    hits.truncate(req.limit);
    Ok((hits, truncated))
}

/// The prior of a file: non-test source counts fully, type declarations
/// half, the rest a tenth.
pub fn prior(doc: &DocMeta) -> f32 {
    let declarations = [".d.ts", ".d.cts", ".d.mts"];
    match (
        doc.source,
        declarations.iter().any(|d| doc.path.ends_with(d)),
    ) {
        (true, false) => 1.0,
        (true, true) => DECLARATIONS,
        (false, _) => NON_SOURCE,
    }
}

struct Scored {
    score: f32,
    matched: u32,
}

fn ranked(ws: &Workspace, view: &View, req: &SearchRequest<'_>) -> Vec<SearchHit> {
    let query = query_terms(req.query);
    let n = view.indexed() as f32;
    let avg = view.avg_lens();
    let mut allowed: HashMap<u32, bool> = HashMap::new();
    let mut scores: HashMap<u32, Scored> = HashMap::new();
    let mut lists: Vec<(&QueryTerm, Postings)> = Vec::new();
    for term in &query {
        let postings = view.postings(&term.text);
        if postings.is_empty() {
            continue;
        }
        let df = postings.len() as f32;
        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
        for (doc, tf) in &postings {
            let ok = *allowed
                .entry(*doc)
                .or_insert_with(|| req.filter.is_none_or(|f| f.matches(&view.doc(*doc).path)));
            if !ok {
                continue;
            }
            let meta = view.doc(*doc);
            let mut s = 0.0;
            for f in 0..NFIELDS {
                if tf[f] > 0 {
                    let norm = 1.0 - NORM[f] + NORM[f] * meta.lens[f] as f32 / avg[f];
                    let t = tf[f] as f32 / norm;
                    s += WEIGHT[f] * t * (K1 + 1.0) / (t + K1);
                }
            }
            let entry = scores.entry(*doc).or_insert(Scored {
                score: 0.0,
                matched: 0,
            });
            entry.score += idf * s;
            entry.matched += 1;
        }
        lists.push((term, postings));
    }
    let total = query.len().max(1) as f32;
    let mut order: Vec<(u32, f32)> = scores
        .into_iter()
        .map(|(doc, s)| {
            let coord = (s.matched as f32 / total).powf(COORDINATION);
            (doc, s.score * coord * prior(view.doc(doc)))
        })
        .collect();
    sort(view, &mut order);
    let lent = lend_along_graph(view, &mut order, req.filter);
    let mut meaning: HashMap<u32, f32> = HashMap::new();
    if let Some(model) = req.embedder {
        let nearest = nearest(view, model, req);
        meaning = nearest.iter().copied().collect();
        if !nearest.is_empty() {
            order.truncate(embed::NEAREST);
            order = embed::fuse(&order, &nearest);
        }
    }
    order.truncate(req.limit + 1);
    order
        .into_iter()
        .map(|(doc, score)| {
            let mut why = why_ranked(view, doc, &lists, query.len());
            if let Some(from) = lent.get(&doc) {
                why.push(format!("linked with {from}"));
            }
            if let Some(c) = meaning.get(&doc) {
                why.push(format!("close in meaning (cosine {c:.2})"));
            }
            let words: Vec<&str> = lists.iter().map(|(t, _)| t.text.as_str()).collect();
            SearchHit {
                path: view.doc(doc).path.clone(),
                score: round(score),
                why,
                snippets: term_snippets(ws, view, doc, &words),
            }
        })
        .collect()
}

/// The best `GRAPH_SEEDS` files lend part of their score to their
/// neighbours in the file graph; `order` is sorted again. Returns, for each
/// file that gained most from one of them, that file's path.
fn lend_along_graph(
    view: &View,
    order: &mut Vec<(u32, f32)>,
    filter: Option<&PathFilter>,
) -> HashMap<u32, String> {
    let mut gained: HashMap<u32, (f32, u32)> = HashMap::new();
    for &(seed, score) in order.iter().take(GRAPH_SEEDS) {
        for (doc, share) in view.neighbours(seed) {
            let meta = view.doc(doc);
            if !meta.indexed() || filter.is_some_and(|f| !f.matches(&meta.path)) {
                continue;
            }
            let gain = GRAPH_SHARE * score * share * prior(meta);
            let entry = gained.entry(doc).or_insert((0.0, seed));
            if gain > 0.0 {
                entry.0 += gain;
                entry.1 = seed;
            }
        }
    }
    if gained.is_empty() {
        return HashMap::new();
    }
    let mut at: HashMap<u32, usize> = order
        .iter()
        .enumerate()
        .map(|(i, (d, _))| (*d, i))
        .collect();
    let mut from = HashMap::new();
    for (doc, (gain, seed)) in gained {
        match at.get(&doc) {
            Some(&i) => order[i].1 += gain,
            None => {
                at.insert(doc, order.len());
                order.push((doc, gain));
            }
        }
        from.insert(doc, view.doc(seed).path.clone());
    }
    sort(view, order);
    from
}

/// The files closest to the query in meaning (file, cosine), best first.
fn nearest(view: &View, model: &Embedder, req: &SearchRequest<'_>) -> Vec<(u32, f32)> {
    let query = model.embed(req.query);
    let mut near: Vec<(u32, f32)> = view
        .ids()
        .filter(|d| {
            let meta = view.doc(*d);
            meta.indexed() && req.filter.is_none_or(|f| f.matches(&meta.path))
        })
        .filter_map(|d| view.vector(d).map(|v| (d, embed::cosine(&query, v))))
        .filter(|(_, c)| *c > 0.0)
        .collect();
    near.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    near.truncate(embed::NEAREST);
    near
}

/// Highest score first, then by path.
pub fn sort(view: &View, order: &mut [(u32, f32)]) {
    order.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then_with(|| view.doc(a.0).path.cmp(&view.doc(b.0).path))
    });
}

pub fn round(score: f32) -> f64 {
    (f64::from(score) * 1000.0).round() / 1000.0
}

fn why_ranked(
    view: &View,
    doc: u32,
    lists: &[(&QueryTerm, Postings)],
    asked: usize,
) -> Vec<String> {
    let mut path = Vec::new();
    let mut defined = Vec::new();
    let mut body: Vec<(u32, &str)> = Vec::new();
    for (term, postings) in lists {
        let Ok(at) = postings.binary_search_by_key(&doc, |p| p.0) else {
            continue;
        };
        let tf = postings[at].1;
        if tf[PATH] > 0 || tf[NAME] > 0 {
            path.push(term.word.as_str());
        }
        if tf[DEFS] > 0 {
            defined.push((term.text.as_str(), term.word.as_str()));
        }
        if tf[BODY] > 0 {
            body.push((tf[BODY], term.word.as_str()));
        }
    }
    let mut why = Vec::new();
    if !path.is_empty() {
        why.push(format!("path: {}", path.join(", ")));
    }
    if !defined.is_empty() {
        let mut names: Vec<&str> = Vec::new();
        for s in view.symbols_of(doc) {
            if names.len() == 4 {
                break;
            }
            let lower = s.name.to_ascii_lowercase();
            if names.contains(&s.name.as_str())
                || !defined.iter().any(|d| lower.contains(head(d.0)))
            {
                continue;
            }
            let parts = distinct_terms(&s.name);
            if defined.iter().any(|d| parts.iter().any(|p| *p == d.0)) {
                names.push(&s.name);
            }
        }
        if names.is_empty() {
            let shown: Vec<&str> = defined.iter().map(|d| d.1).collect();
            why.push(format!("defines names with: {}", shown.join(", ")));
        } else {
            why.push(format!("defines: {}", names.join(", ")));
        }
    }
    if !body.is_empty() {
        body.sort_by_key(|b| std::cmp::Reverse(b.0));
        let text: Vec<String> = body
            .iter()
            .take(5)
            .map(|(n, t)| format!("{t} ×{n}"))
            .collect();
        why.push(format!("text: {}", text.join(", ")));
    }
    let matched = lists
        .iter()
        .filter(|(_, p)| p.binary_search_by_key(&doc, |e| e.0).is_ok())
        .count();
    why.push(format!("matches {matched} of {asked} query terms"));
    let meta = view.doc(doc);
    if !meta.source {
        why.push(if meta.test {
            "a test file (ranked lower)".into()
        } else {
            "not source code (ranked lower)".into()
        });
    }
    why
}

/// Files containing `re`, ranked by how often (damped), where and what
/// kind of file.
fn grep(
    ws: &Workspace,
    view: &View,
    req: &SearchRequest<'_>,
    re: &regex::Regex,
    literal: bool,
) -> Vec<SearchHit> {
    let candidates = literal_candidates(view, req.query, literal);
    let mut found: Vec<(u32, f32, usize, Vec<usize>, bool)> = Vec::new();
    let ids: Vec<u32> = match candidates {
        Some(c) => c,
        None => view.ids().collect(),
    };
    for doc in ids {
        let meta = view.doc(doc);
        if !meta.indexed() || req.filter.is_some_and(|f| !f.matches(&meta.path)) {
            continue;
        }
        let Some(text) = read_text(ws, &meta.path) else {
            continue;
        };
        let mut count = 0usize;
        let mut lines = Vec::new();
        let mut line_no = 0usize;
        let mut last_end = 0usize;
        for m in re.find_iter(&text) {
            if m.start() == m.end() && count > 10_000 {
                break;
            }
            line_no += text[last_end..m.start()].matches('\n').count();
            last_end = m.start();
            count += 1;
            if lines.len() < 2 && !lines.contains(&line_no) {
                lines.push(line_no);
            }
        }
        if count == 0 {
            continue;
        }
        let in_path = re.is_match(&meta.path);
        let score = prior(meta)
            * (1.0 + (count as f32).ln())
            * (1.0 + 0.1 * meta.rank.max(0.01).ln().max(0.0))
            * if in_path { 2.0 } else { 1.0 };
        found.push((doc, score, count, lines, in_path));
    }
    let mut order: Vec<(u32, f32)> = found.iter().map(|f| (f.0, f.1)).collect();
    sort(view, &mut order);
    order.truncate(req.limit + 1);
    order
        .into_iter()
        .filter_map(|(doc, score)| {
            let (_, _, count, lines, in_path) = found.iter().find(|f| f.0 == doc)?;
            let meta = view.doc(doc);
            let text = read_text(ws, &meta.path)?;
            let all: Vec<&str> = text.lines().collect();
            let snippets = lines.iter().map(|&l| window(&all, l, 1)).collect();
            let mut why = vec![format!(
                "{} {} time{}",
                if literal { "contains it" } else { "matches" },
                count,
                if *count == 1 { "" } else { "s" }
            )];
            if *in_path {
                why.push("its path matches too".into());
            }
            if !meta.source {
                why.push("not non-test source (ranked lower)".into());
            }
            Some(SearchHit {
                path: meta.path.clone(),
                score: round(score),
                why,
                snippets,
            })
        })
        .collect()
}

/// Files that can hold the literal `query`: those holding every term of
/// its words that are whole within it (a word at either end may be part
/// of a longer one). `None`: no such word, every file is a candidate.
fn literal_candidates(view: &View, query: &str, literal: bool) -> Option<Vec<u32>> {
    if !literal {
        return None;
    }
    let bytes = query.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut inner = String::new();
    let mut i = 0;
    while i < bytes.len() {
        if !word(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && word(bytes[i]) {
            i += 1;
        }
        if start > 0 && i < bytes.len() {
            inner.push_str(&query[start..i]);
            inner.push(' ');
        }
    }
    let needed = distinct_terms(&inner);
    if needed.is_empty() {
        return None;
    }
    let mut set: Option<Vec<u32>> = None;
    for term in needed {
        let docs: std::collections::HashSet<u32> =
            view.postings(&term).into_iter().map(|p| p.0).collect();
        set = Some(match set {
            None => docs.into_iter().collect(),
            Some(prev) => prev.into_iter().filter(|d| docs.contains(d)).collect(),
        });
    }
    let mut out = set.unwrap_or_default();
    out.sort_unstable();
    Some(out)
}
