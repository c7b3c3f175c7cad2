//! Reaching beyond the repository (SPEC 20): a web page fetched for the
//! model. Only http(s); the host is resolved here and every address it
//! gives is checked (`guard`) before anything connects, and the request
//! then goes to the checked address itself, so a DNS answer that changes
//! between the check and the connection reaches nothing new. Redirects are
//! followed by hand, each hop checked the same way. At most `max_bytes`
//! are read, all within `timeout_secs`; no proxy from the environment is
//! used (it would connect on our behalf to anything).

#[doc(hidden)]
pub mod fuzzing; // fuzz doors: any bytes in, a panic only when a property fails
pub mod guard;
pub mod html;
pub mod search;

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use reqwest::header::{ETAG, HeaderMap, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED, LOCATION};
use url::Url;

use crate::config::web::WebConfig;

/// Redirects followed at most.
const MAX_REDIRECTS: usize = 5;

/// A response as read.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// Where the answer came from (after redirects).
    pub url: String,
    pub status: u16,
    pub content_type: String,
    pub body: Vec<u8>,
    /// More was sent than `max_bytes`.
    pub truncated: bool,
    pub etag: Option<String>,
    pub last_modified: Option<String>,
}

/// Validators of a cached copy, for a conditional request.
#[derive(Debug, Clone, Default)]
pub struct Validators {
    pub etag: Option<String>,
    pub last_modified: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum WebError {
    #[error("`{0}` is not a URL")]
    BadUrl(String),
    #[error("only http and https URLs are fetched, not `{0}:`")]
    Scheme(String),
    #[error(
        "{url} was not fetched: {host} {}a {why} address ([web] allow_private = \
         [\"{host}:{port}\"] allows it)",
        if host == &addr.to_string() { "is ".to_string() } else { format!("is {addr}, ") }
    )]
    Refused {
        url: String,
        host: String,
        port: u16,
        addr: IpAddr,
        why: &'static str,
    },
    #[error("cannot resolve {host}: {detail}")]
    Resolve { host: String, detail: String },
    #[error("fetching {url} failed: {detail}")]
    Transport { url: String, detail: String },
    #[error("{url} did not answer within {secs} s ([web] timeout_secs)")]
    Timeout { url: String, secs: u64 },
    #[error("{url} redirected more than {MAX_REDIRECTS} times")]
    Redirects { url: String },
}

impl WebError {
    /// The tool error's code.
    pub fn code(&self) -> &'static str {
        match self {
            WebError::BadUrl(_) | WebError::Scheme(_) => "bad_url",
            WebError::Refused { .. } => "address_refused",
            WebError::Resolve { .. } => "unresolved",
            WebError::Transport { .. } => "fetch_failed",
            WebError::Timeout { .. } => "timeout",
            WebError::Redirects { .. } => "too_many_redirects",
        }
    }
}

/// Fetches `url` as `config` allows; `cached` makes the request
/// conditional (a 304 comes back as it is, with no body).
pub async fn fetch(
    config: &WebConfig,
    url: &str,
    cached: &Validators,
) -> Result<Fetched, WebError> {
    let secs = config.timeout_secs.max(1);
    let all = follow(config, url, cached);
    match tokio::time::timeout(Duration::from_secs(secs), all).await {
        Ok(done) => done,
        Err(_) => Err(WebError::Timeout {
            url: url.to_string(),
            secs,
        }),
    }
}

/// The request, then each redirect, each hop checked before it connects.
async fn follow(config: &WebConfig, url: &str, cached: &Validators) -> Result<Fetched, WebError> {
    let mut at = parse(url)?;
    for _ in 0..=MAX_REDIRECTS {
        let addr = checked_address(config, &at).await?;
        let response = request(&at, addr, cached).await?;
        let status = response.status();
        if status.is_redirection() && status != reqwest::StatusCode::NOT_MODIFIED {
            let next = response
                .headers()
                .get(LOCATION)
                .and_then(|l| l.to_str().ok())
                .and_then(|l| at.join(l).ok());
            if let Some(next) = next {
                at = parse(next.as_str())?;
                continue;
            }
        }
        return read(config, at, response).await;
    }
    Err(WebError::Redirects {
        url: url.to_string(),
    })
}

