//! Read-only views of what an agent root's state holds: `checkpoints
//! list|show`, `sessions list|show|delete`, and `audit verify|list`, each
//! a query (or command) of the engine.

use crate::protocol::words::counted;
use serde_json::json;

use super::Exit;
use super::args::{GlobalArgs, ListOrShow, ListShowArgs, SessionAction, SessionsArgs};
use super::context::{builder, engine_error, failed, run, start_reported, usage};
use crate::agent::Engine;
use crate::protocol::{Command, EngineError, Verification};

fn print_json(value: &serde_json::Value) {
    match serde_json::to_string_pretty(value) {
        Ok(text) => println!("{text}"),
        Err(e) => eprintln!("agent-tui: {e}"),
    }
}

/// Runs `work` on an engine for `root` (what starting settled said first).
fn with_engine<F, Fut>(global: &GlobalArgs, root: &std::path::Path, work: F) -> Exit
where
    F: FnOnce(Engine) -> Fut,
    Fut: std::future::Future<Output = Exit>,
{
    match start_reported(builder(global, root)) {
        Ok((rt, engine)) => run(rt, engine, work),
        Err(exit) => exit,
    }
}

pub fn checkpoints(global: &GlobalArgs, args: &ListShowArgs) -> Exit {
    with_engine(global, &args.root, |engine| async move {
        match &args.action {
            None | Some(ListOrShow::List) => list_checkpoints(&engine, args.json).await,
            Some(ListOrShow::Show { id }) => show_checkpoint(&engine, id, args.json).await,
        }
    })
}

async fn list_checkpoints(engine: &Engine, json: bool) -> Exit {
    let list = match engine.checkpoints().await {
        Ok(l) => l,
        Err(e) => return failed(e),
    };
    if json {
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
                "{}  {}  {:<8} job {}  {}  {}",
                cp.checkpoint_id,
                cp.created_at,
                format!("{:?}", cp.kind).to_lowercase(),
                cp.job_id,
                counted(hunks, "hunk"),
                files.join(", ")
            );
        }
    }
    Exit::Ok
}

async fn show_checkpoint(engine: &Engine, id: &str, json: bool) -> Exit {
    let view = match engine.checkpoint(id).await {
        Ok(v) => v,
        // An id that names nothing is a usage error, as everywhere.
        Err(e) => return engine_error(e),
    };
    if json {
        print_json(&json!(view));
        return Exit::Ok;
    }
    let cp = &view.checkpoint;
    println!(
        "{} ({:?}) job {} at {}",
        cp.checkpoint_id, cp.kind, cp.job_id, cp.created_at
    );
    for f in &cp.affected_files {
        let now = view
            .three_way
            .iter()
            .find(|t| t.file_path == f.file_path)
            .map(|t| match (&t.unreadable, &t.current) {
                (Some(why), _) => format!("not readable now: {why}"),
                (None, None) => "now: gone".into(),
                (None, current) if current == &t.proposed => {
                    "now: as the checkpoint left it".into()
                }
                (None, current) if current == &t.base => {
                    "now: as it was before the checkpoint".into()
                }
                (None, Some(_)) => "now: changed since the checkpoint".into(),
            })
            .unwrap_or_default();
        println!(
            "{}  ({now}; --json has the current, base and proposed text)",
            f.file_path
        );
        for h in &f.hunks {
            let by = match &h.origin {
                crate::protocol::review::HunkOrigin::Agent => String::new(),
                crate::protocol::review::HunkOrigin::User => " by you".to_string(),
                crate::protocol::review::HunkOrigin::Hook(name) => format!(" by hook {name}"),
            };
            println!("  {}{by} (undo patch):", h.hunk_id);
            for line in h.reverse_patch.lines() {
                println!("    {}", line.trim_end_matches('\r'));
            }
        }
    }
    Exit::Ok
}

