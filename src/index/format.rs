//! One generation on disk: a single file (`index.bin` in the root's index
//! folder) written beside itself and renamed into place once complete and
//! synced, so a reader sees the previous generation or this one, never a
//! part. The documents' table is decoded on open, terms are looked up in an
//! fst map, postings and each file's symbols are decoded only when asked
//! for, read from the open file (a search decodes the symbols of the files
//! it shows, not the whole table).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::ops::Range;
use std::path::Path;
use std::sync::OnceLock;

use fst::{Map, MapBuilder};
use serde::{Deserialize, Serialize};

use super::build::Built;
use super::model::{DocMeta, NFIELDS, Symbol};
use super::trigrams::{self, Trigram};

const MAGIC: &[u8; 8] = b"ATIDX\0v1";
const END: &[u8; 8] = b"ATIDXEND";
/// Bumped whenever what is written changes meaning: an older file is rebuilt.
/// 6: definitions' kinds as their language names them (a Rust struct is
/// `struct`, not `class`).
pub const FORMAT: u32 = 6;
const SECTIONS: usize = 11;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Header {
    pub format: u32,
    pub generation: u64,
    /// Milliseconds since the epoch.
    pub built_ms: u64,
    pub duration_ms: u64,
    /// What the configuration said (excludes, size cap): another rebuilds.
    pub fingerprint: String,
    /// Per field, the mean number of terms of an indexed file.
    pub avg_lens: [f32; NFIELDS],
    pub indexed: u32,
}

