//! `agent-tui review`: show the pending diff bundle of a session, record
//! decisions (`--accept/--reject/--accept-all`, hunk ids or file paths) and
//! apply the accepted hunks (`--apply`, exit 3 on conflict).

use super::Exit;
use super::args::{GlobalArgs, ReviewArgs};
use super::context::{builder, engine_error, run, start_reported};
use super::output::{colour, render_bundle};
use crate::agent::Engine;
use crate::protocol::{Command, DiffBundle, EngineError, Reply, SessionRef};

pub fn run_review(global: &GlobalArgs, args: &ReviewArgs) -> Exit {
    let (rt, engine) = match start_reported(builder(global, &args.root)) {
        Ok(started) => started,
        Err(exit) => return exit,
    };
    run(rt, engine, |engine| review(engine, args))
}

async fn review(engine: Engine, args: &ReviewArgs) -> Exit {
    let session = match &args.session {
        Some(id) => SessionRef::Id(id.clone()),
        None => match engine.latest_session().await {
            Ok(Some(id)) => SessionRef::Id(id),
            Ok(None) => return nothing(args.json, "there are no sessions in this agent root yet"),
            Err(e) => return engine_error(e),
        },
    };
    let id = match &session {
        SessionRef::Id(id) => id.clone(),
        SessionRef::New | SessionRef::Latest => String::new(),
    };
    let pending = match engine.pending_review(session).await {
        Ok(p) => p,
        Err(EngineError::NotFound { message }) => {
            return super::context::usage(format!("cannot read session {id}: {message}"));
        }
        Err(e) => return engine_error(e),
    };
    let Some(pending) = pending else {
        return nothing(args.json, &format!("nothing to review in session {id}"));
    };
    let mut bundle = pending.bundle;
    let job_id = pending.job_id;
    let decides = !args.accept.is_empty() || !args.reject.is_empty() || args.accept_all;
    if decides {
        let decide = Command::Decide {
            job_id: job_id.clone(),
            accept: expand(&bundle, &args.accept),
            reject: expand(&bundle, &args.reject),
            accept_all: args.accept_all,
        };
        match engine.command(decide).await {
            Ok(Reply::Review { bundle: b }) => bundle = b,
            Ok(_) => {}
            Err(e) => return engine_error(e),
        }
    }
    if args.apply {
        match engine.command(Command::Apply { job_id }).await {
            Ok(Reply::Applied {
                checkpoint_id,
                files,
                hunk_ids,
                bundle: b,
            }) => {
                eprintln!(
                    "Applied {} hunk(s) to {} file(s); checkpoint {checkpoint_id} (undo: agent-tui rollback {checkpoint_id})",
                    hunk_ids.len(),
                    files.len()
                );
                bundle = b;
            }
            Ok(_) => {}
            Err(e) => return apply_refused(e),
        }
    }
    print(&bundle, args.json);
    Exit::Ok
}

/// An apply that wrote nothing: a conflict is exit 3, the rest 1.
fn apply_refused(e: EngineError) -> Exit {
    eprintln!("agent-tui: apply failed: {e}");
    match e {
        EngineError::Conflict { .. } => Exit::Conflict,
        EngineError::NotFound { .. }
        | EngineError::Invalid { .. }
        | EngineError::Busy { .. }
        | EngineError::Failed { .. }
        | EngineError::Unavailable { .. } => Exit::Failed,
    }
}

/// File paths given to --accept/--reject stand for all of their hunks.
fn expand(bundle: &DiffBundle, items: &[String]) -> Vec<String> {
    items
        .iter()
        .flat_map(
            |item| match bundle.files.iter().find(|f| &f.file_path == item) {
                Some(file) => file.hunks.iter().map(|h| h.hunk_id.clone()).collect(),
                None => vec![item.clone()],
            },
        )
        .collect()
}

fn print(bundle: &DiffBundle, json: bool) {
    if json {
        match serde_json::to_string_pretty(bundle) {
            Ok(text) => println!("{text}"),
            Err(e) => eprintln!("agent-tui: {e}"),
        }
    } else {
        print!("{}", render_bundle(bundle, colour()));
    }
}

fn nothing(json: bool, message: &str) -> Exit {
    if json {
        println!("null");
    }
    eprintln!("{message}");
    Exit::Ok
}
