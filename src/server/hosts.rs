//! This host among the hosts sharing the store: a heartbeat every 2 s
//! (SPEC 16) keeps it in `health`'s list, which holds the hosts seen in
//! the last 10 s; a host that stops cleanly leaves the list at once. Each
//! beat also ends the jobs of hosts gone silent (`job.failed {code:
//! "host_lost"}`), one host taking each job, so their sessions go on.

use std::time::Duration;

use super::state::AppState;
use crate::protocol::Command;

/// How often a host says it is alive.
pub const BEAT: Duration = Duration::from_secs(2);
/// A host unheard of for this long is not listed.
pub const LIVE_MS: u64 = 10_000;

/// Beats until the process ends, refreshing the list `health` shows.
pub fn start(app: AppState) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(BEAT);
        loop {
            tick.tick().await;
            beat(&app).await;
        }
    });
}

/// The first heartbeat, before the server answers anything. Hosts sharing
/// PostgreSQL have unique names among live hosts: while one of this name
/// still beats, this one waits (a restart after a crash finds its old row
/// for up to `LIVE_MS`), and is refused if it goes on beating. On SQLite
/// the store has one host: a second `serve` on it is refused
/// (`sqlite_host`), and a restart takes its row over at once.
pub async fn join(app: &AppState) -> Result<(), String> {
    // SQLite: one host; a second `serve` on the store is refused here.
    super::sqlite_host::claim(app)?;
    let unique = app.accounts.shared();
    let deadline = std::time::Instant::now() + Duration::from_millis(LIVE_MS) + BEAT;
    let mut told = false;
    let hosts = loop {
        match app
            .accounts
            .heartbeat(&app.host, &app.started_at, LIVE_MS, unique)
            .await
        {
            Ok(hosts) => break hosts,
            Err(e) if unique && std::time::Instant::now() < deadline => {
                if !told {
                    eprintln!("agent-tui serve: {e}; waiting for it to go silent");
                    told = true;
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(e) => return Err(e.to_string()),
        }
    };
    *app.hosts.lock().unwrap_or_else(|p| p.into_inner()) = hosts;
    // What an earlier run of this host left running ended with it.
    sweep(app).await;
    Ok(())
}

/// One heartbeat, then the jobs of silent hosts are ended.
pub async fn beat(app: &AppState) {
    if let Ok(hosts) = app
        .accounts
        .heartbeat(&app.host, &app.started_at, LIVE_MS, false)
        .await
    {
        *app.hosts.lock().unwrap_or_else(|p| p.into_inner()) = hosts;
    }
    sweep(app).await;
}

/// Ends the jobs whose host has been silent for `LIVE_MS`, and the ones an
/// earlier run of this host left (it did not stop cleanly).
async fn sweep(app: &AppState) {
    let now = u64::try_from(crate::agent::now_ms()).unwrap_or(0);
    let since = now.saturating_sub(LIVE_MS);
    let lost = app
        .accounts
        .lost_jobs(since, &app.host, &app.started_at)
        .await;
    let Ok(lost) = lost else {
        return;
    };
    for (job_id, owner) in lost {
        if !app
            .accounts
            .claim_lost(&job_id, true)
            .await
            .unwrap_or(false)
        {
            continue;
        }
        let ended = match app.workspaces.iter().find(|w| w.id == owner.workspace_id) {
            Some(ws) => ws
                .engine
                .command(Command::EndLostJob {
                    session_id: owner.session_id.clone(),
                    job_id: job_id.clone(),
                })
                .await
                .is_ok(),
            None => false,
        };
        if !ended {
            // Its session is still leased (or not served here): next beat.
            let _ = app.accounts.claim_lost(&job_id, false).await;
        }
    }
}

/// This host leaves the list (a clean stop).
pub async fn leave(app: &AppState) {
    let _ = app.accounts.host_gone(&app.host).await;
}
