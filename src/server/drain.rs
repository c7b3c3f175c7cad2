//! A graceful stop (SIGTERM): nothing more starts on this host (runs
//! posted meanwhile wait in the store's queue, for another host or this
//! one's next start), the jobs running here get `[server]
//! shutdown_grace_secs` to reach their end, and a job that waits for a
//! person is cancelled at once (nothing of it is in flight, and nobody
//! may answer before the host is gone). What is left when the grace ends
//! is cancelled by the engines' own shutdown, which stores it all.

use crate::protocol::words::counted;
use std::collections::HashSet;
use std::time::{Duration, Instant};

use super::state::AppState;
use crate::protocol::Command;

/// How often the running jobs are looked at while stopping.
const EVERY: Duration = Duration::from_millis(50);

/// Stops taking work and waits (at most `grace`) for the running jobs.
pub async fn drain(app: &AppState, grace: Duration) {
    app.draining
        .store(true, std::sync::atomic::Ordering::Release);
    let running = app.running_total();
    if running > 0 {
        eprintln!(
            "agent-tui serve: stopping: waiting up to {} s for {}",
            grace.as_secs(),
            counted(running, "running job")
        );
    }
    let deadline = Instant::now() + grace;
    let mut cancelled = HashSet::new();
    loop {
        for (job_id, engine) in app.waiting_jobs() {
            if cancelled.insert(job_id.clone()) {
                tracing::info!(job = %job_id, "stopping: a job waiting for an answer is cancelled");
                let _ = engine.command(Command::Cancel { job_id }).await;
            }
        }
        if app.running_total() == 0 || Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(EVERY).await;
    }
}
