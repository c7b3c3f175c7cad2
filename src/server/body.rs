//! A request's JSON body: `Content-Type: application/json` (415 else),
//! read up to `max_body_bytes` (413 past it, or when its declared length
//! is), and parsed into a request type that refuses unknown fields (400
//! naming the field) and anything but one JSON object (serde alone would
//! read an array into its fields by position). Every handler of a change
//! takes one, even one that reads nothing from it, so the checks run once
//! its route and method matched: a method no route takes is 405 first.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderMap, StatusCode, header};
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
        crate::protocol::object::from_object(bytes).map_err(|e| {
            ApiError::invalid(format!(
                "the request body is not what this endpoint takes: {e}"
            ))
            .hint("GET /openapi.json gives each endpoint's request body and its fields")
        })
    }
}

/// A change's body as its headers describe it: JSON, and not declared
/// larger than `limit`. A request with no body at all (a cancel) needs no
/// content type: there is nothing it could be.
fn checked(headers: &HeaderMap, limit: usize) -> Result<(), ApiError> {
    let bodiless = !headers.contains_key(header::CONTENT_TYPE)
        && !headers.contains_key(header::TRANSFER_ENCODING)
        && headers
            .get(header::CONTENT_LENGTH)
            .is_none_or(|v| v.as_bytes() == b"0");
    if bodiless {
        return Ok(());
    }
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !json {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "invalid",
            "a request that changes something must be Content-Type: application/json",
        )
        .hint("send a JSON body (`{}` when there is nothing to say) with that header"));
    }
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(too_large(limit));
    }
    Ok(())
}

pub fn too_large(limit: usize) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "too_large",
        format!("the request body is larger than {limit} bytes (server.max_body_bytes)"),
    )
    .hint("send less at once, or an admin raises server.max_body_bytes")
}

/// What a run's body may carry beyond `max_body_bytes`: one image at the
/// size limit in base64 (SPEC 20), or several smaller ones.
pub const IMAGE_ROOM: usize = 7 * 1024 * 1024;

/// A run's body: `max_body_bytes`, plus room for its images.
pub struct RunBody(pub Body);

impl Body {
    async fn read(req: Request, limit: usize) -> Result<Body, ApiError> {
        checked(req.headers(), limit)?;
        axum::body::to_bytes(req.into_body(), limit)
            .await
            .map(Body)
            .map_err(|_| too_large(limit))
    }
}

impl FromRequest<AppState> for Body {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Body, ApiError> {
        Body::read(req, state.config.max_body_bytes).await
    }
}

impl FromRequest<AppState> for RunBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<RunBody, ApiError> {
        let limit = state.config.max_body_bytes.saturating_add(IMAGE_ROOM);
        Body::read(req, limit).await.map(RunBody)
    }
}
