//! One task, once: a fresh temporary copy of its files, an engine on it
//! (the same one `exec` drives), the job, the reviewer's decisions
//! (`reject_paths`), the drift, apply (a conflict runs the job once more),
//! then the checks. Whatever goes wrong is the task's error, never the run's.

use std::path::Path;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::suite::{Check, Task};
use crate::agent::{self, EngineContext, NO_USER_ANSWER, SessionChoice};
use crate::config::Config;
use crate::llm::Provider;
use crate::protocol::{ApplyFailure, EventBody, FallbackReason, JobStatus, Op};
use crate::review::DiffBundle;
use crate::store::{Store, Target};
use crate::tools::Registry;
use crate::workspace::Workspace;

/// The providers of one routing mode: the first, and the fallback.
pub type Providers = (Box<dyn Provider>, Option<Box<dyn Provider>>);

/// One task's line of `report.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TaskResult {
    pub name: String,
    pub success: bool,
    pub checks_failed: Vec<String>,
    pub hunks_proposed: u64,
    pub hunks_accepted: u64,
    pub conflicts: u64,
    pub tool_calls: u64,
    pub clarifications: u64,
    pub latency_ms: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: Option<f64>,
    pub provider: String,
    pub fallback_reason: Option<FallbackReason>,
    pub error: Option<String>,
}

/// Longest a command check may run.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs `task` with `providers`; `timeout` bounds the job (checks aside).
pub async fn run_task(
    task: &Task,
    config: &Config,
    providers: Result<Providers, String>,
    timeout: Duration,
) -> TaskResult {
    let mut result = TaskResult {
        name: task.name.clone(),
        ..TaskResult::default()
    };
    let scratch = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => return failed(result, format!("cannot make a temporary folder: {e}")),
    };
    let root = scratch.path().join("root");
    if let Err(e) = copy_tree(&task.files, &root) {
        return failed(result, format!("cannot copy the task's files: {e}"));
    }
    let (provider, fallback) = match providers {
        Ok(p) => p,
        Err(e) => return failed(result, e),
    };
    // Each task records into a scratch store of its own, gone with it.
    let context = Workspace::open(&root)
        .map_err(|e| e.to_string())
        .and_then(|workspace| {
            let store = Store::open_target(&Target::Sqlite(scratch.path().join("state.db")))
                .map_err(|e| e.to_string())?;
            let registry = Registry::for_root(workspace.root(), config)?;
            Ok(EngineContext {
                state: Some(store.root(workspace.root())),
                workspace,
                config: config.clone(),
                registry,
                provider: Some(provider),
                fallback,
                session: SessionChoice::New,
                recovered: Vec::new(),
            })
        });
    let context = match context {
        Ok(c) => c,
        Err(e) => return failed(result, e),
    };
    let started = Instant::now();
    let answer = match tokio::time::timeout(timeout, drive(task, context, &mut result)).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(e)) => return failed(result, e),
        Err(_) => {
            return failed(
                result,
                format!("the task did not finish within {} s", timeout.as_secs()),
            );
        }
    };
    result.latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    result.cost_usd = cost(config, &result);
    for check in &task.checks {
        if !passes(check, task, &root, &answer, config).await {
            result.checks_failed.push(check.describe());
        }
    }
    result.success = result.checks_failed.is_empty() && result.error.is_none();
    result
}

fn failed(mut result: TaskResult, error: String) -> TaskResult {
    result.error = Some(error);
    result.success = false;
    result
}

