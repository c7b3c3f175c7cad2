//! `Idempotency-Key` on run, apply, approvals and clarify: the first
//! request with a key runs and its answer is kept in the store; a retry
//! (on any host) gets that answer again and runs nothing; a retry while
//! the first still runs gets 409; the same key on another request 422.

use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::error::ApiError;
use super::state::{AppState, User};
use crate::agent::token_sha256;
use crate::protocol::Idempotent;

pub type Answer = Result<(StatusCode, Value), ApiError>;

/// Runs `work` once per key (none: always).
pub async fn once(
    app: &AppState,
    user: &User,
    headers: &HeaderMap,
    request: &str,
    body: &[u8],
    work: impl Future<Output = Answer>,
) -> Response {
    let Some(key) = headers
        .get("idempotency-key")
        .and_then(|k| k.to_str().ok())
        .map(str::to_string)
    else {
        return respond(work.await);
    };
    if key.is_empty() || key.len() > 255 {
        return ApiError::invalid("an Idempotency-Key is 1-255 characters").into_response();
    }
    let fingerprint = format!("{request} {}", token_sha256(&String::from_utf8_lossy(body)));
    match app
        .accounts
        .begin_idempotent(&user.name, &key, &fingerprint)
        .await
    {
        Err(e) => ApiError::from(e).into_response(),
        Ok(Idempotent::InFlight) => {
            ApiError::conflict("a request with this Idempotency-Key is still being answered")
                .hint("retry in a moment to get its answer")
                .into_response()
        }
        Ok(Idempotent::Mismatch) => ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid",
            "this Idempotency-Key was used for another request",
        )
        .into_response(),
        Ok(Idempotent::Answered { status, body }) => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
            let mut r = (
                status,
                [(axum::http::header::CONTENT_TYPE, "application/json")],
                body,
            )
                .into_response();
            r.headers_mut()
                .insert("idempotent-replayed", HeaderValue::from_static("true"));
            r
        }
        Ok(Idempotent::New) => {
            let answer = work.await;
            let kept = match &answer {
                Ok((status, value)) => Some((status.as_u16(), value.to_string())),
                // A failure of the server, a busy session or a rate did
                // nothing a retry would repeat: the retry runs it.
                Err(e)
                    if e.status.is_server_error()
                        || e.status == StatusCode::CONFLICT
                        || e.status == StatusCode::TOO_MANY_REQUESTS =>
                {
                    None
                }
                Err(e) => Some((e.status.as_u16(), error_body(e))),
            };
            let _ = app.accounts.end_idempotent(&user.name, &key, kept).await;
            respond(answer)
        }
    }
}

pub fn error_body(e: &ApiError) -> String {
    // The same JSON the error response carries.
    let mut error = serde_json::json!({ "code": e.code, "message": e.message });
    if let Some(h) = &e.hint {
        error["hint"] = serde_json::json!(h);
    }
    if let Some(Value::Object(extra)) = &e.detail {
        for (k, v) in extra {
            error[k] = v.clone();
        }
    }
    serde_json::json!({ "error": error }).to_string()
}

pub fn respond(answer: Answer) -> Response {
    match answer {
        Ok((status, value)) => (status, axum::Json(value)).into_response(),
        Err(e) => e.into_response(),
    }
}
