//! Which paths under a root changed since the last look, as the system
//! reports them: inotify on Linux (a watch per folder, as before),
//! `notify` elsewhere (FSEvents on macOS, ReadDirectoryChangesW on
//! Windows: one recursive watch of the root). Lost events (a full queue,
//! a watched folder moved, no watches left) say so, and the caller scans.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// Whether every change is in the queue once the call that made it
/// returned (inotify), so a look right after a command misses nothing;
/// elsewhere events come a moment later.
pub const AT_ONCE: bool = cfg!(target_os = "linux");

/// What the events since the last look say.
pub enum Dirty {
    /// `/`-separated paths relative to the root.
    Paths(BTreeSet<String>),
    /// Events were lost: everything must be looked at again.
    Lost,
}

/// The watch over one root's folders.
pub struct Watch {
    root: PathBuf,
    inner: Inner,
    /// Each folder known to be watched, relative to the root ("" for the
    /// root), by the system's watch id (inotify) or itself.
    dirs: HashMap<Key, String>,
}

#[cfg(target_os = "linux")]
type Key = inotify::WatchDescriptor;
#[cfg(not(target_os = "linux"))]
type Key = String;

#[cfg(target_os = "linux")]
struct Inner(inotify::Inotify);

#[cfg(not(target_os = "linux"))]
struct Inner {
    _watcher: notify::RecommendedWatcher,
    events: std::sync::mpsc::Receiver<notify::Result<notify::Event>>,
    /// The root as the system spells it in events (macOS: /private/var/...).
    canonical: PathBuf,
}

#[cfg(target_os = "linux")]
const MASK: inotify::WatchMask = {
    use inotify::WatchMask as M;
    M::MODIFY
        .union(M::ATTRIB)
        .union(M::CLOSE_WRITE)
        .union(M::CREATE)
        .union(M::DELETE)
        .union(M::MOVED_FROM)
        .union(M::MOVED_TO)
        .union(M::MOVE_SELF)
        .union(M::DELETE_SELF)
        .union(M::DONT_FOLLOW)
        .union(M::ONLYDIR)
};

impl Watch {
    /// Starts watching `root` (None: the system refuses).
    pub fn new(root: &Path) -> Option<Watch> {
        #[cfg(target_os = "linux")]
        let inner = Inner(inotify::Inotify::init().ok()?);
        #[cfg(not(target_os = "linux"))]
        let inner = {
            use notify::Watcher;
            let (tx, events) = std::sync::mpsc::channel();
            let mut watcher = notify::recommended_watcher(move |e| {
                let _ = tx.send(e);
            })
            .ok()?;
            watcher.watch(root, notify::RecursiveMode::Recursive).ok()?;
            let canonical = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
            Inner {
                _watcher: watcher,
                events,
                canonical,
            }
        };
        Some(Watch {
            root: root.to_path_buf(),
            inner,
            dirs: HashMap::new(),
        })
    }

    /// Watches `dirs` (relative to the root); false when the system
    /// refuses one (no watches left).
    pub fn add(&mut self, dirs: &[String]) -> bool {
        for dir in dirs {
            #[cfg(target_os = "linux")]
            match self.inner.0.watches().add(self.root.join(dir), MASK) {
                Ok(wd) => {
                    self.dirs.insert(wd, dir.clone());
                }
                // Gone again already: its parent's events cover it.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(_) => return false,
            }
            // The root's one recursive watch covers it.
            #[cfg(not(target_os = "linux"))]
            self.dirs.insert(dir.clone(), dir.clone());
        }
        true
    }

    /// Whether folder `dir` is watched already.
    pub fn watches(&self, dir: &str) -> bool {
        self.dirs.values().any(|d| d == dir)
    }

    /// Forgets folder `path` and every folder under it (they are gone).
    pub fn forget(&mut self, path: &str) {
        let under = format!("{path}/");
        self.dirs.retain(|_, d| d != path && !d.starts_with(&under));
    }

    /// Every event queued since the last look, as paths.
    pub fn drain(&mut self) -> Dirty {
        #[cfg(target_os = "linux")]
        return self.drain_inotify();
        #[cfg(not(target_os = "linux"))]
        return self.drain_notify();
    }

    #[cfg(target_os = "linux")]
    fn drain_inotify(&mut self) -> Dirty {
        use inotify::EventMask;
        let mut buffer = [0u8; 16 * 1024];
        let mut paths = BTreeSet::new();
        loop {
            let events = match self.inner.0.read_events(&mut buffer) {
                Ok(events) => events,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(_) => return Dirty::Lost,
            };
            let mut any = false;
            for event in events {
                any = true;
                if event.mask.contains(EventMask::Q_OVERFLOW) {
                    return Dirty::Lost;
                }
                let Some(dir) = self.dirs.get(&event.wd).cloned() else {
                    continue;
                };
                if event.mask.contains(EventMask::IGNORED) {
                    self.dirs.remove(&event.wd);
                    continue;
                }
                // A watched folder moved: its watch now names the wrong path.
                if event.mask.contains(EventMask::MOVE_SELF) && !dir.is_empty() {
                    return Dirty::Lost;
                }
                match event.name.and_then(|n| n.to_str()) {
                    Some(name) if dir.is_empty() => {
                        paths.insert(name.to_string());
                    }
                    Some(name) => {
                        paths.insert(format!("{dir}/{name}"));
                    }
                    None if !dir.is_empty() => {
                        paths.insert(dir);
                    }
                    None => {}
                }
            }
            if !any {
                break;
            }
        }
        Dirty::Paths(paths)
    }

    #[cfg(not(target_os = "linux"))]
    fn drain_notify(&mut self) -> Dirty {
        let mut paths = BTreeSet::new();
        while let Ok(event) = self.inner.events.try_recv() {
            let Ok(event) = event else {
                return Dirty::Lost;
            };
            if event.need_rescan() {
                return Dirty::Lost;
            }
            for path in &event.paths {
                let rel = path
                    .strip_prefix(&self.root)
                    .or_else(|_| path.strip_prefix(&self.inner.canonical));
                let Ok(rel) = rel else { continue };
                let parts: Option<Vec<&str>> = rel
                    .components()
                    .map(|c| match c {
                        std::path::Component::Normal(s) => s.to_str(),
                        _ => None,
                    })
                    .collect();
                match parts {
                    Some(parts) if !parts.is_empty() => {
                        paths.insert(parts.join("/"));
                    }
                    // The root itself (renamed, removed): look again.
                    Some(_) => return Dirty::Lost,
                    None => {}
                }
            }
        }
        Dirty::Paths(paths)
    }
}
