//! A task's `[[checks]]` on its root after the job: files as the engine
//! reads them, the answer, and commands. A command runs in a process group
//! of its own, without API keys or stdin, bounded by `--task-timeout`
//! (and at most two minutes): one that outlasts it is ended, its whole
//! group with it, and the task fails saying so.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use super::suite::{Check, Task};
use crate::agent::Engine;
use crate::config::Config;

/// Longest a command check may run, whatever `--task-timeout` says.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

/// What a task's checks need besides the check itself.
pub struct Subject<'a> {
    pub task: &'a Task,
    pub engine: &'a Engine,
    pub root: &'a Path,
    pub answer: &'a str,
    pub config: &'a Config,
    /// `--task-timeout`.
    pub timeout: Duration,
}

/// A file of the task's root as the engine reads it (`None`: missing or
/// unreadable).
async fn read(engine: &Engine, file: &str) -> Option<Vec<u8>> {
    engine.read_file(file).await.ok().flatten()
}

/// Whether `check` passes; `Err` when it could not finish (a command that
/// outlasted its time), which fails the task with that error.
pub async fn passes(check: &Check, s: &Subject<'_>) -> Result<bool, String> {
    let text = |bytes: Option<Vec<u8>>| bytes.and_then(|b| String::from_utf8(b).ok());
    Ok(match check {
        Check::Contains { file, text: want } => {
            text(read(s.engine, file).await).is_some_and(|t| t.contains(want.as_str()))
        }
        Check::Equals { file, text: want } => {
            text(read(s.engine, file).await).is_some_and(|t| t == *want)
        }
        Check::Exists { file, exists } => read(s.engine, file).await.is_some() == *exists,
        Check::Unchanged { file } => {
            read(s.engine, file).await == std::fs::read(s.task.files.join(file)).ok()
        }
        Check::AnswerMatches(re) => re.is_match(s.answer),
        Check::Command(argv) => return command(argv, s).await,
    })
}

/// Runs `argv` in the task's root: exit 0 passes; outlasting the task's
/// timeout ends its process group and is an error.
async fn command(argv: &[String], s: &Subject<'_>) -> Result<bool, String> {
    let Some((program, args)) = argv.split_first() else {
        return Ok(false);
    };
    let mut command = tokio::process::Command::new(program);
    crate::platform::process::own_group(&mut command)
        .args(args)
        .current_dir(s.root)
        .kill_on_drop(true)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // No API key reaches a check's process.
    for var in s.config.secret_env_names() {
        command.env_remove(var);
    }
    for (var, _) in std::env::vars_os() {
        if var.to_string_lossy().ends_with("_API_KEY") {
            command.env_remove(var);
        }
    }
    let Ok(mut child) = command.spawn() else {
        return Ok(false);
    };
    let limit = s.timeout.min(COMMAND_TIMEOUT);
    match tokio::time::timeout(limit, child.wait()).await {
        Ok(status) => Ok(status.is_ok_and(|s| s.success())),
        Err(_) => {
            end_group(child.id());
            let _ = child.wait().await;
            Err(format!(
                "check `{}` did not finish within {} s (--task-timeout); it was stopped",
                argv.join(" "),
                limit.as_secs_f64()
            ))
        }
    }
}

/// Kills the process group led by `pid` (the check and whatever it started).
fn end_group(pid: Option<u32>) {
    if let Some(pid) = pid {
        crate::platform::process::kill_group(pid);
    }
}
