//! Answers to a job reach the host running it (SPEC 16): an approval,
//! clarification or cancel posted to another host is left in the store for
//! the job's host, which takes it within 50 ms, runs it on its engine (the
//! first answer wins there, whichever host it came through) and leaves the
//! outcome for the asking host.

use std::time::Duration;

use axum::http::StatusCode;
use serde_json::Value;

use super::error::ApiError;
use super::state::{AppState, User, Workspace};
use crate::protocol::Command;

/// How often a host looks for commands left for it.
const TAKE_EVERY: Duration = Duration::from_millis(50);
/// How often the asking host looks for the outcome, and for how long.
const ANSWER_EVERY: Duration = Duration::from_millis(25);
const ANSWER_WITHIN: Duration = Duration::from_secs(15);

/// Runs `command` (about `job_id`, a job the caller knows exists) where
/// the job runs: here, or on its live host through the store. Whether that
/// host is live is the store's word, not this host's last look at the
/// heartbeats: a host in its first seconds (or one that has not beaten
/// since another joined) would otherwise take a live job for a missing one.
/// A job that runs nowhere any more (it ended, has not started, or its
/// host stopped answering) is a conflict, never "not found".
pub async fn command(
    app: &AppState,
    ws: &Workspace,
    user: &User,
    job_id: &str,
    command: Command,
) -> Result<(), ApiError> {
    let place = if app.accounts.shared() {
        app.accounts
            .job_host_live(job_id, super::hosts::LIVE_MS)
            .await?
    } else {
        None
    };
    match place {
        Some((host, true)) if host != app.host => {
            relay(app, &host, &user.name, job_id, &command).await
        }
        Some((host, false)) if host != app.host => Err(ApiError::conflict(format!(
            "job {job_id} runs on host {host}, which has stopped answering"
        ))
        .hint("it ends as host_lost within seconds; its session goes on on any host")),
        _ => here(ws, Some(&user.name), job_id, command).await,
    }
}

/// Runs `command` on this host's engine: a job it does not run (any
/// more) is a conflict.
async fn here(
    ws: &Workspace,
    user: Option<&str>,
    job_id: &str,
    command: Command,
) -> Result<(), ApiError> {
    let done = match user {
        Some(user) => ws.engine.command_as(user, command).await,
        None => ws.engine.command(command).await,
    };
    match done {
        Ok(_) => Ok(()),
        Err(crate::protocol::EngineError::NotFound { .. }) => Err(ApiError::conflict(format!(
            "job {job_id} is not running: it has ended or not started yet"
        ))
        .hint("GET /api/v1/agent/jobs/{id} gives its status")),
        Err(e) => Err(e.into()),
    }
}

/// Leaves `command` (for `user`) for `host` and waits for its outcome.
async fn relay(
    app: &AppState,
    host: &str,
    user: &str,
    job_id: &str,
    command: &Command,
) -> Result<(), ApiError> {
    let id = app.accounts.relay_put(host, user, job_id, command).await?;
    let deadline = tokio::time::Instant::now() + ANSWER_WITHIN;
    while tokio::time::Instant::now() < deadline {
        if let Some((status, body)) = app.accounts.relay_result(&id).await? {
            return if status < 300 {
                Ok(())
            } else {
                Err(error_of(status, &body))
            };
        }
        tokio::time::sleep(ANSWER_EVERY).await;
    }
    Err(ApiError::unavailable(format!(
        "host {host}, which runs job {job_id}, did not answer"
    )))
}

/// The error another host answered, as this host sends it on.
fn error_of(status: u16, body: &str) -> ApiError {
    let value: Value = serde_json::from_str(body).unwrap_or_default();
    let e = &value["error"];
    let code = match e["code"].as_str().unwrap_or_default() {
        "not_found" => "not_found",
        "invalid" => "invalid",
        "conflict" => "conflict",
        "forbidden" => "forbidden",
        _ => "unavailable",
    };
    let message = e["message"]
        .as_str()
        .unwrap_or("the job's host refused")
        .to_string();
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut err = ApiError::new(status, code, message);
    err.hint = e["hint"].as_str().map(str::to_string);
    err
}

/// Takes what other hosts left for this one, for as long as it runs.
pub fn start(app: AppState) {
    if !app.accounts.shared() {
        return;
    }
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(TAKE_EVERY);
        loop {
            tick.tick().await;
            let Ok(left) = app.accounts.relay_take(&app.host).await else {
                continue;
            };
            for (id, job_id, user, command) in left {
                let (status, body) = run(&app, &job_id, user.as_deref(), command).await;
                let _ = app.accounts.relay_answer(&id, status, body).await;
            }
        }
    });
}

async fn run(app: &AppState, job_id: &str, user: Option<&str>, command: Command) -> (u16, String) {
    let owner = match app.accounts.job_owner(job_id).await {
        Ok(Some(o)) => o,
        _ => {
            return (
                404,
                super::idem::error_body(&ApiError::not_found(format!("no job {job_id}"))),
            );
        }
    };
    let Some(ws) = app.workspaces.iter().find(|w| w.id == owner.workspace_id) else {
        let e = ApiError::not_found(format!(
            "workspace {} is not served here",
            owner.workspace_id
        ));
        return (404, super::idem::error_body(&e));
    };
    match here(ws, user, job_id, command).await {
        Ok(()) => (200, "{}".into()),
        Err(e) => (e.status.as_u16(), super::idem::error_body(&e)),
    }
}
