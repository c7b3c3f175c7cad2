//! The code index as front ends see it (`agent-tui index`, the status bar,
//! `GET /api/v1/agent/index`).

use serde::{Deserialize, Serialize};

/// `index status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexStatus {
    pub state: IndexState,
    /// Files catalogued (indexed or not: too large, binary).
    pub files: usize,
    pub symbols: usize,
    /// Nothing changed in the tree since it was built.
    pub fresh: bool,
    /// Files changed, added or gone since it was built.
    pub changed: usize,
    pub generation: u64,
    pub bytes_on_disk: u64,
    /// RFC 3339.
    pub built_at: Option<String>,
    /// Where it lives (in the state home).
    pub path: String,
    /// Why a stored index could not be read, when one could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IndexState {
    Ready,
    Building,
    None,
}

/// `index build` / `rebuild`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexBuilt {
    pub files: usize,
    pub indexed: usize,
    pub symbols: usize,
    pub terms: usize,
    pub bytes_on_disk: u64,
    /// Bytes of the files catalogued.
    pub source_bytes: u64,
    pub duration_ms: u64,
    pub generation: u64,
    /// False: the stored index was up to date and was kept.
    pub built: bool,
}

/// A file or a symbol found by a fuzzy name (`Ctrl+P`, `@` completion).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Found {
    pub path: String,
    /// The symbol's name; `None` for a file.
    pub symbol: Option<String>,
    /// `file`, or the symbol's kind (function, class, method …).
    pub kind: String,
    /// 1-based; the symbol's first line (`None` for a file).
    pub line: Option<u32>,
    pub container: Option<String>,
}
