//! One file read for the index: its terms per field, its definitions and
//! the names it refers to. Files are read beneath the root's handle.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use super::catalog::Listed;
use super::embed::Embedder;
use super::model::{BODY, DEFS, DocMeta, DocState, NAME, NFIELDS, PATH, is_source, is_test};
use super::tags::{self, Definition, Lang};
use super::tokens::terms;
use super::trigrams::{self, Trigram};
use crate::workspace::Workspace;

/// Term ids of one reader (a build's worker, or a running process's
/// overlay), each term's text kept once.
#[derive(Default)]
pub struct Interner {
    ids: HashMap<Box<str>, u32>,
    pub names: Vec<Box<str>>,
}

impl Interner {
    pub fn id(&mut self, term: &str) -> u32 {
        if let Some(id) = self.ids.get(term) {
            return *id;
        }
        let id = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
        self.names.push(term.into());
        self.ids.insert(term.into(), id);
        id
    }

    pub fn get(&self, term: &str) -> Option<u32> {
        self.ids.get(term).copied()
    }
}

/// A file as read: its catalog entry and what it holds.
pub struct Analysed {
    pub meta: DocMeta,
    /// Term id (of the reader's interner) -> count per field.
    pub terms: HashMap<u32, [u32; NFIELDS]>,
    pub definitions: Vec<Definition>,
    pub references: HashMap<String, u32>,
    /// Its distinct trigrams, sorted.
    pub trigrams: Vec<Trigram>,
    /// Its embedding (with a model configured).
    pub vector: Option<Vec<f32>>,
}

/// Lines this long on average mark minified or generated text: its terms
/// are read, its syntax is not parsed.
const MINIFIED_AVG_LINE: usize = 1000;

/// What a build or an overlay reads files with.
#[derive(Clone, Copy)]
pub struct Reading<'a> {
    pub max_bytes: u64,
    /// The embedding model, when one is configured.
    pub embedder: Option<&'a Embedder>,
}

pub fn analyse(
    ws: &Workspace,
    listed: &Listed,
    how: Reading<'_>,
    names: &mut Interner,
) -> Analysed {
    let max_bytes = how.max_bytes;
    let path = listed.path.as_str();
    let mut out = Analysed {
        meta: DocMeta {
            path: listed.path.clone(),
            stat: listed.stat,
            state: DocState::Indexed,
            lang: Lang::of(path),
            source: is_source(path) && !is_test(path),
            test: is_test(path),
            lens: [0; NFIELDS],
            rank: 1.0,
            first_symbol: 0,
            symbol_count: 0,
            folds_to_ascii: false,
        },
        terms: HashMap::new(),
        definitions: Vec::new(),
        references: HashMap::new(),
        trigrams: Vec::new(),
        vector: None,
    };
    let bytes = match read(ws, path, max_bytes) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => {
            out.meta.state = DocState::TooLarge;
            return out;
        }
        Err(_) => {
            out.meta.state = DocState::Unreadable;
            return out;
        }
    };
    if bytes[..bytes.len().min(8192)].contains(&0) {
        out.meta.state = DocState::Binary;
        return out;
    }
    let mut count = |field: usize, text: &str, out: &mut Analysed| {
        terms(text, &mut |t| {
            out.terms.entry(names.id(t)).or_insert([0; NFIELDS])[field] += 1;
            out.meta.lens[field] += 1;
        });
    };
    (out.trigrams, out.meta.folds_to_ascii) = trigrams::of_file(&bytes);
    let text = String::from_utf8_lossy(&bytes);
    count(BODY, &text, &mut out);
    count(PATH, path, &mut out);
    let file_name = path.rsplit('/').next().unwrap_or(path);
    let stem = file_name.rsplit_once('.').map_or(file_name, |(s, _)| s);
    count(NAME, stem, &mut out);
    let lines = bytes.iter().filter(|b| **b == b'\n').count() + 1;
    if let Some(lang) = out.meta.lang
        && bytes.len() / lines < MINIFIED_AVG_LINE
    {
        let found = tags::tags(lang, &bytes);
        for d in &found.definitions {
            count(DEFS, &d.name, &mut out);
        }
        out.definitions = found.definitions;
        out.references = found.references;
    }
    if let Some(model) = how.embedder {
        let names: Vec<&str> = out.definitions.iter().map(|d| d.name.as_str()).collect();
        out.vector = Some(model.embed(&super::embed::file_text(path, &names, &text)));
    }
    out
}

/// The file's bytes, `None` when it is over `max_bytes`.
fn read(ws: &Workspace, rel: &str, max_bytes: u64) -> std::io::Result<Option<Vec<u8>>> {
    let file = ws.scope_dir(0).open_file(Path::new(rel))?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if meta.len() > max_bytes {
        return Ok(None);
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(max_bytes + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Ok(None);
    }
    Ok(Some(bytes))
}
