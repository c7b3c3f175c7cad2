//! `agent-tui exec`: one job, headless. Builds the engine, follows its
//! events (JSON lines with `--json`, else the streamed answer on stdout and
//! progress on stderr), answers clarifications, applies edits with
//! `--apply all`, and turns the outcome into an exit code.

use std::io::Read;
use tokio::sync::mpsc;

use super::Exit;
use super::args::{ApplyPolicy, ExecArgs, GlobalArgs};
use super::context::{builder, engine_error, failed, run, start, usage};
use super::output::Printer;
use crate::agent::{Engine, Filter, NO_USER_ANSWER, Providers};
use crate::protocol::{Command, EngineError, EventBody, JobStatus, SessionRef};

pub fn run_exec(global: &GlobalArgs, args: ExecArgs) -> Exit {
    if args.verify && args.apply != ApplyPolicy::All {
        return usage(
            "--verify checks the hunks before `--apply all` applies them; add --apply all",
        );
    }
    let prompt = match prompt(&args) {
        Ok(p) => p,
        Err(exit) => return exit,
    };
    // Read before any engine is built: a wrong path costs nothing.
    let images = match args
        .images
        .iter()
        .map(|path| crate::agent::image_from_file(path).map(|(input, _)| input))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(images) => images,
        Err(e) => return usage(format!("--image: {e}")),
    };
    let exec = builder(global, &args.root)
        .providers(Providers::Required)
        .front_name("exec");
    let (rt, engine) = match start(exec) {
        Ok(started) => started,
        Err(exit) => return exit,
    };
    run(rt, engine, |engine| drive(engine, prompt, images, args))
}

/// The prompt: the argument, or stdin for `-`; empty is exit 2.
fn prompt(args: &ExecArgs) -> Result<String, Exit> {
    let prompt = if args.prompt == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| usage(format!("cannot read the prompt from stdin: {e}")))?;
        text
    } else {
        args.prompt.clone()
    };
    if prompt.trim().is_empty() {
        return Err(usage("the prompt is empty"));
    }
    Ok(prompt)
}

/// The session the job goes to: `--session ID`, `--continue`, or a new one.
fn session(args: &ExecArgs) -> SessionRef {
    match (&args.session, args.continue_session) {
        (Some(id), _) => SessionRef::Id(id.clone()),
        (None, true) => SessionRef::Latest,
        (None, false) => SessionRef::New,
    }
}

async fn drive(
    engine: Engine,
    prompt: String,
    images: Vec<crate::protocol::ImageInput>,
    args: ExecArgs,
) -> Exit {
    // --verify without a check is a mistake to say before any token is spent.
    if args.verify
        && engine.config().verify.command_for(engine.root()) == crate::config::VerifyCommand::Off
    {
        let why = match engine.config().verify.command {
            Some(_) => "the config turns it off (`[verify] command = \"\"`)",
            None => {
                "set `[verify] command` in the config (nothing was detected from Cargo.toml, \
                 package.json, pytest config or go.mod)"
            }
        };
        return usage(format!("--verify needs a check, and there is none: {why}"));
    }
    let mut events = engine.subscribe(Filter::All);
    let job_id = format!("job_{:016x}", fastrand::u64(..));
    let start = Command::StartJob {
        session: session(&args),
        job_id: job_id.clone(),
        prompt,
        mode: args.mode,
        max_tool_calls: args.max_tool_calls,
        // `--model` / `--provider` set the engine's own provider.
        choice: None,
        images,
        workspace: None,
    };
    if let Err(e) = engine.command(start).await {
        return start_refused(e, &args);
    }
    let mut printer = Printer::new(args.json);
    let mut interrupt = std::pin::pin!(tokio::signal::ctrl_c());
    let mut cancelling = false;
    let (refused, mut verify_refused) = mpsc::unbounded_channel();
    loop {
        tokio::select! {
            Some(e) = verify_refused.recv() => {
                printer.flush();
                eprintln!("agent-tui: cannot verify, so nothing was applied: {e}");
                return Exit::Failed;
            }
            event = events.next() => {
                let Some(event) = event else {
                    return failed("the engine stopped unexpectedly");
                };
                printer.print(&event);
                if !events.pending() {
                    printer.flush();
                }
                if cancelling && after_the_job(&event.body) {
                    // Interrupted once the job had ended: its verify is
                    // stopped and nothing more is written.
                    printer.flush();
                    eprintln!("agent-tui: interrupted: nothing was applied");
                    return Exit::Interrupted;
                }
                if let Some(exit) = react(&engine, &job_id, &event.body, &args, &refused).await {
                    printer.flush();
                    return exit;
                }
            }
            _ = &mut interrupt, if !cancelling => {
                cancelling = true;
                let _ = engine.command(Command::Cancel { job_id: job_id.clone() }).await;
                // A verify running for --apply all --verify ends too.
                let _ = engine.command(Command::CancelVerify { job_id: job_id.clone() }).await;
            }
        }
    }
}

/// Whether `body` is where exec, once interrupted, stops instead of going
/// on to decide, verify or apply.
fn after_the_job(body: &EventBody) -> bool {
    matches!(
        body,
        EventBody::JobCompleted {
            status: JobStatus::AwaitingReview,
            ..
        } | EventBody::VerifyCompleted(_)
    )
}

