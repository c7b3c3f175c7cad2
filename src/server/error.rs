//! The server's errors as SPEC section 13 writes them:
//! `{"error": {"code", "message", "hint"}}` with the status that goes with
//! each code. No error ever repeats a token.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::protocol::EngineError;

/// The JSON of every error (for the OpenAPI document).
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct ErrorDetail {
    /// unauthorized, forbidden, not_found, invalid, conflict, rate_limited, too_large, unavailable
    pub code: String,
    pub message: String,
    pub hint: Option<String>,
    /// budget_exceeded (with rate_limited)
    pub reason: Option<String>,
}

/// An error response (boxed: handlers return it by value everywhere).
#[derive(Debug, Clone)]
pub struct ApiError(Box<Parts>);

#[derive(Debug, Clone)]
pub struct Parts {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    pub hint: Option<String>,
    /// A finer reason (`budget_exceeded`).
    pub reason: Option<&'static str>,
    /// Seconds a client should wait (429).
    pub retry_after: Option<u64>,
    /// Extra fields for the client (the conflicting files of a 409).
    pub detail: Option<serde_json::Value>,
}

impl std::ops::Deref for ApiError {
    type Target = Parts;
    fn deref(&self) -> &Parts {
        &self.0
    }
}

impl std::ops::DerefMut for ApiError {
    fn deref_mut(&mut self) -> &mut Parts {
        &mut self.0
    }
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError(Box::new(Parts {
            status,
            code,
            message: message.into(),
            hint: None,
            reason: None,
            retry_after: None,
            detail: None,
        }))
    }

    pub fn hint(mut self, hint: impl Into<String>) -> ApiError {
        self.hint = Some(hint.into());
        self
    }

    pub fn unauthorized(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
            .hint("send Authorization: Bearer TOKEN (agent-tui serve token add NAME makes one)")
    }

    pub fn forbidden(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::FORBIDDEN, "forbidden", message)
    }

    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    pub fn invalid(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "invalid", message)
    }

    /// 422: the request fits its schema, but what it says cannot be acted
    /// on (a regular expression that does not compile, a patch that is not
    /// a unified diff, lines the file does not have).
    pub fn unprocessable(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid", message)
    }

    pub fn conflict(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::CONFLICT, "conflict", message)
    }

    pub fn unavailable(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", message)
    }
}

impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> ApiError {
        let message = e.to_string();
        match e {
            EngineError::NotFound { .. } => ApiError::not_found(message),
            EngineError::Invalid { unknown, .. } => {
                let mut err = ApiError::invalid(message);
                if !unknown.is_empty() {
                    err.detail = Some(json!({ "unknown": unknown }));
                }
                err
            }
            EngineError::Conflict { conflicts, .. } => {
                let mut err = ApiError::conflict(message);
                // Files that changed under an apply or a rollback: what to do.
                if !conflicts.is_empty() {
                    err = err.hint(
                        "nothing was written: the files changed since; read them again \
                         (GET …/fs/read), then decide or roll back again",
                    );
                    err.detail = Some(json!({ "conflicts": conflicts }));
                }
                err
            }
            EngineError::Forbidden { .. } => ApiError::forbidden(message),
            EngineError::Busy { .. } => ApiError::conflict(message)
                .hint("another agent-tui drives this session; try again when it is idle"),
            EngineError::Failed { .. } => {
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "unavailable", message)
            }
            EngineError::Unavailable { .. } => ApiError::unavailable(message),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut error = json!({ "code": self.code, "message": self.message });
        if let Some(hint) = &self.hint {
            error["hint"] = json!(hint);
        }
        if let Some(reason) = self.reason {
            error["reason"] = json!(reason);
        }
        if let Some(serde_json::Value::Object(extra)) = &self.detail {
            for (k, v) in extra {
                error[k] = v.clone();
            }
        }
        let mut response = (self.status, axum::Json(json!({ "error": error }))).into_response();
        if let Some(secs) = self.retry_after
            && let Ok(v) = HeaderValue::from_str(&secs.to_string())
        {
            response.headers_mut().insert(header::RETRY_AFTER, v);
        }
        if self.status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}
