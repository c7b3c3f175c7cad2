//! `agent-tui review`: show the pending diff bundle of a session, record
//! decisions (`--accept/--reject/--accept-all`, hunk ids or file paths) and
//! apply the accepted hunks (`--apply`, exit 3 on conflict); verify them
//! first in a scratch copy (`--verify`, exit 1 if the check fails) and
//! send a failure back to the model (`--feedback`).

use super::Exit;
use super::args::{GlobalArgs, ReviewArgs};
use super::context::{builder, engine_error, failed, run, start_reported};
use super::output::{Printer, colour, render_bundle, verify_text};
use crate::agent::{Engine, Filter, Providers};
use crate::protocol::words::counted;
use crate::protocol::{
    Command, DiffBundle, EngineError, PendingReview, Reply, SessionRef, VerifyResult,
};

pub fn run_review(global: &GlobalArgs, args: &ReviewArgs) -> Exit {
    // Feedback goes to the model: it needs a provider.
    let mut built = builder(global, &args.root);
    if args.feedback {
        built = built.providers(Providers::Required);
    }
    let (rt, engine) = match start_reported(built) {
        Ok(started) => started,
        Err(exit) => return exit,
    };
    run(rt, engine, |engine| review(engine, args))
}

async fn review(engine: Engine, args: &ReviewArgs) -> Exit {
    let pending = match pending(&engine, args).await {
        Ok(p) => p,
        Err(exit) => return exit,
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
    let tree_changed = pending.tree_changed;
    if let Some(last) = pending.verify.as_ref().filter(|_| !args.verify) {
        say_last(last, &bundle, tree_changed);
    }
    let verified = if args.verify {
        match verify(&engine, args, &job_id, &bundle).await {
            Ok(result) => Some(result),
            Err(exit) => return exit,
        }
    } else {
        None
    };
    if args.apply
        && !args.force
        && let Some(last) = pending
            .verify
            .as_ref()
            .filter(|v| verified.is_none() && v.blocks_apply(&bundle))
    {
        // The TUI asks once more; a command line cannot, so it is told.
        eprintln!(
            "agent-tui: nothing applied: the last verify {} (`{}`); \
             `agent-tui review --apply --force` applies them anyway, `--verify` checks again",
            last.outcome.verdict(),
            last.command
        );
        return Exit::Failed;
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
                    "Applied {} to {}; checkpoint {checkpoint_id} (undo: agent-tui rollback {checkpoint_id})",
                    counted(hunk_ids.len(), "hunk"),
                    counted(files.len(), "file")
                );
                bundle = b;
            }
            Ok(_) => {}
            Err(e) => return apply_refused(e),
        }
    }
    // Scripts see the last verify too (the one just run, if any), and
    // whether it is stale.
    match (verified.as_deref(), pending.verify.as_ref()) {
        (Some(ran), _) => print_review(&bundle, Some((ran, ran.stale_for(&bundle))), args.json),
        (None, Some(last)) => {
            let stale = last.stale_for(&bundle) || tree_changed;
            print_review(&bundle, Some((last, stale)), args.json);
        }
        (None, None) => print_review(&bundle, None, args.json),
    }
    Exit::Ok
}

/// The last verify, and whether it is stale (and why).
fn say_last(last: &VerifyResult, bundle: &DiffBundle, tree_changed: bool) {
    let stale = if last.stale_for(bundle) {
        " (stale: the decisions changed since; --verify runs it again)"
    } else if tree_changed {
        " (stale: the project's files changed since; --verify runs it again)"
    } else {
        ""
    };
    eprintln!("last {}{stale}", last.summary());
}

/// The session's pending review (`--session`, else the latest session's);
/// nothing to review is exit 0 with a line saying so.
async fn pending(engine: &Engine, args: &ReviewArgs) -> Result<PendingReview, Exit> {
    let session = match &args.session {
        Some(id) => SessionRef::Id(id.clone()),
        None => match engine.latest_session().await {
            Ok(Some(id)) => SessionRef::Id(id),
            Ok(None) => {
                return Err(nothing(
                    args.json,
                    "there are no sessions in this agent root yet",
                ));
            }
            Err(e) => return Err(engine_error(e)),
        },
    };
    let id = match &session {
        SessionRef::Id(id) => id.clone(),
        SessionRef::New | SessionRef::Latest => String::new(),
    };
    match engine.pending_review(session).await {
        Ok(Some(p)) => Ok(p),
        Ok(None) => Err(nothing(
            args.json,
            &format!("nothing to review in session {id}"),
        )),
        Err(EngineError::NotFound { message }) => Err(super::context::usage(format!(
            "cannot read session {id}: {message}"
        ))),
        Err(e) => Err(engine_error(e)),
    }
}

