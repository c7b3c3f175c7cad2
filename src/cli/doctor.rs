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
    if report.healthy() {
        Exit::Ok
    } else {
        Exit::Failed
    }
}
