//! Images attached to instructions (SPEC 20), kept by the sha256 of their
//! bytes: sessions name them, the same picture sent twice is kept once,
//! and a resumed session's images are read back from here.

use sqlx::Row;

use super::{Store, StoreError};
use crate::protocol::ImageMeta;

impl Store {
    /// Keeps an image's bytes under its sha256 (kept already: nothing changes).
    pub fn keep_image(&self, meta: &ImageMeta, data: &[u8], now: &str) -> Result<(), StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let (sha, media_type, data, now) = (
            meta.sha256.clone(),
            meta.media_type.clone(),
            data.to_vec(),
            now.to_string(),
        );
        shared.block(async move {
            sqlx::query(
                "INSERT INTO images (sha256, media_type, data, created_at)
                 VALUES ($1, $2, $3, $4)
                 ON CONFLICT (sha256) DO NOTHING",
            )
            .bind(sha)
            .bind(media_type)
            .bind(data)
            .bind(now)
            .execute(&pool)
            .await
            .map(|_| ())
        })
    }

    /// The bytes kept under `sha256`, if any.
    pub fn image(&self, sha256: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let key = sha256.to_string();
        shared.block(async move {
            let row = sqlx::query("SELECT data FROM images WHERE sha256 = $1")
                .bind(key)
                .fetch_optional(&pool)
                .await?;
            row.map(|r| r.try_get::<Vec<u8>, _>(0)).transpose()
        })
    }
}
