//! Switching the agent root in place (`Ctrl+O`): the engine builds one for
//! the folder the way it was built (`Engine::open_root`, off the UI task);
//! here the loop follows the new engine and the app starts afresh on it,
//! in the same mode, offering the folder's earlier sessions first.

use super::app::{Entry, Load};
use super::event_loop::{Loop, Opened};
use super::start::{Resume, TuiStart, app_from};

/// Makes the opened root the agent root, unless a job started meanwhile;
/// its first look is shown with it.
pub fn switch_root(lp: &mut Loop<'_>, opened: Opened) {
    let Opened {
        engine,
        sessions,
        first,
        left_latest,
    } = opened;
    if lp.app.job_running() {
        lp.app
            .root_open_failed("a job started meanwhile: let it finish or cancel it first".into());
        tokio::spawn(async move {
            let _ = engine.shutdown().await;
        });
        return;
    }
    let root = engine.root().display().to_string();
    // A review left open stays pending in the folder it belongs to.
    let left = lp.app.left_review_note(left_latest.as_deref());
    let fresh = sessions.is_empty();
    let start = TuiStart {
        mode: lp.app.mode,
        keymap: std::mem::take(&mut lp.app.keymap),
        resume: if fresh {
            Resume::New
        } else {
            Resume::Pick(sessions)
        },
    };
    lp.follow(engine);
    lp.app = app_from(&lp.engine, start);
    // What was read with the opening stands for the app's first loads.
    lp.app
        .loads
        .retain(|l| !matches!(l, Load::TreeDir { .. } | Load::LatestCheckpoint));
    for done in first {
        lp.app.loaded(done);
    }
    if let Some(left) = left {
        lp.app.transcript.push(Entry::Notice(left));
    }
    lp.app.transcript.push(Entry::Notice(if fresh {
        format!("Opened {root} as the agent root: a new session.")
    } else {
        format!("Opened {root} as the agent root.")
    }));
}
