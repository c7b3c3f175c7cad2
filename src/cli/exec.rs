//! `agent-tui exec`: one job, headless. Starts the engine, prints its events
//! (JSON lines with `--json`, else the streamed answer on stdout and progress
//! on stderr), answers clarifications, applies edits with `--apply all`, and
//! turns the outcome into an exit code.

use std::io::Read;

use super::args::{ApplyPolicy, ExecArgs, GlobalArgs};
use super::context::{engine_context, failed, open_root, runtime, store_error, usage};
use super::output::Printer;
use super::{Exit, load_config};
use crate::agent::{self, EngineContext, NO_USER_ANSWER, SessionChoice};
use crate::protocol::{ApplyFailure, EventBody, JobStatus, Op};

pub fn run(global: &GlobalArgs, args: ExecArgs) -> Exit {
    match prepare(global, &args) {
        Ok((ctx, prompt)) => {
            let store = ctx.state.as_ref().map(|s| s.store.clone());
            let exit = match runtime() {
                Ok(rt) => rt.block_on(drive(ctx, prompt, &args)),
                Err(exit) => exit,
            };
            // Everything the job recorded is in the store before we exit.
            match store.map(|s| s.flush()) {
                Some(Err(e)) => usage(e),
                _ => exit,
            }
        }
        Err(exit) => exit,
    }
}

/// Everything that can be wrong before the job starts: exit 2 with a reason.
fn prepare(global: &GlobalArgs, args: &ExecArgs) -> Result<(EngineContext, String), Exit> {
    let config = load_config(global)?.config;
    let workspace = super::context::open_workspace(global, &config, &args.root)?;
    let (state, recovered) = open_root(&config, &workspace)?;
    let choice = match (&args.session, args.continue_session) {
        (Some(id), _) => {
            // Only whether it exists here: the engine replays it.
            if !state.has_session(id).map_err(store_error)? {
                return Err(usage(format!(
                    "cannot resume session {id}: no session {id} in this agent root \
                     (agent-tui sessions list shows them)"
                )));
            }
            SessionChoice::Resume(id.clone())
        }
        (None, true) => match state.latest_session().map_err(store_error)? {
            Some(id) => SessionChoice::Resume(id),
            None => return Err(usage("there is no session to continue in this agent root")),
        },
        (None, false) => SessionChoice::New,
    };
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
    Ok((
        engine_context(global, &args.root, choice, true, (state, recovered))?,
        prompt,
    ))
}

async fn drive(ctx: EngineContext, prompt: String, args: &ExecArgs) -> Exit {
    let mut engine = match agent::spawn(ctx) {
        Ok(e) => e,
        Err(e) => return usage(e),
    };
    let job_id = format!("job_{:016x}", fastrand::u64(..));
    let start = Op::StartJob {
        job_id: job_id.clone(),
        prompt,
        mode: args.mode,
        max_tool_calls: args.max_tool_calls,
    };
    if engine.ops.send(start).is_err() {
        return failed("the engine stopped before the job started");
    }
    let mut printer = Printer::new(args.json);
    let mut interrupt = std::pin::pin!(tokio::signal::ctrl_c());
    let mut cancelling = false;
    loop {
        tokio::select! {
            event = engine.events.recv() => {
                let Some(event) = event else {
                    return failed("the engine stopped unexpectedly");
                };
                printer.print(&event);
                if engine.events.is_empty() {
                    printer.flush();
                }
                let send = |op| { let _ = engine.ops.send(op); };
                match &event.body {
                    EventBody::ClarificationRequested { .. } => {
                        let text = args.answer.clone().unwrap_or_else(|| NO_USER_ANSWER.to_string());
                        send(Op::Answer { job_id: job_id.clone(), text });
                    }
                    // Nobody can be asked here: an `individual` call is denied.
                    EventBody::ApprovalRequested { tool_call_id, .. } => {
                        send(Op::Approve {
                            job_id: job_id.clone(),
                            tool_call_id: tool_call_id.clone(),
                            approved: false,
                            reason: Some("no_user: agent-tui exec cannot ask".into()),
                        });
                    }
                    EventBody::JobCompleted { status: JobStatus::AwaitingReview, .. }
                        if args.apply == ApplyPolicy::All =>
                    {
                        send(Op::Decide { job_id: job_id.clone(), accept: vec![], reject: vec![], accept_all: true });
                        send(Op::Apply { job_id: job_id.clone() });
                    }
                    EventBody::JobCompleted { .. } | EventBody::ApplyCompleted { .. } => return Exit::Ok,
                    EventBody::ApplyFailed { code, .. } => {
                        return if *code == ApplyFailure::Conflict { Exit::Conflict } else { Exit::Failed };
                    }
                    EventBody::JobFailed { .. } => return Exit::Failed,
                    EventBody::JobCancelled {} => return Exit::Interrupted,
                    EventBody::JobStarted { .. }
                    | EventBody::LlmDelta { .. }
                    | EventBody::LlmReasoning { .. }
                    | EventBody::ProviderFallback { .. }
                    | EventBody::ToolCallRequested { .. }
                    | EventBody::ToolCallCompleted { .. }
                    | EventBody::ClarificationReceived { .. }
                    | EventBody::ApprovalResolved { .. }
                    | EventBody::EditsProposed { .. }
                    | EventBody::DiffGenerated { .. }
                    | EventBody::ReviewUpdated { .. }
                    | EventBody::ApplyStarted { .. }
                    | EventBody::CheckpointCreated { .. }
                    | EventBody::McpServers { .. }
                    | EventBody::RecoveryCompleted(_)
                    | EventBody::RollbackStarted { .. }
                    | EventBody::RollbackCompleted { .. }
                    | EventBody::RollbackFailed { .. }
                    | EventBody::UsageUpdated { .. }
                    | EventBody::ContextCompacted { .. } => {}
                }
            }
            _ = &mut interrupt, if !cancelling => {
                cancelling = true;
                let _ = engine.ops.send(Op::Cancel { job_id: job_id.clone() });
            }
        }
    }
}
