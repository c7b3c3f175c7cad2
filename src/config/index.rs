//! `[index]` (SPEC 18): whether the code index is kept, what it leaves out
//! beside `.gitignore`/`.ignore`, the largest file it reads, and an optional
//! local static-embedding model (never downloaded).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IndexConfig {
    pub enabled: bool,
    /// Globs of paths left out (a glob without `/` matches file names).
    pub exclude: Vec<String>,
    /// Larger files are not indexed (`search_project` still reads them).
    pub max_file_bytes: u64,
    /// A local static-embedding model folder; empty: off.
    pub embedding_model: String,
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            enabled: true,
            exclude: Vec::new(),
            max_file_bytes: 1 << 20,
            embedding_model: String::new(),
        }
    }
}

impl IndexConfig {
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.max_file_bytes == 0 {
            out.push("index.max_file_bytes must be at least 1".into());
        }
        for glob in &self.exclude {
            if let Err(e) = globset::Glob::new(glob.trim_start_matches("./")) {
                out.push(format!("index.exclude: `{glob}` is not a glob: {e}"));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_globs_and_a_zero_size_are_named() {
        let config = IndexConfig {
            exclude: vec!["vendor/**".into(), "src/[a".into()],
            max_file_bytes: 0,
            ..IndexConfig::default()
        };
        let problems = config.problems();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[1].contains("src/[a"));
    }
}
