//! `web_search` through a SearXNG instance (SPEC 20): its JSON API at the
//! `[web] search_url` the user configured (their own service, so it may be
//! on this machine or their network), results as title, URL and snippet.

use std::time::Duration;

use serde::Serialize;
use url::Url;

use super::WebError;
use crate::config::web::WebConfig;

/// One result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Found {
    pub title: String,
    pub url: String,
    pub snippet: String,
}

/// The first `limit` results for `query` (`None`: no `search_url` set).
pub async fn search(
    config: &WebConfig,
    query: &str,
    limit: usize,
) -> Option<Result<Vec<Found>, WebError>> {
    let base = config.search_url.as_deref()?;
    Some(ask(config, base, query, limit).await)
}

async fn ask(
    config: &WebConfig,
    base: &str,
    query: &str,
    limit: usize,
) -> Result<Vec<Found>, WebError> {
    let mut url = Url::parse(base).map_err(|_| WebError::BadUrl(base.to_string()))?;
    url.query_pairs_mut()
        .append_pair("q", query)
        .append_pair("format", "json");
    let failed = |detail: String| WebError::Transport {
        url: base.to_string(),
        detail,
    };
    let secs = config.timeout_secs.max(1);
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(secs))
        .user_agent(concat!("agent-tui/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| failed(e.to_string()))?;
    let response = client.get(url).send().await.map_err(|e| {
        if e.is_timeout() {
            WebError::Timeout {
                url: base.to_string(),
                secs,
            }
        } else {
            failed(e.to_string())
        }
    })?;
    let status = response.status();
    if !status.is_success() {
        return Err(failed(format!(
            "the search service answered {status} (is its JSON format enabled?)"
        )));
    }
    let body: serde_json::Value = response
        .json()
        .await
        .map_err(|e| failed(format!("the answer is not SearXNG's JSON: {e}")))?;
    let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().trim().to_string();
    Ok(body["results"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["url"].is_string())
        .take(limit)
        .map(|r| Found {
            title: text(&r["title"]),
            url: text(&r["url"]),
            snippet: text(&r["content"]),
        })
        .collect())
}
