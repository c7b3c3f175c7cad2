//! What work done off the UI task gave (`Loaded`): the
//! engine's answers to queries (folders, previews, checkpoints, sessions),
//! colours, and the replies to commands.

use super::{
    App, CheckpointRow, Entry, FindFor, HunkCode, LatestCheckpoint, Overlay, WholeFileRow,
};
use crate::protocol::{Checkpoint, Command, EngineError, FileRow, FolderEntry, Reply, ThreeWay};
use crate::tui::highlight::StyledLine;

/// Work the app asks of the event loop, which does it off the UI task
/// (through the engine's queries) and hands the result back (`loaded`).
#[derive(Debug, Clone, PartialEq)]
pub enum Load {
    /// A session's transcript and pending review (resumed or picked).
    Session(String),
    /// The session's newest pending review (Ctrl+R once the one on screen
    /// is done): `open` shows it, else it is only said.
    PendingReview {
        session: String,
        open: bool,
    },
    Checkpoints,
    /// The newest checkpoint (what `Ctrl+Z` offers).
    LatestCheckpoint,
    /// A checkpoint's three-way view.
    ThreeWay(String),
    /// A review file with its hunks inline.
    WholeFile(crate::protocol::FileDiff),
    /// A file preview, tagged so a stale one is dropped.
    Preview {
        generation: u64,
        path: String,
    },
    /// Syntax colours of a review's hunks.
    HunkColours {
        job_id: String,
        hunks: Vec<HunkCode>,
    },
    /// The entries of a folder the tree expanded (`""`: the root's top).
    TreeDir {
        rel: String,
        depth: usize,
    },
    /// Every file of the root, for `@path` completion.
    Paths,
    /// The roots opened lately (`Ctrl+O`).
    RecentRoots,
    /// Folders the typed path can complete to.
    RootCompletion(String),
    /// Open this folder as the agent root.
    OpenRoot(String),
    /// Which of these pins (a resumed session's) name files now gone.
    GonePins(Vec<String>),
    /// The code index: built if missing or stale, its progress meanwhile.
    Index,
    /// The custom commands `/` lists.
    Commands,
    /// The memory files the model is given (`/memory`).
    Memory,
    /// The configured providers and their models (`/model`).
    Models,
    /// Files and symbols named like `typed` (`Ctrl+P`, `@` completion).
    Find {
        typed: String,
        purpose: FindFor,
    },
    /// An image for the message being typed.
    Image(super::attach::ImageFrom),
    /// The hooks that run here (`/hooks`).
    Hooks,
}

/// What the event loop's off-task work gave, for the app.
#[derive(Debug)]
pub enum Loaded {
    TreeDir {
        rel: String,
        depth: usize,
        entries: Vec<FolderEntry>,
    },
    HunkColours {
        job_id: String,
        colours: Vec<(String, Vec<StyledLine>)>,
    },
    /// A code block's colours.
    Highlighted {
        key: u64,
        lines: Vec<StyledLine>,
    },
    Preview {
        generation: u64,
        result: Result<Vec<StyledLine>, String>,
    },
    WholeFile {
        path: String,
        rows: Vec<FileRow>,
    },
    /// Every checkpoint, oldest first.
    Checkpoints(Vec<Checkpoint>),
    LatestCheckpoint(Option<Checkpoint>),
    ThreeWay {
        id: String,
        views: Vec<ThreeWay>,
    },
    /// A resumed or picked session, or why it could not be read.
    Session(Result<Box<super::Resumed>, String>),
    /// The session's newest pending review (`open`: Ctrl+R asked for it).
    PendingReview {
        open: bool,
        result: Result<Option<Box<crate::protocol::PendingReview>>, String>,
    },
    Paths(crate::protocol::PathList),
    RecentRoots(Vec<String>),
    Completions {
        typed: String,
        found: Vec<String>,
    },
    /// Another root could not be opened: why.
    RootFailed(String),
    /// Pins whose files are gone (asked by `Load::GonePins`).
    GonePins(Vec<String>),
    /// The custom commands found at start.
    Commands(Vec<crate::protocol::CustomCommandInfo>),
    /// The memory files (`/memory`), or why they could not be listed.
    Memory(Result<Vec<crate::protocol::MemoryFile>, String>),
    /// The configured providers and the models each one lists.
    Models(Vec<crate::protocol::ProviderModels>),
    /// The code index's state (after a build, if one was needed).
    Index(Result<usize, String>),
    /// A build of the code index: files read of files listed.
    IndexProgress {
        done: usize,
        total: usize,
    },
    /// Files and symbols named like `typed`.
    Found {
        typed: String,
        purpose: super::FindFor,
        found: Vec<crate::protocol::Found>,
    },
    /// The hooks of the root and what is wrong with the project's file.
    Hooks(Vec<crate::protocol::HookInfo>, Vec<String>),
    /// An image for the message being typed, or why it cannot go.
    Image {
        from: super::attach::ImageFrom,
        result: Result<(crate::protocol::ImageInput, crate::protocol::ImageMeta), String>,
    },
    /// The engine's reply to a command the app sent.
    Replied {
        command: Box<Command>,
        result: Result<Reply, EngineError>,
    },
}

