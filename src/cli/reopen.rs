//! The TUI's `Ctrl+O` on the command line's side: opening another folder
//! as the agent root takes the same steps as a start (its scopes, its
//! state settled, a provider), and it joins the recent roots.

use std::path::PathBuf;
use std::sync::Arc;

use super::args::GlobalArgs;
use super::context;
use crate::agent::{EngineContext, SessionChoice, settle_interrupted};
use crate::config::Config;
use crate::store::Store;
use crate::tools::Registry;
use crate::tui::{Reopened, RootOpener};

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

/// `~/x` under the home folder; other paths as given (relative ones are
/// relative to the folder agent-tui was started in).
fn expand(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ if path == "~" => std::env::var_os("HOME").map_or_else(|| path.into(), PathBuf::from),
        _ => PathBuf::from(path),
    }
}

impl RootOpener for CliOpener {
    fn recent(&self) -> Vec<String> {
        self.store.recent_roots().unwrap_or_default()
    }

    fn open(&self, path: &str) -> Result<Reopened, String> {
        let workspace = context::workspace(&self.global, &self.config, &expand(path))?;
        let state = self.store.root(workspace.root());
        let recovered = settle_interrupted(&workspace, &state).map_err(|e| e.to_string())?;
        let mut config = self.config.clone();
        config.routing = context::routing(&self.global, &config)?;
        let registry = Registry::for_root(workspace.root(), &config)
            .map_err(|e| format!("internal error: {e}"))?;
        let (provider, fallback, label, ok, notice) =
            match context::quiet_providers(&self.global, &self.config) {
                Ok(r) => {
                    let label = format!("{} {}", r.primary.name(), r.primary.model());
                    (Some(r.primary), r.fallback, label, true, None)
                }
                Err(why) => (None, None, "no provider".to_string(), false, Some(why)),
            };
        // Only a hint for the next time: failing to note it changes nothing.
        let _ = self.store.remember_root(state.path());
        let mut sessions = state.sessions().unwrap_or_default();
        sessions.reverse();
        Ok(Reopened {
            ctx: EngineContext {
                workspace,
                config,
                registry,
                provider,
                fallback,
                state: Some(state),
                session: SessionChoice::New,
                recovered,
            },
            provider_label: label,
            provider_ok: ok,
            notice,
            sessions,
        })
    }
}
