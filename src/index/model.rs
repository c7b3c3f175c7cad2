//! What the index keeps about each file and symbol, as written to disk.

use serde::{Deserialize, Serialize};

use super::tags::Lang;

/// Fields a term is counted in, and their order in `lens` and postings.
pub const BODY: usize = 0;
pub const PATH: usize = 1;
pub const NAME: usize = 2;
pub const DEFS: usize = 3;
pub const NFIELDS: usize = 4;

/// The files holding a term, each with its counts per field, by file id.
pub type Postings = Vec<(u32, [u32; NFIELDS])>;

/// A file's stat as the catalog compares it: any change means "read again".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stat {
    pub size: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
    pub ino: u64,
}

/// Why a catalogued file is (not) in the postings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DocState {
    Indexed,
    /// Over `[index] max_file_bytes`.
    TooLarge,
    /// A NUL byte in its first 8 KiB.
    Binary,
    /// It could not be read (gone mid-build, no permission).
    Unreadable,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DocMeta {
    /// Relative to the root, `/`-separated.
    pub path: String,
    pub stat: Stat,
    pub state: DocState,
    pub lang: Option<Lang>,
    /// A source file (by extension) that is not a test, bench or fixture.
    pub source: bool,
    pub test: bool,
    /// Terms per field.
    pub lens: [u32; NFIELDS],
    /// Global PageRank over the file graph, 1.0 on average.
    pub rank: f32,
    /// Its symbols: `first..first + count` of the symbol table.
    pub first_symbol: u32,
    pub symbol_count: u32,
    /// It holds a character that folds to an ASCII letter (always searched
    /// when case is ignored).
    pub folds_to_ascii: bool,
}

impl DocMeta {
    pub fn indexed(&self) -> bool {
        self.state == DocState::Indexed
    }
}

/// One definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Symbol {
    pub name: String,
    pub kind: String,
    pub doc: u32,
    pub start_line: u32,
    pub end_line: u32,
    pub signature: String,
    /// The symbol table index of the innermost definition around it.
    pub container: Option<u32>,
}

/// Extensions counted as source (with `test` left out).
const SOURCE_EXT: &[&str] = &[
    "rs", "ts", "js", "mjs", "cjs", "tsx", "jsx", "mts", "cts", "py", "go", "c", "cc", "cpp", "h",
    "hpp", "java", "cxx", "hh", "hxx", "pyi",
];

/// Folders whose files are tests, benches or fixtures.
const TEST_DIRS: &[&str] = &[
    "tests",
    "test",
    "testdata",
    "__tests__",
    "testing",
    "bench",
    "benches",
    "fixtures",
    "__snapshots__",
];

pub fn is_source(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.')
        .is_some_and(|(_, ext)| SOURCE_EXT.contains(&ext.to_ascii_lowercase().as_str()))
}

/// In a test folder, or named with a `test`/`spec`/`bench` part.
pub fn is_test(path: &str) -> bool {
    let mut parts = path.split('/').collect::<Vec<_>>();
    let name = parts.pop().unwrap_or_default().to_ascii_lowercase();
    if parts.iter().any(|p| TEST_DIRS.contains(p)) {
        return true;
    }
    let stem = name.split('.').next().unwrap_or_default();
    name.split(['.', '_', '-'])
        .any(|p| matches!(p, "test" | "tests" | "spec" | "bench"))
        || stem.ends_with("_test")
        || stem.starts_with("test_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tests_and_sources() {
        assert!(is_test("cli/tests/unit/fs_test.ts"));
        assert!(is_test("ext/node/polyfills/a.test.js"));
        assert!(is_test("lib/foo_test.go"));
        assert!(is_test("test_x.py"));
        assert!(!is_test("cli/tools/testing_helpers.rs"));
        assert!(is_test("cli/testing/x.rs"));
        assert!(!is_test("runtime/ops/fs.rs"));
        assert!(is_source("runtime/ops/fs.rs"));
        assert!(!is_source("README.md"));
        assert!(!is_source("Makefile"));
    }
}
