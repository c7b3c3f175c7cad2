//! A whole build: every catalogued file read on all cores, then the
//! postings (term -> files with counts per field), the symbol table with
//! containers, the references (name -> files) and the file graph with its
//! PageRank, ready to be written as one generation.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::analyse::{Analysed, Interner, Reading, analyse};
use super::catalog::Listed;
use super::embed::Embedder;
use super::graph;
use super::model::{DocMeta, NFIELDS, Postings, Symbol};
use super::tags::Definition;
use super::trigrams::Trigram;
use crate::workspace::Workspace;

/// A built index, in memory.
pub struct Built {
    pub docs: Vec<DocMeta>,
    /// Terms in byte order, each with its postings: (doc, counts per field).
    pub postings: Vec<(Box<str>, Postings)>,
    pub symbols: Vec<Symbol>,
    /// Names referred to, in byte order, each with the files that do.
    pub references: Vec<(String, Vec<u32>)>,
    pub edges: Vec<(u32, u32, f32)>,
    /// Trigrams, sorted, each with the files holding it.
    pub trigrams: Vec<(Trigram, Vec<u32>)>,
    /// The embedding's width and every file's vector in file order (zeros
    /// for a file not indexed); `(0, [])` without a model.
    pub vectors: (usize, Vec<f32>),
}

/// Progress of a build: files read of files listed.
#[derive(Default)]
pub struct Progress {
    pub done: AtomicUsize,
    pub total: AtomicUsize,
}

struct Worker {
    names: Interner,
    docs: Vec<(usize, Analysed)>,
}

pub fn build(ws: &Workspace, listed: &[Listed], how: Reading<'_>, progress: &Progress) -> Built {
    progress.total.store(listed.len(), Ordering::Relaxed);
    let next = AtomicUsize::new(0);
    let workers = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut worker = Worker {
                    names: Interner::default(),
                    docs: Vec::new(),
                };
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(file) = listed.get(i) else { break };
                    let doc = analyse(ws, file, how, &mut worker.names);
                    worker.docs.push((i, doc));
                    progress.done.fetch_add(1, Ordering::Relaxed);
                }
                if let Ok(mut all) = workers.lock() {
                    all.push(worker);
                }
            });
        }
    });
    let dim = how.embedder.map_or(0, Embedder::dim);
    assemble(listed.len(), workers.into_inner().unwrap_or_default(), dim)
}

fn assemble(count: usize, workers: Vec<Worker>, dim: usize) -> Built {
    // Every worker's term ids mapped onto one sorted vocabulary.
    let mut vocabulary: BTreeMap<&str, u32> = BTreeMap::new();
    for w in &workers {
        for name in &w.names.names {
            vocabulary.insert(name, 0);
        }
    }
    for (id, slot) in vocabulary.values_mut().enumerate() {
        *slot = u32::try_from(id).unwrap_or(u32::MAX);
    }
    let remaps: Vec<Vec<u32>> = workers
        .iter()
        .map(|w| w.names.names.iter().map(|n| vocabulary[&**n]).collect())
        .collect();
    let terms: Vec<Box<str>> = vocabulary.keys().map(|k| (*k).into()).collect();
    drop(vocabulary);

    let mut by_doc: Vec<Option<(usize, Analysed)>> = (0..count).map(|_| None).collect();
    for (w, worker) in workers.into_iter().enumerate() {
        for (i, doc) in worker.docs {
            by_doc[i] = Some((w, doc));
        }
    }
    let mut lists: Vec<Vec<(u32, [u32; NFIELDS])>> = vec![Vec::new(); terms.len()];
    let mut docs = Vec::with_capacity(count);
    let mut symbols = Vec::new();
    let mut references: HashMap<String, Vec<u32>> = HashMap::new();
    let mut counts: Vec<HashMap<String, u32>> = Vec::with_capacity(count);
    let mut trigrams: HashMap<Trigram, Vec<u32>> = HashMap::new();
    let mut vectors: Vec<f32> = Vec::with_capacity(count * dim);
    for (i, slot) in by_doc.into_iter().enumerate() {
        let Some((w, doc)) = slot else { continue };
        let id = u32::try_from(i).unwrap_or(u32::MAX);
        let mut entries: Vec<(u32, [u32; NFIELDS])> = doc
            .terms
            .into_iter()
            .map(|(t, tf)| (remaps[w][t as usize], tf))
            .collect();
        entries.sort_unstable_by_key(|e| e.0);
        for (t, tf) in entries {
            lists[t as usize].push((id, tf));
        }
        let mut meta = doc.meta;
        meta.first_symbol = u32::try_from(symbols.len()).unwrap_or(u32::MAX);
        meta.symbol_count = u32::try_from(doc.definitions.len()).unwrap_or(u32::MAX);
        push_symbols(&mut symbols, id, doc.definitions);
        for name in doc.references.keys() {
            references.entry(name.clone()).or_default().push(id);
        }
        counts.push(doc.references);
        for t in doc.trigrams {
            trigrams.entry(t).or_default().push(id);
        }
        if dim > 0 {
            match doc.vector {
                Some(v) if v.len() == dim => vectors.extend(v),
                _ => vectors.extend(std::iter::repeat_n(0.0, dim)),
            }
        }
        docs.push(meta);
    }
    let edges = graph::edges(&docs, &symbols, &counts);
    let ranks = graph::pagerank(docs.len(), &edges, None);
    for (doc, rank) in docs.iter_mut().zip(ranks) {
        doc.rank = rank;
    }
    let mut references: Vec<(String, Vec<u32>)> = references.into_iter().collect();
    references.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let mut trigrams: Vec<(Trigram, Vec<u32>)> = trigrams.into_iter().collect();
    trigrams.sort_unstable_by_key(|t| t.0);
    Built {
        docs,
        postings: terms.into_iter().zip(lists).collect(),
        symbols,
        references,
        edges,
        trigrams,
        vectors: (dim, vectors),
    }
}

/// Appends a file's definitions (sorted by start, outer first), each with
/// the innermost definition around it as its container.
pub fn push_symbols(symbols: &mut Vec<Symbol>, doc: u32, definitions: Vec<Definition>) {
    let first = symbols.len();
    let mut open: Vec<usize> = Vec::new();
    for d in definitions {
        while let Some(&top) = open.last() {
            let outer: &Symbol = &symbols[top];
            if outer.end_line >= d.end_line && outer.start_line <= d.start_line {
                break;
            }
            open.pop();
        }
        let container = open.last().map(|&c| u32::try_from(c).unwrap_or(u32::MAX));
        symbols.push(Symbol {
            name: d.name,
            kind: d.kind,
            doc,
            start_line: d.start_line,
            end_line: d.end_line,
            signature: d.signature,
            container,
        });
        open.push(symbols.len() - 1);
    }
    debug_assert!(symbols.len() >= first);
}