/// `--verify`: the result when it passed; a failure is printed (with the
/// model's new proposal under `--feedback`) and is exit 1, nothing applied.
async fn verify(
    engine: &Engine,
    args: &ReviewArgs,
    job_id: &str,
    bundle: &DiffBundle,
) -> Result<Box<VerifyResult>, Exit> {
    let asked = Command::Verify {
        job_id: job_id.to_string(),
    };
    // Ctrl+C stops the check (its whole process group) and removes its
    // copy before exiting, instead of leaving it running.
    let answer = {
        let verifying = engine.command(asked);
        tokio::pin!(verifying);
        tokio::select! {
            answer = &mut verifying => answer,
            _ = tokio::signal::ctrl_c() => {
                let stop = Command::CancelVerify { job_id: job_id.to_string() };
                let _ = engine.command(stop).await;
                let _ = verifying.await;
                eprintln!("agent-tui: interrupted: the verify was stopped");
                return Err(Exit::Interrupted);
            }
        }
    };
    let result = match answer {
        Ok(Reply::Verified { result }) => result,
        Ok(_) => return Err(failed("the engine answered the verify with something else")),
        Err(e) => return Err(engine_error(e)),
    };
    eprintln!("{}", verify_text(&result).trim_end());
    if result.passed {
        return Ok(result);
    }
    if args.apply {
        eprintln!("agent-tui: the verify did not pass, so nothing was applied");
    }
    let shown = if args.feedback {
        feedback(engine, job_id, args.json).await?
    } else {
        None
    };
    let shown = shown.as_ref().unwrap_or(bundle);
    print_review(shown, Some((&result, result.stale_for(shown))), args.json);
    Err(Exit::Failed)
}

/// Sends the failed verify back to the model and follows the new job to
/// its end (its progress on stderr); the review it proposed, if any.
async fn feedback(engine: &Engine, job_id: &str, json: bool) -> Result<Option<DiffBundle>, Exit> {
    let new_job = crate::agent::new_job_id();
    let mut events = engine.subscribe(Filter::Job {
        job_id: new_job.clone(),
        after: 0,
    });
    let ask = Command::VerifyFeedback {
        job_id: job_id.to_string(),
        new_job_id: new_job.clone(),
    };
    let session = match engine.command(ask).await {
        Ok(Reply::Started { session_id, .. }) => session_id,
        Ok(_) => None,
        Err(e) => return Err(engine_error(e)),
    };
    eprintln!("· sent the failure to the model as feedback (job {new_job})");
    // Progress as `exec` prints it, on stderr (stdout keeps the review).
    let mut printer = Printer::to_stderr(json);
    while let Some(event) = events.next().await {
        printer.print(&event);
        if event.body.is_terminal() {
            break;
        }
    }
    printer.flush();
    let Some(session) = session else {
        return Ok(None);
    };
    match engine.pending_review(SessionRef::Id(session)).await {
        Ok(Some(p)) if p.job_id == new_job => Ok(Some(p.bundle)),
        Ok(_) => {
            eprintln!("agent-tui: the model proposed no new edits");
            Ok(None)
        }
        Err(e) => Err(engine_error(e)),
    }
}

/// The review; with `--json`, the bundle with the session's last verify
/// (`last_verify`, `stale` said) beside its files, the same shape whether
/// this command ran the verify or an earlier one did.
fn print_review(bundle: &DiffBundle, last: Option<(&VerifyResult, bool)>, json: bool) {
    let Some((last, stale)) = last.filter(|_| json) else {
        return print(bundle, json);
    };
    let mut value = serde_json::to_value(bundle).unwrap_or_default();
    let mut verify = serde_json::to_value(last).unwrap_or_default();
    verify["stale"] = serde_json::Value::Bool(stale);
    value["last_verify"] = verify;
    match serde_json::to_string_pretty(&value) {
        Ok(text) => println!("{text}"),
        Err(e) => eprintln!("agent-tui: {e}"),
    }
}

/// An apply that wrote nothing: a conflict is exit 3, the rest 1.
fn apply_refused(e: EngineError) -> Exit {
    eprintln!("agent-tui: apply failed: {e}");
    match e {
        EngineError::Conflict { .. } => Exit::Conflict,
        EngineError::NotFound { .. }
        | EngineError::Invalid { .. }
        | EngineError::Forbidden { .. }
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
