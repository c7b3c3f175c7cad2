//! Content-addressed file snapshots: bytes stored once under their sha256,
//! checked again when read back.

use std::io;
use std::path::{Path, PathBuf};

use super::write_atomic;
use crate::workspace::sha256_hex;

pub struct BlobStore {
    dir: PathBuf,
}

impl BlobStore {
    pub fn new(dir: &Path) -> BlobStore {
        BlobStore {
            dir: dir.to_path_buf(),
        }
    }

    fn path_of(&self, hash: &str) -> io::Result<PathBuf> {
        let hex = hash
            .strip_prefix("sha256:")
            .filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("not a blob hash: {hash}"),
                )
            })?;
        Ok(self.dir.join(&hex[..2]).join(&hex[2..]))
    }

    /// Stores `bytes` (once) and returns their `sha256:<hex>`.
    pub fn put(&self, bytes: &[u8]) -> io::Result<String> {
        let hash = sha256_hex(bytes);
        let path = self.path_of(&hash)?;
        if !path.exists() {
            write_atomic(&path, bytes)?;
        }
        Ok(hash)
    }

    /// The bytes stored under `hash`; an error if missing or corrupted.
    pub fn get(&self, hash: &str) -> io::Result<Vec<u8>> {
        let bytes = std::fs::read(self.path_of(hash)?)?;
        if sha256_hex(&bytes) != hash {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("snapshot {hash} is corrupted"),
            ));
        }
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn put_get_dedup_and_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let store = BlobStore::new(dir.path());
        let h = store.put(b"hello").unwrap();
        assert_eq!(store.put(b"hello").unwrap(), h);
        assert_eq!(store.get(&h).unwrap(), b"hello");
        let path = store.path_of(&h).unwrap();
        std::fs::write(&path, b"tampered").unwrap();
        assert_eq!(
            store.get(&h).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
        assert!(store.get("sha256:../../etc").is_err());
    }
}
