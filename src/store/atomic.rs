//! Crash-safe file replacement: a temp file in the target's directory, then
//! a rename, so readers and crashes see the old bytes or the new, never a mix.

use std::path::Path;

/// Replaces `path` with `bytes` via a temp file in the same directory and a
/// rename, so a reader (or a crash) sees the old file or the new, never a
/// mix. Keeps the old file's permissions; creates parent directories.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("path has no parent directory"))?;
    std::fs::create_dir_all(dir)?;
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
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
