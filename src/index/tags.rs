//! Symbols from tree-sitter: each language's grammar and the tags query its
//! crate ships (TypeScript's added to JavaScript's, as its own says), run by
//! `tree-sitter-tags`. A tagger is built once per thread and language (the
//! configuration holds raw pointers, so it cannot be shared).

use std::cell::RefCell;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use tree_sitter_tags::{TagsConfiguration, TagsContext};

/// The languages whose symbols are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Lang {
    Rust,
    Python,
    TypeScript,
    Tsx,
    JavaScript,
    Go,
    Java,
    C,
    Cpp,
}

impl Lang {
    pub fn of(path: &str) -> Option<Lang> {
        let ext = path.rsplit('/').next()?.rsplit_once('.')?.1;
        Some(match ext.to_ascii_lowercase().as_str() {
            "rs" => Lang::Rust,
            "py" | "pyi" => Lang::Python,
            "ts" | "mts" | "cts" => Lang::TypeScript,
            "tsx" => Lang::Tsx,
            "js" | "mjs" | "cjs" | "jsx" => Lang::JavaScript,
            "go" => Lang::Go,
            "java" => Lang::Java,
            "c" | "h" => Lang::C,
            "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => Lang::Cpp,
            _ => return None,
        })
    }

    #[cfg(test)]
    const ALL: [Lang; 9] = [
        Lang::Rust,
        Lang::Python,
        Lang::TypeScript,
        Lang::Tsx,
        Lang::JavaScript,
        Lang::Go,
        Lang::Java,
        Lang::C,
        Lang::Cpp,
    ];

    fn configuration(self) -> Result<TagsConfiguration, tree_sitter_tags::Error> {
        let js = tree_sitter_javascript::TAGS_QUERY;
        let ts = format!("{js}\n{}", tree_sitter_typescript::TAGS_QUERY);
        let (language, query): (tree_sitter::Language, &str) = match self {
            Lang::Rust => (
                tree_sitter_rust::LANGUAGE.into(),
                tree_sitter_rust::TAGS_QUERY,
            ),
            Lang::Python => (
                tree_sitter_python::LANGUAGE.into(),
                tree_sitter_python::TAGS_QUERY,
            ),
            Lang::TypeScript => (
                tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
                ts.as_str(),
            ),
            Lang::Tsx => (tree_sitter_typescript::LANGUAGE_TSX.into(), ts.as_str()),
            Lang::JavaScript => (tree_sitter_javascript::LANGUAGE.into(), js),
            Lang::Go => (tree_sitter_go::LANGUAGE.into(), tree_sitter_go::TAGS_QUERY),
            Lang::Java => (
                tree_sitter_java::LANGUAGE.into(),
                tree_sitter_java::TAGS_QUERY,
            ),
            Lang::C => (tree_sitter_c::LANGUAGE.into(), tree_sitter_c::TAGS_QUERY),
            Lang::Cpp => (
                tree_sitter_cpp::LANGUAGE.into(),
                tree_sitter_cpp::TAGS_QUERY,
            ),
        };
        TagsConfiguration::new(language, query, "")
    }
}

/// A definition as the tagger found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    pub name: String,
    /// The query's name for it: function, method, class, interface, module,
    /// type, macro, constant …
    pub kind: String,
    /// 1-based, inclusive: the whole definition.
    pub start_line: u32,
    pub end_line: u32,
    /// Its first line, trimmed and cut to 200 characters.
    pub signature: String,
}

/// What one file defines, and the names it refers to (with how often).
#[derive(Debug, Default)]
pub struct FileTags {
    pub definitions: Vec<Definition>,
    pub references: HashMap<String, u32>,
}

struct Tagger {
    context: TagsContext,
    configs: HashMap<Lang, Option<TagsConfiguration>>,
}

thread_local! {
    static TAGGER: RefCell<Option<Tagger>> = const { RefCell::new(None) };
}

/// The tags of `source` in `lang`. A grammar or query that does not load,
/// or a file the parser gives up on, gives none (the file stays lexical).
pub fn tags(lang: Lang, source: &[u8]) -> FileTags {
    TAGGER.with(|cell| {
        let mut slot = cell.borrow_mut();
        let tagger = slot.get_or_insert_with(|| Tagger {
            context: TagsContext::new(),
            configs: HashMap::new(),
        });
        let config = tagger
            .configs
            .entry(lang)
            .or_insert_with(|| lang.configuration().ok());
        let Some(config) = config.as_ref() else {
            return FileTags::default();
        };
        collect(&mut tagger.context, config, source, lang)
    })
}

