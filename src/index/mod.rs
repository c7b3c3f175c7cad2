//! The code index (SPEC 18): a local index of the agent root kept in the
//! state home. Files are listed as every tool lists them, read on all
//! cores into identifier-split terms (body, path, file name and defined
//! names as fields), tree-sitter symbols and a file graph, and written as
//! one generation that replaces the last only once complete. A query first
//! brings it up to date by stat: changed files are read again into an
//! overlay, many changes rebuild it.

mod analyse;
mod build;
mod catalog;
mod embed;
mod format;
mod graph;
mod lookup;
mod model;
mod outline;
mod search;
mod snippets;
mod tags;
mod tokens;
mod trigrams;
mod view;

pub use embed::Embedder;
pub use lookup::lookup;
pub use model::{DocMeta, Symbol};
pub use outline::{Outline, OutlineNode, Reference, RepoMap, SymbolHit};
pub use outline::{file_outline, find_references, find_symbol, repo_map};
pub use search::{Mode, SearchHit, SearchRequest, Snippet, search};
pub use view::View;

use std::collections::HashSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use analyse::{Interner, analyse};
use build::Progress;
use catalog::{Excludes, Listed};
use format::{FORMAT, Header, ReadError, Stored};
use view::Overlay;

use crate::config::IndexConfig;
use crate::protocol::{IndexBuilt as BuildReport, IndexState as State, IndexStatus as Status};
use crate::workspace::Workspace;

/// Above this many changed files (or a twentieth of the tree) a query
/// rebuilds the index instead of reading them into an overlay.
const MAX_OVERLAY: usize = 256;

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("the code index is turned off ([index] enabled = false)")]
    Disabled,
    #[error("code index: {0}")]
    Io(#[from] std::io::Error),
    #[error(
        "the embedding model of [index] embedding_model could not be read ({0}); fix it, or set it to \"\" to search without it"
    )]
    Embedding(String),
}

/// One root's index: where it lives, how it is configured, and (in a
/// long-running process) the view last brought up to date.
pub struct CodeIndex {
    dir: PathBuf,
    config: IndexConfig,
    excludes: Excludes,
    cached: Mutex<Option<Arc<View>>>,
    progress: Arc<Progress>,
    /// A long-running process's view of the tree, kept current by inotify
    /// (`None`: a command that ends; it walks the tree each time).
    live: Option<Mutex<Option<crate::workspace::LiveTree>>>,
    /// The embedding model, loaded at first use (`None`: none configured).
    embedder: std::sync::OnceLock<Option<Result<Arc<Embedder>, String>>>,
}

impl CodeIndex {
    /// `dir`: this root's folder in the state home.
    pub fn new(dir: PathBuf, config: IndexConfig) -> CodeIndex {
        let excludes = Excludes::new(&config);
        CodeIndex {
            dir,
            config,
            excludes,
            cached: Mutex::new(None),
            progress: Arc::new(Progress::default()),
            embedder: std::sync::OnceLock::new(),
            live: None,
        }
    }

    /// Follows the tree by inotify instead of walking it before each
    /// query (a TUI, a server: processes that live on).
    pub fn followed(mut self) -> CodeIndex {
        self.live = Some(Mutex::new(None));
        self
    }

