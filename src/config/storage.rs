//! `[storage]`: where the store lives: `sqlite` (state.db in the state
//! home, the default) or a `postgres://` URL; a password only from
//! `password_env`. `AGENT_TUI_DATABASE_URL` overrides `url`.

use serde::{Deserialize, Serialize};

/// The `[storage]` table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StorageConfig {
    /// `sqlite` (state.db at the top of the state home), `sqlite:PATH`, or
    /// `postgres://user@host:port/db` (no password in it).
    pub url: String,
    /// The environment variable holding the database password.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub password_env: Option<String>,
}

impl Default for StorageConfig {
    fn default() -> Self {
        StorageConfig {
            url: "sqlite".into(),
            password_env: None,
        }
    }
}

impl StorageConfig {
    /// What is wrong with the table, each problem naming its key.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Err(e) = check_url(&self.url) {
            out.push(format!("storage.url: {e}"));
        }
        if self
            .password_env
            .as_deref()
            .is_some_and(|v| v.is_empty() || v.contains('='))
        {
            out.push("storage.password_env must name an environment variable".into());
        }
        out
    }
}

/// Checks a store URL's shape; a password written into it is refused, so
/// it never sits in a config file or a process list.
pub fn check_url(url: &str) -> Result<(), String> {
    let url = url.trim();
    if url == "sqlite" || url.starts_with("sqlite:") {
        return Ok(());
    }
    let Some(rest) = url
        .strip_prefix("postgres://")
        .or_else(|| url.strip_prefix("postgresql://"))
    else {
        return Err(format!(
            "{:?} is neither \"sqlite\", \"sqlite:PATH\" nor a postgres:// URL",
            redact_url(url)
        ));
    };
    let authority = rest.split(['/', '?']).next().unwrap_or_default();
    if let Some((userinfo, _)) = authority.rsplit_once('@')
        && userinfo.contains(':')
    {
        return Err(
            "the URL holds a password; put it in the variable named by storage.password_env".into(),
        );
    }
    if authority
        .rsplit_once('@')
        .map_or(authority, |(_, h)| h)
        .is_empty()
    {
        return Err("the postgres:// URL names no host".into());
    }
    if let Some(key) = secret_param(rest) {
        return Err(format!(
            "the URL holds a password (`{key}=`); put it in the variable named by \
             storage.password_env"
        ));
    }
    Ok(())
}

/// Query parameters libpq and sqlx read a secret from.
const SECRET_PARAMS: &[&str] = &["password", "sslpassword", "passfile"];

/// The first query parameter of `rest` (after `://`) that carries a secret.
fn secret_param(rest: &str) -> Option<&'static str> {
    let (_, query) = rest.split_once('?')?;
    query.split('&').find_map(|pair| {
        let key = percent_decoded(pair.split('=').next().unwrap_or_default());
        let key = key.as_str();
        SECRET_PARAMS
            .iter()
            .find(|p| p.eq_ignore_ascii_case(key))
            .copied()
    })
}

/// `text` with its `%XX` escapes decoded (a key spelt `pass%77ord` is
/// `password` to the driver).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `url` with any password replaced by `***`, for messages and `doctor`.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let tail = redact_query(tail);
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{user}:***@{host}"),
            None => authority.to_string(),
        },
        None => authority.to_string(),
    };
    format!("{scheme}://{authority}{tail}")
}

/// A URL's path and query with the value of every secret parameter `***`.
fn redact_query(tail: &str) -> String {
    let Some((path, query)) = tail.split_once('?') else {
        return tail.to_string();
    };
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((key, _))
                if SECRET_PARAMS
                    .iter()
                    .any(|p| p.eq_ignore_ascii_case(&percent_decoded(key))) =>
            {
                format!("{key}=***")
            }
            _ => pair.to_string(),
        })
        .collect();
    format!("{path}?{}", pairs.join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert!(check_url("sqlite").is_ok());
        assert!(check_url("sqlite:/tmp/x.db").is_ok());
        assert!(check_url("postgres://agent@db:5432/agent_tui").is_ok());
        assert!(check_url("postgres://agent:hunter2@db/x").is_err());
        assert!(
            !check_url("postgres://agent:hunter2@db/x")
                .unwrap_err()
                .contains("hunter2")
        );
        assert!(check_url("mysql://x").is_err());
        assert!(check_url("postgres:///x").is_err());
        assert_eq!(
            redact_url("postgres://a:secret@h:1/db?x=1"),
            "postgres://a:***@h:1/db?x=1"
        );
        assert_eq!(redact_url("postgres://a@h/db"), "postgres://a@h/db");
        let query = "postgres://a@h/db?sslmode=disable&password=hunter2";
        assert!(check_url(query).unwrap_err().contains("password="));
        assert!(!check_url(query).unwrap_err().contains("hunter2"));
        assert_eq!(
            redact_url(query),
            "postgres://a@h/db?sslmode=disable&password=***"
        );
        assert!(check_url("postgres://a@h/db?PassWord=x").is_err());
        assert!(check_url("postgres://a@h/db?pass%77ord=hunter2").is_err());
        assert!(!redact_url("postgres://a@h/db?pass%77ord=hunter2").contains("hunter2"));
        assert!(check_url("postgres://a@h/db?sslmode=require").is_ok());
    }
}