/// The job to its end: answers, decisions, drift, apply, one re-run after
/// a conflict. Returns the final answer.
async fn drive(task: &Task, ctx: EngineContext, r: &mut TaskResult) -> Result<String, String> {
    let root = ctx.workspace.root().to_path_buf();
    let mut engine = agent::spawn(ctx).map_err(|e| e.to_string())?;
    let mut answers = task.answers.iter();
    let mut runs = 0;
    let mut drifted = false;
    let mut answer = String::new();
    let start = |runs: &mut u32| {
        *runs += 1;
        Op::StartJob {
            job_id: format!("eval_{}_{runs}", task.name),
            prompt: task.prompt.clone(),
            mode: task.mode,
            max_tool_calls: task.max_tool_calls,
        }
    };
    let send = |engine: &agent::EngineHandle, op| {
        engine
            .ops
            .send(op)
            .map_err(|_| "the engine stopped".to_string())
    };
    send(&engine, start(&mut runs))?;
    let mut bundle: Option<DiffBundle> = None;
    loop {
        let Some(event) = engine.events.recv().await else {
            return Err("the engine stopped unexpectedly".into());
        };
        let job_id = event.job_id.clone();
        match event.body {
            EventBody::ToolCallRequested { .. } => r.tool_calls += 1,
            EventBody::ClarificationRequested { .. } => {
                r.clarifications += 1;
                let text = answers
                    .next()
                    .cloned()
                    .unwrap_or_else(|| NO_USER_ANSWER.to_string());
                send(&engine, Op::Answer { job_id, text })?;
            }
            EventBody::ApprovalRequested { tool_call_id, .. } => send(
                &engine,
                Op::Approve {
                    job_id,
                    tool_call_id,
                    approved: false,
                    reason: Some("no_user: an eval task cannot ask".into()),
                },
            )?,
            EventBody::DiffGenerated { bundle: b } | EventBody::ReviewUpdated { bundle: b, .. } => {
                bundle = Some(b)
            }
            EventBody::JobCompleted {
                answer: text,
                usage,
                status,
                provider,
                fallback_reason,
                ..
            } => {
                answer = text;
                r.input_tokens += usage.input_tokens;
                r.output_tokens += usage.output_tokens;
                r.provider = provider;
                r.fallback_reason = r.fallback_reason.or(fallback_reason);
                let Some(b) = bundle
                    .take()
                    .filter(|_| status == JobStatus::AwaitingReview)
                else {
                    return Ok(answer);
                };
                let (accept, reject) = decide(&b, &task.reject_paths);
                r.hunks_proposed += (accept.len() + reject.len()) as u64;
                r.hunks_accepted += accept.len() as u64;
                if !drifted {
                    drifted = true;
                    for d in &task.drift {
                        append(&root.join(&d.file), &d.append)
                            .map_err(|e| format!("cannot write the drift to {}: {e}", d.file))?;
                    }
                }
                if accept.is_empty() {
                    return Ok(answer);
                }
                send(
                    &engine,
                    Op::Decide {
                        job_id: job_id.clone(),
                        accept,
                        reject,
                        accept_all: false,
                    },
                )?;
                send(&engine, Op::Apply { job_id })?;
            }
            EventBody::ApplyCompleted { .. } => return Ok(answer),
            EventBody::ApplyFailed { code, error, .. } => {
                if code != ApplyFailure::Conflict {
                    return Err(format!("apply failed: {error}"));
                }
                r.conflicts += 1;
                if runs >= 2 {
                    return Ok(answer);
                }
                send(&engine, start(&mut runs))?;
            }
            EventBody::JobFailed { error, .. } => return Err(error),
            EventBody::JobCancelled {} => return Err("the job was cancelled".into()),
            _ => {}
        }
    }
}

/// Hunk ids to accept and to reject: a hunk touching a `reject_paths`
/// prefix is rejected, every other one accepted.
pub fn decide(bundle: &DiffBundle, reject_paths: &[String]) -> (Vec<String>, Vec<String>) {
    let mut accept = Vec::new();
    let mut reject = Vec::new();
    for file in &bundle.files {
        let rejected = reject_paths
            .iter()
            .any(|p| file.file_path.starts_with(p.as_str()));
        for h in file.hunks.iter().filter(|h| !h.state.is_applied()) {
            if rejected {
                reject.push(h.hunk_id.clone());
            } else {
                accept.push(h.hunk_id.clone());
            }
        }
    }
    (accept, reject)
}

fn append(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .append(true)
        .open(path)?
        .write_all(text.as_bytes())
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    if !from.exists() {
        return Ok(());
    }
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

/// Dollars for the task's tokens at the answering provider's prices.
fn cost(config: &Config, r: &TaskResult) -> Option<f64> {
    let p = config.providers.get(&r.provider)?;
    let (input, output) = (p.price_input_per_mtok?, p.price_output_per_mtok?);
    Some((r.input_tokens as f64 * input + r.output_tokens as f64 * output) / 1e6)
}

async fn passes(check: &Check, task: &Task, root: &Path, answer: &str, config: &Config) -> bool {
    let read = |file: &str| std::fs::read_to_string(root.join(file)).ok();
    match check {
        Check::Contains { file, text } => read(file).is_some_and(|t| t.contains(text.as_str())),
        Check::Equals { file, text } => read(file).is_some_and(|t| t == *text),
        Check::Exists { file, exists } => root.join(file).exists() == *exists,
        Check::Unchanged { file } => {
            std::fs::read(root.join(file)).ok() == std::fs::read(task.files.join(file)).ok()
        }
        Check::AnswerMatches(re) => re.is_match(answer),
        Check::Command(argv) => {
            let mut command = tokio::process::Command::new(&argv[0]);
            command
                .args(&argv[1..])
                .current_dir(root)
                .kill_on_drop(true);
            command
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null());
            // No API key reaches a check's process.
            for var in config.secret_env_names() {
                command.env_remove(var);
            }
            for (var, _) in std::env::vars_os() {
                if var.to_string_lossy().ends_with("_API_KEY") {
                    command.env_remove(var);
                }
            }
            match tokio::time::timeout(COMMAND_TIMEOUT, command.status()).await {
                Ok(Ok(status)) => status.success(),
                Ok(Err(_)) | Err(_) => false,
            }
        }
    }
}