/// Rust's `impl` blocks (tagged as references) become definitions of kind
/// `impl`, named by their type, so methods have a container and an outline
/// nests them.
fn collect(
    context: &mut TagsContext,
    config: &TagsConfiguration,
    source: &[u8],
    lang: Lang,
) -> FileTags {
    let impl_blocks = lang == Lang::Rust;
    let mut out = FileTags::default();
    let Ok((tags, _)) = context.generate_tags(config, source, None) else {
        return out;
    };
    let lines = LineStarts::new(source);
    for tag in tags.flatten() {
        let Some(name) = source
            .get(tag.name_range.clone())
            .and_then(|b| std::str::from_utf8(b).ok())
        else {
            continue;
        };
        if name.is_empty() || name.len() > 200 {
            continue;
        }
        let kind = config.syntax_type_name(tag.syntax_type_id);
        let signature: String = source
            .get(tag.line_range.clone())
            .map(|b| {
                String::from_utf8_lossy(b)
                    .trim()
                    .chars()
                    .take(200)
                    .collect()
            })
            .unwrap_or_default();
        let block = impl_blocks && kind == "implementation";
        if !tag.is_definition {
            *out.references.entry(name.to_string()).or_insert(0) += 1;
            if !block {
                continue;
            }
        }
        let (name, kind) = if block {
            (implemented_type(&signature).unwrap_or(name), "impl")
        } else {
            let text = source.get(tag.range.start..tag.range.end.min(tag.range.start + 200));
            (name, language_kind(lang, kind, text.unwrap_or_default()))
        };
        let start = tag.range.start.min(tag.name_range.start);
        let end = tag.range.end.max(tag.name_range.end);
        out.definitions.push(Definition {
            name: name.to_string(),
            kind: kind.to_string(),
            start_line: lines.line_of(start),
            end_line: lines.line_of(end.saturating_sub(1).max(start)),
            signature,
        });
    }
    out.definitions
        .sort_by(|a, b| (a.start_line, b.end_line).cmp(&(b.start_line, a.end_line)));
    out
}

/// A definition's kind as its language names it: the tags queries call a
/// Rust struct, enum or type alias a `class`, a trait an `interface`, a Go
/// struct a `type`, a C struct a `class`; `text` is the definition's start.
fn language_kind<'k>(lang: Lang, query: &'k str, text: &[u8]) -> &'k str {
    let text = String::from_utf8_lossy(text);
    let mut words = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty());
    let mut keyword = |set: &[&'static str]| {
        words
            .by_ref()
            .find_map(|w| set.iter().find(|k| **k == w).copied())
    };
    match (lang, query) {
        (Lang::Rust, "class") => keyword(&["struct", "enum", "union", "type"]),
        (Lang::Rust, "interface") => Some("trait"),
        (Lang::Rust, "function") => Some("fn"),
        (Lang::Rust, "module") => Some("mod"),
        (Lang::Go, "type") => {
            let second = text
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .filter(|w| !w.is_empty())
                .nth(1);
            second.and_then(|w| ["struct", "interface"].into_iter().find(|k| *k == w))
        }
        (Lang::C | Lang::Cpp, "class" | "type") => {
            keyword(&["struct", "union", "enum", "class", "typedef"])
        }
        _ => None,
    }
    .unwrap_or(query)
}

/// Whether a definition of `kind` is what a search for `asked` means: its
/// own name, or the tags queries' name for its family (`class` finds a
/// Rust struct, `function` a Rust fn, `interface` a trait).
pub fn kind_is(kind: &str, asked: &str) -> bool {
    let asked = asked.to_ascii_lowercase();
    let family: &[&str] = match asked.as_str() {
        "class" => &["struct", "enum", "union"],
        "interface" => &["trait"],
        "function" => &["fn"],
        "module" => &["mod"],
        "type" => &["struct", "enum", "union", "typedef", "interface", "trait"],
        "struct" => &["class"],
        "trait" => &["interface"],
        "fn" => &["function", "method"],
        _ => &[],
    };
    kind.eq_ignore_ascii_case(&asked) || family.contains(&kind)
}

/// The type of `impl Trait for Type {`: `Type` (generics left out).
fn implemented_type(line: &str) -> Option<&str> {
    let after = line.split(" for ").nth(1)?;
    let end = after
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(after.len());
    let path = &after[..end];
    path.rsplit("::").next().filter(|t| !t.is_empty())
}

/// Byte offsets of line starts, for 1-based line numbers.
pub struct LineStarts(Vec<usize>);

impl LineStarts {
    pub fn new(text: &[u8]) -> LineStarts {
        let mut starts = vec![0];
        starts.extend(
            text.iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .map(|(i, _)| i + 1),
        );
        LineStarts(starts)
    }

    pub fn line_of(&self, offset: usize) -> u32 {
        let line = self.0.partition_point(|&s| s <= offset);
        u32::try_from(line).unwrap_or(u32::MAX)
    }
}

