//! Switching the agent root in place (`Ctrl+O`): the command line supplies
//! a `RootOpener` (opening a root means its config, store and provider);
//! the event loop asks it off the UI task, then swaps engine and app.
//! Also the root's file list for `@path` completion, walked off the UI task.

use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;

use super::{App, Entry, FirstLook, Load, Overlay, TuiStart, app_from, first_look};
use crate::agent::{self, EngineContext};
use crate::store::RootStore;
use crate::workspace::Workspace;

/// Opens folders as the agent root for the TUI.
pub trait RootOpener: Send + Sync {
    /// Roots opened lately, most recent first.
    fn recent(&self) -> Vec<String>;
    /// An engine context for `path` (its state opened and settled), or why
    /// it cannot be the agent root.
    fn open(&self, path: &str) -> Result<Reopened, String>;
}

/// A root opened by a `RootOpener`.
pub struct Reopened {
    pub ctx: EngineContext,
    pub provider_label: String,
    pub provider_ok: bool,
    /// Shown first in the new transcript (e.g. a provider problem).
    pub notice: Option<String>,
    /// The root's earlier sessions, newest first: the user picks one to
    /// go on with, or starts a new one.
    pub sessions: Vec<crate::protocol::SessionSummary>,
}

/// What the opener's work gave, for the event loop.
pub enum RootMsg {
    Recent(Vec<String>),
    Completions(String, Vec<String>),
    /// The root, and what the app shows first of it (read here, off the UI task).
    Opened(Box<(Reopened, FirstLook)>),
    Failed(String),
}

/// Runs a root load of the app (recent roots, folder completion, opening
/// a folder) on the blocking pool; its outcome comes back on `tx`.
pub fn start(load: Load, opener: Option<Arc<dyn RootOpener>>, tx: UnboundedSender<RootMsg>) {
    tokio::task::spawn_blocking(move || {
        let msg = match (load, opener) {
            (Load::RecentRoots, Some(o)) => RootMsg::Recent(o.recent()),
            (Load::RecentRoots, None) => RootMsg::Recent(Vec::new()),
            (Load::RootCompletion(typed), _) => {
                let found = super::app::complete_folder(&typed);
                RootMsg::Completions(typed, found)
            }
            (Load::OpenRoot(path), Some(o)) => match o.open(&path) {
                Ok(r) => {
                    let first = first_look(&r.ctx, None);
                    RootMsg::Opened(Box::new((r, first)))
                }
                Err(e) => RootMsg::Failed(e),
            },
            (Load::OpenRoot(_), None) => {
                RootMsg::Failed("another folder cannot be opened here".into())
            }
            // Not a root load: nothing to do here.
            _ => return,
        };
        let _ = tx.send(msg);
    });
}

/// The agent root the event loop serves, and how to open another.
pub struct Roots {
    pub workspace: Workspace,
    pub state: Option<RootStore>,
    pub opener: Option<Arc<dyn RootOpener>>,
}

/// Every file of `workspace`, walked on the blocking pool, sent to `tx`.
pub fn list_paths(workspace: &Workspace, tx: &tokio::sync::mpsc::UnboundedSender<Vec<String>>) {
    let (workspace, tx) = (workspace.clone(), tx.clone());
    tokio::task::spawn_blocking(move || {
        let _ = tx.send(all_files(&workspace));
    });
}

/// Makes `opened` the agent root: the old engine is let go (it finishes
/// and stops), the app starts afresh on the new root in the same mode.
/// With earlier sessions there, the picker offers them first.
pub fn switch_root(
    app: &mut App,
    engine: &mut Option<agent::EngineHandle>,
    waiting: &mut Option<EngineContext>,
    roots: &mut Roots,
    (opened, first): (Reopened, FirstLook),
) -> Result<(), String> {
    let root = opened.ctx.workspace.root().display().to_string();
    // A review left open stays pending in the folder it belongs to.
    let left = app.review.as_ref().map(|_| {
        format!(
            "The review pending in {} stays there (agent-tui --continue in that folder).",
            app.root
        )
    });
    *engine = None;
    let start = TuiStart {
        mode: app.mode,
        provider_label: opened.provider_label,
        provider_ok: opened.provider_ok,
        notice: opened.notice,
        resumed: None,
        pick_session: false,
        keymap: std::mem::take(&mut app.keymap),
        opener: None,
    };
    *app = app_from(&opened.ctx, start, first);
    if let Some(left) = left {
        app.transcript.push(Entry::Notice(left));
    }
    roots.workspace = opened.ctx.workspace.clone();
    roots.state = opened.ctx.state.clone();
    if opened.sessions.is_empty() {
        app.transcript.push(Entry::Notice(format!(
            "Opened {root} as the agent root: a new session."
        )));
        *engine = Some(agent::spawn(opened.ctx).map_err(|e| e.to_string())?);
    } else {
        app.transcript
            .push(Entry::Notice(format!("Opened {root} as the agent root.")));
        app.overlay = Overlay::Sessions {
            rows: opened.sessions,
            cursor: 0,
        };
        *waiting = Some(opened.ctx);
    }
    Ok(())
}

/// Files offered for `@path` completion, at most.
const MAX_COMPLETION_PATHS: usize = 100_000;

/// Every file of every scope (`@docs/…` for those beside the root).
fn all_files(workspace: &Workspace) -> Vec<String> {
    crate::workspace::list_all(workspace, None, MAX_COMPLETION_PATHS)
        .entries
        .into_iter()
        .filter(|e| e.kind == crate::workspace::EntryKind::File)
        .map(|e| e.path)
        .collect()
}
