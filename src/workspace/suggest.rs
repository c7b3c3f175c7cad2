//! "Did you mean" for paths that do not exist: the closest existing paths by
//! file name first, then by whole path.

use super::Workspace;

/// Files looked at when guessing, at most; keeps a miss cheap on huge trees.
const MAX_CANDIDATES: usize = 50_000;
/// Below this similarity a path is not worth suggesting.
const MIN_SCORE: f64 = 0.6;

/// Up to `max` existing paths in any scope that look like `missing` (the
/// walks go through the scopes' directory handles, like a listing).
pub fn close_matches(ws: &Workspace, missing: &str, max: usize) -> Vec<String> {
    let missing_name = file_name(missing).to_lowercase();
    let missing_lower = missing.to_lowercase();
    let mut scored: Vec<(f64, String)> = Vec::new();
    let mut seen = 0;
    let mut visit = |met: super::Met| {
        seen += 1;
        let name = file_name(&met.rel).to_lowercase();
        let by_name = if name == missing_name {
            1.0
        } else {
            // Damerau counts a swap (`mian`/`main`) as one edit.
            strsim::normalized_damerau_levenshtein(&missing_name, &name)
        };
        let by_path = strsim::jaro_winkler(&missing_lower, &met.rel.to_lowercase());
        let score = 0.7 * by_name + 0.3 * by_path;
        if score >= MIN_SCORE {
            scored.push((score, met.rel));
        }
        seen < MAX_CANDIDATES
    };
    for start in ws.scope_starts() {
        let _ = super::handle_walk::walk(ws, &start, true, usize::MAX, &mut visit);
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored.into_iter().take(max).map(|(_, rel)| rel).collect()
}

fn file_name(path: &str) -> &str {
    path.trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn suggests_typos_swaps_and_moved_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        fs::create_dir_all(root.join("src/deep")).unwrap();
        for f in ["src/main.rs", "src/deep/config.rs", "README.md", "docs.txt"] {
            fs::write(root.join(f), "x").unwrap();
        }
        let ws = Workspace::open(&root).unwrap();
        assert_eq!(
            close_matches(&ws, "scr", 3).first().map(String::as_str),
            Some("src")
        );
        assert_eq!(close_matches(&ws, "src/mian.rs", 3)[0], "src/main.rs");
        assert_eq!(close_matches(&ws, "config.rs", 3)[0], "src/deep/config.rs");
        assert!(close_matches(&ws, "zzzzzz", 3).is_empty());
    }
}
