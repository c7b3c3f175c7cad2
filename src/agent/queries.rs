//! What a front end can ask the engine, answered off the engine task: the
//! store is read on the blocking pool once what the engine recorded so far
//! is written, and files of the root through its directory handles.

use std::sync::Arc;

use super::EngineContext;
use super::door::Engine;
use super::session_state::{SessionState, read_session};
use crate::checkpoint::{CheckpointStore, three_way};
use crate::protocol::{
    AuditRecord, Checkpoint, CheckpointView, EngineError, Event, EventsPage, FileDiff, FileRow,
    FileText, FolderEntry, JobStatus, PathList, PendingReview, ScopeInfo, SessionRef,
    SessionSummary, ThreeWay, Transcript, UserWrite, Verification,
};
use crate::store::{RootStore, StoreError};
use crate::workspace::{ReadRange, read_text_range};

/// Files offered for `@path` completion, at most.
const MAX_FILES: usize = 100_000;

fn store_error(e: StoreError) -> EngineError {
    match e {
        StoreError::NotFound(m) => EngineError::not_found(m),
        StoreError::Invalid(m) => EngineError::invalid(m),
        e => EngineError::unavailable(e.to_string()),
    }
}

fn io_error(e: impl std::fmt::Display) -> EngineError {
    EngineError::failed(e.to_string())
}

