//! `agent-tui serve`: the agent over HTTP + SSE (SPEC section 13). A front
//! end like the TUI: one engine per workspace, all built through the
//! engine's door on one store, and nothing but `agent`, `protocol` and
//! `config` used. Every request passes `guard` (host, origin, token, rate,
//! content type, size) before its handler.

mod body;
mod checkpoints;
mod code;
pub mod drain;
mod error;
mod exec;
mod fs;
#[doc(hidden)]
pub mod fuzzing; // fuzz doors: any bytes in, a panic only when a property fails
mod guard;
mod hooks;
pub mod hosts;
mod id;
mod idem;
mod jobs;
mod mcp;
mod models;
mod notices;
mod openapi;
mod outbox;
mod query;
pub mod queue;
pub mod relay;
mod review;
mod revoked;
mod sessions;
mod sqlite_host;
mod state;
mod stream;
mod usage;
mod web;

use std::sync::Arc;

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};

pub use error::ApiError;
pub use state::{App, AppState, User, Workspace};

/// Every route of SPEC section 13 that this server has, and the OpenAPI
/// document made from their annotations.
pub fn router(app: AppState) -> Router {
    use utoipa::OpenApi;
    use utoipa_axum::router::OpenApiRouter;
    use utoipa_axum::routes;
    let (api, doc) = OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .routes(routes!(health))
        .routes(routes!(sessions::workspaces))
        .routes(routes!(sessions::list, sessions::create))
        .routes(routes!(sessions::show))
        .routes(routes!(jobs::run))
        .routes(routes!(jobs::show))
        .routes(routes!(jobs::events))
        .routes(routes!(stream::stream))
        .routes(routes!(jobs::clarify))
        .routes(routes!(jobs::steer))
        .routes(routes!(jobs::approve))
        .routes(routes!(jobs::cancel))
        .routes(routes!(review::apply))
        .routes(routes!(review::verify))
        .routes(routes!(checkpoints::list))
        .routes(routes!(checkpoints::show))
        .routes(routes!(checkpoints::diff3))
        .routes(routes!(checkpoints::rollback))
        .routes(routes!(fs::list))
        .routes(routes!(fs::read))
        .routes(routes!(fs::search))
        .routes(routes!(fs::write))
        .routes(routes!(fs::patch))
        .routes(routes!(exec::exec))
        .routes(routes!(mcp::tools))
        .routes(routes!(mcp::call))
        .routes(routes!(fs::audit))
        .routes(routes!(code::index))
        .routes(routes!(code::search))
        .routes(routes!(models::models))
        .routes(routes!(hooks::list))
        .routes(routes!(hooks::trust))
        .routes(routes!(hooks::test))
        .routes(routes!(usage::usage))
        .split_for_parts();
    let doc = Arc::new(openapi::finish(doc));
    let api = api
        .route("/", get(web::page))
        .route("/assets/{file}", get(web::asset))
        .route(
            "/openapi.json",
            get(move || {
                let doc = doc.clone();
                async move { Json(doc.as_ref().clone()) }
            }),
        )
        .fallback(|| async {
            ApiError::not_found("no such endpoint").hint("the API is under /api/v1/")
        })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                axum::http::StatusCode::METHOD_NOT_ALLOWED,
                "invalid",
                "this endpoint does not take that method",
            )
            .hint("GET /openapi.json lists each endpoint's methods")
        });
    // Who and where (403, 401, 429) come first, for every path; a body's
    // type and size (415, 413) only in the handlers that take one (`Body`),
    // so a method no route declares is 405 with `Allow` whatever it sent.
    api.layer(axum::middleware::from_fn_with_state(
        app.clone(),
        guard::guard,
    ))
    .with_state(app)
}

/// `GET /api/v1/health`: no token needed; says nothing about users.
#[utoipa::path(get, path = "/api/v1/health", tag = "health", responses((status = 200, description = "{status: online|degraded|offline, version, host, hosts, providers}")))]
async fn health(State(app): State<AppState>) -> Json<Value> {
    let providers: Vec<Value> = app
        .workspaces
        .iter()
        .map(|w| {
            let (status, detail) = if w.engine.has_provider() {
                ("online", w.engine.provider_label().to_string())
            } else {
                (
                    "offline",
                    w.engine.provider_notice().unwrap_or("no provider").to_string(),
                )
            };
            json!({"name": w.engine.provider_label(), "workspace_id": w.id, "status": status, "detail": detail})
        })
        .collect();
    let online = providers.iter().filter(|p| p["status"] == "online").count();
    let hosts = app.hosts.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let status = match online {
        0 => "offline",
        n if n == providers.len() => "online",
        _ => "degraded",
    };
    Json(json!({
        "status": status,
        "version": env!("CARGO_PKG_VERSION"),
        "host": app.host,
        "hosts": hosts,
        "providers": providers,
    }))
}

/// Builds the shared state.
pub fn app(
    workspaces: Vec<Workspace>,
    accounts: crate::agent::Accounts,
    config: crate::config::ServerConfig,
    run_token: Option<String>,
    host: String,
) -> AppState {
    let (tx, rx) = tokio::sync::broadcast::channel(1024);
    let notices = accounts
        .listen_jobs(tx)
        .then(|| notices::Notices::start(rx, accounts.clone()));
    Arc::new(App {
        workspaces,
        accounts,
        users: config.users.clone(),
        config,
        run_token,
        host,
        started_at: sessions::now(),
        counts: std::sync::Mutex::new(std::collections::HashMap::new()),
        jobs: std::sync::Mutex::new(std::collections::HashMap::new()),
        draining: std::sync::atomic::AtomicBool::new(false),
        hosts: std::sync::Mutex::new(Vec::new()),
        notices,
        store_lock: std::sync::Mutex::new(None),
        revocations: Default::default(),
    })
}