impl App {
    /// Takes what a load gave (what it says while an answer streams waits
    /// for the answer's end).
    pub fn loaded(&mut self, done: Loaded) {
        let before = self.transcript.len();
        self.take_loaded(done);
        self.defer_since(before);
    }

    fn take_loaded(&mut self, done: Loaded) {
        match done {
            Loaded::TreeDir {
                rel,
                depth,
                entries,
            } => self.tree.children_loaded(&rel, depth, entries),
            Loaded::HunkColours { job_id, colours } => self.hunks_coloured(&job_id, colours),
            Loaded::Highlighted { key, lines } => self.code_highlighted(key, lines),
            Loaded::Preview { generation, result } => self.preview_loaded(generation, result),
            Loaded::WholeFile { path, rows } => self.whole_file_loaded(
                path,
                rows.into_iter()
                    .map(|r| (r.sign, r.text, r.hunk_id))
                    .collect(),
            ),
            Loaded::Checkpoints(list) => self.checkpoints_loaded(checkpoint_rows(list)),
            Loaded::LatestCheckpoint(latest) => {
                self.latest_checkpoint = latest.map(|cp| latest_of(&cp));
            }
            Loaded::ThreeWay { id, views } => self.three_way_loaded(&id, views),
            Loaded::Session(Ok(resumed)) => self.show_session(&resumed),
            Loaded::Image { from, result } => self.image_loaded(from, result),
            Loaded::PendingReview { open, result } => {
                self.pending_review_loaded(open, result.map(|p| p.map(|p| *p)))
            }
            Loaded::Session(Err(why)) => self.transcript.push(Entry::Error(format!(
                "The session could not be read: {why}"
            ))),
            Loaded::Paths(paths) => self.paths = paths,
            Loaded::RecentRoots(recent) => self.recent_roots_loaded(recent),
            Loaded::Commands(commands) => self.commands = commands,
            Loaded::Memory(files) => self
                .transcript
                .push(super::Entry::Notice(memory_note(files))),
            Loaded::Models(lists) => self.models_loaded(&lists),
            Loaded::Hooks(list, problems) => {
                let note = super::hook_runs::hooks_note(&list, &problems, &self.hook_runs);
                self.transcript.push(super::Entry::Notice(note));
            }
            Loaded::Completions { typed, found } => self.root_completions_loaded(&typed, found),
            Loaded::RootFailed(why) => self.root_open_failed(why),
            Loaded::GonePins(gone) => self.unpin_gone(&gone),
            Loaded::Replied { command, result } => self.replied(&command, result),
            Loaded::Index(status) => self.index_loaded(status),
            Loaded::IndexProgress { done, total } => self.index_progress(done, total),
            Loaded::Found {
                typed,
                purpose,
                found,
            } => self.found_loaded(&typed, purpose, found),
        }
    }

