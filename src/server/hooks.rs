//! A workspace's hooks over HTTP (SPEC 21): `GET /api/v1/agent/hooks`
//! lists them with their trust for anyone the workspace serves; trusting a
//! project's hooks and testing them run the user's commands, so only
//! admins may (`POST …/hooks/trust`, `POST …/hooks/test`).

use axum::extract::State;
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{Value, json};

use super::body::Body;
use super::error::ApiError;
use super::query::Query;
use super::state::{AppState, User};
use crate::protocol::Role;

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct HooksQuery {
    workspace_id: String,
}

#[utoipa::path(get, path = "/api/v1/agent/hooks", tag = "hooks", params(HooksQuery), responses((status = 200, description = "{hooks: [{name, event, source, trust: config|trusted|changed|untrusted, def_sha256, command, timeout_secs, on_error, network, scripts}], problems: [string]}"), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn list(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    Query(q): Query<HooksQuery>,
) -> Result<Json<Value>, ApiError> {
    let ws = app.workspace(&q.workspace_id, &user)?;
    let (hooks, problems) = ws.engine.hooks();
    Ok(Json(json!({ "hooks": hooks, "problems": problems })))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Trust {
    workspace_id: String,
    /// Only this hook (default: every hook of the project's file).
    #[serde(default)]
    name: Option<String>,
}

fn admin_only(user: &User, what: &str) -> Result<(), ApiError> {
    if user.role == Role::Admin {
        return Ok(());
    }
    Err(ApiError::forbidden(format!(
        "only an admin may {what} a workspace's hooks: they run commands on this host"
    )))
}

#[utoipa::path(post, path = "/api/v1/agent/hooks/trust", tag = "hooks", request_body = Trust, responses((status = 200, description = "{trusted: [name]}"), (status = 403, description = "not an admin", body = super::error::ErrorBody), (status = 404, description = "no such workspace or hook", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn trust(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let ask: Trust = body.parse()?;
    let ws = app.workspace(&ask.workspace_id, &user)?;
    admin_only(&user, "trust")?;
    let trusted = ws.engine.trust_hooks(ask.name).await?;
    Ok(Json(json!({ "trusted": trusted })))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Test {
    workspace_id: String,
    /// The event.
    #[schema(value_type = HookEventName)]
    event: String,
    /// Only this hook.
    #[serde(default)]
    hook: Option<String>,
    /// The event's data (a call: {tool, arguments}).
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    data: Option<Value>,
}

/// The events of SPEC 21, as a test names them.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
enum HookEventName {
    #[schema(rename = "session.start")]
    SessionStart,
    #[schema(rename = "prompt.submit")]
    PromptSubmit,
    #[schema(rename = "tool.before")]
    ToolBefore,
    #[schema(rename = "tool.after")]
    ToolAfter,
    #[schema(rename = "approval.requested")]
    ApprovalRequested,
    #[schema(rename = "apply.before")]
    ApplyBefore,
    #[schema(rename = "verify.completed")]
    VerifyCompleted,
    #[schema(rename = "apply.after")]
    ApplyAfter,
    #[schema(rename = "job.end")]
    JobEnd,
    #[schema(rename = "compact.before")]
    CompactBefore,
    #[schema(rename = "rollback.after")]
    RollbackAfter,
}

#[utoipa::path(post, path = "/api/v1/agent/hooks/test", tag = "hooks", request_body = Test, responses((status = 200, description = "{event, decision, runs: [HookOutcome]}: a dry run; nothing is kept"), (status = 400, description = "no such event", body = super::error::ErrorBody), (status = 403, description = "not an admin", body = super::error::ErrorBody), (status = 404, description = "no such workspace or hook", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn test(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let ask: Test = body.parse()?;
    let ws = app.workspace(&ask.workspace_id, &user)?;
    admin_only(&user, "test")?;
    let Some(event) = crate::config::HookEvent::parse(&ask.event) else {
        return Err(ApiError::invalid(format!("no hook event {}", ask.event)));
    };
    let tested = ws
        .engine
        .test_hooks(
            event,
            ask.hook,
            ask.data.unwrap_or_else(|| json!({})),
            crate::agent::HookWho {
                user: Some(user.name.clone()),
                workspace_id: Some(ws.id.clone()),
            },
        )
        .await?;
    let decision = tested.runs.last().map_or("pass", |r| r.decision.as_str());
    Ok(Json(
        json!({ "event": event.as_str(), "decision": decision, "runs": tested.runs, "unmatched": tested.unmatched }),
    ))
}
