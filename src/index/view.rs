//! The index as a query sees it: the stored generation, less the files
//! that changed or went since it was built, plus those files read again
//! (an overlay in memory). Files are numbered across both: the stored
//! generation's first, then the overlay's.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::analyse::{Analysed, Interner};
use super::build::push_symbols;
use super::format::Stored;
use super::model::{DocMeta, NFIELDS, Symbol};

/// Files read since the stored generation.
#[derive(Default)]
pub struct Overlay {
    pub names: Interner,
    pub docs: Vec<DocMeta>,
    pub terms: Vec<HashMap<u32, [u32; NFIELDS]>>,
    pub symbols: Vec<Vec<Symbol>>,
    pub references: Vec<HashMap<String, u32>>,
    pub vectors: Vec<Option<Vec<f32>>>,
}

impl Overlay {
    pub fn push(&mut self, doc: Analysed, id: u32) {
        let mut symbols = Vec::new();
        push_symbols(&mut symbols, id, doc.definitions);
        self.docs.push(doc.meta);
        self.terms.push(doc.terms);
        self.symbols.push(symbols);
        self.references.push(doc.references);
        self.vectors.push(doc.vector);
    }
}

pub struct View {
    pub stored: Option<Arc<Stored>>,
    /// Stored files that changed or are gone.
    pub masked: HashSet<u32>,
    pub overlay: Overlay,
    avg_lens: [f32; NFIELDS],
    indexed: u32,
}

impl View {
    pub fn new(stored: Option<Arc<Stored>>, masked: HashSet<u32>, overlay: Overlay) -> View {
        let mut sums = [0f64; NFIELDS];
        let mut indexed = 0u32;
        let mut add = |d: &DocMeta| {
            if d.indexed() {
                indexed += 1;
                for (s, l) in sums.iter_mut().zip(d.lens) {
                    *s += f64::from(l);
                }
            }
        };
        if let Some(s) = &stored {
            for (i, d) in s.docs.iter().enumerate() {
                if !masked.contains(&(i as u32)) {
                    add(d);
                }
            }
        }
        overlay.docs.iter().for_each(&mut add);
        let avg_lens = sums.map(|s| (s / f64::from(indexed.max(1))).max(1.0) as f32);
        View {
            stored,
            masked,
            overlay,
            avg_lens,
            indexed,
        }
    }

    fn base_len(&self) -> u32 {
        self.stored.as_ref().map_or(0, |s| s.docs.len() as u32)
    }

    /// Every live file id.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        let base = self.base_len();
        (0..base)
            .filter(|i| !self.masked.contains(i))
            .chain(base..base + self.overlay.docs.len() as u32)
    }

    pub fn doc(&self, id: u32) -> &DocMeta {
        let base = self.base_len();
        match &self.stored {
            Some(s) if id < base => &s.docs[id as usize],
            _ => &self.overlay.docs[(id - base) as usize],
        }
    }

    /// The live file at `path`.
    pub fn find(&self, path: &str) -> Option<u32> {
        let base = self.base_len();
        if let Some(i) = self.overlay.docs.iter().position(|d| d.path == path) {
            return Some(base + i as u32);
        }
        let s = self.stored.as_ref()?;
        let i = s
            .docs
            .binary_search_by(|d| d.path.as_str().cmp(path))
            .ok()? as u32;
        (!self.masked.contains(&i)).then_some(i)
    }

    /// Indexed files, and the mean terms per field among them.
    pub fn indexed(&self) -> u32 {
        self.indexed
    }

    pub fn avg_lens(&self) -> [f32; NFIELDS] {
        self.avg_lens
    }

    /// Files holding `term` with their counts per field.
    pub fn postings(&self, term: &str) -> Vec<(u32, [u32; NFIELDS])> {
        let mut out: Vec<(u32, [u32; NFIELDS])> = match &self.stored {
            Some(s) => s
                .postings(term)
                .into_iter()
                .filter(|(d, _)| !self.masked.contains(d))
                .collect(),
            None => Vec::new(),
        };
        if let Some(t) = self.overlay.names.get(term) {
            let base = self.base_len();
            for (i, terms) in self.overlay.terms.iter().enumerate() {
                if let Some(tf) = terms.get(&t) {
                    out.push((base + i as u32, *tf));
                }
            }
        }
        out
    }

    /// The symbols of file `id`, in line order (outer first).
    pub fn symbols_of(&self, id: u32) -> &[Symbol] {
        let base = self.base_len();
        match &self.stored {
            Some(s) if id < base => s.symbols_of(id),
            _ => self
                .overlay
                .symbols
                .get((id - base) as usize)
                .map_or(&[], Vec::as_slice),
        }
    }

    /// The symbol `container` points at, for a symbol of file `id`.
    pub fn container_of(&self, id: u32, symbol: &Symbol) -> Option<&Symbol> {
        self.symbols_of(id).get(symbol.container? as usize)
    }

    /// Every live symbol with its file.
    pub fn all_symbols(&self) -> impl Iterator<Item = (u32, &Symbol)> + '_ {
        if let Some(s) = &self.stored {
            s.load_symbols();
        }
        self.ids()
            .flat_map(move |id| self.symbols_of(id).iter().map(move |s| (id, s)))
    }

    /// Files whose code refers to `name`.
    pub fn referrers(&self, name: &str) -> Vec<u32> {
        let mut out: Vec<u32> = match &self.stored {
            Some(s) => s
                .referrers(name)
                .into_iter()
                .filter(|d| !self.masked.contains(d))
                .collect(),
            None => Vec::new(),
        };
        let base = self.base_len();
        for (i, refs) in self.overlay.references.iter().enumerate() {
            if refs.contains_key(name) {
                out.push(base + i as u32);
            }
        }
        out
    }

    /// The stored graph's edges between live files.
    pub fn edges(&self) -> Vec<(u32, u32, f32)> {
        match &self.stored {
            Some(s) => s
                .edges()
                .iter()
                .filter(|(a, b, _)| !self.masked.contains(a) && !self.masked.contains(b))
                .copied()
                .collect(),
            None => Vec::new(),
        }
    }

    /// A live file's neighbours in the stored graph (either way), with the
    /// share of its source's weight each edge carries.
    pub fn neighbours(&self, id: u32) -> Vec<(u32, f32)> {
        match &self.stored {
            Some(s) if id < self.base_len() => s
                .neighbours(id)
                .iter()
                .filter(|(d, _)| !self.masked.contains(d))
                .copied()
                .collect(),
            _ => Vec::new(),
        }
    }

    /// A live file's embedding (with a model configured).
    pub fn vector(&self, id: u32) -> Option<&[f32]> {
        let base = self.base_len();
        match &self.stored {
            Some(s) if id < base => {
                let (dim, all) = s.vectors();
                let at = id as usize * dim;
                (dim > 0).then(|| all.get(at..at + dim)).flatten()
            }
            _ => self.overlay.vectors.get((id - base) as usize)?.as_deref(),
        }
    }

    /// Number of ids (live or not): the size a per-file vector needs.
    pub fn id_space(&self) -> usize {
        self.base_len() as usize + self.overlay.docs.len()
    }
}