    /// The engine's reply: a new session's id is kept; a refusal events do
    /// not report (a session driven elsewhere, a stopped engine) is said.
    pub fn replied(&mut self, command: &Command, result: Result<Reply, EngineError>) {
        match (command, result) {
            (
                _,
                Ok(Reply::Started {
                    session_id: Some(id),
                    ..
                }),
            ) => {
                self.session = Some(id);
                self.session_answered();
            }
            (Command::StartJob { job_id, .. } | Command::Compact { job_id, .. }, Err(e)) => {
                self.session_answered();
                if let Some(job) = self.job.as_mut().filter(|j| &j.id == job_id) {
                    job.status = crate::protocol::JobStatus::Failed;
                }
                self.queued.retain(|q| &q.job_id != job_id);
                self.transcript.push(Entry::Error(e.to_string()));
            }
            (Command::Steer { text, .. }, Err(e)) => {
                // The job ended meanwhile: the words come back to be sent.
                if self.input.lines().join("").trim().is_empty() {
                    let (text, _) = super::pinned::split_pinned(text);
                    self.set_input(text);
                }
                self.transcript
                    .push(Entry::Error(format!("Not steered: {e}")));
            }
            (Command::VerifyFeedback { new_job_id, .. }, Err(e)) => {
                if let Some(job) = self.job.as_mut().filter(|j| &j.id == new_job_id) {
                    job.status = crate::protocol::JobStatus::Failed;
                }
                self.transcript.push(Entry::Error(e.to_string()));
            }
            // Refusals no event reports (no command, nothing accepted).
            (Command::Verify { .. }, Err(e)) => {
                self.review_error = Some(super::Refusal::Verify(format!("Cannot verify: {e}")));
                self.transcript
                    .push(Entry::Error(format!("Cannot verify: {e}")));
            }
            (_, Err(e @ (EngineError::Busy { .. } | EngineError::Unavailable { .. }))) => {
                self.review_error = Some(super::Refusal::Engine(e.to_string()));
                self.transcript.push(Entry::Error(e.to_string()));
            }
            // Said by the events that came with it.
            (_, Ok(_) | Err(_)) => {}
        }
    }

    pub(super) fn open_preview(&mut self, path: String) {
        self.preview_generation += 1;
        self.loads.push(Load::Preview {
            generation: self.preview_generation,
            path: path.clone(),
        });
        self.overlay = Overlay::Preview {
            path,
            lines: Vec::new(),
            scroll: 0,
            error: None,
            mark: None,
        };
    }

    /// The whole-file view of `path` arrived.
    pub fn whole_file_loaded(&mut self, path: String, rows: Vec<WholeFileRow>) {
        if let Some(review) = &mut self.review {
            review.whole_file = Some((path, rows));
        }
    }

    /// The checkpoints list arrived (newest first).
    pub fn checkpoints_loaded(&mut self, list: Vec<CheckpointRow>) {
        if let Overlay::Checkpoints { rows, .. } = &mut self.overlay {
            *rows = list;
        }
    }

    /// A checkpoint's three-way view arrived.
    pub fn three_way_loaded(&mut self, id: &str, views: Vec<ThreeWay>) {
        if let Overlay::Checkpoints {
            rows,
            cursor,
            three_way,
            file,
        } = &mut self.overlay
            && rows.get(*cursor).is_some_and(|r| r.id == id)
        {
            *three_way = Some(views);
            *file = 0;
        }
    }

    /// A preview finished loading; stale generations are dropped.
    pub fn preview_loaded(&mut self, generation: u64, result: Result<Vec<StyledLine>, String>) {
        if generation != self.preview_generation {
            return;
        }
        if let Overlay::Preview { lines, error, .. } = &mut self.overlay {
            match result {
                Ok(l) => *lines = l,
                Err(e) => *error = Some(e),
            }
        }
    }
}

/// The checkpoints list's rows, newest first.
fn checkpoint_rows(mut list: Vec<Checkpoint>) -> Vec<CheckpointRow> {
    list.reverse();
    list.into_iter()
        .map(|cp| CheckpointRow {
            id: cp.checkpoint_id,
            created_at: cp.created_at,
            kind: format!("{:?}", cp.kind).to_lowercase(),
            files: cp.affected_files.into_iter().map(|f| f.file_path).collect(),
        })
        .collect()
}

/// The newest checkpoint as `Ctrl+Z` offers it.
pub fn latest_of(cp: &Checkpoint) -> LatestCheckpoint {
    LatestCheckpoint {
        id: cp.checkpoint_id.clone(),
        files: cp
            .affected_files
            .iter()
            .map(|f| f.file_path.clone())
            .collect(),
        hunks: cp
            .affected_files
            .iter()
            .flat_map(|f| {
                f.hunks
                    .iter()
                    .map(move |h| (h.hunk_id.clone(), f.file_path.clone()))
            })
            .collect(),
    }
}

/// `/memory`'s answer: each file, its tokens and when the model gets it.
fn memory_note(files: Result<Vec<crate::protocol::MemoryFile>, String>) -> String {
    match files {
        Err(e) => format!("The memory files could not be listed: {e}"),
        Ok(files) if files.is_empty() => "No memory files: the model is given no AGENTS.md \
             (nor CLAUDE.md or GEMINI.md) of the project, and none of yours."
            .into(),
        Ok(files) => {
            let mut out = String::from("Memory files the model is given:");
            for f in files {
                out.push_str(&format!(
                    "\n  {} · {} tokens · {}",
                    f.path, f.tokens, f.given
                ));
            }
            out
        }
    }
}
