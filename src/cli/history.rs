//! Read-only views of what an agent root's state holds: `checkpoints
//! list|show`, `sessions list|show`, and `audit verify`.

use serde_json::json;

use super::Exit;
use super::args::{GlobalArgs, ListOrShow, ListShowArgs, SessionAction, SessionsArgs};
use super::context::{failed, open_root_reported, open_workspace, store_error, usage};
use crate::checkpoint::{CheckpointStore, three_way};
use crate::store::RootStore;
use crate::store::audit::Verification;
use crate::workspace::Workspace;

fn open(global: &GlobalArgs, root: &std::path::Path) -> Result<(Workspace, RootStore), Exit> {
    let config = super::load_config(global)?.config;
    let ws = open_workspace(global, &config, root)?;
    let state = open_root_reported(&config, &ws)?;
    Ok((ws, state))
}

fn print_json(value: &serde_json::Value) {
    match serde_json::to_string_pretty(value) {
        Ok(text) => println!("{text}"),
        Err(e) => eprintln!("agent-tui: {e}"),
    }
}

pub fn checkpoints(global: &GlobalArgs, args: &ListShowArgs) -> Exit {
    let (ws, state) = match open(global, &args.root) {
        Ok(x) => x,
        Err(exit) => return exit,
    };
    let store = CheckpointStore::new(&state);
    match &args.action {
        None | Some(ListOrShow::List) => {
            let list = match store.list() {
                Ok(l) => l,
                Err(e) => return failed(e),
            };
            if args.json {
                print_json(&json!(list));
            } else if list.is_empty() {
                eprintln!("no checkpoints yet");
            } else {
                for cp in list {
                    let files: Vec<&str> = cp
                        .affected_files
                        .iter()
                        .map(|f| f.file_path.as_str())
                        .collect();
                    let hunks: usize = cp.affected_files.iter().map(|f| f.hunks.len()).sum();
                    println!(
                        "{}  {}  {:<8} job {}  {} hunk(s)  {}",
                        cp.checkpoint_id,
                        cp.created_at,
                        format!("{:?}", cp.kind).to_lowercase(),
                        cp.job_id,
                        hunks,
                        files.join(", ")
                    );
                }
            }
            Exit::Ok
        }
        Some(ListOrShow::Show { id }) => {
            let cp = match store.get(id) {
                Ok(Some(cp)) => cp,
                Ok(None) => {
                    return failed(format!(
                        "no checkpoint {id}; see `agent-tui checkpoints list`"
                    ));
                }
                Err(e) => return usage(e),
            };
            let views = match three_way(&ws, &store, &cp) {
                Ok(v) => v,
                Err(e) => return failed(e),
            };
            if args.json {
                print_json(&json!({ "checkpoint": cp, "three_way": views }));
            } else {
                println!(
                    "{} ({:?}) job {} at {}",
                    cp.checkpoint_id, cp.kind, cp.job_id, cp.created_at
                );
                for f in &cp.affected_files {
                    println!("{}", f.file_path);
                    for h in &f.hunks {
                        println!("  {} (undo patch):", h.hunk_id);
                        for line in h.reverse_patch.lines() {
                            println!("    {}", line.trim_end_matches('\r'));
                        }
                    }
                }
            }
            Exit::Ok
        }
    }
}

pub fn sessions(global: &GlobalArgs, args: &SessionsArgs) -> Exit {
    let (_, state) = match open(global, &args.root) {
        Ok(x) => x,
        Err(exit) => return exit,
    };
    match &args.action {
        Some(SessionAction::Delete { id }) => match state.delete_session(id) {
            Ok(()) => {
                eprintln!("deleted session {id}");
                Exit::Ok
            }
            Err(e) => store_error(e),
        },
        None | Some(SessionAction::List) => {
            let list = match state.sessions() {
                Ok(l) => l,
                Err(e) => return store_error(e),
            };
            if args.json {
                print_json(&json!(list));
            } else if list.is_empty() {
                eprintln!("no sessions yet");
            } else {
                for s in list {
                    let pending = if s.pending_review {
                        "  [review pending]"
                    } else {
                        ""
                    };
                    println!(
                        "{}  {}  {} job(s)  {}{pending}",
                        s.session_id,
                        s.updated_at,
                        s.jobs,
                        s.last_prompt
                            .unwrap_or_default()
                            .lines()
                            .next()
                            .unwrap_or_default()
                    );
                }
            }
            Exit::Ok
        }
        Some(SessionAction::Show { id }) => {
            let s = match crate::agent::read_session(&state, id) {
                Ok(s) => s,
                Err(e) if e.is_fatal() => return store_error(e),
                Err(e) => return failed(e),
            };
            let jobs: Vec<serde_json::Value> = s
                .jobs
                .iter()
                .map(|j| {
                    json!({
                        "job_id": j.job_id,
                        "prompt": j.prompt,
                        "status": j.status,
                        "answer": j.answer,
                        "edits": j.edits.len(),
                        "bundle": j.bundle,
                        "events": j.events,
                    })
                })
                .collect();
            if args.json {
                print_json(&json!({"session_id": s.session_id, "root": s.root,
                    "created_at": s.created_at, "jobs": jobs}));
            } else {
                println!(
                    "session {} ({}), created {}",
                    s.session_id, s.root, s.created_at
                );
                for j in &s.jobs {
                    let status = j.status.map(|st| format!("{st:?}")).unwrap_or_default();
                    println!("\n{} [{status}] > {}", j.job_id, j.prompt);
                    if let Some(answer) = &j.answer {
                        println!("{answer}");
                    }
                }
            }
            Exit::Ok
        }
    }
}

pub fn audit_verify(global: &GlobalArgs, root: &std::path::Path) -> Exit {
    let (_, state) = match open(global, root) {
        Ok(x) => x,
        Err(exit) => return exit,
    };
    match state.verify_audit() {
        Ok(Verification::Intact { records }) => {
            println!(
                "audit log intact: {records} record(s) for {} in {}",
                state.path(),
                state.store.location()
            );
            Exit::Ok
        }
        Ok(Verification::Broken { line, seq, reason }) => {
            let seq = seq.map(|s| format!(" (seq {s})")).unwrap_or_default();
            println!("audit log BROKEN at record {line}{seq}: {reason}");
            Exit::Failed
        }
        Err(e) => store_error(e),
    }
}
