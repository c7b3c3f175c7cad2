//! Identifier-split terms: runs of `[A-Za-z0-9_]` cut at `_`, at camelCase
//! and at digits, lower-cased, with the whole word's parts joined kept too
//! (`fooBarBaz` gives foo, bar, baz, foobarbaz); parts under two characters
//! are dropped; each term is reduced to its English stem (`ranges` and
//! `range` are one term). A query adds each pair of adjacent words joined
//! (`file system` also asks for `filesystem`).

use std::cell::RefCell;
use std::collections::HashMap;

use rust_stemmers::{Algorithm, Stemmer};

/// Stems already worked out on this thread (a tree repeats its words).
const STEM_CACHE: usize = 1 << 17;

/// A thread's stemmer and the stems it worked out.
type Stems = (Stemmer, HashMap<Box<str>, Box<str>>);

thread_local! {
    static STEMS: RefCell<Stems> =
        RefCell::new((Stemmer::create(Algorithm::English), HashMap::new()));
}

/// Calls `emit` with the stem of `term` (a lower-case term). Short terms
/// and terms with digits are kept as they are.
fn stemmed(term: &str, emit: &mut dyn FnMut(&str)) {
    if term.len() <= 3 || term.bytes().any(|b| b.is_ascii_digit()) {
        emit(term);
        return;
    }
    let stem = STEMS.with(|cell| {
        let mut cell = cell.borrow_mut();
        let (stemmer, cache) = &mut *cell;
        if let Some(stem) = cache.get(term) {
            return stem.clone();
        }
        let stem: Box<str> = stemmer.stem(term).into();
        if cache.len() >= STEM_CACHE {
            cache.clear();
        }
        cache.insert(term.into(), stem.clone());
        stem
    });
    emit(&stem);
}

/// The stem of one lower-case term.
pub fn stem(term: &str) -> String {
    let mut out = String::new();
    stemmed(term, &mut |s| out.push_str(s));
    out
}

/// What every word with stem `stem` starts with (ASCII case ignored): the
/// stem but for its last letter (`happi` of `happy`), or a short stem whole.
pub fn head(stem: &str) -> &str {
    match stem.len() {
        0..=3 => stem,
        n => stem.get(..n - 1).unwrap_or(stem),
    }
}

/// Calls `emit` with every term of `text` (stemmed), in order, repeats
/// included.
pub fn terms(text: &str, emit: &mut dyn FnMut(&str)) {
    words(text, &mut |w| stemmed(w, emit));
}

/// Calls `emit` with every term of `text` as written (lower-cased).
fn words(text: &str, emit: &mut dyn FnMut(&str)) {
    let bytes = text.as_bytes();
    let mut parts: Vec<(usize, usize)> = Vec::new();
    let mut joined = String::new();
    let mut i = 0;
    while i < bytes.len() {
        if !is_word(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_word(bytes[i]) {
            i += 1;
        }
        parts.clear();
        split_word(&bytes[start..i], start, &mut parts);
        joined.clear();
        for &(a, b) in &parts {
            joined.push_str(&text[a..b]);
        }
        joined.make_ascii_lowercase();
        let mut at = 0;
        for &(a, b) in &parts {
            let part = &joined[at..at + (b - a)];
            at += b - a;
            if part.len() >= 2 {
                emit(part);
            }
        }
        if parts.len() > 1 && joined.len() >= 2 {
            emit(&joined);
        }
    }
}

/// The terms of `text`, each once, in first-seen order.
pub fn distinct_terms(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    terms(text, &mut |t| {
        if !out.iter().any(|o| o == t) {
            out.push(t.to_string());
        }
    });
    out
}

/// A query's terms: its own, each once, then the adjacent words joined.
/// The second value says which of them are the query's own.
pub fn query_terms(query: &str) -> Vec<QueryTerm> {
    let mut out: Vec<QueryTerm> = Vec::new();
    words(query, &mut |w| {
        let text = stem(w);
        if !out.iter().any(|t| t.text == text) {
            out.push(QueryTerm {
                text,
                word: w.to_string(),
                compound: false,
            });
        }
    });
    let words: Vec<String> = query
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    for pair in words.windows(2) {
        let word = format!("{}{}", pair[0], pair[1]);
        let joined = stem(&word);
        if !out.iter().any(|t| t.text == joined) {
            out.push(QueryTerm {
                text: joined,
                word,
                compound: true,
            });
        }
    }
    out
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryTerm {
    /// The term as indexed (stemmed).
    pub text: String,
    /// As the query wrote it (lower-cased), to show.
    pub word: String,
    /// Two adjacent words of the query joined, not a word of it.
    pub compound: bool,
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The parts of one word (absolute byte ranges): `_` separates; within a
/// segment an upper-case run before an upper-case letter that starts a
/// lower-case word is a part (`HTTPServer`: HTTP, Server), as are a capital
/// with its lower-case run, a lower-case run, an upper-case run, a digit run.
fn split_word(word: &[u8], offset: usize, parts: &mut Vec<(usize, usize)>) {
    let n = word.len();
    let mut i = 0;
    while i < n {
        let c = word[i];
        if c == b'_' {
            i += 1;
        } else if c.is_ascii_digit() {
            let s = i;
            while i < n && word[i].is_ascii_digit() {
                i += 1;
            }
            parts.push((offset + s, offset + i));
        } else if c.is_ascii_lowercase() {
            let s = i;
            while i < n && word[i].is_ascii_lowercase() {
                i += 1;
            }
            parts.push((offset + s, offset + i));
        } else {
            let s = i;
            while i < n && word[i].is_ascii_uppercase() {
                i += 1;
            }
            let lower_next = i < n && word[i].is_ascii_lowercase();
            if lower_next && i - s > 1 {
                // The last capital starts the next part.
                parts.push((offset + s, offset + i - 1));
                i -= 1;
                continue;
            }
            if lower_next {
                while i < n && word[i].is_ascii_lowercase() {
                    i += 1;
                }
            }
            parts.push((offset + s, offset + i));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        terms(text, &mut |t| out.push(t.to_string()));
        out
    }

    #[test]
    fn words_split_like_the_harness() {
        assert_eq!(all("fooBarBaz"), ["foo", "bar", "baz", "foobarbaz"]);
        assert_eq!(all("foo_bar"), ["foo", "bar", "foobar"]);
        assert_eq!(all("HTTPServer x"), ["http", "server", "httpserver"]);
        assert_eq!(all("op_fs_read2"), ["op", "fs", "read", "opfsread2"]);
        assert_eq!(all("ABc"), ["bc", "abc"]);
        assert_eq!(all("a b 12"), ["12"]);
        assert_eq!(all("héllo wörld"), ["llo", "rld"]);
        assert_eq!(
            all("XMLHttpRequest2"),
            ["xml", "http", "request", "xmlhttprequest2"]
        );
    }

    #[test]
    fn words_of_one_stem_are_one_term() {
        assert_eq!(all("ranges range"), ["rang", "rang"]);
        assert_eq!(
            all("validateHeaders validation"),
            all("validate_header validate")
        );
        assert_eq!(all("uv2 sessions"), ["uv", "uv2", "session"]);
        assert_eq!(stem("deserialization"), stem("deserialize"));
    }

    #[test]
    fn queries_join_adjacent_words() {
        let q = query_terms("file system watcher");
        let texts: Vec<&str> = q.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(
            texts,
            ["file", "system", "watcher", "filesystem", "systemwatch"]
        );
        assert!(q[3].compound && !q[0].compound);
    }
}
