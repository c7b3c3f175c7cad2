//! On SQLite the store has one `serve` (SPEC 16): a second one on the same
//! store is refused before it answers anything, naming the one that serves
//! it. The first holds a lock beside the store's file (`<store>.serve.lock`,
//! flock, let go when its process ends however it ends) with its pid and
//! host name in it. The TUI and `exec` take no such lock: they may share
//! the home. PostgreSQL stores take none: several hosts share them.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};

use super::state::AppState;

/// Takes the store's serve lock for this process (kept in `app` until it
/// ends); the refusal to show when another process holds it.
pub fn claim(app: &AppState) -> Result<(), String> {
    if app.accounts.shared() {
        return Ok(());
    }
    let Some(store) = app
        .workspaces
        .first()
        .and_then(|w| w.engine.store_location())
    else {
        return Ok(());
    };
    let path = format!("{store}.serve.lock");
    let mut file = crate::platform::fs::owner_only(&mut OpenOptions::new())
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| format!("cannot open {path}: {e}"))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => return Err(refusal(&mut file, &store)),
        Err(TryLockError::Error(e)) => return Err(format!("cannot lock {path}: {e}")),
    }
    let who = format!("pid {} on {}\n", std::process::id(), app.host);
    file.set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| file.write_all(who.as_bytes()))
        .map_err(|e| format!("cannot write {path}: {e}"))?;
    *app.store_lock.lock().unwrap_or_else(|p| p.into_inner()) = Some(file);
    Ok(())
}

/// Why this `serve` may not start: who serves the store already.
fn refusal(file: &mut File, store: &str) -> String {
    let mut who = String::new();
    let _ = file.read_to_string(&mut who);
    let who = match who.trim() {
        "" => "another agent-tui serve".to_string(),
        w => format!("agent-tui serve ({w})"),
    };
    format!(
        "{who} already serves the store {store}: a SQLite store is served by one host \
         (the TUI and `exec` may still share it). Stop that one first, or put the store \
         on PostgreSQL (AGENT_TUI_DATABASE_URL), which several hosts share"
    )
}
