//! A command run for a front end (the server's `exec`), streamed: the
//! `run_command` tool itself (confined, capped, no API keys, its own TMPDIR,
//! ended by its timeout), with its output handed over as it comes. Dropping
//! the stream (the client went away) stops the command.

use std::sync::Arc;

use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::door::Engine;
use crate::protocol::{EngineError, ExecChunk};
use crate::tools::ExecRecord;

/// Chunks held for a slow reader before the command's pipes wait.
const QUEUE: usize = 256;

/// A running command's output; dropping it stops the command.
pub struct ExecStream {
    rx: mpsc::Receiver<ExecChunk>,
    cancel: CancellationToken,
}

impl ExecStream {
    /// The next piece, `Exit` or `Error` last; `None` after that.
    pub async fn next(&mut self) -> Option<ExecChunk> {
        self.rx.recv().await
    }
}

impl Drop for ExecStream {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

impl Engine {
    /// Runs `command` in the agent root as `run_command` would (the caller
    /// has checked that it may), within `timeout_secs` (capped by `[exec]`).
    pub fn exec(&self, command: &str, timeout_secs: Option<u64>) -> ExecStream {
        let (tx, rx) = mpsc::channel(QUEUE);
        let cancel = CancellationToken::new();
        let ctx = self.inner.ctx.clone();
        let mut args = json!({ "command": command });
        if let Some(t) = timeout_secs {
            args["timeout_secs"] = json!(t);
        }
        let (token, out) = (cancel.clone(), tx.clone());
        let job_id = format!("exec_{}", &super::new_job_id()[4..]);
        tokio::task::spawn_blocking(move || {
            let tee_tx = out.clone();
            let tee: crate::tools::Tee = Arc::new(move |err: bool, bytes: &[u8]| {
                let text = String::from_utf8_lossy(bytes).into_owned();
                let chunk = if err {
                    ExecChunk::Stderr { text }
                } else {
                    ExecChunk::Stdout { text }
                };
                let _ = tee_tx.blocking_send(chunk);
            });
            let mut tool_ctx = ctx.tool_context();
            tool_ctx.cancel = Some(token);
            tool_ctx.tee = Some(tee);
            // What it changes is a checkpoint, as the model's commands are.
            tool_ctx.record = ctx.tracker.as_deref().map(|tracker| ExecRecord {
                tracker,
                session_id: None,
                job_id,
            });
            let last = match ctx.registry.call("run_command", args, &tool_ctx) {
                Ok(r) => ExecChunk::Exit {
                    exit_code: r["exit_code"].as_i64().and_then(|c| i32::try_from(c).ok()),
                    duration_ms: r["duration_ms"].as_u64().unwrap_or(0),
                    truncated: r["truncated"].as_bool().unwrap_or(false),
                    timed_out: r["timed_out"].as_bool().unwrap_or(false),
                    confined: r["confined"].as_bool().unwrap_or(false),
                    changed_files: r["changed_files"].as_array().cloned().unwrap_or_default(),
                    changed_files_total: r["changed_files_total"].as_u64().unwrap_or(0),
                    checkpoint_id: r["checkpoint_id"].as_str().map(str::to_string),
                    checkpoint_error: r["checkpoint_error"].as_str().map(str::to_string),
                },
                Err(e) => ExecChunk::Error {
                    message: e.to_string(),
                },
            };
            let _ = out.blocking_send(last);
        });
        drop(tx);
        ExecStream { rx, cancel }
    }
}

/// Whether `command` is one of `allowed` (each an exact command line, as
/// `[[server.workspaces]] allowed_commands` lists them; words compared
/// after splitting, so spacing does not matter).
pub fn command_allowed(command: &str, allowed: &[String]) -> Result<bool, EngineError> {
    let words = shell_words::split(command)
        .map_err(|e| EngineError::invalid(format!("cannot split the command into words: {e}")))?;
    if words.is_empty() {
        return Err(EngineError::invalid("the command is empty"));
    }
    Ok(allowed
        .iter()
        .any(|a| shell_words::split(a).is_ok_and(|w| w == words)))
}
