//! What the TUI starts with: the start options, what is read of a root
//! before its first frame (tree top, latest checkpoint, a resumed
//! session; blocking), and the app built from that without I/O.

use super::app::{self, App, Entry, LatestCheckpoint};
use super::{KeyMap, RootOpener, Tree};
use crate::agent::EngineContext;
use crate::checkpoint::CheckpointStore;
use crate::protocol::Mode;

/// What the TUI starts with besides the engine.
pub struct TuiStart {
    pub mode: Mode,
    pub provider_label: String,
    pub provider_ok: bool,
    /// Shown first in the transcript (e.g. how to set up a provider).
    pub notice: Option<String>,
    /// A session being resumed: its transcript and pending review come back.
    pub resumed: Option<String>,
    /// Let the user pick the session first (`--resume` without an id).
    pub pick_session: bool,
    pub keymap: KeyMap,
    /// Opens another folder as the agent root (`Ctrl+O`).
    pub opener: Option<std::sync::Arc<dyn RootOpener>>,
}

/// Builds the app state for `ctx` (tree, restored transcript, review).
pub fn initial_app(ctx: &EngineContext, start: TuiStart) -> App {
    let first = first_look(ctx, start.resumed.as_deref());
    app_from(ctx, start, first)
}

/// What the app shows first of a root: its tree's top, its latest
/// checkpoint and the session being resumed (file and store reads:
/// blocking).
pub struct FirstLook {
    tree: Tree,
    latest: Option<LatestCheckpoint>,
    resumed: Option<crate::agent::SessionState>,
}

pub fn first_look(ctx: &EngineContext, resumed: Option<&str>) -> FirstLook {
    let latest = ctx
        .state
        .as_ref()
        .and_then(|state| CheckpointStore::new(state).latest().ok().flatten())
        .map(|cp| app::LatestCheckpoint {
            id: cp.checkpoint_id,
            files: cp
                .affected_files
                .iter()
                .map(|f| f.file_path.clone())
                .collect(),
            hunks: cp
                .affected_files
                .iter()
                .flat_map(|f| {
                    f.hunks
                        .iter()
                        .map(move |h| (h.hunk_id.clone(), f.file_path.clone()))
                })
                .collect(),
        });
    let resumed = match (&ctx.state, resumed) {
        (Some(state), Some(id)) => crate::agent::read_session(state, id).ok(),
        _ => None,
    };
    FirstLook {
        tree: Tree::open(&ctx.workspace),
        latest,
        resumed,
    }
}

/// The app for `ctx` from what was read of it (no I/O).
pub fn app_from(ctx: &EngineContext, start: TuiStart, first: FirstLook) -> App {
    let mut app = App::new(
        ctx.workspace.root().display().to_string(),
        first.tree,
        start.mode,
        start.provider_label.clone(),
        start.provider_ok,
        ctx.config.agent.max_tool_calls_per_job,
    );
    app.theme = ctx.config.ui.theme;
    if let Some(s) = &first.resumed {
        show_session(&mut app, s);
    }
    app.latest_checkpoint = first.latest;
    if let Some(notice) = &start.notice {
        app.transcript.push(Entry::Notice(notice.clone()));
    }
    app.keymap = start.keymap;
    app
}

/// Shows a session read from the store: its conversation and pending review.
pub(super) fn show_session(app: &mut App, s: &crate::agent::SessionState) {
    for job in &s.jobs {
        app.transcript.push(Entry::User(job.prompt.clone()));
        if let Some(answer) = &job.answer {
            app.push_answer(answer);
        }
    }
    if let Some(job) = s.pending_review()
        && let Some(bundle) = &job.bundle
    {
        app.show_review(app::ReviewView::new(
            job.job_id.clone(),
            bundle.clone(),
            0,
            None,
        ));
        app.transcript.push(Entry::Notice(
            "A review is pending: Ctrl+R opens it.".into(),
        ));
    }
}