/// Every language's query compiles against its grammar (a test).
#[cfg(test)]
pub fn check_all() -> Vec<(Lang, String)> {
    Lang::ALL
        .iter()
        .filter_map(|l| l.configuration().err().map(|e| (*l, e.to_string())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags_of(lang: Lang, source: &[u8]) -> FileTags {
        tags(lang, source)
    }

    #[test]
    fn every_grammar_and_query_loads() {
        assert_eq!(check_all(), Vec::new());
    }

    #[test]
    fn definitions_with_kind_lines_and_signature() {
        let src = b"struct Point { x: i32 }\n\nimpl Point {\n    pub fn norm(&self) -> f64 {\n        helper(self.x)\n    }\n}\n";
        let tags = tags(Lang::Rust, src);
        let names: Vec<(&str, &str, u32, u32)> = tags
            .definitions
            .iter()
            .map(|d| (d.name.as_str(), d.kind.as_str(), d.start_line, d.end_line))
            .collect();
        assert!(names.contains(&("Point", "struct", 1, 1)), "{names:?}");
        assert!(names.contains(&("norm", "method", 4, 6)), "{names:?}");
        let norm = tags.definitions.iter().find(|d| d.name == "norm").unwrap();
        assert_eq!(norm.signature, "pub fn norm(&self) -> f64 {");
        assert_eq!(tags.references.get("helper"), Some(&1));
        let block = tags.definitions.iter().find(|d| d.kind == "impl").unwrap();
        assert_eq!(
            (block.name.as_str(), block.start_line, block.end_line),
            ("Point", 3, 7)
        );
        let src = b"impl<T> Display for Wrapper<T> {\n    fn fmt(&self) {}\n}\n";
        let tags = tags_of(Lang::Rust, src);
        assert_eq!(tags.definitions[0].name, "Wrapper");
    }

    #[test]
    fn kinds_are_named_as_each_language_names_them() {
        let kinds = |lang, src: &[u8]| -> Vec<(String, String)> {
            tags(lang, src)
                .definitions
                .into_iter()
                .map(|d| (d.name, d.kind))
                .collect()
        };
        let rust = kinds(
            Lang::Rust,
            b"pub(crate) struct A;\nenum B { X }\nunion C { a: u8 }\ntype D = u8;\n\
              pub trait E {}\nfn f() {}\nmod g {}\nmacro_rules! h { () => {} }\n",
        );
        for want in [
            ("A", "struct"),
            ("B", "enum"),
            ("C", "union"),
            ("D", "type"),
            ("E", "trait"),
            ("f", "fn"),
            ("g", "mod"),
            ("h", "macro"),
        ] {
            assert!(
                rust.contains(&(want.0.into(), want.1.into())),
                "{want:?} in {rust:?}"
            );
        }
        let go = kinds(
            Lang::Go,
            b"package p\ntype S struct{}\ntype I interface{}\ntype N int\n",
        );
        assert_eq!(
            go,
            [("S", "struct"), ("I", "interface"), ("N", "type")]
                .map(|(a, b)| (a.to_string(), b.to_string()))
        );
        let c = kinds(
            Lang::C,
            b"struct s { int a; };\ntypedef int t;\nenum e { X };\n",
        );
        for want in [("s", "struct"), ("t", "typedef"), ("e", "enum")] {
            assert!(
                c.contains(&(want.0.into(), want.1.into())),
                "{want:?} in {c:?}"
            );
        }
        let py = kinds(Lang::Python, b"class K:\n    def m(self): pass\n");
        assert_eq!(py[0], ("K".to_string(), "class".to_string()));
        // A search by the queries' names still finds them.
        assert!(kind_is("struct", "class") && kind_is("trait", "interface"));
        assert!(kind_is("fn", "function") && kind_is("method", "fn"));
        assert!(!kind_is("fn", "class"));
    }

    #[test]
    fn typescript_gets_javascript_definitions_too() {
        let src = b"export function readFile(p: string): Uint8Array { return op(p); }\ninterface Opts { a: number }\nclass Fs { stat() {} }\n";
        let tags = tags(Lang::TypeScript, src);
        let names: Vec<&str> = tags.definitions.iter().map(|d| d.name.as_str()).collect();
        for want in ["readFile", "Opts", "Fs", "stat"] {
            assert!(names.contains(&want), "{want} in {names:?}");
        }
    }

    #[test]
    fn languages_by_extension() {
        assert_eq!(Lang::of("a/b.tsx"), Some(Lang::Tsx));
        assert_eq!(Lang::of("x.H"), Some(Lang::C));
        assert_eq!(Lang::of("Makefile"), None);
        assert_eq!(Lang::of("dir.d/readme"), None);
    }
}
