//! A request's JSON body: read up to `max_body_bytes` (413 past it) and
//! parsed into a request type that refuses unknown fields (400 naming the
//! field). The content type was checked before (415).

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use serde::de::DeserializeOwned;

use super::error::ApiError;
use super::state::AppState;

/// The raw body, within the size limit.
pub struct Body(pub Bytes);

impl Body {
    /// The body as `T`; an empty body is `{}`.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, ApiError> {
        let bytes: &[u8] = if self.0.iter().all(u8::is_ascii_whitespace) {
            b"{}"
        } else {
            &self.0
        };
        serde_json::from_slice(bytes).map_err(|e| {
            ApiError::invalid(format!(
                "the request body is not what this endpoint takes: {e}"
            ))
            .hint("GET /openapi.json gives each endpoint's request body and its fields")
        })
    }
}

pub fn too_large(limit: usize) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "too_large",
        format!("the request body is larger than {limit} bytes (server.max_body_bytes)"),
    )
    .hint("send less at once, or an admin raises server.max_body_bytes")
}

impl FromRequest<AppState> for Body {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Body, ApiError> {
        let limit = state.config.max_body_bytes;
        axum::body::to_bytes(req.into_body(), limit)
            .await
            .map(Body)
            .map_err(|_| too_large(limit))
    }
}
