//! What every request passes before a handler sees it: its `Host` must be
//! an allowed one (DNS rebinding), its `Origin`, when sent, an allowed one
//! (cross-site requests), its token a live one (401; never taken from a
//! URL) and its rate within the token's limit (429). A body's type and
//! size are the `Body` extractor's (body.rs): only a route and method that
//! take one look at it.

use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;
use super::state::{AppState, User};
use crate::agent::token_sha256;
use crate::protocol::Role;

/// Equal without an early exit (the time taken tells nothing).
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

fn host_allowed(app: &AppState, host: &str) -> bool {
    // `name:port`, `[v6]:port`: the port is not part of the check.
    let name = match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) && !name.is_empty() => name,
        _ => host,
    };
    app.config
        .allowed_hosts
        .iter()
        .any(|h| h.eq_ignore_ascii_case(name) || h.eq_ignore_ascii_case(host))
}

/// The user a bearer token stands for.
pub(super) async fn user_of(app: &AppState, token: &str) -> Result<Option<User>, ApiError> {
    let sha = token_sha256(token);
    if app.run_token.as_deref().is_some_and(|t| same(t, &sha)) {
        return Ok(Some(User {
            name: "local".into(),
            role: Role::Admin,
        }));
    }
    let mut fixed = None;
    for u in &app.users {
        if same(&u.token_sha256.to_ascii_lowercase(), &sha) {
            fixed = Some(User {
                name: u.name.clone(),
                role: u.role,
            });
        }
    }
    if fixed.is_some() {
        return Ok(fixed);
    }
    let stored = app.accounts.token(token).await?;
    Ok(stored.map(|t| User {
        name: t.name,
        role: t.role,
    }))
}

/// Resolves once `headers`' token no longer stands for anyone (revoked,
/// expired), checked each second for all of the host's streams at once:
/// what a long-lived response (an event stream) ends on, as every new
/// request is refused at once.
pub async fn revoked(app: AppState, headers: header::HeaderMap) {
    let Some(token) = bearer_of(&headers).map(str::to_string) else {
        return;
    };
    super::revoked::ended(app, token).await;
}

fn bearer(req: &Request) -> Option<&str> {
    bearer_of(req.headers())
}

fn bearer_of(headers: &header::HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

pub async fn guard(State(app): State<AppState>, mut req: Request, next: Next) -> Response {
    // An allowed browser origin (checked in `check`) is told so (CORS).
    let origin = req.headers().get(header::ORIGIN).cloned();
    let preflight = *req.method() == Method::OPTIONS && origin.is_some();
    let mut response = match check(&app, &mut req).await {
        Ok(()) if preflight => StatusCode::NO_CONTENT.into_response(),
        Ok(()) => next.run(req).await,
        Err(e) => return e.into_response(),
    };
    if let Some(origin) = origin {
        let h = response.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        h.insert(header::VARY, header::HeaderValue::from_static("Origin"));
        if preflight {
            h.insert(
                header::ACCESS_CONTROL_ALLOW_METHODS,
                header::HeaderValue::from_static("GET, POST"),
            );
            h.insert(
                header::ACCESS_CONTROL_ALLOW_HEADERS,
                header::HeaderValue::from_static(
                    "authorization, content-type, idempotency-key, last-event-id",
                ),
            );
            h.insert(
                header::ACCESS_CONTROL_MAX_AGE,
                header::HeaderValue::from_static("600"),
            );
        }
    }
    response
}

/// Where the request comes from: an allowed `Host` (DNS rebinding finds
/// nothing to talk to) and, from a browser, an allowed or the same origin.
fn place(app: &AppState, req: &Request) -> Result<(), ApiError> {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default()
        .to_string();
    if !host_allowed(app, &host) {
        return Err(
            ApiError::forbidden(format!("Host {host:?} is not served here"))
                .hint("add it to server.allowed_hosts"),
        );
    }
    if let Some(origin) = req.headers().get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or_default();
        // The server's own page (same origin: the allowed Host it was
        // asked for) needs no entry; any other origin does.
        let same = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
            .is_some_and(|authority| authority.eq_ignore_ascii_case(&host));
        if !same && !app.config.allowed_origins.iter().any(|o| o == origin) {
            return Err(ApiError::forbidden(format!(
                "requests from the web origin {origin:?} are not allowed"
            ))
            .hint("add it to server.allowed_origins"));
        }
    }
    Ok(())
}

async fn check(app: &AppState, req: &mut Request) -> Result<(), ApiError> {
    place(app, req)?;
    // A browser's preflight carries no token; the request after it does.
    let preflight = *req.method() == Method::OPTIONS && req.headers().contains_key(header::ORIGIN);
    if req.uri().path() == "/api/v1/health" || super::web::is_page(req.uri().path()) || preflight {
        return Ok(());
    }
    let in_url = req.uri().query().is_some_and(|q| {
        q.split('&')
            .any(|p| p.starts_with("token=") || p.starts_with("access_token="))
    });
    if in_url {
        return Err(ApiError::unauthorized(
            "a token is never taken from a URL (it would reach logs and histories)",
        ));
    }
    let Some(token) = bearer(req).map(str::to_string) else {
        return Err(ApiError::unauthorized("this request has no bearer token"));
    };
    let Some(user) = user_of(app, &token).await? else {
        return Err(ApiError::unauthorized("the token is unknown or revoked"));
    };
    if let Some(wait) = app.over_limit(&user.name).await? {
        let mut e = ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limited",
            format!(
                "more than {} requests in a minute with this token",
                app.config.rate_limit_per_minute
            ),
        );
        e.retry_after = Some(wait);
        return Err(e);
    }
    req.extensions_mut().insert(user);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::same;

    #[test]
    fn comparison_is_exact() {
        assert!(same("abc", "abc"));
        assert!(!same("abc", "abd"));
        assert!(!same("abc", "abcd"));
    }
}
