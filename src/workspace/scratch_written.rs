//! The files verifies wrote into a root's own scratch folder, listed beside
//! it (`<folder>.written`, one JSON line a file: its path, and when the
//! copy that wrote it ended, once it did). A later copy gives such a file
//! a new time, so a build of the version a verify wrote never looks newer
//! than the file put back; once the root's own file is newer than the end
//! of the copy that last wrote it (the hunk was applied, or the file
//! edited since), every build of that version is older than it and the
//! entry is dropped. A copy that never ended (a crash) keeps its entries.

use std::collections::{BTreeSet, HashMap};
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// One line of the list.
#[derive(Serialize, Deserialize)]
struct Line {
    path: String,
    /// Milliseconds since the epoch when the copy that wrote it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ended_ms: Option<u64>,
}

/// The list of one root's folder, as this copy found and keeps it.
#[derive(Debug, Default)]
pub(super) struct Written {
    /// Where the list is: `None` for a folder of a copy's own (whose files
    /// all get a new time).
    list: Option<PathBuf>,
    /// The files earlier copies wrote: when the last of them ended.
    before: HashMap<String, Option<u64>>,
    /// The files this copy wrote.
    now: Mutex<BTreeSet<String>>,
}

impl Written {
    /// The list at `list` (a missing one is empty; a line that is not
    /// JSON is a path, as lists of earlier versions had it, not ended).
    pub(super) fn load(list: PathBuf) -> Written {
        let mut before = HashMap::new();
        for line in std::fs::read_to_string(&list).unwrap_or_default().lines() {
            let entry = serde_json::from_str::<Line>(line).unwrap_or_else(|_| Line {
                path: line.to_string(),
                ended_ms: None,
            });
            before.insert(entry.path, entry.ended_ms);
        }
        Written {
            list: Some(list),
            before,
            now: Mutex::default(),
        }
    }

    /// Whether root file `rel`, modified at `modified`, keeps that time in
    /// the copy: in the root's own folder, unless a copy there wrote it
    /// and the root's file is not newer than that copy's end (an entry the
    /// root's file has overtaken is dropped).
    pub(super) fn keeps_time(&mut self, rel: &str, modified: Option<SystemTime>) -> bool {
        if self.list.is_none() {
            return false;
        }
        match self.before.get(rel) {
            None => true,
            Some(Some(ended)) if modified.map(millis).is_some_and(|m| m > *ended) => {
                self.before.remove(rel);
                true
            }
            Some(_) => false,
        }
    }

    /// Notes that this copy writes `rel`, on disk before the file is
    /// written (so a copy that never ends leaves it listed).
    pub(super) fn record(&self, rel: &str) -> io::Result<()> {
        let Some(list) = &self.list else {
            return Ok(());
        };
        let mut now = self.now.lock().map_err(|_| io::Error::other("poisoned"))?;
        if !now.insert(rel.to_string()) {
            return Ok(());
        }
        let line = Line {
            path: rel.to_string(),
            ended_ms: None,
        };
        let mut file = std::fs::File::options()
            .create(true)
            .append(true)
            .open(list)?;
        writeln!(file, "{}", serde_json::to_string(&line)?)
    }

    /// The copy has ended (its command with it): the list is written again
    /// with what is still listed and this copy's files ended now.
    pub(super) fn close(&self) -> io::Result<()> {
        let Some(list) = &self.list else {
            return Ok(());
        };
        let ended = millis(SystemTime::now());
        let mut entries: Vec<Line> = self
            .before
            .iter()
            .map(|(path, ended_ms)| Line {
                path: path.clone(),
                ended_ms: *ended_ms,
            })
            .collect();
        let now = self.now.lock().map_err(|_| io::Error::other("poisoned"))?;
        entries.retain(|e| !now.contains(&e.path));
        entries.extend(now.iter().map(|path| Line {
            path: path.clone(),
            ended_ms: Some(ended),
        }));
        if entries.is_empty() {
            return match std::fs::remove_file(list) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            };
        }
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        let mut text = String::new();
        for e in &entries {
            text.push_str(&serde_json::to_string(e)?);
            text.push('\n');
        }
        let fresh = list.with_extension("written.new");
        std::fs::write(&fresh, text)?;
        std::fs::rename(fresh, list)
    }
}

fn millis(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
