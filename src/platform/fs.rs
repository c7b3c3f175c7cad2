//! Files as each system describes them: permission bits (Unix modes; on
//! Windows only the read-only flag, shown as 0o444/0o644), a file's
//! identity and change time for the stat comparison, reads at an offset,
//! and files and folders only their owner may open.

use std::fs::{File, Metadata};
use std::io;
use std::path::Path;

/// A file's permission bits (the low 12 bits of its Unix mode). Windows has
/// none: a read-only file is 0o444, any other 0o644 (0o755 for a folder).
pub fn mode(meta: &Metadata) -> u32 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o7777
    }
    #[cfg(not(unix))]
    {
        let write = if meta.permissions().readonly() {
            0
        } else {
            0o200
        };
        let base = if meta.is_dir() { 0o555 } else { 0o444 };
        base | write
    }
}

/// Whether a file may be run: any execute bit on Unix; on Windows a file
/// whose extension `PATHEXT` lists (`.exe`, `.cmd`, `.bat` ...).
pub fn is_executable(path: &Path, meta: &Metadata) -> bool {
    #[cfg(unix)]
    {
        let _ = path;
        mode(meta) & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        let exts = std::env::var("PATHEXT").unwrap_or_else(|_| ".COM;.EXE;.BAT;.CMD".into());
        path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
            exts.split(';')
                .any(|x| x.trim_start_matches('.').eq_ignore_ascii_case(e))
        })
    }
}

/// Sets a file's permission bits (on Windows: read-only when no write bit
/// is set, writable otherwise).
pub fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    std::fs::set_permissions(path, permissions(path, mode)?)
}

/// The permissions `mode` means for `path` (read from it on Windows,
/// where only the read-only flag changes).
pub fn permissions(path: &Path, mode: u32) -> io::Result<std::fs::Permissions> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = path;
        Ok(std::fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let mut perms = std::fs::metadata(path)?.permissions();
        perms.set_readonly(mode & 0o222 == 0);
        Ok(perms)
    }
}

/// What the stat comparison reads beyond size and mtime: the inode (0 on
/// Windows, where std does not expose the file index) and the change time
/// in nanoseconds (the creation time on Windows).
pub fn identity(meta: &Metadata) -> (u64, i128) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let ctime = i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec());
        (meta.ino(), ctime)
    }
    #[cfg(not(unix))]
    {
        (0, meta.created().map(nanos).unwrap_or(0))
    }
}

/// The last write in nanoseconds since the epoch (negative before it).
pub fn mtime_ns(meta: &Metadata) -> i128 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec())
    }
    #[cfg(not(unix))]
    {
        meta.modified().map(nanos).unwrap_or(0)
    }
}

#[cfg(not(unix))]
fn nanos(t: std::time::SystemTime) -> i128 {
    match t.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    }
}

/// Fills `buf` from `offset` without moving a shared cursor.
pub fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        file.read_exact_at(buf, offset)
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::FileExt;
        let mut done = 0;
        while done < buf.len() {
            match file.seek_read(&mut buf[done..], offset + done as u64) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// Files `options` creates are for their owner alone (0o600 on Unix;
/// on Windows a new file inherits its folder's ACL, the user's profile).
pub fn owner_only(options: &mut std::fs::OpenOptions) -> &mut std::fs::OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600)
    }
    #[cfg(not(unix))]
    {
        options
    }
}

/// Opening for reading never blocks on a FIFO (Unix; Windows has none in
/// a tree).
pub fn no_block(options: &mut cap_std::fs::OpenOptions) -> &mut cap_std::fs::OpenOptions {
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt;
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
    }
    #[cfg(not(unix))]
    {
        options
    }
}

/// A new temporary folder only its owner may enter (0o700 on Unix; on
/// Windows the user's temp folder is private already).
pub fn private_tempdir(prefix: &str) -> io::Result<tempfile::TempDir> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(prefix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o700));
    }
    builder.tempdir()
}

/// A symbolic link at `link` to `target` (on Windows a file link, or a
/// folder link when `target` is a folder; both may need Developer Mode).
pub fn symlink(target: &Path, link: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(target, link)
    }
    #[cfg(windows)]
    {
        let resolved = link
            .parent()
            .map_or(target.to_path_buf(), |p| p.join(target));
        if resolved.is_dir() {
            std::os::windows::fs::symlink_dir(target, link)
        } else {
            std::os::windows::fs::symlink_file(target, link)
        }
    }
}

