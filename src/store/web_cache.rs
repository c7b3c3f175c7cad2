//! Web pages `web_fetch` read (SPEC 20), kept by URL with their validators
//! (ETag, Last-Modified), so the next fetch of the same URL asks the server
//! whether it changed and a `304 Not Modified` costs no body.

use sqlx::Row;

use super::{Store, StoreError};

/// A page as it was fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedPage {
    pub url: String,
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    pub status: u16,
    pub content_type: String,
    pub body: Vec<u8>,
    pub truncated: bool,
}

impl Store {
    /// The page kept for `url`, if any.
    pub fn web_page(&self, url: &str) -> Result<Option<CachedPage>, StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let key = url.to_string();
        shared.block(async move {
            let row = sqlx::query(
                "SELECT url, etag, last_modified, status, content_type, body, truncated
                 FROM web_cache WHERE url = $1",
            )
            .bind(key)
            .fetch_optional(&pool)
            .await?;
            row.map(|r| {
                Ok::<_, sqlx::Error>(CachedPage {
                    url: r.try_get(0)?,
                    etag: r.try_get(1)?,
                    last_modified: r.try_get(2)?,
                    status: u16::try_from(r.try_get::<i64, _>(3)?).unwrap_or(200),
                    content_type: r.try_get(4)?,
                    body: r.try_get(5)?,
                    truncated: r.try_get::<i64, _>(6)? != 0,
                })
            })
            .transpose()
        })
    }

    /// Keeps `page` for its URL (the one kept before is replaced).
    pub fn keep_web_page(&self, page: &CachedPage, now: &str) -> Result<(), StoreError> {
        let shared = self.shared();
        let pool = shared.pool.clone();
        let (page, now) = (page.clone(), now.to_string());
        shared.block(async move {
            sqlx::query(
                "INSERT INTO web_cache
                   (url, etag, last_modified, status, content_type, body, truncated, fetched_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                 ON CONFLICT (url) DO UPDATE SET etag = excluded.etag,
                   last_modified = excluded.last_modified, status = excluded.status,
                   content_type = excluded.content_type, body = excluded.body,
                   truncated = excluded.truncated, fetched_at = excluded.fetched_at",
            )
            .bind(page.url)
            .bind(page.etag)
            .bind(page.last_modified)
            .bind(i64::from(page.status))
            .bind(page.content_type)
            .bind(page.body)
            .bind(i64::from(page.truncated))
            .bind(now)
            .execute(&pool)
            .await?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_kept_by_url_and_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let store =
            Store::open_target(&super::super::Target::Sqlite(dir.path().join("s.db"))).unwrap();
        assert_eq!(store.web_page("https://a/").unwrap(), None);
        let mut page = CachedPage {
            url: "https://a/".into(),
            etag: Some("\"v1\"".into()),
            last_modified: None,
            status: 200,
            content_type: "text/html".into(),
            body: b"<p>one</p>".to_vec(),
            truncated: false,
        };
        store.keep_web_page(&page, "t1").unwrap();
        assert_eq!(store.web_page("https://a/").unwrap(), Some(page.clone()));
        page.etag = Some("\"v2\"".into());
        page.body = b"<p>two</p>".to_vec();
        store.keep_web_page(&page, "t2").unwrap();
        assert_eq!(store.web_page("https://a/").unwrap(), Some(page));
    }
}