pub fn sessions(global: &GlobalArgs, args: &SessionsArgs) -> Exit {
    with_engine(global, &args.root, |engine| async move {
        match &args.action {
            Some(SessionAction::Delete { id }) => {
                // A review not applied goes with it: said, with its size.
                let pending = engine
                    .pending_review(crate::protocol::SessionRef::Id(id.clone()))
                    .await
                    .ok()
                    .flatten()
                    .map(|p| {
                        p.bundle
                            .hunks()
                            .filter(|h| {
                                h.state.is_to_apply()
                                    || h.state == crate::protocol::HunkState::Pending
                            })
                            .count()
                    });
                let delete = Command::DeleteSession {
                    session_id: id.clone(),
                };
                match engine.command(delete).await {
                    Ok(_) => {
                        match pending {
                            Some(n) if n > 0 => eprintln!(
                                "deleted session {id}, and with it its pending review ({} not applied)",
                                crate::protocol::words::counted(n, "hunk")
                            ),
                            _ => eprintln!("deleted session {id}"),
                        }
                        Exit::Ok
                    }
                    Err(e) => engine_error(e),
                }
            }
            None | Some(SessionAction::List) => list_sessions(&engine, args.json).await,
            Some(SessionAction::Show { id }) => show_session(&engine, id, args.json).await,
        }
    })
}

async fn list_sessions(engine: &Engine, json: bool) -> Exit {
    let list = match engine.sessions().await {
        Ok(l) => l,
        Err(e) => return engine_error(e),
    };
    if json {
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
                "{}  {}  {}  {}{pending}",
                s.session_id,
                s.updated_at,
                counted(s.jobs, "job"),
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

async fn show_session(engine: &Engine, id: &str, json: bool) -> Exit {
    let s = match engine.transcript(id).await {
        Ok(s) => s,
        Err(e @ EngineError::Unavailable { .. }) => return usage(e),
        Err(e) => return engine_error(e),
    };
    if json {
        print_json(&json!(s));
        return Exit::Ok;
    }
    println!(
        "session {} ({}), created {}",
        s.session_id, s.root, s.created_at
    );
    for j in &s.jobs {
        let status = j.status.map(|st| format!("{st:?}")).unwrap_or_default();
        let on = match (j.provider.as_str(), j.model.as_str()) {
            ("", "") => String::new(),
            (provider, "") => format!(" on {provider}"),
            (provider, model) => format!(" on {provider} ({model})"),
        };
        println!("\n{} [{status}]{on} > {}", j.job_id, j.prompt);
        if let Some(answer) = &j.answer {
            println!("{answer}");
        }
    }
    Exit::Ok
}

/// `audit list`: the records (of one server user's requests, of one
/// session), oldest first; a record done on this machine shows `-` as its
/// user.
pub fn audit_list(
    global: &GlobalArgs,
    root: &std::path::Path,
    user: Option<String>,
    session: Option<String>,
    limit: usize,
    json: bool,
) -> Exit {
    with_engine(global, root, |engine| async move {
        let records = match engine.audit(session, user, Some(limit)).await {
            Ok(r) => r,
            Err(e) => return engine_error(e),
        };
        if json {
            print_json(&json!({ "records": records }));
            return Exit::Ok;
        }
        for r in records {
            let approved = match r.approved {
                Some(true) => "approved",
                Some(false) => "refused",
                None => "-",
            };
            println!(
                "{:>5}  {}  {:<10} {:<16} {}  {}  {}",
                r.seq,
                r.time,
                r.user.as_deref().unwrap_or("-"),
                r.action,
                r.target,
                approved,
                r.outcome
            );
        }
        Exit::Ok
    })
}

pub fn audit_verify(global: &GlobalArgs, root: &std::path::Path) -> Exit {
    with_engine(global, root, |engine| async move {
        match engine.verify_audit().await {
            Ok(Verification::Intact { records }) => {
                println!(
                    "audit log intact: {} for {} in {}",
                    counted(records, "record"),
                    engine.root().display(),
                    engine.store_location().unwrap_or_default()
                );
                Exit::Ok
            }
            Ok(Verification::Broken { line, seq, reason }) => {
                let seq = seq.map(|s| format!(" (seq {s})")).unwrap_or_default();
                println!("audit log BROKEN at record {line}{seq}: {reason}");
                Exit::Failed
            }
            Err(e) => engine_error(e),
        }
    })
}