/// Writes `built` as generation `header.generation` of `dir` (atomically).
pub fn write(dir: &Path, header: &Header, built: &Built) -> io::Result<u64> {
    std::fs::create_dir_all(dir)?;
    let tmp = tempfile::Builder::new()
        .prefix(".index.bin.")
        .tempfile_in(dir)?;
    let mut out = BufWriter::with_capacity(1 << 20, tmp.as_file());
    out.write_all(MAGIC)?;
    section(&mut out, &encode(header)?)?;
    section(&mut out, &encode(&built.docs)?)?;
    let (terms, postings) = postings(built)?;
    section(&mut out, &terms)?;
    section(&mut out, &postings)?;
    section(&mut out, &symbol_blobs(built)?)?;
    let (names, lists) = doc_lists(
        built
            .references
            .iter()
            .map(|(name, docs)| (name.as_bytes().to_vec(), docs)),
    )?;
    section(&mut out, &names)?;
    section(&mut out, &lists)?;
    section(&mut out, &encode(&built.edges)?)?;
    let (keys, lists) = doc_lists(
        built
            .trigrams
            .iter()
            .map(|(t, docs)| (trigrams::bytes_of(*t).to_vec(), docs)),
    )?;
    section(&mut out, &keys)?;
    section(&mut out, &lists)?;
    let (dim, vectors) = &built.vectors;
    let mut bytes = Vec::with_capacity(4 + vectors.len() * 4);
    bytes.extend_from_slice(&(*dim as u32).to_le_bytes());
    for v in vectors {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    section(&mut out, &bytes)?;
    out.write_all(END)?;
    out.flush()?;
    drop(out);
    tmp.as_file().sync_all()?;
    let size = tmp.as_file().metadata()?.len();
    tmp.persist(dir.join("index.bin")).map_err(|e| e.error)?;
    crate::platform::fs::sync_dir_at(dir)?;
    Ok(size)
}

/// Removes what a build killed midway left beside the index (called with
/// the build lock held, so no other build is writing them).
pub fn remove_leftovers(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry
            .file_name()
            .to_string_lossy()
            .starts_with(".index.bin.")
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Each file's symbols as a blob of its own (containers counted from the
/// file's first symbol), after a table of where each blob starts: one
/// offset a file and one for the end, little-endian `u64`s.
fn symbol_blobs(built: &Built) -> io::Result<Vec<u8>> {
    let mut offsets = Vec::with_capacity((built.docs.len() + 1) * 8);
    let mut blobs = Vec::new();
    for d in &built.docs {
        offsets.extend_from_slice(&(blobs.len() as u64).to_le_bytes());
        let first = d.first_symbol as usize;
        let own: Vec<Symbol> = built
            .symbols
            .get(first..first + d.symbol_count as usize)
            .unwrap_or(&[])
            .iter()
            .map(|s| Symbol {
                container: s.container.map(|c| c.saturating_sub(d.first_symbol)),
                ..s.clone()
            })
            .collect();
        blobs.extend_from_slice(&encode(&own)?);
    }
    offsets.extend_from_slice(&(blobs.len() as u64).to_le_bytes());
    offsets.extend_from_slice(&blobs);
    Ok(offsets)
}

fn encode<T: Serialize>(value: &T) -> io::Result<Vec<u8>> {
    bincode::serialize(value).map_err(io::Error::other)
}

fn section(out: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
    out.write_all(&(bytes.len() as u64).to_le_bytes())?;
    out.write_all(bytes)
}

fn postings(built: &Built) -> io::Result<(Vec<u8>, Vec<u8>)> {
    let mut terms = MapBuilder::memory();
    let mut blob = Vec::new();
    for (term, list) in &built.postings {
        terms
            .insert(term.as_bytes(), blob.len() as u64)
            .map_err(io::Error::other)?;
        varint(&mut blob, list.len() as u64);
        let mut last = 0u32;
        for (doc, tf) in list {
            varint(&mut blob, u64::from(doc - last));
            last = *doc;
            let mask = tf
                .iter()
                .enumerate()
                .fold(0u8, |m, (f, n)| if *n > 0 { m | 1 << f } else { m });
            blob.push(mask);
            for n in tf.iter().filter(|n| **n > 0) {
                varint(&mut blob, u64::from(*n));
            }
        }
    }
    Ok((terms.into_inner().map_err(io::Error::other)?, blob))
}

/// Keys (in byte order) each with a list of files, as an fst map of
/// offsets and the lists (a count, then the files as deltas).
fn doc_lists<'a>(
    lists: impl Iterator<Item = (Vec<u8>, &'a Vec<u32>)>,
) -> io::Result<(Vec<u8>, Vec<u8>)> {
    let mut keys = MapBuilder::memory();
    let mut blob = Vec::new();
    for (key, docs) in lists {
        keys.insert(&key, blob.len() as u64)
            .map_err(io::Error::other)?;
        varint(&mut blob, docs.len() as u64);
        let mut last = 0u32;
        for doc in docs {
            varint(&mut blob, u64::from(doc - last));
            last = *doc;
        }
    }
    Ok((keys.into_inner().map_err(io::Error::other)?, blob))
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn read_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = *bytes.get(*at)?;
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(v);
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

/// A generation as read from disk: the file table and the term and name
/// maps in memory, the rest read from the open file when asked for (a
/// rename that replaces the file leaves this handle on the old one).
pub struct Stored {
    pub header: Header,
    pub docs: Vec<DocMeta>,
    pub bytes: u64,
    file: File,
    terms: Map<Vec<u8>>,
    postings: Range<u64>,
    symbols: Range<u64>,
    /// Each file's symbols, decoded on first use.
    doc_symbols: Vec<OnceLock<Vec<Symbol>>>,
    ref_names: Map<Vec<u8>>,
    ref_lists: Range<u64>,
    edges: Range<u64>,
    edge_list: OnceLock<Vec<(u32, u32, f32)>>,
    trigram_keys: OnceLock<Option<Map<Vec<u8>>>>,
    vector_section: Range<u64>,
    vectors: OnceLock<(usize, Vec<f32>)>,
    trigram_section: Range<u64>,
    trigram_lists: Range<u64>,
    neighbours: OnceLock<Vec<Vec<(u32, f32)>>>,
}

/// Why a stored generation cannot be used (it is then built again).
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("no index has been built")]
    Missing,
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("the index file is damaged ({0}); it will be built again")]
    Damaged(&'static str),
    #[error("the index was written by another version (format {0}); it will be built again")]
    OtherFormat(u32),
}

fn read_range(file: &File, range: &Range<u64>) -> io::Result<Vec<u8>> {
    let len = usize::try_from(range.end - range.start).map_err(io::Error::other)?;
    let mut buf = vec![0u8; len];
    crate::platform::fs::read_exact_at(file, &mut buf, range.start)?;
    Ok(buf)
}

pub fn read(dir: &Path) -> Result<Stored, ReadError> {
    let file = match File::open(dir.join("index.bin")) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(ReadError::Missing),
        Err(e) => return Err(e.into()),
    };
    let bytes = file.metadata()?.len();
    let mut mark = [0u8; 8];
    if bytes < 16 {
        return Err(ReadError::Damaged("no header or end mark"));
    }
    crate::platform::fs::read_exact_at(&file, &mut mark, 0)?;
    let mut end = [0u8; 8];
    crate::platform::fs::read_exact_at(&file, &mut end, bytes - 8)?;
    if &mark != MAGIC || &end != END {
        return Err(ReadError::Damaged("no header or end mark"));
    }
    let mut ranges = Vec::with_capacity(SECTIONS);
    let mut at = 8u64;
    for _ in 0..SECTIONS {
        let mut len = [0u8; 8];
        if at + 8 > bytes - 8 {
            return Err(ReadError::Damaged("a section's length"));
        }
        crate::platform::fs::read_exact_at(&file, &mut len, at)?;
        let end = at
            .checked_add(8)
            .and_then(|a| a.checked_add(u64::from_le_bytes(len)))
            .filter(|e| *e <= bytes - 8)
            .ok_or(ReadError::Damaged("a section runs past the end"))?;
        ranges.push(at + 8..end);
        at = end;
    }
    if at != bytes - 8 {
        return Err(ReadError::Damaged("bytes after the last section"));
    }
    let header: Header = bincode::deserialize(&read_range(&file, &ranges[0])?)
        .map_err(|_| ReadError::Damaged("the header"))?;
    if header.format != FORMAT {
        return Err(ReadError::OtherFormat(header.format));
    }
    let docs: Vec<DocMeta> = bincode::deserialize(&read_range(&file, &ranges[1])?)
        .map_err(|_| ReadError::Damaged("the file table"))?;
    let terms =
        Map::new(read_range(&file, &ranges[2])?).map_err(|_| ReadError::Damaged("the terms"))?;
    let ref_names = Map::new(read_range(&file, &ranges[5])?)
        .map_err(|_| ReadError::Damaged("the references"))?;
    let docs_len = docs.len();
    if ranges[4].end - ranges[4].start < (docs_len as u64 + 1) * 8 {
        return Err(ReadError::Damaged("the symbols"));
    }
    Ok(Stored {
        header,
        docs,
        bytes,
        file,
        terms,
        postings: ranges[3].clone(),
        symbols: ranges[4].clone(),
        doc_symbols: (0..docs_len).map(|_| OnceLock::new()).collect(),
        ref_names,
        ref_lists: ranges[6].clone(),
        edges: ranges[7].clone(),
        edge_list: OnceLock::new(),
        trigram_keys: OnceLock::new(),
        trigram_section: ranges[8].clone(),
        trigram_lists: ranges[9].clone(),
        vector_section: ranges[10].clone(),
        vectors: OnceLock::new(),
        neighbours: OnceLock::new(),
    })
}

