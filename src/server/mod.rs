//! `agent-tui serve`: the agent over HTTP + SSE (SPEC section 13). A front
//! end like the TUI: one engine per workspace, all built through the
//! engine's door on one store, and nothing but `agent`, `protocol` and
//! `config` used. Every request passes `guard` (host, origin, token, rate,
//! content type, size) before its handler.

mod body;
mod error;
mod exec;
mod fs;
mod guard;
mod idem;
mod jobs;
mod mcp;
mod review;
mod sessions;
mod state;
mod stream;
mod usage;

use std::sync::Arc;

use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

pub use error::ApiError;
pub use state::{App, AppState, User, Workspace};

/// Every route of SPEC section 13 that this server has.
pub fn router(app: AppState) -> Router {
    let api = Router::new()
        .route("/api/v1/health", get(health))
        .route("/api/v1/agent/workspaces", get(sessions::workspaces))
        .route(
            "/api/v1/agent/sessions",
            get(sessions::list).post(sessions::create),
        )
        .route("/api/v1/agent/sessions/{id}", get(sessions::show))
        .route("/api/v1/agent/run", post(jobs::run))
        .route("/api/v1/agent/jobs/{id}", get(jobs::show))
        .route("/api/v1/agent/jobs/{id}/events", get(jobs::events))
        .route("/api/v1/agent/jobs/{id}/stream", get(stream::stream))
        .route("/api/v1/agent/jobs/{id}/clarify", post(jobs::clarify))
        .route(
            "/api/v1/agent/jobs/{id}/approvals/{approval_id}",
            post(jobs::approve),
        )
        .route("/api/v1/agent/jobs/{id}/cancel", post(jobs::cancel))
        .route("/api/v1/agent/apply", post(review::apply))
        .route("/api/v1/agent/checkpoints", get(review::list))
        .route("/api/v1/agent/checkpoints/{id}", get(review::show))
        .route("/api/v1/agent/checkpoints/{id}/diff3", get(review::diff3))
        .route(
            "/api/v1/agent/checkpoints/{id}/rollback",
            post(review::rollback),
        )
        .route("/api/v1/agent/fs/list", get(fs::list))
        .route("/api/v1/agent/fs/read", get(fs::read))
        .route("/api/v1/agent/fs/search", post(fs::search))
        .route("/api/v1/agent/fs/write", post(fs::write))
        .route("/api/v1/agent/fs/patch", post(fs::patch))
        .route("/api/v1/agent/exec", post(exec::exec))
        .route("/api/v1/agent/mcp/tools", get(mcp::tools))
        .route("/api/v1/agent/mcp/call", post(mcp::call))
        .route("/api/v1/agent/audit", get(fs::audit))
        .route("/api/v1/agent/usage", get(usage::usage))
        .fallback(|| async {
            ApiError::not_found("no such endpoint").hint("the API is under /api/v1/")
        })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                axum::http::StatusCode::METHOD_NOT_ALLOWED,
                "invalid",
                "this endpoint does not take that method",
            )
        });
    api.layer(axum::middleware::from_fn_with_state(
        app.clone(),
        guard::guard,
    ))
    .with_state(app)
}

/// `GET /api/v1/health`: no token needed; says nothing about users.
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
    let status = match online {
        0 => "offline",
        n if n == providers.len() => "online",
        _ => "degraded",
    };
    Json(json!({
        "status": status,
        "version": env!("CARGO_PKG_VERSION"),
        "host": app.host,
        "hosts": [{"host": app.host, "started_at": app.started_at}],
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
    })
}
