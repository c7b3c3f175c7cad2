//! Files and symbols by a fuzzy name, for people (`Ctrl+P`, `@`
//! completion): every character of what was typed in order, scored by
//! where the characters fall (the start of the name, of a word, or right
//! after the previous one), file names before their folders.

use super::View;
use super::search::prior;
use crate::protocol::Found;

/// How well `typed` (lower case) matches `hay` as a subsequence; `None`
/// when it does not. Consecutive characters, word starts and an early
/// start score more; a shorter `hay` breaks ties.
pub fn fuzzy(typed: &str, hay: &str) -> Option<f32> {
    if typed.is_empty() {
        return Some(0.0);
    }
    let chars: Vec<char> = hay.chars().collect();
    let mut score = 0.0f32;
    let mut at = 0usize;
    let mut last: Option<usize> = None;
    for t in typed.chars() {
        let found = (at..chars.len()).find(|&i| chars[i].to_ascii_lowercase() == t)?;
        let c = chars[found];
        let prev = found.checked_sub(1).map(|i| chars[i]);
        let word_start =
            prev.is_none_or(|p| !p.is_alphanumeric() || (p.is_lowercase() && c.is_uppercase()));
        score += 1.0;
        if last.is_some_and(|l| l + 1 == found) {
            score += 2.0;
        }
        if word_start {
            score += 1.5;
        }
        if found == 0 {
            score += 2.0;
        }
        last = Some(found);
        at = found + 1;
    }
    Some(score - chars.len() as f32 * 0.01)
}

/// Files (by their name, then their path) and symbols (by their name)
/// matching `typed`, best first, at most `limit`.
pub fn lookup(view: &View, paths: &[String], typed: &str, limit: usize) -> Vec<Found> {
    let typed = typed.trim().to_lowercase();
    let mut scored: Vec<(f32, Found)> = Vec::new();
    for path in paths {
        let name = path.rsplit('/').next().unwrap_or(path);
        let score = fuzzy(&typed, name)
            .map(|s| s + 3.0)
            .or_else(|| fuzzy(&typed, path));
        if let Some(score) = score {
            scored.push((
                score,
                Found {
                    path: path.clone(),
                    symbol: None,
                    kind: "file".into(),
                    line: None,
                    container: None,
                },
            ));
        }
    }
    if !typed.is_empty() {
        for (doc, s) in view.all_symbols() {
            let Some(score) = fuzzy(&typed, &s.name) else {
                continue;
            };
            let meta = view.doc(doc);
            scored.push((
                score + 2.0 * prior(meta),
                Found {
                    path: meta.path.clone(),
                    symbol: Some(s.name.clone()),
                    kind: s.kind.clone(),
                    line: Some(s.start_line),
                    container: view.container_of(doc, s).map(|c| c.name.clone()),
                },
            ));
        }
    }
    scored.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| a.1.path.cmp(&b.1.path))
            .then(a.1.line.cmp(&b.1.line))
    });
    scored.truncate(limit);
    scored.into_iter().map(|(_, f)| f).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_starts_and_runs_score_higher() {
        let exact = fuzzy("readfile", "readFile").unwrap();
        let spread = fuzzy("readfile", "read_the_file").unwrap();
        assert!(exact > spread, "{exact} {spread}");
        assert!(fuzzy("rf", "readFile").unwrap() > fuzzy("rf", "surfing").unwrap());
        assert_eq!(fuzzy("xyz", "readFile"), None);
        assert!(fuzzy("main", "main.rs").unwrap() > fuzzy("main", "domain.rs").unwrap());
    }
}
