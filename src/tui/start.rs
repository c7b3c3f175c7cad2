//! What the TUI starts with: the start options and the app built for an
//! engine without I/O. What the app shows of the root (its tree's top, its
//! latest checkpoint, a resumed session, the files for `@` completion) is
//! asked of the engine as loads, so the first frame waits for none of it.

use super::app::{App, Entry, Load, Overlay};
use super::{KeyMap, Tree};
use crate::agent::Engine;
use crate::protocol::{Mode, SessionSummary};

/// Which session the TUI opens with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resume {
    /// A new one, made with the first job.
    New,
    /// This one: its transcript and pending review come back.
    Session(String),
    /// Let the user pick (`--resume` without an id), newest first.
    Pick(Vec<SessionSummary>),
}

/// What the TUI starts with besides the engine.
pub struct TuiStart {
    pub mode: Mode,
    pub keymap: KeyMap,
    pub resume: Resume,
}

/// The app for `engine` (no I/O): what it shows arrives as loads.
pub fn app_from(engine: &Engine, start: TuiStart) -> App {
    let (tree, top) = Tree::new(&engine.scopes());
    let mut app = App::new(
        engine.root().display().to_string(),
        tree,
        start.mode,
        engine.provider_label().to_string(),
        engine.has_provider(),
        engine.config().agent.max_tool_calls_per_job,
    );
    app.theme = engine.config().ui.theme;
    app.cost = super::app::Cost::priced(&engine.config().providers);
    app.keymap = start.keymap;
    if let Some(notice) = engine.provider_notice() {
        app.transcript.push(Entry::Notice(notice.to_string()));
    }
    app.loads.push(Load::TreeDir {
        rel: top.0,
        depth: top.1,
    });
    app.loads.push(Load::LatestCheckpoint);
    app.loads.push(Load::Commands);
    app.loads.push(Load::Paths);
    // The code index, built in the background if missing or stale (the
    // status bar says how far it got); its tools work meanwhile too.
    if engine.config().index.enabled {
        app.loads.push(Load::Index);
    }
    match start.resume {
        Resume::New => {}
        Resume::Session(id) => {
            app.session = Some(id.clone());
            app.loads.push(Load::Session(id));
        }
        Resume::Pick(mut rows) => {
            rows.reverse();
            app.overlay = Overlay::Sessions { rows, cursor: 0 };
        }
    }
    app
}
