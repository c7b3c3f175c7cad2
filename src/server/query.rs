//! A request's query string parsed into a handler's type: what does not
//! fit (a missing field, `cursor=abc`, `limit=-3`, an unknown name) is a
//! 400 `invalid` in the JSON error shape, as a body's mistakes are.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use super::error::ApiError;

/// The query string as `T` (every handler with query parameters takes
/// this one, never axum's, whose refusals are plain text).
pub struct Query<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Query<T>, ApiError> {
        match axum::extract::Query::<T>::try_from_uri(&parts.uri) {
            Ok(axum::extract::Query(value)) => Ok(Query(value)),
            Err(rejection) => Err(refused(&rejection.body_text())),
        }
    }
}

/// The refusal of a query string; `text` is axum's reason.
fn refused(text: &str) -> ApiError {
    let reason = text
        .strip_prefix("Failed to deserialize query string: ")
        .unwrap_or(text);
    ApiError::invalid(format!(
        "the query string is not what this endpoint takes: {reason}"
    ))
    .hint("GET /openapi.json lists each endpoint's query parameters and their types")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_is_kept_without_axums_prefix() {
        let e =
            refused("Failed to deserialize query string: cursor: invalid digit found in string");
        assert_eq!(e.code, "invalid");
        assert!(e.message.ends_with("cursor: invalid digit found in string"));
        assert!(!e.message.contains("Failed to deserialize"));
        assert!(e.hint.is_some());
    }
}