impl Engine {
    /// Runs `read` on the blocking pool with the root's store, once what
    /// the engine recorded so far is in it.
    async fn stored<T: Send + 'static>(
        &self,
        read: impl FnOnce(&RootStore, &EngineContext) -> Result<T, EngineError> + Send + 'static,
    ) -> Result<T, EngineError> {
        let ctx = self.inner.ctx.clone();
        let Some(root) = ctx.state.clone() else {
            return Err(EngineError::unavailable(
                "nothing is recorded here (no store)",
            ));
        };
        root.store.settled().await;
        tokio::task::spawn_blocking(move || read(&root, &ctx))
            .await
            .unwrap_or_else(|e| Err(EngineError::failed(format!("the query stopped: {e}"))))
    }

    /// Runs `read` on the blocking pool (files of the root).
    pub(super) async fn off_task<T: Send + 'static>(
        &self,
        read: impl FnOnce(&EngineContext) -> Result<T, EngineError> + Send + 'static,
    ) -> Result<T, EngineError> {
        let ctx: Arc<EngineContext> = self.inner.ctx.clone();
        tokio::task::spawn_blocking(move || read(&ctx))
            .await
            .unwrap_or_else(|e| Err(EngineError::failed(format!("the query stopped: {e}"))))
    }

    /// The root's sessions, most recently updated last.
    pub async fn sessions(&self) -> Result<Vec<SessionSummary>, EngineError> {
        self.stored(|root, _| root.sessions().map_err(store_error))
            .await
    }

    /// The root's most recently updated session.
    pub async fn latest_session(&self) -> Result<Option<String>, EngineError> {
        self.stored(|root, _| root.latest_session().map_err(store_error))
            .await
    }

    /// A session with its jobs.
    pub async fn transcript(&self, session_id: &str) -> Result<Transcript, EngineError> {
        let id = session_id.to_string();
        self.stored(move |root, _| {
            let state = read_session(root, &id).map_err(store_error)?;
            Ok(transcript_of(&state))
        })
        .await
    }

    /// The review session `session` waits on (`Latest`: the newest
    /// session's), if any.
    pub async fn pending_review(
        &self,
        session: SessionRef,
    ) -> Result<Option<PendingReview>, EngineError> {
        self.stored(move |root, ctx| {
            let id = match session {
                SessionRef::New => return Ok(None),
                SessionRef::Id(id) => id,
                SessionRef::Latest => match root.latest_session().map_err(store_error)? {
                    Some(id) => id,
                    None => return Ok(None),
                },
            };
            let state = read_session(root, &id).map_err(store_error)?;
            Ok(state.pending_review().and_then(|job| {
                let verify = job.verify.clone();
                let tree_changed =
                    verify
                        .as_ref()
                        .and_then(|v| v.tree.as_ref())
                        .is_some_and(|then| {
                            crate::workspace::tree_stamp(&ctx.workspace)
                                .is_ok_and(|now| &now != then)
                        });
                Some(PendingReview {
                    session_id: id.clone(),
                    job_id: job.job_id.clone(),
                    bundle: job.bundle.clone()?,
                    verify,
                    tree_changed,
                })
            }))
        })
        .await
    }

    /// A job's recorded events after `after`, with its status.
    pub async fn events(&self, job_id: &str, after: u64) -> Result<EventsPage, EngineError> {
        let job = job_id.to_string();
        self.stored(move |root, _| {
            let found = root
                .job_events(&job, after)
                .map_err(store_error)?
                .ok_or_else(|| {
                    EngineError::not_found(format!("no job {job} in this agent root"))
                })?;
            let events: Vec<Event> = found
                .events
                .iter()
                .filter_map(|e| serde_json::from_str(e).ok())
                .collect();
            let status = found.status.as_deref().and_then(|s| {
                serde_json::from_value::<JobStatus>(serde_json::Value::String(s.into())).ok()
            });
            Ok(EventsPage {
                next_cursor: events.last().map_or(after, |e| e.cursor),
                job_id: job,
                status,
                events,
            })
        })
        .await
    }

    /// Every checkpoint of the root, oldest first.
    pub async fn checkpoints(&self) -> Result<Vec<Checkpoint>, EngineError> {
        self.stored(|root, _| root.checkpoints().map_err(store_error))
            .await
    }

    /// The newest checkpoint (what `Ctrl+Z` offers).
    pub async fn latest_checkpoint(&self) -> Result<Option<Checkpoint>, EngineError> {
        self.stored(|root, _| root.latest_checkpoint().map_err(store_error))
            .await
    }

    /// A checkpoint with its files in three versions.
    pub async fn checkpoint(&self, id: &str) -> Result<CheckpointView, EngineError> {
        let id = id.to_string();
        self.stored(move |root, ctx| {
            let checkpoint = root.checkpoint(&id).map_err(store_error)?.ok_or_else(|| {
                EngineError::not_found(format!(
                    "no checkpoint {id}; see `agent-tui checkpoints list`"
                ))
            })?;
            let views = three_way(&ctx.workspace, &CheckpointStore::new(root), &checkpoint)
                .map_err(io_error)?;
            Ok(CheckpointView {
                checkpoint,
                three_way: views,
            })
        })
        .await
    }

    /// A checkpoint's files in three versions (current, base, proposed).
    pub async fn three_way(&self, id: &str) -> Result<Vec<ThreeWay>, EngineError> {
        Ok(self.checkpoint(id).await?.three_way)
    }

    /// The root's audit records (of one session, of one server user's
    /// requests, the newest `limit`).
    pub async fn audit(
        &self,
        session: Option<String>,
        user: Option<String>,
        limit: Option<usize>,
    ) -> Result<Vec<AuditRecord>, EngineError> {
        self.stored(move |root, _| {
            root.audit_records(session.as_deref(), user.as_deref(), limit)
                .map_err(store_error)
        })
        .await
    }

    /// Checks the root's audit chain.
    pub async fn verify_audit(&self) -> Result<Verification, EngineError> {
        self.stored(|root, _| root.verify_audit().map_err(store_error))
            .await
    }

    /// Where the store is (never its password).
    pub fn store_location(&self) -> Option<String> {
        let state = self.inner.ctx.state.as_ref()?;
        Some(state.store.location().to_string())
    }

    /// The custom commands `/NAME` expands (the project's, then the
    /// user's): name, description and where each was read from.
    pub fn custom_commands(&self) -> Vec<crate::protocol::CustomCommandInfo> {
        let user = super::commands::user_folder();
        super::commands::list(&self.inner.ctx.workspace, user.as_deref())
            .into_iter()
            .map(|c| crate::protocol::CustomCommandInfo {
                name: c.name,
                description: c.description,
                mode: c.mode,
                source: c.source,
            })
            .collect()
    }

    /// The memory files the model is given, and when (`/memory`).
    pub async fn memory_files(&self) -> Result<Vec<crate::protocol::MemoryFile>, EngineError> {
        self.off_task(|ctx| {
            let ws = &ctx.workspace;
            let counter = crate::context::TokenCounter::for_model(
                ctx.provider.as_ref().map_or("", |p| p.model()),
            );
            let tokens = |text: &str| u64::from(counter.count(text));
            let mut out = Vec::new();
            let full = super::prompt::MAX_AGENTS_MD_BYTES;
            if let Some((path, text)) = super::memory::folder_file(ws, "", full) {
                let lean = super::prompt::LEAN_AGENTS_MD_BYTES;
                out.push(crate::protocol::MemoryFile {
                    tokens: tokens(&text),
                    given: format!(
                        "in every request (a small window's: its first {} KiB)",
                        lean / 1024
                    ),
                    path,
                });
            }
            if let Some((path, text)) =
                super::memory::user_text(super::memory::user_file().as_deref())
            {
                out.push(crate::protocol::MemoryFile {
                    path,
                    tokens: tokens(&text),
                    given: "in every request but a small window's (left out to keep its budget)"
                        .into(),
                });
            }
            let mut folders: Vec<String> = Vec::new();
            crate::workspace::each_file(ws, MAX_FILES, &mut |path| {
                if let Some((dir, name)) = path.rsplit_once('/')
                    && super::memory::NAMES.contains(&name)
                    && !folders.iter().any(|f| f == dir)
                {
                    folders.push(dir.to_string());
                }
            });
            folders.sort();
            for dir in folders {
                let most = super::memory::NESTED_BYTES;
                if let Some((path, text)) = super::memory::folder_file(ws, &dir, most) {
                    out.push(crate::protocol::MemoryFile {
                        path,
                        tokens: tokens(&text),
                        given: format!("with the first read or edit of a file under {dir}/"),
                    });
                }
            }
            Ok(out)
        })
        .await
    }

    /// Refuses an instruction naming a custom command there is none of
    /// (`invalid`, with the closest names), or a provider or model it
    /// could not run on, as a job would be refused.
    pub fn check_instruction(
        &self,
        prompt: &str,
        choice: &crate::protocol::ModelChoice,
    ) -> Result<(), EngineError> {
        let ctx = &self.inner.ctx;
        let mode = ctx.config.ui.default_mode;
        let asked =
            super::commands::instruction(&ctx.workspace, prompt.to_string(), mode, choice.clone())?;
        self.check_choice(&asked.choice)
    }

    /// Refuses images a job would refuse (too many, too large, not an
    /// image, a path outside the root), before anything is kept.
    pub fn check_images(&self, images: &[crate::protocol::ImageInput]) -> Result<(), EngineError> {
        super::images::read(&self.inner.ctx, images).map(|_| ())
    }

    /// An image of the root (`@shot.png`) as a job would take it: what it
    /// is, or why it would be refused.
    pub async fn image_meta(&self, path: String) -> Result<crate::protocol::ImageMeta, String> {
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || {
            let input = crate::protocol::ImageInput::Path { path };
            super::images::read_one(&inner.ctx, &input)
                .map(|a| a.meta)
                .map_err(|e| e.to_string())
        })
        .await
        .map_err(|e| e.to_string())?
    }

    /// The roots opened lately, most recent first.
    pub async fn recent_roots(&self) -> Result<Vec<String>, EngineError> {
        self.stored(|root, _| root.store.recent_roots().map_err(store_error))
            .await
    }

    /// The agent root and the folders beside it.
    pub fn scopes(&self) -> Vec<ScopeInfo> {
        self.inner
            .ctx
            .workspace
            .scopes()
            .iter()
            .map(|s| ScopeInfo {
                id: s.to_string(),
                path: s.root.display().to_string(),
                access: s.access.as_str().to_string(),
                primary: s.primary(),
            })
            .collect()
    }

    /// One folder's entries (`""`: the root's top; `@docs`: a scope's),
    /// folders first, then files, by name; `.gitignore`d ones and `.git/`
    /// left out.
    pub async fn folder(&self, path: &str) -> Result<Vec<FolderEntry>, EngineError> {
        let path = path.to_string();
        self.off_task(move |ctx| super::files::folder(&ctx.workspace, &path))
            .await
    }

    /// Every file of every scope (`@docs/…` beside the root), for
    /// completion; at most 100,000.
    pub async fn files(&self) -> Result<PathList, EngineError> {
        self.off_task(|ctx| {
            let mut paths = PathList::new();
            crate::workspace::each_file(&ctx.workspace, MAX_FILES, &mut |path| {
                paths.push(path);
            });
            paths.shrink_to_fit();
            Ok(paths)
        })
        .await
    }

    /// The whole-file writes a unified diff makes (for `WriteFiles`), each
    /// with the hash of the text it was computed from; 409 when a hunk no
    /// longer fits, 400 when the patch is malformed or names a path
    /// outside the root.
    pub async fn patch_writes(&self, patch: &str) -> Result<Vec<UserWrite>, EngineError> {
        let files = super::patch::parse(patch)?;
        self.off_task(move |ctx| {
            super::patch::writes(&files, |path| {
                let resolved = ctx
                    .workspace
                    .resolve_writable(path)
                    .map_err(super::path_refused)?;
                let Some(bytes) = ctx.workspace.read_opt(&resolved).map_err(io_error)? else {
                    return Ok(None);
                };
                let hash = crate::workspace::sha256_hex(&bytes);
                let text = String::from_utf8(bytes)
                    .map_err(|_| EngineError::invalid(format!("`{path}` is not UTF-8 text")))?;
                Ok(Some((text, hash)))
            })
        })
        .await
    }

    /// The first `max_lines` lines of a text file (a preview).
    pub async fn file_text(&self, path: &str, max_lines: usize) -> Result<FileText, EngineError> {
        let path = path.to_string();
        self.off_task(move |ctx| {
            let ws = &ctx.workspace;
            let resolved = ws
                .resolve(&path)
                .map_err(|e| EngineError::invalid(e.to_string()))?;
            let file = ws.open_file(&resolved).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => EngineError::not_found(format!("{path}: {e}")),
                _ => io_error(format!("{path}: {e}")),
            })?;
            if !file.metadata().is_ok_and(|m| m.is_file()) {
                return Err(EngineError::invalid(format!("{path}: not a regular file")));
            }
            let range = ReadRange {
                start_line: 1,
                end_line: Some(max_lines),
                max_lines,
                max_bytes: 1 << 20,
            };
            let slice = read_text_range(file, range)
                .map_err(|e| EngineError::invalid(format!("{path}: {e}")))?;
            Ok(FileText {
                path,
                content: slice.content,
                total_lines: slice.total_lines,
            })
        })
        .await
    }

    /// A file's whole text, or `None` when it does not exist.
    pub async fn read_file(&self, path: &str) -> Result<Option<Vec<u8>>, EngineError> {
        let path = path.to_string();
        self.off_task(move |ctx| {
            let ws = &ctx.workspace;
            let resolved = ws
                .resolve(&path)
                .map_err(|e| EngineError::invalid(e.to_string()))?;
            ws.read_opt(&resolved).map_err(io_error)
        })
        .await
    }

    /// The file as it is now with every hunk of `file` inline.
    pub async fn whole_file(&self, file: FileDiff) -> Result<Vec<FileRow>, EngineError> {
        self.off_task(move |ctx| Ok(super::files::whole_file(&ctx.workspace, &file)))
            .await
    }

    /// Every tool this root offers, with its schema (`tool --list`).
    pub fn tools(&self) -> Vec<serde_json::Value> {
        self.inner
            .ctx
            .registry
            .specs()
            .filter_map(|s| serde_json::to_value(s).ok())
            .collect()
    }
}

/// A session as `sessions show` prints it.
pub(super) fn transcript_of(state: &SessionState) -> Transcript {
    Transcript {
        session_id: state.session_id.clone(),
        root: state.root.clone(),
        created_at: state.created_at.clone(),
        jobs: state
            .jobs
            .iter()
            .map(|j| crate::protocol::JobSummary {
                job_id: j.job_id.clone(),
                prompt: j.prompt.clone(),
                status: j.status,
                answer: j.answer.clone(),
                edits: j.edits.len(),
                bundle: j.bundle.clone(),
                events: j.events,
                images: j.images.clone(),
                provider: j.provider.clone(),
                model: j.model.clone(),
            })
            .collect(),
    }
}
