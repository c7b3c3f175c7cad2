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

    /// Files and symbols by a fuzzy name (`Ctrl+P`, `@` completion).
    /// `fresh`: the index brought up to date with the tree first (a dialog
    /// opening); else as this engine last saw it (each key typed after).
    pub async fn find(
        &self,
        typed: String,
        limit: usize,
        fresh: bool,
    ) -> Result<Vec<Found>, EngineError> {
        self.off_task(move |ctx| {
            let index = index_of(ctx)?;
            let view = if fresh {
                index.view(&ctx.workspace)
            } else {
                index.quick_view(&ctx.workspace)
            }
            .map_err(failed)?;
            let paths: Vec<String> = view.ids().map(|i| view.doc(i).path.clone()).collect();
            Ok(crate::index::lookup(&view, &paths, &typed, limit))
        })
        .await
    }
}