/// A list of files as `doc_lists` wrote it.
fn decode_docs(bytes: Option<Vec<u8>>) -> Vec<u32> {
    let Some(bytes) = bytes else {
        return Vec::new();
    };
    let mut at = 0usize;
    let n = read_varint(&bytes, &mut at).unwrap_or(0);
    let mut doc = 0u32;
    let mut out = Vec::new();
    for _ in 0..n {
        let Some(d) = read_varint(&bytes, &mut at) else {
            break;
        };
        doc = doc.saturating_add(u32::try_from(d).unwrap_or(u32::MAX));
        out.push(doc);
    }
    out
}

/// The bytes of one list: from `offset` in `section` to the next key's
/// offset in `map` (or the section's end).
fn list_bytes(
    file: &File,
    map: &Map<Vec<u8>>,
    key: &[u8],
    section: &Range<u64>,
) -> Option<Vec<u8>> {
    use fst::{IntoStreamer, Streamer};
    let offset = map.get(key)?;
    let mut next = map.range().gt(key).into_stream();
    let end = next.next().map_or(section.end - section.start, |(_, v)| v);
    read_range(file, &(section.start + offset..section.start + end)).ok()
}

impl Stored {
    /// The files holding `term`, each with its counts per field.
    pub fn postings(&self, term: &str) -> Vec<(u32, [u32; NFIELDS])> {
        let Some(bytes) = list_bytes(&self.file, &self.terms, term.as_bytes(), &self.postings)
        else {
            return Vec::new();
        };
        let bytes = bytes.as_slice();
        let mut at = 0usize;
        let mut out = Vec::new();
        let Some(n) = read_varint(bytes, &mut at) else {
            return out;
        };
        let mut doc = 0u32;
        for _ in 0..n {
            let (Some(delta), Some(&mask)) = (read_varint(bytes, &mut at), bytes.get(at)) else {
                break;
            };
            at += 1;
            doc = doc.saturating_add(u32::try_from(delta).unwrap_or(u32::MAX));
            let mut tf = [0u32; NFIELDS];
            for (f, slot) in tf.iter_mut().enumerate() {
                if mask & (1 << f) != 0 {
                    *slot = read_varint(bytes, &mut at)
                        .and_then(|v| u32::try_from(v).ok())
                        .unwrap_or(0);
                }
            }
            out.push((doc, tf));
        }
        out
    }

    /// How many distinct terms the index holds.
    pub fn term_count(&self) -> usize {
        self.terms.len()
    }

    /// The files whose symbols refer to `name` (by the tags' references).
    pub fn referrers(&self, name: &str) -> Vec<u32> {
        decode_docs(list_bytes(
            &self.file,
            &self.ref_names,
            name.as_bytes(),
            &self.ref_lists,
        ))
    }