/// Why the job could not start, as an exit: a session that is not there
/// is a usage error (as before any job ran).
fn start_refused(e: EngineError, args: &ExecArgs) -> Exit {
    match (&e, &args.session) {
        (EngineError::NotFound { .. }, Some(id)) => usage(format!(
            "cannot resume session {id}: no session {id} in this agent root \
             (agent-tui sessions list shows them)"
        )),
        (EngineError::NotFound { .. }, None) => {
            usage("there is no session to continue in this agent root")
        }
        _ => engine_error(e),
    }
}

/// `--apply all`: every hunk accepted, then the apply, or (`--verify`)
/// the verify first, whose `verify.completed` decides.
async fn accept_all(
    engine: &Engine,
    job: String,
    verify: bool,
    refused: &mpsc::UnboundedSender<EngineError>,
) -> Option<Exit> {
    let decide = Command::Decide {
        job_id: job.clone(),
        accept: vec![],
        reject: vec![],
        accept_all: true,
    };
    let _ = engine.command(decide).await;
    if verify {
        // Its answer comes when the check ends: awaited off the loop, so
        // Ctrl+C still reaches it meanwhile; `verify.completed` decides.
        let (engine, failed) = (engine.clone(), refused.clone());
        tokio::spawn(async move {
            if let Err(e) = engine.command(Command::Verify { job_id: job }).await {
                let _ = failed.send(e);
            }
        });
        return None;
    }
    // Its outcome comes as events (apply.completed / apply.failed).
    let _ = engine.command(Command::Apply { job_id: job }).await;
    None
}

/// What one event asks of exec: an answer, a denial (nobody can be asked
/// here), the apply; or the end, as an exit.
/// `--verify`'s result: applied when it passed, else the run fails.
async fn verified(engine: &Engine, job_id: String, passed: bool) -> Option<Exit> {
    if passed {
        let _ = engine.command(Command::Apply { job_id }).await;
        return None;
    }
    eprintln!(
        "agent-tui: the verify did not pass, so nothing was applied; the review \
         waits: agent-tui review (--verify --feedback asks the model to fix it)"
    );
    Some(Exit::Failed)
}

async fn react(
    engine: &Engine,
    job_id: &str,
    body: &EventBody,
    args: &ExecArgs,
    refused: &mpsc::UnboundedSender<EngineError>,
) -> Option<Exit> {
    let job = job_id.to_string();
    match body {
        EventBody::ClarificationRequested { .. } => {
            let text = args
                .answer
                .clone()
                .unwrap_or_else(|| NO_USER_ANSWER.to_string());
            let _ = engine.command(Command::Answer { job_id: job, text }).await;
            None
        }
        // Nobody can be asked here: an `individual` call is denied.
        EventBody::ApprovalRequested { tool_call_id, .. } => {
            let deny = Command::Approve {
                job_id: job,
                tool_call_id: tool_call_id.clone(),
                approved: false,
                reason: Some("no_user: agent-tui exec cannot ask".into()),
            };
            let _ = engine.command(deny).await;
            None
        }
        EventBody::JobCompleted {
            status: JobStatus::AwaitingReview,
            ..
        } if args.apply == ApplyPolicy::All => accept_all(engine, job, args.verify, refused).await,
        EventBody::VerifyCompleted(result) if args.verify => {
            verified(engine, job, result.passed).await
        }
        EventBody::JobCompleted { .. } | EventBody::ApplyCompleted { .. } => Some(Exit::Ok),
        EventBody::ApplyFailed { code, .. } => {
            Some(if *code == crate::protocol::ApplyFailure::Conflict {
                Exit::Conflict
            } else {
                Exit::Failed
            })
        }
        EventBody::JobFailed { .. } => Some(Exit::Failed),
        EventBody::JobCancelled {} => Some(Exit::Interrupted),
        EventBody::JobStarted { .. }
        | EventBody::JobQueued { .. }
        | EventBody::UserSteer { .. }
        | EventBody::HookStarted { .. }
        | EventBody::HookCompleted(_)
        | EventBody::LlmDelta { .. }
        | EventBody::LlmReasoning { .. }
        | EventBody::ProviderFallback { .. }
        | EventBody::ToolsInPrompt { .. }
        | EventBody::RepeatStopped { .. }
        | EventBody::ToolCallRequested { .. }
        | EventBody::ToolCallCompleted { .. }
        | EventBody::ClarificationReceived { .. }
        | EventBody::ApprovalResolved { .. }
        | EventBody::EditsProposed { .. }
        | EventBody::DiffGenerated { .. }
        | EventBody::ReviewUpdated { .. }
        | EventBody::ApplyStarted { .. }
        | EventBody::VerifyStarted { .. }
        | EventBody::VerifyCompleted(_)
        | EventBody::CheckpointCreated { .. }
        | EventBody::McpServers { .. }
        | EventBody::RecoveryCompleted(_)
        | EventBody::RollbackStarted { .. }
        | EventBody::RollbackCompleted { .. }
        | EventBody::RollbackFailed { .. }
        | EventBody::UsageUpdated { .. }
        | EventBody::ContextCompacted { .. } => None,
    }
}
