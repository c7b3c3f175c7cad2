//! `agent-tui store check` and `agent-tui store backup FILE` (SPEC section 15).

use crate::protocol::words::counted;
use serde_json::json;

use super::Exit;
use super::args::{GlobalArgs, StoreAction, StoreArgs};
use super::context::{build_error, builder};

pub fn run(global: &GlobalArgs, args: &StoreArgs) -> Exit {
    // The store is the state home's, wherever the command runs.
    let builder = builder(global, std::path::Path::new("."));
    match &args.action {
        StoreAction::Check { json } => {
            let check = match builder.check_store() {
                Ok(c) => c,
                Err(e) => return build_error(e),
            };
            if *json {
                let value = json!({
                    "store": check.store,
                    "kind": check.kind,
                    "schema_version": check.schema_version,
                    "ok": check.problems.is_empty(),
                    "sessions": check.sessions,
                    "checkpoints": check.checkpoints,
                    "snapshots": check.snapshots,
                    "audit_records": check.audit_records,
                    "problems": check.problems,
                });
                println!("{value}");
            } else if let Some(first) = check.problems.first() {
                println!("store {}: PROBLEM: {first}", check.store);
                if check.problems.len() > 1 {
                    println!(
                        "({} more; --json lists them)",
                        counted(check.problems.len() - 1, "problem")
                    );
                }
            } else {
                println!(
                    "store {} is sound: {}, {}, {}, {} verified",
                    check.store,
                    counted(check.sessions, "session"),
                    counted(check.checkpoints, "checkpoint"),
                    counted(check.snapshots, "snapshot"),
                    counted(check.audit_records, "audit record")
                );
            }
            if check.problems.is_empty() {
                Exit::Ok
            } else {
                Exit::Failed
            }
        }
        StoreAction::Backup { file } => match builder.backup_store(file) {
            Ok((location, bytes)) => {
                println!("backed up {location} to {} ({bytes} bytes)", file.display());
                Exit::Ok
            }
            Err(e) => build_error(e),
        },
    }
}
