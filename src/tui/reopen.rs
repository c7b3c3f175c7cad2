//! Switching the agent root in place (`Ctrl+O`): the command line supplies
//! a `RootOpener` (opening a root means its config, store and provider);
//! the event loop asks it off the UI task, then swaps engine and app.

use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;

use crate::agent::EngineContext;

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
    pub sessions: Vec<crate::store::session::SessionSummary>,
}

/// What the opener's work gave, for the event loop.
pub enum RootMsg {
    Recent(Vec<String>),
    Completions(String, Vec<String>),
    Opened(Box<Reopened>),
    Failed(String),
}

/// The root loads of the app, started on the blocking pool.
pub enum RootLoad {
    Recent,
    Complete(String),
    Open(String),
}

/// Runs `load` on the blocking pool; its outcome comes back on `tx`.
pub fn start(load: RootLoad, opener: Option<Arc<dyn RootOpener>>, tx: UnboundedSender<RootMsg>) {
    tokio::task::spawn_blocking(move || {
        let msg = match (load, opener) {
            (RootLoad::Recent, Some(o)) => RootMsg::Recent(o.recent()),
            (RootLoad::Recent, None) => RootMsg::Recent(Vec::new()),
            (RootLoad::Complete(typed), _) => {
                let found = super::app::complete_folder(&typed);
                RootMsg::Completions(typed, found)
            }
            (RootLoad::Open(path), Some(o)) => match o.open(&path) {
                Ok(r) => RootMsg::Opened(Box::new(r)),
                Err(e) => RootMsg::Failed(e),
            },
            (RootLoad::Open(_), None) => {
                RootMsg::Failed("another folder cannot be opened here".into())
            }
        };
        let _ = tx.send(msg);
    });
}