/// The user's id on Unix (names private folders); 0 elsewhere.
pub fn user_id() -> u32 {
    #[cfg(unix)]
    {
        rustix::process::getuid().as_raw()
    }
    #[cfg(not(unix))]
    {
        0
    }
}

/// Whether two stats are of one file (device and inode on Unix; on
/// Windows, where std gives no file index, the same kind and creation
/// time).
pub fn same_file(a: &Metadata, b: &Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        a.ino() == b.ino() && a.dev() == b.dev()
    }
    #[cfg(not(unix))]
    {
        a.file_type() == b.file_type() && a.created().ok() == b.created().ok()
    }
}

/// `same_file` for the stats a directory handle gives.
pub fn same_dir(a: &cap_std::fs::Metadata, b: &cap_std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use cap_std::fs::MetadataExt;
        a.ino() == b.ino() && a.dev() == b.dev()
    }
    #[cfg(not(unix))]
    {
        a.is_dir() == b.is_dir() && a.created().ok() == b.created().ok()
    }
}

/// Makes `dir` (and its parents) a folder only this user may enter, and
/// refuses one that is not this user's (Unix; on Windows it is made under
/// the user's own profile).
pub fn private_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        let meta = std::fs::symlink_metadata(dir)?;
        if !meta.is_dir() || meta.uid() != user_id() {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("{} is not a folder of this user's", dir.display()),
            ));
        }
        if meta.mode() & 0o077 != 0 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        }
        Ok(())
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(dir)
    }
}

/// Free bytes at `dir` for this user (None where it cannot be told).
// The field types differ by system (u32 blocks on macOS).
#[allow(clippy::unnecessary_cast)]
pub fn free_bytes(dir: &Path) -> Option<u64> {
    #[cfg(unix)]
    {
        nix::sys::statvfs::statvfs(dir)
            .ok()
            .map(|v| (v.blocks_available() as u64).saturating_mul(v.fragment_size() as u64))
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        None
    }
}

/// A copy-on-write clone of `src` into the new file `dst` where the file
/// system has one (Linux's FICLONE); false: copy the bytes instead.
pub fn clone_file(dst: &File, src: &File) -> bool {
    #[cfg(target_os = "linux")]
    {
        rustix::fs::ioctl_ficlone(dst, src).is_ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (dst, src);
        false
    }
}

/// Opens `path` for reading without waiting on a FIFO and without
/// following a final link (Unix: O_NONBLOCK | O_NOFOLLOW; Windows opens
/// the link itself, as FILE_FLAG_OPEN_REPARSE_POINT does).
pub fn open_no_follow(path: &Path) -> io::Result<File> {
    let mut options = File::options();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOFOLLOW;
        options.custom_flags(i32::try_from(flags.bits()).unwrap_or(0));
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        // FILE_FLAG_OPEN_REPARSE_POINT
        options.custom_flags(0x0020_0000);
    }
    options.open(path)
}

/// The whole Unix mode (file type and permission bits), as the stat
/// comparison keeps it; on Windows the type's bits and `mode`.
pub fn full_mode(meta: &Metadata) -> u32 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        meta.mode()
    }
    #[cfg(not(unix))]
    {
        let kind = if meta.is_dir() {
            0o040_000
        } else if meta.file_type().is_symlink() {
            0o120_000
        } else {
            0o100_000
        };
        kind | mode(meta)
    }
}

/// `mode` for the stats a directory handle gives.
pub fn cap_mode(meta: &cap_std::fs::Metadata) -> u32 {
    #[cfg(unix)]
    {
        use cap_std::fs::PermissionsExt;
        meta.permissions().mode() & 0o7777
    }
    #[cfg(not(unix))]
    {
        if meta.permissions().readonly() {
            0o444
        } else {
            0o644
        }
    }
}

/// Sets an open file's permission bits (Windows: its read-only flag).
pub fn set_file_mode(file: &File, mode: u32) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let mut perms = file.metadata()?.permissions();
        perms.set_readonly(mode & 0o222 == 0);
        file.set_permissions(perms)
    }
}

/// Makes folder `path` (its parent must exist) for its owner alone.
pub fn create_private_dir(path: &Path) -> io::Result<()> {
    #[cfg_attr(not(unix), allow(unused_mut))]
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(path)
}

/// Makes a folder's entries durable (fsync of the folder, opened for
/// reading through its handle). Windows has no such call (NTFS journals
/// its metadata, and a folder cannot be opened as a file): nothing to do.
pub fn sync_dir(dir: &cap_std::fs::Dir) -> io::Result<()> {
    #[cfg(unix)]
    {
        dir.open(".")?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// `sync_dir` for a folder named by its path.
pub fn sync_dir_at(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}
