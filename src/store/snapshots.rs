//! File snapshots in the store: content-addressed by sha256, LZ4-compressed
//! when that saves space, stored once across all roots, and checked against
//! their hash when read back.

use sqlx::Row;

use super::Store;
use super::error::StoreError;
use crate::workspace::sha256_hex;

/// A snapshot ready to store: its hash and its encoded bytes.
pub struct Encoded {
    pub hash: String,
    pub size: i64,
    pub codec: &'static str,
    pub data: Vec<u8>,
}

/// Hashes and compresses `bytes` (kept raw when LZ4 does not shrink them).
pub fn encode(bytes: &[u8]) -> Encoded {
    let hash = sha256_hex(bytes);
    let compressed = lz4_flex::compress(bytes);
    let size = i64::try_from(bytes.len()).unwrap_or(i64::MAX);
    if compressed.len() < bytes.len() {
        Encoded {
            hash,
            size,
            codec: "lz4",
            data: compressed,
        }
    } else {
        Encoded {
            hash,
            size,
            codec: "raw",
            data: bytes.to_vec(),
        }
    }
}

/// The bytes of a stored snapshot, checked against `hash`.
pub fn decode(hash: &str, size: i64, codec: &str, data: Vec<u8>) -> Result<Vec<u8>, String> {
    let bytes = match codec {
        "raw" => data,
        "lz4" => lz4_flex::decompress(&data, usize::try_from(size).unwrap_or(0))
            .map_err(|e| format!("snapshot {hash} cannot be decompressed: {e}"))?,
        other => return Err(format!("snapshot {hash} has an unknown codec {other:?}")),
    };
    if sha256_hex(&bytes) != hash {
        return Err(format!("snapshot {hash} is corrupted"));
    }
    Ok(bytes)
}

fn check_hash(hash: &str) -> Result<(), StoreError> {
    let ok = hash
        .strip_prefix("sha256:")
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()));
    if ok {
        Ok(())
    } else {
        Err(StoreError::Invalid(format!("not a snapshot hash: {hash}")))
    }
}

impl Store {
    /// The bytes stored under `hash`; an error if missing or corrupted.
    pub fn snapshot(&self, hash: &str) -> Result<Vec<u8>, StoreError> {
        check_hash(hash)?;
        let shared = self.shared();
        let pool = shared.pool.clone();
        let h = hash.to_string();
        let row = shared.block(async move {
            let row = sqlx::query("SELECT size, codec, data FROM snapshots WHERE hash = $1")
                .bind(h)
                .fetch_optional(&pool)
                .await?;
            row.map(|r| {
                Ok::<_, sqlx::Error>((
                    r.try_get::<i64, _>(0)?,
                    r.try_get::<String, _>(1)?,
                    r.try_get::<Vec<u8>, _>(2)?,
                ))
            })
            .transpose()
        })?;
        let Some((size, codec, data)) = row else {
            return Err(StoreError::NotFound(format!(
                "snapshot {hash} is missing from the store (agent-tui store check names what is \
                 damaged; restore a backup of the store)"
            )));
        };
        decode(hash, size, &codec, data).map_err(|reason| StoreError::Corrupt {
            store: self.location().to_string(),
            reason,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_corruption() {
        let text = "fn main() {}\n".repeat(100);
        let e = encode(text.as_bytes());
        assert_eq!(e.codec, "lz4");
        assert!(e.data.len() < text.len() / 5);
        assert_eq!(
            decode(&e.hash, e.size, e.codec, e.data.clone()).unwrap(),
            text.as_bytes()
        );
        let tiny = encode(b"a");
        assert_eq!(tiny.codec, "raw");
        assert!(decode(&e.hash, e.size, "raw", b"tampered".to_vec()).is_err());
        assert!(check_hash("sha256:../../etc").is_err());
    }
}
