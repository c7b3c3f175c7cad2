//! `agent-tui doctor`: which config, state home, store, root and provider
//! are in force, and whether the provider's server answers (the engine's
//! report, printed). Exit 1 if something needs fixing, 2 for a mistake in
//! the config or the flags.

use super::Exit;
use super::args::{DoctorArgs, GlobalArgs};
use super::context::builder;

pub fn run(global: &GlobalArgs, args: &DoctorArgs) -> Exit {
    let report = builder(global, &args.root).doctor();
    if let (true, Some(e)) = (report.facts.is_empty(), &report.usage_error) {
        eprintln!("agent-tui: {e}");
        return Exit::Usage;
    }
    println!("agent-tui {}", report.version);
    for fact in &report.facts {
        println!("{:<11} {}", fact.label, fact.text);
    }
    if let Some(e) = &report.usage_error {
        eprintln!("agent-tui: {e}");
        return Exit::Usage;
    }
    // The TUI's `[keys]`: the engine does not know the TUI's actions.
    if let Ok(loaded) = crate::config::load(global.config.as_deref(), &crate::agent::process_env)
        && !loaded.config.keys.is_empty()
    {
        if let Err(e) = super::keys::keymap(&loaded) {
            println!("{:<11} PROBLEM: {e}", "keys");
            return Exit::Usage;
        }
        let rebound = crate::protocol::words::counted(loaded.config.keys.len(), "key");
        println!("{:<11} {rebound} rebound", "keys");
    }
    if report.healthy() {
        Exit::Ok
    } else {
        Exit::Failed
    }
}
