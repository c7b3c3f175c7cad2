//! The web page: one HTML file, its scripts (served as one) and its
//! stylesheet, built into the binary (`web/`, hand-written files, so
//! `include_str!` does what an embedding crate would) and served without a
//! token; everything the page does goes through the token-guarded API. A
//! strict Content-Security-Policy allows only this server's own script,
//! style and API.

use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

const INDEX: &str = include_str!("../../web/index.html");
/// The page's scripts, in the order they run, as one file (one request;
/// each is a classic script sharing the page's global scope, as when they
/// were loaded one by one).
const SCRIPT: &str = concat!(
    include_str!("../../web/markdown.js"),
    "\n",
    include_str!("../../web/jobs.js"),
    "\n",
    include_str!("../../web/review.js"),
    "\n",
    include_str!("../../web/search.js"),
    "\n",
    include_str!("../../web/images.js"),
    "\n",
    include_str!("../../web/app.js"),
);
const STYLE: &str = include_str!("../../web/app.css");

/// What the page may load and talk to: this server only.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
                   img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Whether `path` is the page or one of its files (served without a token).
pub fn is_page(path: &str) -> bool {
    path == "/"
        || path
            .strip_prefix("/assets/")
            .is_some_and(|name| name == "app.css" || name == "app.js")
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

/// `GET /assets/{file}`: its script and its stylesheet.
pub async fn asset(Path(name): Path<String>) -> Response {
    match name.as_str() {
        "app.css" => file("text/css; charset=utf-8", STYLE),
        "app.js" => file("text/javascript; charset=utf-8", SCRIPT),
        _ => (StatusCode::NOT_FOUND, "no such file").into_response(),
    }
}
