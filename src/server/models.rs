//! `GET /api/v1/agent/models` (SPEC 19): a workspace's configured
//! providers and the models each one lists, for the web page's picker; a
//! run names one with `provider` / `model`.

use axum::extract::State;
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{Value, json};

use super::error::ApiError;
use super::query::Query;
use super::state::{AppState, User};

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ModelsQuery {
    workspace_id: String,
    /// Ask the providers again (their lists are kept five minutes).
    #[serde(default)]
    fresh: Option<bool>,
}

#[utoipa::path(get, path = "/api/v1/agent/models", tag = "jobs", params(ModelsQuery), responses((status = 200, description = "{providers: [{name, kind, model, current, models, reach: {state: listed|no_key|offline, var?, error?}}]}"), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn models(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    Query(q): Query<ModelsQuery>,
) -> Result<Json<Value>, ApiError> {
    let ws = app.workspace(&q.workspace_id, &user)?;
    let providers = ws.engine.models(q.fresh.unwrap_or(false)).await;
    Ok(Json(json!({ "providers": providers })))
}
