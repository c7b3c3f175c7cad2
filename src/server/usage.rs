//! Spend, attributed: every job started over HTTP is watched to its end,
//! and its tokens and cost (the provider's `price_*_per_mtok`) are kept
//! with its user and workspace; `GET …/usage` reads them. A user with a
//! monthly budget past it, or with `max_concurrent_jobs_per_user` jobs
//! running, is refused a new run (429).

use super::query::Query;
use axum::extract::State;
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{Value, json};

use super::error::ApiError;
use super::state::{AppState, User};
use crate::agent::{Engine, Filter};
use crate::protocol::{EventBody, JobUsage, Role};

/// The first instant of this month (UTC), as the store writes times.
pub fn month_start() -> String {
    let now = super::sessions::now();
    format!("{}01T00:00:00.000Z", &now[..8])
}

/// Refuses a run `user` may not start now: too many running, or past
/// their monthly budget.
pub async fn admit(app: &AppState, user: &User) -> Result<(), ApiError> {
    let limit = app.config.max_concurrent_jobs_per_user;
    if app.running(&user.name) >= limit {
        let mut e = ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limited",
            format!(
                "{} has {limit} jobs running already (server.max_concurrent_jobs_per_user)",
                user.name
            ),
        );
        e.retry_after = Some(5);
        return Err(e);
    }
    let budget = app.config.budget_of(&user.name);
    if let Some(budget) = budget {
        let spent: f64 = app
            .accounts
            .usage(&month_start(), Some(&user.name), None)
            .await?
            .iter()
            .map(|r| r.cost_usd)
            .sum();
        if spent >= budget {
            let mut e = ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                format!(
                    "{} has spent ${spent:.2} of a ${budget:.2} monthly budget",
                    user.name
                ),
            )
            .hint("an admin can raise it: server.monthly_budgets_usd (or the user's own monthly_budget_usd)");
            e.reason = Some("budget_exceeded");
            return Err(e);
        }
    }
    Ok(())
}

/// Follows job `job_id` on `engine` to its end and keeps what it used;
/// the user's running count goes down then.
pub fn watch(app: AppState, engine: Engine, job_id: String, user: String) {
    app.started(&job_id, &user, &engine);
    tokio::spawn(async move {
        let mut events = engine.subscribe(Filter::Job {
            job_id: job_id.clone(),
            after: 0,
        });
        let mut usage = JobUsage {
            status: "running".into(),
            provider: String::new(),
            input_tokens: 0,
            output_tokens: 0,
            cost_usd: 0.0,
        };
        while let Some(event) = events.next().await {
            match &event.body {
                EventBody::JobStarted { provider, .. } => usage.provider = provider.clone(),
                EventBody::ApprovalRequested { .. } | EventBody::ClarificationRequested { .. } => {
                    app.waiting(&job_id, true);
                }
                EventBody::ApprovalResolved { .. } | EventBody::ClarificationReceived { .. } => {
                    app.waiting(&job_id, false);
                }
                EventBody::UsageUpdated {
                    input_tokens,
                    output_tokens,
                    ..
                } => {
                    usage.input_tokens = usage.input_tokens.max(*input_tokens);
                    usage.output_tokens = usage.output_tokens.max(*output_tokens);
                }
                EventBody::JobCompleted {
                    usage: u,
                    status,
                    provider,
                    ..
                } => {
                    usage.input_tokens = usage.input_tokens.max(u.input_tokens);
                    usage.output_tokens = usage.output_tokens.max(u.output_tokens);
                    if !provider.is_empty() {
                        usage.provider = provider.clone();
                    }
                    usage.status = status.as_str().into();
                    break;
                }
                EventBody::JobFailed { .. } => {
                    usage.status = "failed".into();
                    break;
                }
                EventBody::JobCancelled {} => {
                    usage.status = "cancelled".into();
                    break;
                }
                _ => {}
            }
        }
        if let Some(p) = engine.config().providers.get(&usage.provider) {
            let price =
                |tokens: u64, per_mtok: Option<f64>| tokens as f64 * per_mtok.unwrap_or(0.0) / 1e6;
            usage.cost_usd = price(usage.input_tokens, p.price_input_per_mtok)
                + price(usage.output_tokens, p.price_output_per_mtok);
        }
        let _ = app.accounts.finish_job(&job_id, usage).await;
        app.ended(&job_id);
    });
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct UsageQuery {
    /// RFC 3339, e.g. `2026-11-01T00:00:00Z` (default: the month's start).
    #[param(format = DateTime)]
    since: Option<String>,
    user: Option<String>,
    workspace_id: Option<String>,
}

/// An RFC 3339 time with any offset as the UTC time jobs are stamped
/// with (`2026-11-01T00:00:00.000Z`), so the store compares like with
/// like; a time before 1970 is 1970's start (nothing is older).
fn utc(since: &str) -> Result<String, ApiError> {
    let at: jiff::Timestamp = since.parse().map_err(|e| {
        ApiError::invalid(format!(
            "since = {since:?} is not a date and time ({e}); give RFC 3339, e.g. \
             2026-11-01T00:00:00Z"
        ))
    })?;
    let at = at.max(jiff::Timestamp::UNIX_EPOCH);
    Ok(at.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
}

/// `GET …/usage`: a user's own, an admin's anyone's (all by default);
/// since the start of the month unless `since` says otherwise.
#[utoipa::path(get, path = "/api/v1/agent/usage", tag = "usage", params(UsageQuery), responses((status = 200, description = "{since, usage: [{user, workspace_id, jobs, input_tokens, output_tokens, cost_usd}]}"), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn usage(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    Query(q): Query<UsageQuery>,
) -> Result<Json<Value>, ApiError> {
    let whose = match (user.role, q.user) {
        (Role::Admin, who) => who,
        (Role::User, Some(who)) if who != user.name => {
            return Err(ApiError::forbidden("a user reads only their own usage"));
        }
        (Role::User, _) => Some(user.name.clone()),
    };
    let since = match q.since {
        Some(since) => utc(&since)?,
        None => month_start(),
    };
    let rows = app
        .accounts
        .usage(&since, whose.as_deref(), q.workspace_id.as_deref())
        .await?;
    Ok(Json(json!({ "since": since, "usage": rows })))
}

#[cfg(test)]
mod tests {
    use super::utc;

    #[test]
    fn since_is_read_with_its_offset_as_utc() {
        assert_eq!(
            utc("2026-11-01T00:00:00Z").unwrap(),
            "2026-11-01T00:00:00.000Z"
        );
        assert_eq!(
            utc("2026-11-01T02:30:00.5+02:00").unwrap(),
            "2026-11-01T00:30:00.500Z"
        );
        assert_eq!(
            utc("2026-10-31t23:00:00-01:00").unwrap(),
            "2026-11-01T00:00:00.000Z"
        );
        assert_eq!(
            utc("0001-01-01T00:00:00Z").unwrap(),
            "1970-01-01T00:00:00.000Z"
        );
        assert!(utc("").is_err());
        assert!(utc("yesterday").is_err());
    }
}
