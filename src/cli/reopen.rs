//! The TUI's `Ctrl+O` on the command line's side: opening another folder
//! as the agent root takes the same steps as a start (its scopes, its
//! state settled, a provider), and it joins the recent roots.

use std::sync::Arc;

use super::args::GlobalArgs;
use super::context;
use crate::agent::{SessionChoice, settle_interrupted};
use crate::config::Config;
use crate::store::Store;
use crate::tui::{Reopened, RootOpener};
use crate::workspace::expand_home;

pub struct CliOpener {
    global: GlobalArgs,
    config: Config,
    store: Store,
}

impl CliOpener {
    pub fn shared(global: &GlobalArgs, config: &Config, store: &Store) -> Arc<dyn RootOpener> {
        Arc::new(CliOpener {
            global: global.clone(),
            config: config.clone(),
            store: store.clone(),
        })
    }
}

impl RootOpener for CliOpener {
    fn recent(&self) -> Vec<String> {
        self.store.recent_roots().unwrap_or_default()
    }

    fn open(&self, path: &str) -> Result<Reopened, String> {
        let workspace = context::workspace(&self.global, &self.config, &expand_home(path))?;
        let state = self.store.root(workspace.root());
        let recovered = settle_interrupted(&workspace, &state).map_err(|e| e.to_string())?;
        let providers = context::tui_providers(&self.global, &self.config);
        let ok = providers.routed.is_some();
        // Only a hint for the next time: failing to note it changes nothing.
        let _ = self.store.remember_root(state.path());
        let mut sessions = state.sessions().unwrap_or_default();
        sessions.reverse();
        let ctx = context::assemble(
            &self.global,
            self.config.clone(),
            workspace,
            SessionChoice::New,
            providers.routed,
            (state, recovered),
        )?;
        Ok(Reopened {
            ctx,
            provider_label: providers.label,
            provider_ok: ok,
            notice: providers.notice,
            sessions,
        })
    }
}
