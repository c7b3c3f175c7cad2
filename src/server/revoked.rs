//! Open event streams end when their token is revoked or expires. One task
//! per host looks at each token that has streams open, once a second, and
//! tells those streams when it no longer stands for anyone: a host with
//! hundreds of streams asks the store once a second per token, not once
//! a second per stream.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::watch;

use super::state::AppState;

/// How often the tokens of open streams are looked at.
const EVERY: Duration = Duration::from_secs(1);

/// The tokens with streams open, each with what its streams wait on
/// (`true` while it stands).
#[derive(Default)]
pub struct Revocations {
    watched: Mutex<HashMap<String, watch::Sender<bool>>>,
}

impl Revocations {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, watch::Sender<bool>>> {
        self.watched.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Resolves once `token` no longer stands for anyone (checked each
/// second, with every other stream of that token).
pub async fn ended(app: AppState, token: String) {
    let mut standing = {
        let mut watched = app.revocations.lock();
        let first = watched.is_empty();
        let rx = watched
            .entry(token)
            .or_insert_with(|| watch::channel(true).0)
            .subscribe();
        if first {
            tokio::spawn(look(app.clone()));
        }
        rx
    };
    let _ = standing.wait_for(|stands| !stands).await;
}

/// The host's look at its watched tokens, while there are any.
async fn look(app: AppState) {
    loop {
        tokio::time::sleep(EVERY).await;
        let tokens: Vec<String> = {
            let mut watched = app.revocations.lock();
            watched.retain(|_, tx| tx.receiver_count() > 0);
            if watched.is_empty() {
                // The next stream to open starts the look again.
                return;
            }
            watched.keys().cloned().collect()
        };
        for token in tokens {
            if let Ok(None) = super::guard::user_of(&app, &token).await
                && let Some(tx) = app.revocations.lock().remove(&token)
            {
                let _ = tx.send(false);
            }
        }
    }
}
