//! The web page (SPEC 13 "Web UI"): one HTML file, its scripts and its
//! stylesheet, built into the binary (`web/`, hand-written files, so
//! `include_str!` does what an embedding crate would) and served without a
//! token; everything the page does goes through the token-guarded API. A
//! strict Content-Security-Policy allows only this server's own script,
//! style and API.

use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

const INDEX: &str = include_str!("../../web/index.html");
/// The page's scripts by name, in the order the page loads them.
const SCRIPTS: [(&str, &str); 6] = [
    ("markdown.js", include_str!("../../web/markdown.js")),
    ("jobs.js", include_str!("../../web/jobs.js")),
    ("review.js", include_str!("../../web/review.js")),
    ("search.js", include_str!("../../web/search.js")),
    ("images.js", include_str!("../../web/images.js")),
    ("app.js", include_str!("../../web/app.js")),
];
const STYLE: &str = include_str!("../../web/app.css");

/// What the page may load and talk to: this server only.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
                   img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Whether `path` is the page or one of its files (served without a token).
pub fn is_page(path: &str) -> bool {
    path == "/"
        || path.strip_prefix("/assets/").is_some_and(|name| {
            name == "app.css" || SCRIPTS.iter().any(|(script, _)| *script == name)
        })
}

fn file(content_type: &'static str, body: &'static str) -> Response {
    let mut r = body.into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r
}

/// `GET /`: the page.
pub async fn page() -> Response {
    file("text/html; charset=utf-8", INDEX)
}

/// `GET /assets/{file}`: its script and stylesheet.
pub async fn asset(Path(name): Path<String>) -> Response {
    if name == "app.css" {
        return file("text/css; charset=utf-8", STYLE);
    }
    match SCRIPTS.iter().find(|(script, _)| *script == name) {
        Some((_, body)) => file("text/javascript; charset=utf-8", body),
        None => (StatusCode::NOT_FOUND, "no such file").into_response(),
    }
}
