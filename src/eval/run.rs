//! One task, once: a fresh temporary copy of its files, an engine on it
//! (the same one `exec` drives), the job, the reviewer's decisions
//! (`reject_paths`), the drift, apply (a conflict runs the job once more),
//! then the checks. Whatever goes wrong is the task's error, never the run's.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::checks::{Subject, passes};
use super::suite::Task;
use super::tally::Tally;
use crate::agent::{
    Engine, EngineBuilder, Filter, NO_USER_ANSWER, Providers, Recording, Subscription,
};
use crate::config::Config;
use crate::protocol::{
    ApplyFailure, Command, DiffBundle, Event, EventBody, FallbackReason, JobStatus, Reply,
    SessionRef, VerifyOutcome,
};

/// Who answers a task: the `--provider` and `--model` flags (the config's
/// `[routing]` says the rest).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Choice {
    pub provider: Option<String>,
    pub model: Option<String>,
}

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
    /// The model's `read_file` calls before its first proposed edit (all
    /// of them in a task that proposes none).
    pub reads_before_edit: u64,
    pub clarifications: u64,
    pub latency_ms: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: Option<f64>,
    pub provider: String,
    pub fallback_reason: Option<FallbackReason>,
    pub error: Option<String>,
    /// Verify-and-repair (`eval --verify`): verifies run, proposals the
    /// model remade after a failed one, and whether the last one passed
    /// (`None`: none ran, or the task's project has no check).
    pub verifies: u64,
    pub repairs: u64,
    pub verify_passed: Option<bool>,
}

impl TaskResult {
    /// Who answered a finished job, and why it left its first provider.
    fn answered(&mut self, provider: String, fallback: Option<FallbackReason>) {
        self.provider = provider;
        self.fallback_reason = self.fallback_reason.or(fallback);
    }
}

/// Proposals a task's model may remake after failed verifies.
const MAX_REPAIRS: u64 = 2;

/// How the reviewer of a task works.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reviewer {
    /// Decides, then applies.
    Plain,
    /// Decides, verifies; a failure goes back to the model (at most
    /// `MAX_REPAIRS` times), then applies.
    VerifyAndRepair,
}

/// Runs `task` with the providers of `config`'s routing; `timeout` bounds
/// the job and each command check.
pub async fn run_task(
    task: &Task,
    config: &Config,
    choice: &Choice,
    timeout: Duration,
    reviewer: Reviewer,
) -> TaskResult {
    let result = TaskResult {
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
    // The task's own check, if it names one, is what a verify runs.
    let mut config = config.clone();
    if let Some(command) = &task.verify {
        config.verify.command = Some(command.clone());
    }
    let config = &config;
    // Each task records into a scratch store of its own, gone with it.
    let builder = EngineBuilder::new(&root)
        .config(config.clone())
        .choose(choice.provider.clone(), choice.model.clone(), None)
        .providers(Providers::Required)
        .recording(Recording::Sqlite(scratch.path().join("state.db")));
    let engine = match tokio::task::spawn_blocking(move || builder.build()).await {
        Ok(Ok(engine)) => engine,
        Ok(Err(e)) => return failed(result, e.to_string()),
        Err(e) => return failed(result, format!("the engine did not start: {e}")),
    };
    let run = Run {
        task,
        engine: &engine,
        root: &root,
        config,
        timeout,
    };
    let result = run.measured(result, reviewer).await;
    let _ = engine.shutdown().await;
    result
}

/// A task's engine, root and limits, once the engine is up.
struct Run<'a> {
    task: &'a Task,
    engine: &'a Engine,
    root: &'a Path,
    config: &'a Config,
    timeout: Duration,
}

