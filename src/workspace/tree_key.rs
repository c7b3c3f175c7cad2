//! A root's files as one key: by their stats (`tree_stamp`, cheap: a
//! verify's result is stale once it changes) or by their content and
//! modes (`tree_key`: a verify's baseline is cached by it).

use std::io;
use std::time::SystemTime;

use super::Workspace;
use super::scratch::open_regular;
use super::walk::{Entry, EntryKind, list};

/// The root's files as the listing sees them, by their stats (path, kind,
/// size, modification time), as a hex key: a verify's result whose stamp
/// differs from the root's now ran on another tree. Only stats are read.
pub fn tree_stamp(ws: &Workspace) -> io::Result<String> {
    let Some(root) = ws.scope_starts().into_iter().next() else {
        return Err(io::Error::other("the workspace has no root"));
    };
    Ok(stamp_of(&list(ws, &root, None, None, usize::MAX).entries))
}

pub(super) fn stamp_of(entries: &[Entry]) -> String {
    use sha2::Digest;
    let mut sorted: Vec<&Entry> = entries.iter().collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    let mut hash = sha2::Sha256::new();
    for e in sorted {
        let nanos = e
            .modified
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        hash.update(format!("{}\0{:?}\0{}\0{nanos}\n", e.path, e.kind, e.size).as_bytes());
    }
    hash.finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The content of the root's files as a copy would hold them (paths,
/// link targets and bytes), as a hex key: a verify's baseline is cached
/// by it.
pub fn tree_key(ws: &Workspace) -> io::Result<String> {
    use sha2::Digest;
    let Some(root) = ws.scope_starts().into_iter().next() else {
        return Err(io::Error::other("the workspace has no root"));
    };
    let mut entries = list(ws, &root, None, None, usize::MAX).entries;
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    let mut hash = sha2::Sha256::new();
    for e in &entries {
        let from = ws.root().join(&e.path);
        let (tag, bytes) = match e.kind {
            EntryKind::Dir | EntryKind::Other => continue,
            EntryKind::File => match open_regular(&from)? {
                Some(mut file) => {
                    // The mode counts: a check that runs `./run.sh` fails
                    // once it is no longer executable.
                    let mode = crate::platform::fs::mode(&file.metadata()?);
                    hash.update(mode.to_le_bytes());
                    let mut bytes = Vec::new();
                    io::Read::read_to_end(&mut file, &mut bytes)?;
                    (b'f', bytes)
                }
                None => continue,
            },
            EntryKind::Symlink => (
                b'l',
                std::fs::read_link(&from)?
                    .into_os_string()
                    .into_encoded_bytes(),
            ),
        };
        hash.update([tag]);
        hash.update(e.path.as_bytes());
        hash.update([0]);
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(&bytes);
    }
    Ok(hash.finalize().iter().map(|b| format!("{b:02x}")).collect())
}
