//! A request's query string parsed into a handler's type: what does not
//! fit (a missing field, `cursor=abc`, `limit=-3`, an unknown name) is a
//! 400 `invalid` in the JSON error shape, as a body's mistakes are.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use serde::de::{DeserializeOwned, Deserializer, Visitor};

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

/// A count a client may write as `5`, `5.0` or `"5"` (JSON Schema's
/// `integer` is all of them, in a query string too), held at `T`'s
/// largest value past it (a cursor, a limit or a line that far is simply
/// past the end); a fraction or a negative is refused naming the value.
/// For `#[serde(default, deserialize_with = "count")]` on an optional count.
pub fn count<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Count,
{
    d.deserialize_option(Counted(std::marker::PhantomData))
}

/// What a count may be read as.
pub trait Count: Sized {
    fn saturating(n: u128) -> Self;
}

impl Count for u64 {
    fn saturating(n: u128) -> u64 {
        u64::try_from(n).unwrap_or(u64::MAX)
    }
}

impl Count for u32 {
    fn saturating(n: u128) -> u32 {
        u32::try_from(n).unwrap_or(u32::MAX)
    }
}

impl Count for usize {
    fn saturating(n: u128) -> usize {
        usize::try_from(n).unwrap_or(usize::MAX)
    }
}

struct Counted<T>(std::marker::PhantomData<T>);

impl<'de, T: Count> Visitor<'de> for Counted<T> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a whole number of 0 or more")
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Option<T>, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Option<T>, E> {
        Ok(Some(T::saturating(u128::from(n))))
    }

    fn visit_u128<E: serde::de::Error>(self, n: u128) -> Result<Option<T>, E> {
        Ok(Some(T::saturating(n)))
    }

    fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Option<T>, E> {
        u64::try_from(n)
            .map(|n| Some(T::saturating(u128::from(n))))
            .map_err(|_| E::custom(format!("{n} is less than 0")))
    }

    fn visit_f64<E: serde::de::Error>(self, f: f64) -> Result<Option<T>, E> {
        if f >= 0.0 && f.fract() == 0.0 {
            // `as` saturates: a float past u128 is held there too.
            Ok(Some(T::saturating(f as u128)))
        } else {
            Err(E::custom(format!("{f} is not a whole number of 0 or more")))
        }
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Option<T>, E> {
        let t = s.trim();
        if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
            let n = t.parse::<u128>().unwrap_or(u128::MAX);
            return Ok(Some(T::saturating(n)));
        }
        match t.parse::<f64>() {
            Ok(f) if f.is_finite() => self.visit_f64(f),
            _ => Err(E::custom(format!(
                "{s:?} is not a whole number of 0 or more"
            ))),
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

    #[derive(serde::Deserialize, Debug)]
    struct Q {
        #[serde(default, deserialize_with = "super::count")]
        n: Option<u32>,
    }

    #[test]
    fn counts_are_whole_numbers_held_at_their_largest() {
        let q = |s: &str| serde_json::from_str::<Q>(s).map(|q| q.n);
        assert_eq!(q(r#"{"n": 5}"#).unwrap(), Some(5));
        assert_eq!(q(r#"{"n": 5.0}"#).unwrap(), Some(5));
        assert_eq!(q(r#"{"n": "7"}"#).unwrap(), Some(7));
        assert_eq!(q(r#"{"n": 1e30}"#).unwrap(), Some(u32::MAX));
        assert_eq!(
            q(r#"{"n": 99999999999999999999999}"#).unwrap(),
            Some(u32::MAX)
        );
        assert_eq!(q(r#"{"n": null}"#).unwrap(), None);
        assert_eq!(q("{}").unwrap(), None);
        for bad in [r#"{"n": -1}"#, r#"{"n": 1.5}"#, r#"{"n": "x"}"#] {
            assert!(q(bad).is_err(), "{bad}");
        }
        let url = |s: &str| {
            let uri: axum::http::Uri = format!("/x?{s}").parse().unwrap();
            axum::extract::Query::<Q>::try_from_uri(&uri).map(|q| q.0.n)
        };
        assert_eq!(url("n=12").unwrap(), Some(12));
        assert_eq!(url("n=184467440737095516160").unwrap(), Some(u32::MAX));
        assert!(url("n=-3").is_err());
    }

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