impl Run<'_> {
    /// The job within the timeout, measured whatever its end (the time it
    /// took, its tokens per provider, who it ran on), then the checks.
    async fn measured(&self, mut result: TaskResult, reviewer: Reviewer) -> TaskResult {
        let mut tally = Tally::default();
        let started = Instant::now();
        let job = drive(
            self.task,
            self.engine,
            self.root,
            reviewer,
            &mut result,
            &mut tally,
        );
        let driven = tokio::time::timeout(self.timeout, job).await;
        result.latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        (result.input_tokens, result.output_tokens) = tally.tokens();
        result.cost_usd = tally.cost(self.config);
        result.fallback_reason = result.fallback_reason.or(tally.fallback());
        if result.provider.is_empty() {
            // Failed before an answer: where it ran, else where it would start.
            let first = self.engine.provider_name().unwrap_or_default();
            result.provider = tally.provider().unwrap_or(first).to_string();
        }
        let answer = match driven {
            Ok(Ok(answer)) => answer,
            Ok(Err(e)) => return failed(result, e),
            Err(_) => {
                let e = format!(
                    "the task did not finish within {} s",
                    self.timeout.as_secs()
                );
                return failed(result, e);
            }
        };
        let subject = Subject {
            task: self.task,
            engine: self.engine,
            root: self.root,
            answer: &answer,
            config: self.config,
            timeout: self.timeout,
        };
        for check in &self.task.checks {
            match passes(check, &subject).await {
                Ok(true) => {}
                Ok(false) => result.checks_failed.push(check.describe()),
                Err(e) => {
                    result.checks_failed.push(check.describe());
                    result.error = result.error.or(Some(e));
                }
            }
        }
        result.success = result.checks_failed.is_empty() && result.error.is_none();
        result
    }
}

fn failed(mut result: TaskResult, error: String) -> TaskResult {
    result.error = Some(error);
    result.success = false;
    result
}

/// The job to its end: answers, decisions, drift, apply, one re-run after
/// a conflict. Returns the final answer.
async fn drive(
    task: &Task,
    engine: &Engine,
    root: &Path,
    reviewer: Reviewer,
    r: &mut TaskResult,
    tally: &mut Tally,
) -> Result<String, String> {
    let mut events = engine.subscribe(Filter::All);
    let mut answers = task.answers.iter();
    let mut runs = 0;
    let mut drifted = false;
    let mut answer = String::new();
    let mut session = SessionRef::New;
    start(task, engine, &mut runs, &mut session).await?;
    let mut bundle: Option<DiffBundle> = None;
    // The review a repair job was asked to remake (applied if it proposes
    // nothing new).
    let mut repairing: Option<String> = None;
    let mut edited = false;
    loop {
        let event = counted(&mut events, tally).await?;
        let job_id = event.job_id.clone();
        match event.body.clone() {
            // The model's calls (not the files agent-tui read for it).
            EventBody::ToolCallRequested {
                attached: false,
                name,
                ..
            } => {
                r.tool_calls += 1;
                match name.as_str() {
                    "read_file" if !edited => r.reads_before_edit += 1,
                    "propose_edits" => edited = true,
                    _ => {}
                }
            }
            EventBody::ClarificationRequested { .. } => {
                r.clarifications += 1;
                send(engine, answer_with(job_id, answers.next().cloned())).await?;
            }
            EventBody::ApprovalRequested { tool_call_id, .. } => {
                send(engine, deny(job_id, tool_call_id)).await?;
            }
            EventBody::DiffGenerated { bundle: b } | EventBody::ReviewUpdated { bundle: b, .. } => {
                bundle = Some(b)
            }
            EventBody::JobCompleted {
                answer: text,
                status,
                provider,
                fallback_reason,
                ..
            } => {
                answer = text;
                r.answered(provider, fallback_reason);
                let Some(b) = bundle
                    .take()
                    .filter(|_| status == JobStatus::AwaitingReview)
                else {
                    // A repair that proposed nothing: the earlier review goes in.
                    if let Some(earlier) = repairing.take() {
                        let _ = engine.command(Command::Apply { job_id: earlier }).await;
                        continue;
                    }
                    return Ok(answer);
                };
                let first = !std::mem::replace(&mut drifted, true);
                if !review(task, engine, root, r, &b, job_id.clone(), first).await? {
                    return Ok(answer);
                }
                repairing = settle(engine, reviewer, r, job_id).await;
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
                start(task, engine, &mut runs, &mut session).await?;
            }
            EventBody::JobFailed { error, .. } => return Err(error),
            EventBody::JobCancelled {} => return Err("the job was cancelled".into()),
            _ => {}
        }
    }
}

/// The next event, its tokens counted.
async fn counted(events: &mut Subscription, tally: &mut Tally) -> Result<Arc<Event>, String> {
    let event = events
        .next()
        .await
        .ok_or("the engine stopped unexpectedly")?;
    tally.see(&event.job_id, &event.body);
    Ok(event)
}

