//! The door's part of the code index (SPEC 18): its status, a build or
//! rebuild, a clear, answered off the engine task.

use super::door::Engine;
use crate::index::{CodeIndex, IndexError};
use crate::protocol::{EngineError, Found, IndexBuilt, IndexStatus};

fn index_of(ctx: &super::EngineContext) -> Result<&CodeIndex, EngineError> {
    ctx.index.as_deref().ok_or_else(|| {
        if ctx.config.index.enabled {
            EngineError::unavailable(
                "the code index needs a state home ($AGENT_TUI_HOME or a home directory)",
            )
        } else {
            EngineError::unavailable(IndexError::Disabled.to_string())
        }
    })
}

fn failed(e: IndexError) -> EngineError {
    match e {
        IndexError::Disabled => EngineError::unavailable(e.to_string()),
        IndexError::Io(_) | IndexError::Embedding(_) => EngineError::failed(e.to_string()),
    }
}

impl Engine {
    /// What is stored for this root and whether the tree changed since.
    pub async fn index_status(&self) -> Result<IndexStatus, EngineError> {
        self.off_task(|ctx| Ok(index_of(ctx)?.status(&ctx.workspace)))
            .await
    }

    /// Builds the index when it is missing or out of date (`force`: always).
    pub async fn index_build(&self, force: bool) -> Result<IndexBuilt, EngineError> {
        self.off_task(move |ctx| index_of(ctx)?.build(&ctx.workspace, force).map_err(failed))
            .await
    }

    /// Removes the stored index; true if there was one.
    pub async fn index_clear(&self) -> Result<bool, EngineError> {
        self.off_task(|ctx| index_of(ctx)?.clear().map_err(failed))
            .await
    }
}

impl Engine {
    /// Files read of files listed while this engine builds its index.
    pub fn index_progress(&self) -> Option<(usize, usize)> {
        let (done, total) = self.inner.ctx.index.as_ref()?.progress();
        (total > 0 && done < total).then_some((done, total))
    }

    /// Files and symbols by a fuzzy name (`Ctrl+P`, `@` completion), the
    /// index up to date with the tree (cheap where it is followed by
    /// inotify, as in a TUI).
    pub async fn find(&self, typed: String, limit: usize) -> Result<Vec<Found>, EngineError> {
        self.off_task(move |ctx| {
            let index = index_of(ctx)?;
            let view = index.view(&ctx.workspace).map_err(failed)?;
            let paths: Vec<String> = view.ids().map(|i| view.doc(i).path.clone()).collect();
            Ok(crate::index::lookup(&view, &paths, &typed, limit))
        })
        .await
    }
}

/// A build's progress as `index build --progress` prints it (a JSON line
/// on stderr every quarter second).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct BuildProgress {
    pub done: usize,
    pub total: usize,
}

impl Engine {
    /// Builds the index (if missing or stale; `force`: always) in a process
    /// of its own, `agent-tui index build`, so this one never holds what a
    /// build reads and parses (a TUI's memory stays that of an idle TUI);
    /// `progress` hears how far it got.
    pub async fn index_build_apart(
        &self,
        force: bool,
        progress: impl Fn(usize, usize) + Send,
    ) -> Result<IndexBuilt, EngineError> {
        use tokio::io::AsyncBufReadExt;
        let ctx = self.inner.ctx.clone();
        index_of(&ctx)?;
        let exe = std::env::current_exe()
            .map_err(|e| EngineError::failed(format!("the index cannot be built apart: {e}")))?;
        let mut command = tokio::process::Command::new(exe);
        command
            .args([
                "index",
                if force { "rebuild" } else { "build" },
                "--json",
                "--progress",
            ])
            .arg("--root")
            .arg(ctx.workspace.root());
        if let Some(path) = self.config_path() {
            command.arg("--config").arg(path);
        }
        command
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut child = command
            .spawn()
            .map_err(|e| EngineError::failed(format!("the index build could not start: {e}")))?;
        let mut said = Vec::new();
        if let Some(stderr) = child.stderr.take() {
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                match serde_json::from_str::<BuildProgress>(&line) {
                    Ok(p) => progress(p.done, p.total),
                    Err(_) => said.push(line),
                }
            }
        }
        let out = child
            .wait_with_output()
            .await
            .map_err(|e| EngineError::failed(format!("the index build: {e}")))?;
        match serde_json::from_slice::<IndexBuilt>(&out.stdout) {
            Ok(built) if out.status.success() => Ok(built),
            _ => {
                let why = said.join("\n");
                let why = why.trim().trim_start_matches("agent-tui: ");
                Err(if why.contains("turned off") {
                    EngineError::unavailable(why.to_string())
                } else {
                    EngineError::failed(format!("the index build failed ({}): {why}", out.status))
                })
            }
        }
    }
}
