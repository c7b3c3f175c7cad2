//! `/openapi.json`: utoipa's document from the handlers' own annotations
//! and request types, finished here with what every operation can answer
//! besides its own outcomes: the guard's refusals (401 token, 403 host or
//! origin, 429 rate, and for a body 413 size and 415 content type), a
//! malformed request (400) and a store that is away (503). Kept in one
//! place so that no handler repeats them and none leaves one out.

use utoipa::openapi::path::{Operation, PathItem};
use utoipa::openapi::response::{Response, ResponseBuilder};
use utoipa::openapi::{ContentBuilder, OpenApi, Ref, RefOr};

use super::error;

/// The API description: handlers and request types give the rest.
#[derive(utoipa::OpenApi)]
#[openapi(
    info(title = "agent-tui", description = "The agent over HTTP + SSE: sessions, jobs and their event streams, review, apply and rollback"),
    modifiers(&Bearer),
    components(schemas(error::ErrorBody))
)]
pub struct ApiDoc;

/// Every request but health carries `Authorization: Bearer TOKEN`.
struct Bearer;

impl utoipa::Modify for Bearer {
    fn modify(&self, api: &mut OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        let components = api.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// The path that needs no token (and is never rate limited).
const HEALTH: &str = "/api/v1/health";

/// `doc` with the responses every operation shares added to each.
pub fn finish(mut doc: OpenApi) -> OpenApi {
    for (path, item) in doc.paths.paths.iter_mut() {
        let open = path == HEALTH;
        for (body_method, op) in operations(item) {
            let takes_input =
                op.request_body.is_some() || op.parameters.as_ref().is_some_and(|p| !p.is_empty());
            add(
                op,
                "403",
                "forbidden: the Host or Origin is not allowed here, or this user may not do it",
            );
            if !open {
                add(
                    op,
                    "401",
                    "unauthorized: no bearer token, or one that is unknown or revoked",
                );
                add(
                    op,
                    "429",
                    "rate_limited: past the token's requests a minute (Retry-After says when to come back)",
                );
                add(
                    op,
                    "503",
                    "unavailable: the store or the engine cannot answer now; try again",
                );
            }
            if takes_input || body_method {
                add(
                    op,
                    "400",
                    "invalid: the request does not fit its schema (the message names the field)",
                );
            }
            let keyed = op
                .parameters
                .as_ref()
                .is_some_and(|p| p.iter().any(|p| p.name == "Idempotency-Key"));
            if keyed {
                add(
                    op,
                    "422",
                    "invalid: this Idempotency-Key was used for another request",
                );
            }
            if body_method {
                add(
                    op,
                    "413",
                    "too_large: the body is larger than server.max_body_bytes",
                );
                add(
                    op,
                    "415",
                    "invalid: the body is not Content-Type: application/json",
                );
            }
        }
    }
    doc
}

/// The operations of `item`, each with whether its method carries a body.
fn operations(item: &mut PathItem) -> Vec<(bool, &mut Operation)> {
    let mut out = Vec::new();
    for (body, op) in [
        (false, item.get.as_mut()),
        (true, item.post.as_mut()),
        (true, item.put.as_mut()),
        (true, item.patch.as_mut()),
        (false, item.delete.as_mut()),
    ] {
        if let Some(op) = op {
            out.push((body, op));
        }
    }
    out
}

/// Adds `status` (an `ErrorBody`) to `op` unless it declares it itself.
fn add(op: &mut Operation, status: &str, description: &str) {
    op.responses
        .responses
        .entry(status.to_string())
        .or_insert_with(|| RefOr::T(error_response(description)));
}

fn error_response(description: &str) -> Response {
    let content = ContentBuilder::new()
        .schema(Some(Ref::from_schema_name("ErrorBody")))
        .build();
    ResponseBuilder::new()
        .description(description)
        .content("application/json", content)
        .build()
}