/// `command`, its refusal as the task's error.
async fn send(engine: &Engine, command: Command) -> Result<Reply, String> {
    engine
        .command(command)
        .await
        .map_err(|e| format!("the engine refused: {e}"))
}

/// The task's next clarification answer (none left: `no_user_answer`).
fn answer_with(job_id: String, text: Option<String>) -> Command {
    Command::Answer {
        job_id,
        text: text.unwrap_or_else(|| NO_USER_ANSWER.to_string()),
    }
}

/// After the decisions: verify-and-repair's verify (`Some`: the job whose
/// review a repair now remakes), else the apply, whose outcome comes as
/// events (apply.completed or apply.failed).
async fn settle(
    engine: &Engine,
    reviewer: Reviewer,
    r: &mut TaskResult,
    job_id: String,
) -> Option<String> {
    if reviewer == Reviewer::VerifyAndRepair && verify_or_repair(engine, r, &job_id).await.is_some()
    {
        return Some(job_id);
    }
    let _ = engine.command(Command::Apply { job_id }).await;
    None
}

/// No one can approve a command in an eval task.
fn deny(job_id: String, tool_call_id: String) -> Command {
    Command::Approve {
        job_id,
        tool_call_id,
        approved: false,
        reason: Some("no_user: an eval task cannot ask".into()),
    }
}

/// Starts the task's job (again, after a conflict) in its session.
async fn start(
    task: &Task,
    engine: &Engine,
    runs: &mut u32,
    session: &mut SessionRef,
) -> Result<(), String> {
    *runs += 1;
    let job = Command::StartJob {
        session: session.clone(),
        job_id: format!("eval_{}_{runs}", task.name),
        prompt: task.prompt.clone(),
        mode: task.mode,
        max_tool_calls: task.max_tool_calls,
        choice: None,
        images: Vec::new(),
        workspace: None,
    };
    let reply = engine
        .command(job)
        .await
        .map_err(|e| format!("the engine refused: {e}"))?;
    if let Reply::Started {
        session_id: Some(id),
        ..
    } = reply
    {
        *session = SessionRef::Id(id);
    }
    Ok(())
}

/// Decides the job's bundle as the task says (after writing the task's
/// drift to the root the first time, as a person editing meanwhile would)
/// and asks for the apply. False when nothing is accepted.
async fn review(
    task: &Task,
    engine: &Engine,
    root: &Path,
    r: &mut TaskResult,
    bundle: &DiffBundle,
    job_id: String,
    first: bool,
) -> Result<bool, String> {
    let (accept, reject) = decide(bundle, &task.reject_paths);
    r.hunks_proposed += (accept.len() + reject.len()) as u64;
    r.hunks_accepted += accept.len() as u64;
    if first {
        for d in &task.drift {
            append(&root.join(&d.file), &d.append)
                .map_err(|e| format!("cannot write the drift to {}: {e}", d.file))?;
        }
    }
    if accept.is_empty() {
        return Ok(false);
    }
    engine
        .command(Command::Decide {
            job_id: job_id.clone(),
            accept,
            reject,
            accept_all: false,
        })
        .await
        .map_err(|e| format!("the engine refused: {e}"))?;
    Ok(true)
}

/// Verifies job `job_id`'s accepted hunks; a failure goes back to the
/// model while repairs are left: `Some(new job)` then. `None`: apply now
/// (it passed, there is no check, or no repair is left).
async fn verify_or_repair(engine: &Engine, r: &mut TaskResult, job_id: &str) -> Option<String> {
    let verify = Command::Verify {
        job_id: job_id.to_string(),
    };
    let Ok(Reply::Verified { result }) = engine.command(verify).await else {
        return None;
    };
    r.verifies += 1;
    r.verify_passed = Some(result.passed);
    // A failure goes back, also one the tree had before (a task may be to
    // fix it); a check that could not run is no proposal's fault.
    let repairable = !matches!(
        result.outcome,
        VerifyOutcome::Passed | VerifyOutcome::Error | VerifyOutcome::Cancelled
    );
    if !repairable || r.repairs >= MAX_REPAIRS {
        return None;
    }
    r.repairs += 1;
    let new_job_id = format!("{job_id}_repair{}", r.repairs);
    let ask = Command::VerifyFeedback {
        job_id: job_id.to_string(),
        new_job_id: new_job_id.clone(),
    };
    engine.command(ask).await.ok().map(|_| new_job_id)
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
