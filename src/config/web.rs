//! `[web]` (SPEC 20): what `web_fetch` may reach and how much it reads. A
//! public address is reachable (asked per `[approvals] web`, unasked for
//! `allow_domains`); loopback, link-local, private and unspecified ones are
//! not, unless a `host:port` of `allow_private` names them.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WebConfig {
    /// Hosts fetched without asking (`docs.rs`; `.rust-lang.org` for it
    /// and every subdomain).
    pub allow_domains: Vec<String>,
    /// `host:port` pairs on a private or loopback address that may be
    /// fetched (`"127.0.0.1:8080"`, `"wiki.lan:443"`).
    pub allow_private: Vec<String>,
    /// At most this much of a response is read (bytes).
    pub max_bytes: u64,
    /// A fetch, redirects included, ends after this long.
    pub timeout_secs: u64,
    /// A SearXNG instance (`https://search.example/search`): `web_search`
    /// is offered only with it set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search_url: Option<String>,
}

impl Default for WebConfig {
    fn default() -> Self {
        WebConfig {
            allow_domains: Vec::new(),
            allow_private: Vec::new(),
            max_bytes: 2 * 1024 * 1024,
            timeout_secs: 20,
            search_url: None,
        }
    }
}

impl WebConfig {
    /// `host` is in `allow_domains` (a leading dot allows subdomains too).
    pub fn domain_allowed(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        self.allow_domains.iter().any(|d| {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            match d.strip_prefix('.') {
                Some(base) => host == base || host.ends_with(&format!(".{base}")),
                None => host == d,
            }
        })
    }

    /// `host:port` is in `allow_private`.
    pub fn private_allowed(&self, host: &str, port: u16) -> bool {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        self.allow_private.iter().any(|p| {
            p.rsplit_once(':').is_some_and(|(h, pt)| {
                h.trim_start_matches('[')
                    .trim_end_matches(']')
                    .eq_ignore_ascii_case(host)
                    && pt.parse::<u16>() == Ok(port)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains_and_private_pairs_match_as_written() {
        let c = WebConfig {
            allow_domains: vec!["docs.rs".into(), ".rust-lang.org".into()],
            allow_private: vec!["127.0.0.1:8080".into(), "[::1]:9000".into()],
            ..WebConfig::default()
        };
        assert!(c.domain_allowed("docs.rs"));
        assert!(c.domain_allowed("DOCS.RS."));
        assert!(!c.domain_allowed("evil-docs.rs"));
        assert!(c.domain_allowed("doc.rust-lang.org"));
        assert!(c.domain_allowed("rust-lang.org"));
        assert!(!c.domain_allowed("rust-lang.org.evil.com"));
        assert!(c.private_allowed("127.0.0.1", 8080));
        assert!(!c.private_allowed("127.0.0.1", 8081));
        assert!(c.private_allowed("::1", 9000));
    }
}
