//! Opening a root's state: an apply or rollback that an earlier process
//! left half-written is settled before anything else, and each one is
//! written to the log (`<state home>/logs/agent-tui.log`).

use std::io::Write;

use crate::checkpoint::{CheckpointStore, Recovery, RecoveryError, recover};
use crate::store::{RootStore, StateDirs};
use crate::workspace::Workspace;

/// Settles the root's interrupted operations (see `checkpoint::recover`)
/// and logs each; the caller reports them (an event, or a line).
pub fn settle_interrupted(
    ws: &Workspace,
    state: &RootStore,
) -> Result<Vec<Recovery>, RecoveryError> {
    let recovered = recover(ws, &CheckpointStore::new(state))?;
    for r in &recovered {
        let line = format!("{}: recovered: {}", ws.root().display(), r.summary());
        // With -v the log is open already; else one line is appended.
        if tracing::enabled!(tracing::Level::WARN) {
            tracing::warn!("{line}");
        } else {
            log_line(&line);
        }
    }
    Ok(recovered)
}

/// Appends `line` with a timestamp to the state home's log (best effort:
/// the operation has been reported already).
pub fn log_line(line: &str) {
    let Some(dirs) = StateDirs::locate(&|k| std::env::var(k).ok()) else {
        return;
    };
    let dir = dirs.home.join("logs");
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let opened = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("agent-tui.log"));
    if let Ok(mut file) = opened {
        let now = humantime::format_rfc3339_millis(std::time::SystemTime::now());
        let _ = writeln!(file, "{now} {line}");
        let _ = file.sync_all();
    }
}
