//! The store's job queue (SPEC 16): a run that finds its host full waits
//! there; every host with a free slot (`[server] max_jobs_per_host`) takes
//! the oldest waiting jobs (`FOR UPDATE SKIP LOCKED` on PostgreSQL, so two
//! hosts never take one) and starts them on its engine. A job whose
//! session another process drives goes back to wait.

use std::time::Duration;

use super::state::AppState;
use crate::protocol::EngineError;

/// How often a host with a free slot looks at the queue.
const EVERY: Duration = Duration::from_millis(100);

pub fn start(app: AppState) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(EVERY);
        loop {
            tick.tick().await;
            take(&app).await;
        }
    });
}

async fn take(app: &AppState) {
    if app.is_draining() {
        return;
    }
    let free = app
        .config
        .max_jobs_per_host
        .saturating_sub(app.running_total());
    if free == 0 {
        return;
    }
    let Ok(taken) = app.accounts.claim_queued(&app.host, free).await else {
        return;
    };
    for (job_id, owner, start) in taken {
        let Some(ws) = app.workspaces.iter().find(|w| w.id == owner.workspace_id) else {
            let _ = app.accounts.requeue(&job_id).await;
            continue;
        };
        match ws.engine.command_as(&owner.user, start).await {
            Ok(_) => super::usage::watch(app.clone(), ws.engine.clone(), job_id, owner.user),
            Err(EngineError::Busy { .. }) => {
                let _ = app.accounts.requeue(&job_id).await;
            }
            Err(e) => {
                // It cannot run anywhere (its session is gone): ended so.
                let usage = crate::protocol::JobUsage {
                    status: format!("failed: {e}"),
                    provider: String::new(),
                    input_tokens: 0,
                    output_tokens: 0,
                    cost_usd: 0.0,
                };
                let _ = app.accounts.finish_job(&job_id, usage).await;
            }
        }
    }
}
