//! The TUI's state driven against a real engine on a folder, without a
//! terminal: the file tree as the engine lists it, and the app's loads
//! done through the engine the way the event loop does them.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use agent_tui::agent::{Engine, EngineBuilder, Recording};
use agent_tui::config::Config;
use agent_tui::tui::{App, Tree};

/// An engine on `root` (nothing recorded, no provider) and its runtime.
pub struct Rig {
    pub rt: tokio::runtime::Runtime,
    pub engine: Engine,
}

impl Rig {
    pub fn new(root: &Path) -> Rig {
        Rig::with_dirs(root, &[])
    }

    /// With folders beside the root (`--add-dir`).
    pub fn with_dirs(root: &Path, add_dirs: &[String]) -> Rig {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let engine = {
            let _guard = rt.enter();
            EngineBuilder::new(root)
                .config(Config::default())
                .add_dirs(add_dirs.to_vec())
                .recording(Recording::Off)
                .build()
                .unwrap()
        };
        Rig { rt, engine }
    }

    /// The root's tree as the TUI first shows it.
    pub fn tree(&self) -> Tree {
        let (mut tree, (rel, depth)) = Tree::new(&self.engine.scopes());
        let entries = self.rt.block_on(self.engine.folder(&rel)).unwrap();
        tree.children_loaded(&rel, depth, entries);
        tree
    }

    /// Does the app's loads through the engine.
    pub fn settle(&self, app: &mut App) {
        self.rt
            .block_on(agent_tui::tui::settle_loads(app, &self.engine));
    }
}

/// `root`'s tree as the TUI first shows it.
pub fn tree(root: &Path) -> Tree {
    Rig::new(root).tree()
}
