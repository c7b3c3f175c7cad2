//! The engine: owns the jobs, takes `Op`s from a front end and sends back
//! `Event`s. Each job runs the agent loop (`job.rs`) on its own task.

mod emit;
mod job;
mod prompt;

pub use job::NO_USER_ANSWER;
pub use prompt::{MAX_AGENTS_MD_BYTES, system_prompt};

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::llm::Provider;
use crate::protocol::{Event, Op};
use crate::tools::Registry;
use crate::workspace::Workspace;

/// What every job of an engine shares.
pub struct EngineContext {
    pub workspace: Workspace,
    pub config: Config,
    pub registry: Registry,
    pub provider: Box<dyn Provider>,
}

/// The front end's ends of the two channels.
pub struct EngineHandle {
    pub ops: mpsc::UnboundedSender<Op>,
    pub events: mpsc::UnboundedReceiver<Event>,
}

struct JobHandle {
    cancel: CancellationToken,
    answers: mpsc::UnboundedSender<String>,
}

/// Starts the engine on the current tokio runtime.
pub fn spawn(ctx: EngineContext) -> EngineHandle {
    let (op_tx, op_rx) = mpsc::unbounded_channel();
    let (event_tx, event_rx) = mpsc::unbounded_channel();
    tokio::spawn(run(Arc::new(ctx), op_rx, event_tx));
    EngineHandle {
        ops: op_tx,
        events: event_rx,
    }
}

async fn run(
    ctx: Arc<EngineContext>,
    mut ops: mpsc::UnboundedReceiver<Op>,
    events: mpsc::UnboundedSender<Event>,
) {
    let mut jobs: HashMap<String, JobHandle> = HashMap::new();
    while let Some(op) = ops.recv().await {
        match op {
            Op::StartJob {
                job_id,
                prompt,
                mode,
                max_tool_calls,
            } => {
                if jobs.contains_key(&job_id) {
                    continue;
                }
                let cancel = CancellationToken::new();
                let (answer_tx, answer_rx) = mpsc::unbounded_channel();
                let spec = job::JobSpec {
                    prompt,
                    mode,
                    max_tool_calls: max_tool_calls
                        .unwrap_or(ctx.config.agent.max_tool_calls_per_job),
                };
                let emitter = emit::Emitter::new(job_id.clone(), events.clone());
                tokio::spawn(job::run(
                    ctx.clone(),
                    spec,
                    emitter,
                    cancel.clone(),
                    answer_rx,
                ));
                jobs.insert(
                    job_id,
                    JobHandle {
                        cancel,
                        answers: answer_tx,
                    },
                );
            }
            Op::Answer { job_id, text } => {
                if let Some(job) = jobs.get(&job_id) {
                    let _ = job.answers.send(text);
                }
            }
            Op::Cancel { job_id } => {
                if let Some(job) = jobs.get(&job_id) {
                    job.cancel.cancel();
                }
            }
        }
    }
    // The front end is gone: stop everything it started.
    for job in jobs.values() {
        job.cancel.cancel();
    }
}