fn parse(url: &str) -> Result<Url, WebError> {
    let parsed = Url::parse(url.trim()).map_err(|_| WebError::BadUrl(url.to_string()))?;
    match parsed.scheme() {
        "http" | "https" if parsed.host_str().is_some() => Ok(parsed),
        "http" | "https" => Err(WebError::BadUrl(url.to_string())),
        other => Err(WebError::Scheme(other.to_string())),
    }
}

/// The address `url` is fetched from: its host's, every one of which must
/// be public (or its `host:port` listed in `allow_private`).
async fn checked_address(config: &WebConfig, url: &Url) -> Result<SocketAddr, WebError> {
    let host = url.host_str().unwrap_or_default().to_string();
    let port = url.port_or_known_default().unwrap_or(80);
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::net::lookup_host((bare, port))
            .await
            .map_err(|e| WebError::Resolve {
                host: host.clone(),
                detail: e.to_string(),
            })?
            .collect(),
    };
    let Some(first) = addrs.first().copied() else {
        return Err(WebError::Resolve {
            host,
            detail: "no address".into(),
        });
    };
    if config.private_allowed(bare, port) {
        return Ok(first);
    }
    for addr in &addrs {
        if let Some(why) = guard::refused(addr.ip()) {
            return Err(WebError::Refused {
                url: url.to_string(),
                host: bare.to_string(),
                port,
                addr: addr.ip(),
                why,
            });
        }
    }
    Ok(first)
}

/// One request to `url`, connected to `addr` whatever the name resolves
/// to by then.
async fn request(
    url: &Url,
    addr: SocketAddr,
    cached: &Validators,
) -> Result<reqwest::Response, WebError> {
    let failed = |e: reqwest::Error| WebError::Transport {
        url: url.to_string(),
        detail: root_cause(&e),
    };
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .user_agent(concat!("agent-tui/", env!("CARGO_PKG_VERSION")));
    if let Some(domain) = url.domain() {
        builder = builder.resolve(domain, addr);
    }
    let client = builder.build().map_err(failed)?;
    let mut headers = HeaderMap::new();
    let accept = "text/html,application/xhtml+xml,text/plain,application/json;q=0.9,*/*;q=0.1";
    if let Ok(v) = accept.parse() {
        headers.insert(reqwest::header::ACCEPT, v);
    }
    if let Some(v) = cached.etag.as_deref().and_then(|e| e.parse().ok()) {
        headers.insert(IF_NONE_MATCH, v);
    }
    if let Some(v) = cached.last_modified.as_deref().and_then(|m| m.parse().ok()) {
        headers.insert(IF_MODIFIED_SINCE, v);
    }
    client
        .get(url.clone())
        .headers(headers)
        .send()
        .await
        .map_err(failed)
}

/// The body, at most `max_bytes` of it.
async fn read(
    config: &WebConfig,
    url: Url,
    mut response: reqwest::Response,
) -> Result<Fetched, WebError> {
    let header = |name| {
        response
            .headers()
            .get(name)
            .and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok())
            .map(str::to_string)
    };
    let content_type = header(reqwest::header::CONTENT_TYPE).unwrap_or_default();
    let (etag, last_modified) = (header(ETAG), header(LAST_MODIFIED));
    let status = response.status().as_u16();
    let max = usize::try_from(config.max_bytes).unwrap_or(usize::MAX);
    let mut body = Vec::new();
    let mut truncated = false;
    loop {
        let chunk = response.chunk().await.map_err(|e| WebError::Transport {
            url: url.to_string(),
            detail: root_cause(&e),
        })?;
        let Some(chunk) = chunk else { break };
        let room = max.saturating_sub(body.len());
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            truncated = true;
            break;
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Fetched {
        url: url.to_string(),
        status,
        content_type,
        body,
        truncated,
        etag,
        last_modified,
    })
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}
