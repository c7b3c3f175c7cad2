//! Crash-safe file replacement: a temp file in the target's directory,
//! synced, then a rename and a sync of the directory, so readers, crashes
//! and power losses see the old bytes or the new, never a mix or nothing.

use std::path::Path;

/// Replaces `path` with `bytes` via a temp file in the same directory and a
/// rename, so a reader (or a crash) sees the old file or the new, never a
/// mix. Keeps the old file's permissions; creates parent directories.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("path has no parent directory"))?;
    create_dirs_durably(dir)?;
    let permissions = std::fs::metadata(path).ok().map(|m| m.permissions());
    let mut temp = tempfile::Builder::new()
        .prefix(".agent-tui-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    temp.write_all(bytes)?;
    temp.flush()?;
    let permissions = permissions.unwrap_or_else(|| {
        use std::os::unix::fs::PermissionsExt;
        // New files: the usual rw-r--r-- rather than the temp file's 0600.
        std::fs::Permissions::from_mode(0o644)
    });
    temp.as_file().set_permissions(permissions)?;
    // The bytes reach the disk before the name points at them.
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    // And the rename itself survives a power loss.
    sync_dir(dir)
}

/// Removes `path` (gone already is fine) and syncs its directory.
pub fn remove_durably(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    }
    match path.parent() {
        Some(dir) => sync_dir(dir),
        None => Ok(()),
    }
}

/// Makes the directory's entries (new names, renames, removals) durable.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

/// Creates `dir` and its missing parents, syncing the parent of each one
/// created so the new folders survive a power loss too.
fn create_dirs_durably(dir: &Path) -> std::io::Result<()> {
    let mut missing = Vec::new();
    let mut at = Some(dir);
    while let Some(d) = at.filter(|d| !d.exists()) {
        missing.push(d.to_path_buf());
        at = d.parent();
    }
    if missing.is_empty() {
        return Ok(());
    }
    std::fs::create_dir_all(dir)?;
    for created in missing.iter().rev() {
        if let Some(parent) = created.parent() {
            sync_dir(parent)?;
        }
    }
    Ok(())
}
