//! `agent-tui store check` and `agent-tui store backup FILE` (SPEC section 15).

use serde_json::json;

use super::Exit;
use super::args::{GlobalArgs, StoreAction, StoreArgs};
use super::context::{failed, open_store, store_error};
use super::load_config;

pub fn run(global: &GlobalArgs, args: &StoreArgs) -> Exit {
    let config = match load_config(global) {
        Ok(c) => c.config,
        Err(exit) => return exit,
    };
    let store = match open_store(&config) {
        Ok(s) => s,
        Err(exit) => return exit,
    };
    match &args.action {
        StoreAction::Check { json } => {
            let check = match store.check() {
                Ok(c) => c,
                Err(e) => return store_error(e),
            };
            if *json {
                let value = json!({
                    "store": store.location(),
                    "kind": store.kind().as_str(),
                    "schema_version": store.schema_version(),
                    "ok": check.problems.is_empty(),
                    "sessions": check.sessions,
                    "checkpoints": check.checkpoints,
                    "snapshots": check.snapshots,
                    "audit_records": check.audit_records,
                    "problems": check.problems,
                });
                println!("{value}");
            } else if let Some(first) = check.problems.first() {
                println!("store {}: PROBLEM: {first}", store.location());
                if check.problems.len() > 1 {
                    println!(
                        "({} more problem(s); --json lists them)",
                        check.problems.len() - 1
                    );
                }
            } else {
                println!(
                    "store {} is sound: {} session(s), {} checkpoint(s), {} snapshot(s), \
                     {} audit record(s) verified",
                    store.location(),
                    check.sessions,
                    check.checkpoints,
                    check.snapshots,
                    check.audit_records
                );
            }
            if check.problems.is_empty() {
                Exit::Ok
            } else {
                Exit::Failed
            }
        }
        StoreAction::Backup { file } => match store.backup(file) {
            Ok(bytes) => {
                println!(
                    "backed up {} to {} ({bytes} bytes)",
                    store.location(),
                    file.display()
                );
                Exit::Ok
            }
            Err(crate::store::StoreError::Invalid(m)) => super::context::usage(m),
            Err(e) => failed(e),
        },
    }
}