    /// The catalog as the tree is now: from the inotify-kept tree when the
    /// index is followed, else by a walk.
    fn listed(&self, ws: &Workspace) -> Vec<Listed> {
        let Some(live) = &self.live else {
            return catalog::list(ws, &self.excludes);
        };
        let Ok(mut live) = live.lock() else {
            return catalog::list(ws, &self.excludes);
        };
        let tree = live.get_or_insert_with(|| crate::workspace::LiveTree::new(ws.root()));
        catalog::from_live(tree.refresh(), ws, &self.excludes)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn enabled(&self) -> bool {
        self.config.enabled
    }

    /// Files read of files listed while a build runs in this process.
    pub fn progress(&self) -> (usize, usize) {
        (
            self.progress.done.load(Ordering::Relaxed),
            self.progress.total.load(Ordering::Relaxed),
        )
    }

    fn fingerprint(&self) -> String {
        let model = match self.embedder() {
            Ok(Some(m)) => m.fingerprint.clone(),
            _ => String::new(),
        };
        format!(
            "{FORMAT}|{}|{:?}|{model}",
            self.config.max_file_bytes, self.config.exclude
        )
    }

    /// The configured embedding model (loaded once), `None` without one.
    pub fn embedder(&self) -> Result<Option<Arc<Embedder>>, IndexError> {
        let slot = self.embedder.get_or_init(|| {
            let dir = self.config.embedding_model.trim();
            (!dir.is_empty()).then(|| Embedder::load(Path::new(dir)).map(Arc::new))
        });
        match slot {
            None => Ok(None),
            Some(Ok(m)) => Ok(Some(m.clone())),
            Some(Err(e)) => Err(IndexError::Embedding(e.clone())),
        }
    }

    /// What is stored and whether the tree changed since (stats only).
    pub fn status(&self, ws: &Workspace) -> Status {
        let mut status = Status {
            state: State::None,
            files: 0,
            symbols: 0,
            fresh: false,
            changed: 0,
            generation: 0,
            bytes_on_disk: 0,
            built_at: None,
            path: self.dir.join("index.bin").display().to_string(),
            problem: None,
        };
        if self.building_elsewhere() {
            status.state = State::Building;
        }
        match format::read(&self.dir) {
            Ok(stored) => {
                if status.state == State::None {
                    status.state = State::Ready;
                }
                status.files = stored.docs.len();
                status.symbols = stored.symbol_count();
                status.generation = stored.header.generation;
                status.bytes_on_disk = stored.bytes;
                status.built_at = jiff::Timestamp::from_millisecond(stored.header.built_ms as i64)
                    .ok()
                    .map(|t| t.to_string());
                let listed = self.listed(ws);
                let plan = plan(&stored, &listed);
                status.changed = plan.changed.len() + plan.masked.len();
                status.fresh =
                    status.changed == 0 && stored.header.fingerprint == self.fingerprint();
            }
            Err(ReadError::Missing) => {}
            Err(e) => status.problem = Some(e.to_string()),
        }
        status
    }

    /// Builds a new generation (`force`), or only when the stored one is
    /// missing, unreadable, of other settings or out of date.
    pub fn build(&self, ws: &Workspace, force: bool) -> Result<BuildReport, IndexError> {
        if !self.config.enabled {
            return Err(IndexError::Disabled);
        }
        let _lock = self.lock()?;
        format::remove_leftovers(&self.dir);
        let previous = format::read(&self.dir).ok();
        let listed = self.listed(ws);
        if !force
            && let Some(stored) = &previous
            && stored.header.fingerprint == self.fingerprint()
        {
            let plan = plan(stored, &listed);
            if plan.changed.is_empty() && plan.masked.is_empty() {
                return Ok(report(stored, &listed, false));
            }
        }
        let generation = previous.map_or(0, |p| p.header.generation) + 1;
        let stored = self.build_locked(ws, &listed, generation)?;
        let report = report(&stored, &listed, true);
        self.remember(View::new(
            Some(Arc::new(stored)),
            HashSet::new(),
            Overlay::default(),
        ));
        Ok(report)
    }

    fn build_locked(
        &self,
        ws: &Workspace,
        listed: &[Listed],
        generation: u64,
    ) -> Result<Stored, IndexError> {
        let started = Instant::now();
        format::remove_leftovers(&self.dir);
        self.progress.done.store(0, Ordering::Relaxed);
        let embedder = self.embedder()?;
        let how = analyse::Reading {
            max_bytes: self.config.max_file_bytes,
            embedder: embedder.as_deref(),
        };
        let built = build::build(ws, listed, how, &self.progress);
        let indexed: Vec<&DocMeta> = built.docs.iter().filter(|d| d.indexed()).collect();
        let mut sums = [0f64; model::NFIELDS];
        for d in &indexed {
            for (s, l) in sums.iter_mut().zip(d.lens) {
                *s += f64::from(l);
            }
        }
        let n = indexed.len().max(1) as f64;
        let header = Header {
            format: FORMAT,
            generation,
            built_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
            duration_ms: started.elapsed().as_millis() as u64,
            fingerprint: self.fingerprint(),
            avg_lens: sums.map(|s| (s / n) as f32),
            indexed: indexed.len() as u32,
        };
        format::write(&self.dir, &header, &built)?;
        format::read(&self.dir).map_err(|e| match e {
            ReadError::Io(e) => IndexError::Io(e),
            other => IndexError::Io(std::io::Error::other(other.to_string())),
        })
    }

    /// Removes the stored index (the next query builds it again).
    pub fn clear(&self) -> Result<bool, IndexError> {
        let _lock = self.lock()?;
        if let Ok(mut cached) = self.cached.lock() {
            *cached = None;
        }
        match std::fs::remove_file(self.dir.join("index.bin")) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// The index brought up to date with the tree by stat: unchanged, an
    /// overlay of the files read again, or a new generation.
    pub fn view(&self, ws: &Workspace) -> Result<Arc<View>, IndexError> {
        if !self.config.enabled {
            return Err(IndexError::Disabled);
        }
        let listed = self.listed(ws);
        let Some(stored) = self.current_stored() else {
            let _lock = self.lock()?;
            // Another process may have built it while this one waited.
            let stored = match format::read(&self.dir) {
                Ok(s) if s.header.fingerprint == self.fingerprint() => s,
                previous => {
                    let generation = previous.map_or(0, |p| p.header.generation) + 1;
                    self.build_locked(ws, &listed, generation)?
                }
            };
            return self
                .view_of(ws, Arc::new(stored), &listed, true)
                .and_then(built);
        };
        self.view_of(ws, stored, &listed, true).and_then(built)
    }

    /// What a `search_project` for `query` may skip, from the stored index
    /// as it is (`None`: none stored, or the query needs no trigram). The
    /// search's own walk checks each file's stat against it, so nothing
    /// changed since is skipped; it never builds an index.
    pub fn search_skips(&self, query: &str, regex: bool) -> Option<Skips> {
        if !self.config.enabled {
            return None;
        }
        let stored = self.current_stored()?;
        let need = trigrams::required(query, regex)?;
        let mut lists: Vec<Vec<u32>> = need.iter().map(|t| stored.trigram_docs(*t)).collect();
        lists.sort_by_key(Vec::len);
        let mut have: HashSet<u32> = lists.first()?.iter().copied().collect();
        for list in &lists[1..] {
            if have.is_empty() {
                break;
            }
            let next: HashSet<u32> = list.iter().copied().collect();
            have.retain(|d| next.contains(d));
        }
        let files = stored
            .docs
            .iter()
            .enumerate()
            .filter(|(i, d)| d.indexed() && !d.folds_to_ascii && !have.contains(&(*i as u32)))
            .map(|(_, d)| (d.path.clone(), d.stat))
            .collect();
        Some(Skips(files))
    }

    /// The generation this process holds, else the one on disk, if it was
    /// built with the settings in force.
    fn current_stored(&self) -> Option<Arc<Stored>> {
        let cached = self.cached.lock().ok().and_then(|c| c.clone());
        let stored = match cached.and_then(|v| v.stored.clone()) {
            Some(s) => s,
            None => Arc::new(format::read(&self.dir).ok()?),
        };
        (stored.header.fingerprint == self.fingerprint()).then_some(stored)
    }

    fn view_of(
        &self,
        ws: &Workspace,
        stored: Arc<Stored>,
        listed: &[Listed],
        may_build: bool,
    ) -> Result<Option<Arc<View>>, IndexError> {
        let plan = plan(&stored, listed);
        if let Some(cached) = self.cached.lock().ok().and_then(|c| c.clone())
            && cached
                .stored
                .as_ref()
                .is_some_and(|s| Arc::ptr_eq(s, &stored))
            && same_overlay(&cached, &plan)
        {
            return Ok(Some(cached));
        }
        let limit = MAX_OVERLAY.max(stored.docs.len() / 20);
        if plan.changed.len() > limit {
            if !may_build {
                return Ok(None);
            }
            let _lock = self.lock()?;
            let built = self.build_locked(ws, listed, stored.header.generation + 1)?;
            let view = View::new(Some(Arc::new(built)), HashSet::new(), Overlay::default());
            return Ok(Some(self.remember(view)));
        }
        let mut overlay = Overlay {
            names: Interner::default(),
            ..Overlay::default()
        };
        let base = stored.docs.len() as u32;
        let embedder = self.embedder()?;
        let how = analyse::Reading {
            max_bytes: self.config.max_file_bytes,
            embedder: embedder.as_deref(),
        };
        for (i, file) in plan.changed.iter().enumerate() {
            let doc = analyse(ws, file, how, &mut overlay.names);
            overlay.push(doc, base + i as u32);
        }
        Ok(Some(self.remember(View::new(
            Some(stored),
            plan.masked,
            overlay,
        ))))
    }

    fn remember(&self, view: View) -> Arc<View> {
        let view = Arc::new(view);
        if let Ok(mut cached) = self.cached.lock() {
            *cached = Some(view.clone());
        }
        view
    }

    /// The build lock of this root's index (several processes share it).
    fn lock(&self) -> Result<File, IndexError> {
        std::fs::create_dir_all(&self.dir)?;
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.dir.join("build.lock"))?;
        file.lock()?;
        Ok(file)
    }

    fn building_elsewhere(&self) -> bool {
        let Ok(file) = File::options()
            .write(true)
            .open(self.dir.join("build.lock"))
        else {
            return false;
        };
        file.try_lock().is_err()
    }
}

/// The files a search may skip, each with the stat it had when indexed.
pub struct Skips(std::collections::HashMap<String, model::Stat>);

impl Skips {
    /// `rel` lacked a trigram every match holds, and is unchanged since.
    pub fn skips(&self, rel: &str, meta: &std::fs::Metadata) -> bool {
        self.0
            .get(rel)
            .is_some_and(|s| *s == catalog::stat_of(meta))
    }
}

/// A view `view_of` was allowed to build for.
fn built(view: Option<Arc<View>>) -> Result<Arc<View>, IndexError> {
    view.ok_or_else(|| {
        IndexError::Io(std::io::Error::other(
            "the index could not be brought up to date",
        ))
    })
}

/// What differs between a stored generation and the tree.
struct Plan {
    /// Files new or changed since: to be read again.
    changed: Vec<Listed>,
    /// Stored files changed or gone.
    masked: HashSet<u32>,
}

fn plan(stored: &Stored, listed: &[Listed]) -> Plan {
    let mut changed = Vec::new();
    let mut masked = HashSet::new();
    let (mut i, mut j) = (0, 0);
    let docs = &stored.docs;
    while i < docs.len() || j < listed.len() {
        match (docs.get(i), listed.get(j)) {
            (Some(d), Some(l)) if d.path == l.path => {
                if d.stat != l.stat {
                    masked.insert(i as u32);
                    changed.push(l.clone());
                }
                i += 1;
                j += 1;
            }
            (Some(d), Some(l)) if d.path < l.path => {
                masked.insert(i as u32);
                i += 1;
            }
            (Some(_), None) => {
                masked.insert(i as u32);
                i += 1;
            }
            (_, Some(l)) => {
                changed.push(l.clone());
                j += 1;
            }
            (None, None) => break,
        }
    }
    Plan { changed, masked }
}

/// The cached view already holds exactly these changes.
fn same_overlay(view: &View, plan: &Plan) -> bool {
    view.masked == plan.masked
        && view.overlay.docs.len() == plan.changed.len()
        && view
            .overlay
            .docs
            .iter()
            .zip(&plan.changed)
            .all(|(d, l)| d.path == l.path && d.stat == l.stat)
}

fn report(stored: &Stored, listed: &[Listed], built: bool) -> BuildReport {
    BuildReport {
        files: stored.docs.len(),
        indexed: stored.header.indexed as usize,
        symbols: stored.symbol_count(),
        terms: stored.term_count(),
        bytes_on_disk: stored.bytes,
        source_bytes: listed.iter().map(|l| l.stat.size).sum(),
        duration_ms: stored.header.duration_ms,
        generation: stored.header.generation,
        built,
    }
}