    /// The files holding trigram `t` (read on first use: its map is the
    /// largest part of the file and only `search_project` needs it).
    pub fn trigram_docs(&self, t: Trigram) -> Vec<u32> {
        let keys = self.trigram_keys.get_or_init(|| {
            read_range(&self.file, &self.trigram_section)
                .ok()
                .and_then(|b| Map::new(b).ok())
        });
        let Some(keys) = keys else {
            return Vec::new();
        };
        decode_docs(list_bytes(
            &self.file,
            keys,
            &trigrams::bytes_of(t),
            &self.trigram_lists,
        ))
    }

    /// How many symbols the files hold.
    pub fn symbol_count(&self) -> usize {
        self.docs.iter().map(|d| d.symbol_count as usize).sum()
    }

    /// File `doc`'s symbols in line order (outer first), each container
    /// an index into this list.
    pub fn symbols_of(&self, doc: u32) -> &[Symbol] {
        let Some(cell) = self.doc_symbols.get(doc as usize) else {
            return &[];
        };
        cell.get_or_init(|| {
            let mut bounds = [0u8; 16];
            let at = self.symbols.start + u64::from(doc) * 8;
            if crate::platform::fs::read_exact_at(&self.file, &mut bounds, at).is_err() {
                return Vec::new();
            }
            let (a, b) = bounds.split_at(8);
            let (Ok(a), Ok(b)) = (<[u8; 8]>::try_from(a), <[u8; 8]>::try_from(b)) else {
                return Vec::new();
            };
            let blobs = self.symbols.start + (self.docs.len() as u64 + 1) * 8;
            let range = blobs + u64::from_le_bytes(a)..blobs + u64::from_le_bytes(b);
            if range.start > range.end || range.end > self.symbols.end {
                return Vec::new();
            }
            read_range(&self.file, &range)
                .ok()
                .and_then(|b| bincode::deserialize(&b).ok())
                .unwrap_or_default()
        })
    }

    /// Decodes every file's symbols from one read of the section (for
    /// the lookups that go through them all).
    pub fn load_symbols(&self) {
        if self.doc_symbols.iter().all(|c| c.get().is_some()) {
            return;
        }
        let Ok(section) = read_range(&self.file, &self.symbols) else {
            return;
        };
        let n = self.docs.len();
        let offset = |i: usize| -> Option<usize> {
            let b = section.get(i * 8..i * 8 + 8)?;
            usize::try_from(u64::from_le_bytes(b.try_into().ok()?)).ok()
        };
        let blobs = (n + 1) * 8;
        for (i, cell) in self.doc_symbols.iter().enumerate() {
            let own = offset(i)
                .zip(offset(i + 1))
                .and_then(|(a, b)| section.get(blobs + a..blobs + b))
                .and_then(|b| bincode::deserialize(b).ok())
                .unwrap_or_default();
            let _ = cell.set(own);
        }
    }

    pub fn edges(&self) -> &[(u32, u32, f32)] {
        self.edge_list.get_or_init(|| {
            read_range(&self.file, &self.edges)
                .ok()
                .and_then(|b| bincode::deserialize(&b).ok())
                .unwrap_or_default()
        })
    }

    /// Each file's neighbours in the graph, either way, each edge's weight
    /// a share of the weight leaving its source.
    pub fn neighbours(&self, doc: u32) -> &[(u32, f32)] {
        let all = self.neighbours.get_or_init(|| {
            let edges = self.edges();
            let mut out_weight = vec![0f32; self.docs.len()];
            for &(a, _, w) in edges {
                if let Some(o) = out_weight.get_mut(a as usize) {
                    *o += w;
                }
            }
            let mut all: Vec<Vec<(u32, f32)>> = vec![Vec::new(); self.docs.len()];
            for &(a, b, w) in edges {
                let share = w / out_weight
                    .get(a as usize)
                    .copied()
                    .unwrap_or(1.0)
                    .max(f32::MIN_POSITIVE);
                if let Some(list) = all.get_mut(a as usize) {
                    list.push((b, share));
                }
                if let Some(list) = all.get_mut(b as usize) {
                    list.push((a, share));
                }
            }
            all
        });
        all.get(doc as usize).map_or(&[], Vec::as_slice)
    }

    /// The embedding's width and every file's vector (`(0, [])`: built
    /// without a model), read on first use.
    pub fn vectors(&self) -> (usize, &[f32]) {
        let (dim, all) = self.vectors.get_or_init(|| {
            let Ok(bytes) = read_range(&self.file, &self.vector_section) else {
                return (0, Vec::new());
            };
            let Some(dim) = bytes
                .get(..4)
                .and_then(|b| b.try_into().ok())
                .map(u32::from_le_bytes)
            else {
                return (0, Vec::new());
            };
            let all: Vec<f32> = bytes[4..]
                .chunks_exact(4)
                .filter_map(|c| c.try_into().ok().map(f32::from_le_bytes))
                .collect();
            if dim == 0 || all.len() != dim as usize * self.docs.len() {
                return (0, Vec::new());
            }
            (dim as usize, all)
        });
        (*dim, all)
    }
}
