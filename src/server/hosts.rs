//! This host among the hosts sharing the store: a heartbeat every 2 s
//! (SPEC 16) keeps it in `health`'s list, which holds the hosts seen in
//! the last 10 s; a host that stops cleanly leaves the list at once.

use std::time::Duration;

use super::state::AppState;

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

/// One heartbeat (also the first, before the server answers anything).
pub async fn beat(app: &AppState) {
    if let Ok(hosts) = app
        .accounts
        .heartbeat(&app.host, &app.started_at, LIVE_MS)
        .await
    {
        *app.hosts.lock().unwrap_or_else(|p| p.into_inner()) = hosts;
    }
}

/// This host leaves the list (a clean stop).
pub async fn leave(app: &AppState) {
    let _ = app.accounts.host_gone(&app.host).await;
}
