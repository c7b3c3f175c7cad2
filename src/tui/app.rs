//! The TUI's state and how keys and engine events change it. Pure: keys
//! return the `Op`s to send, events update the state; nothing here draws or
//! does I/O, so every behaviour is testable without a terminal.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_textarea::TextArea;

use super::highlight::StyledLine;
use super::keymap::{Action, Context, lookup};
use super::tree::Tree;
use crate::agent::NO_USER_ANSWER;
use crate::protocol::{Event, EventBody, JobStatus, Mode, Op, Usage};
use crate::review::DiffBundle;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Tree,
    Chat,
    Input,
}

/// One row group of the transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    User(String),
    Assistant(String),
    Tool {
        name: String,
        summary: String,
        ok: Option<bool>,
    },
    Notice(String),
    Error(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Overlay {
    None,
    Help,
    /// A read-only file view; `lines` is empty while it loads.
    Preview {
        path: String,
        lines: Vec<StyledLine>,
        scroll: usize,
        error: Option<String>,
    },
    Clarify {
        job_id: String,
        question: String,
        answer: String,
    },
    Rollback {
        checkpoint_id: String,
        files: Vec<String>,
        /// (hunk id, file) of the hunks it applied, for a scoped rollback.
        hunks: Vec<(String, String)>,
        /// `Some`: picking hunks; which are chosen and the cursor.
        picking: Option<(Vec<bool>, usize)>,
    },
}

/// The newest checkpoint, as Ctrl+Z offers it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LatestCheckpoint {
    pub id: String,
    pub files: Vec<String>,
    pub hunks: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobView {
    pub id: String,
    pub status: JobStatus,
    pub steps: u32,
    pub max_steps: u32,
}

/// The pending diff and where the reviewer is in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewView {
    pub job_id: String,
    pub bundle: DiffBundle,
    /// Index into the flattened hunks.
    pub cursor: usize,
}

impl ReviewView {
    /// (file index, hunk index) of every hunk, in order.
    pub fn positions(&self) -> Vec<(usize, usize)> {
        self.bundle
            .files
            .iter()
            .enumerate()
            .flat_map(|(f, file)| (0..file.hunks.len()).map(move |h| (f, h)))
            .collect()
    }

    pub fn current(&self) -> Option<(usize, usize)> {
        self.positions().get(self.cursor).copied()
    }

    /// Hunks decided (accepted, rejected or applied) / all hunks.
    pub fn progress(&self) -> (usize, usize) {
        let all: Vec<_> = self.bundle.hunks().collect();
        (
            all.iter()
                .filter(|h| h.accepted.is_some() || h.applied)
                .count(),
            all.len(),
        )
    }
}

pub struct App {
    pub root: String,
    pub mode: Mode,
    pub focus: Focus,
    pub tree: Tree,
    pub transcript: Vec<Entry>,
    pub input: TextArea<'static>,
    history: Vec<String>,
    history_pos: Option<usize>,
    pub job: Option<JobView>,
    pub provider_label: String,
    pub provider_ok: bool,
    pub tokens: Usage,
    pub review: Option<ReviewView>,
    pub reviewing: bool,
    pub overlay: Overlay,
    pub latest_checkpoint: Option<LatestCheckpoint>,
    /// Files sent as context with every instruction until unpinned.
    pub pinned: Vec<String>,
    /// Every file of the root (loaded off the UI task), for `@path` completion.
    pub paths: Vec<String>,
    /// A preview the event loop should load: (generation, path).
    pub preview_request: Option<(u64, String)>,
    preview_generation: u64,
    quit_armed: bool,
    pub should_quit: bool,
    /// Rows scrolled up from the bottom of the transcript.
    pub scroll: usize,
    /// The retry attempt whose text the last assistant entry holds.
    attempt: u32,
    streaming: bool,
    max_tool_calls: u32,
    next_job: u32,
}

impl App {
    pub fn new(
        root: String,
        tree: Tree,
        mode: Mode,
        provider_label: String,
        provider_ok: bool,
        max_tool_calls: u32,
    ) -> App {
        let mut input = TextArea::default();
        input.set_placeholder_text(
            "Ask, plan or instruct… (Enter sends, Shift+Enter new line, F1 help)",
        );
        App {
            root,
            mode,
            focus: Focus::Input,
            tree,
            transcript: Vec::new(),
            input,
            history: Vec::new(),
            history_pos: None,
            job: None,
            provider_label,
            provider_ok,
            tokens: Usage::default(),
            review: None,
            reviewing: false,
            overlay: Overlay::None,
            latest_checkpoint: None,
            pinned: Vec::new(),
            paths: Vec::new(),
            preview_request: None,
            preview_generation: 0,
            quit_armed: false,
            should_quit: false,
            scroll: 0,
            attempt: 1,
            streaming: false,
            max_tool_calls,
            next_job: 1,
        }
    }

    pub fn job_running(&self) -> bool {
        self.job.as_ref().is_some_and(|j| {
            matches!(
                j.status,
                JobStatus::Running | JobStatus::WaitingForUser | JobStatus::Queued
            )
        })
    }

    fn context(&self) -> Context {
        if matches!(self.overlay, Overlay::Rollback { .. }) {
            return Context::RollbackDialog;
        }
        if matches!(self.overlay, Overlay::Preview { .. }) {
            return Context::Preview;
        }
        if self.reviewing {
            return Context::Review;
        }
        match self.focus {
            Focus::Tree => Context::Tree,
            Focus::Input => Context::Input,
            Focus::Chat => Context::Chat,
        }
    }

    /// Applies a key; returns the ops to send to the engine.
    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Op> {
        let ctrl_c =
            key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl_c {
            if self.quit_armed {
                self.should_quit = true;
            } else {
                self.quit_armed = true;
                self.transcript
                    .push(Entry::Notice("Press Ctrl+C again to quit.".into()));
            }
            return Vec::new();
        }
        self.quit_armed = false;
        match &mut self.overlay {
            Overlay::Help => {
                self.overlay = Overlay::None;
                return Vec::new();
            }
            Overlay::Clarify { job_id, answer, .. } => {
                let job_id = job_id.clone();
                return match key.code {
                    KeyCode::Enter => {
                        let text = if answer.trim().is_empty() {
                            NO_USER_ANSWER.to_string()
                        } else {
                            answer.clone()
                        };
                        self.overlay = Overlay::None;
                        vec![Op::Answer { job_id, text }]
                    }
                    KeyCode::Esc => {
                        self.overlay = Overlay::None;
                        vec![Op::Answer {
                            job_id,
                            text: NO_USER_ANSWER.to_string(),
                        }]
                    }
                    KeyCode::Backspace => {
                        answer.pop();
                        Vec::new()
                    }
                    KeyCode::Char(c) => {
                        answer.push(c);
                        Vec::new()
                    }
                    _ => Vec::new(),
                };
            }
            Overlay::Rollback {
                checkpoint_id,
                hunks,
                picking,
                ..
            } => {
                let id = checkpoint_id.clone();
                let action = lookup(Context::RollbackDialog, &key);
                return match (action, picking) {
                    (Some(Action::RollbackAll), None) => {
                        self.overlay = Overlay::None;
                        vec![Op::Rollback {
                            checkpoint_id: id,
                            hunks: Vec::new(),
                        }]
                    }
                    (Some(Action::PickHunks), picking @ None) if !hunks.is_empty() => {
                        *picking = Some((vec![false; hunks.len()], 0));
                        Vec::new()
                    }
                    (Some(Action::Down | Action::Up), Some((_, cursor))) => {
                        let step: isize = if action == Some(Action::Down) { 1 } else { -1 };
                        *cursor =
                            (*cursor as isize + step).clamp(0, hunks.len() as isize - 1) as usize;
                        Vec::new()
                    }
                    (Some(Action::ToggleChoice), Some((chosen, cursor))) => {
                        if let Some(c) = chosen.get_mut(*cursor) {
                            *c = !*c;
                        }
                        Vec::new()
                    }
                    (Some(Action::Confirm), Some((chosen, _))) => {
                        let picked: Vec<String> = hunks
                            .iter()
                            .zip(chosen.iter())
                            .filter(|(_, c)| **c)
                            .map(|((h, _), _)| h.clone())
                            .collect();
                        if picked.is_empty() {
                            return Vec::new();
                        }
                        self.overlay = Overlay::None;
                        vec![Op::Rollback {
                            checkpoint_id: id,
                            hunks: picked,
                        }]
                    }
                    (Some(Action::Cancel), _) => {
                        self.overlay = Overlay::None;
                        Vec::new()
                    }
                    _ => Vec::new(),
                };
            }
            Overlay::None | Overlay::Preview { .. } => {}
        }
        let context = self.context();
        if key.code == KeyCode::Char('?') && context != Context::Input
            || (context == Context::Input
                && key.code == KeyCode::Char('?')
                && self.input.is_empty())
        {
            self.overlay = Overlay::Help;
            return Vec::new();
        }
        match lookup(context, &key) {
            Some(action) => self.act(action),
            None => {
                match context {
                    Context::Input => self.type_key(key),
                    Context::Tree => {
                        if let KeyCode::Char(c) = key.code {
                            self.tree.jump(&c.to_string());
                        }
                    }
                    Context::Global
                    | Context::Chat
                    | Context::Review
                    | Context::RollbackDialog
                    | Context::Preview => {}
                }
                Vec::new()
            }
        }
    }

    fn type_key(&mut self, key: KeyEvent) {
        match key.code {
            KeyCode::Up if self.input.lines().len() <= 1 => self.recall(-1),
            KeyCode::Down if self.input.lines().len() <= 1 => self.recall(1),
            _ => {
                self.input.input(key);
            }
        }
    }

    /// Up/Down in a one-line input walk the history of sent prompts.
    fn recall(&mut self, step: isize) {
        if self.history.is_empty() {
            return;
        }
        let last = self.history.len() as isize - 1;
        let pos = match self.history_pos {
            None if step < 0 => last,
            None => return,
            Some(p) => p as isize + step,
        };
        if pos > last {
            self.history_pos = None;
            self.set_input("");
            return;
        }
        let pos = pos.clamp(0, last) as usize;
        self.history_pos = Some(pos);
        let text = self.history[pos].clone();
        self.set_input(&text);
    }

    fn set_input(&mut self, text: &str) {
        let mut area = TextArea::new(text.lines().map(str::to_string).collect());
        area.set_placeholder_text(
            "Ask, plan or instruct… (Enter sends, Shift+Enter new line, F1 help)",
        );
        area.move_cursor(ratatui_textarea::CursorMove::End);
        self.input = area;
    }

    fn act(&mut self, action: Action) -> Vec<Op> {
        match action {
            Action::Complete => {
                if self.complete_path() {
                    return Vec::new();
                }
                self.act(Action::FocusNext)
            }
            Action::FocusNext | Action::FocusPrev => {
                let order = [Focus::Tree, Focus::Chat, Focus::Input];
                let i = order.iter().position(|f| *f == self.focus).unwrap_or(2) as isize;
                let step = if action == Action::FocusNext { 1 } else { -1 };
                self.focus = order[(i + step).rem_euclid(3) as usize];
                Vec::new()
            }
            Action::CycleMode => {
                self.mode = match self.mode {
                    Mode::Ask => Mode::Plan,
                    Mode::Plan => Mode::Agent,
                    Mode::Agent => Mode::Ask,
                };
                Vec::new()
            }
            Action::Send => self.send(),
            Action::Newline => {
                self.input.insert_newline();
                Vec::new()
            }
            Action::Cancel => {
                if matches!(self.overlay, Overlay::Preview { .. }) {
                    self.overlay = Overlay::None;
                    return Vec::new();
                }
                if self.reviewing {
                    self.reviewing = false;
                    return Vec::new();
                }
                match &self.job {
                    Some(job) if self.job_running() => vec![Op::Cancel {
                        job_id: job.id.clone(),
                    }],
                    _ => Vec::new(),
                }
            }
            Action::OpenReview => {
                if self.review.is_some() {
                    self.reviewing = true;
                } else {
                    self.transcript
                        .push(Entry::Notice("Nothing to review.".into()));
                }
                Vec::new()
            }
            Action::Down | Action::Up => {
                let delta = if action == Action::Down { 1 } else { -1 };
                if self.reviewing {
                    if let Some(r) = &mut self.review {
                        let n = r.positions().len();
                        r.cursor = (r.cursor as isize + delta)
                            .clamp(0, n.saturating_sub(1) as isize)
                            as usize;
                    }
                } else {
                    self.tree.move_by(delta);
                }
                Vec::new()
            }
            Action::Open => {
                match self.tree.selected().map(|n| (n.kind, n.rel.clone())) {
                    Some((super::tree::NodeKind::File, rel)) => self.open_preview(rel),
                    Some((super::tree::NodeKind::Dir { .. }, _)) | None => self.tree.toggle(),
                }
                Vec::new()
            }
            Action::Pin => {
                let path = match &self.overlay {
                    Overlay::Preview { path, .. } => Some(path.clone()),
                    _ => self
                        .tree
                        .selected()
                        .filter(|n| n.kind == super::tree::NodeKind::File)
                        .map(|n| n.rel.clone()),
                };
                if let Some(path) = path {
                    match self.pinned.iter().position(|p| *p == path) {
                        Some(i) => {
                            self.pinned.remove(i);
                        }
                        None => self.pinned.push(path),
                    }
                }
                Vec::new()
            }
            Action::Accept | Action::Reject => self.decide(action == Action::Accept, false),
            Action::AcceptFile | Action::RejectFile => {
                self.decide(action == Action::AcceptFile, true)
            }
            Action::Apply => match &self.review {
                Some(r) => vec![Op::Apply {
                    job_id: r.job_id.clone(),
                }],
                None => Vec::new(),
            },
            Action::Rollback => {
                match &self.latest_checkpoint {
                    Some(cp) => {
                        self.overlay = Overlay::Rollback {
                            checkpoint_id: cp.id.clone(),
                            files: cp.files.clone(),
                            hunks: cp.hunks.clone(),
                            picking: None,
                        }
                    }
                    None => self
                        .transcript
                        .push(Entry::Notice("No checkpoint to roll back yet.".into())),
                }
                Vec::new()
            }
            Action::RollbackAll | Action::PickHunks | Action::ToggleChoice | Action::Confirm => {
                Vec::new()
            }
            Action::ScrollUp => self.scroll_by(1),
            Action::ScrollDown => self.scroll_by(-1),
            Action::PageUp => self.scroll_by(10),
            Action::PageDown => self.scroll_by(-10),
            Action::Help => {
                self.overlay = Overlay::Help;
                Vec::new()
            }
            Action::Quit => Vec::new(),
        }
    }

    /// Pasted text goes into the input (or the answer of a question).
    pub fn paste(&mut self, text: &str) {
        match &mut self.overlay {
            Overlay::Clarify { answer, .. } => answer.push_str(text),
            Overlay::None => {
                self.input.insert_str(text);
            }
            Overlay::Help | Overlay::Rollback { .. } | Overlay::Preview { .. } => {}
        }
    }

    /// Completes a trailing `@partial` in the input with the best matching
    /// path: a path starting with it, else one whose file name does.
    fn complete_path(&mut self) -> bool {
        let line = self.input.lines().last().cloned().unwrap_or_default();
        let Some(token) = line
            .split_whitespace()
            .last()
            .filter(|t| t.starts_with('@') && line.ends_with(*t))
        else {
            return false;
        };
        let partial = &token[1..];
        let by_path = self
            .paths
            .iter()
            .filter(|p| p.starts_with(partial))
            .min_by_key(|p| p.len());
        let by_name = || {
            self.paths
                .iter()
                .filter(|p| p.rsplit('/').next().is_some_and(|n| n.starts_with(partial)))
                .min_by_key(|p| p.len())
        };
        let Some(found) = by_path.or_else(by_name).cloned() else {
            return false;
        };
        if found == partial {
            return false;
        }
        for _ in 0..partial.chars().count() {
            self.input.delete_char();
        }
        self.input.insert_str(&found);
        true
    }

    /// Scrolls the transcript up (positive) or down; 0 follows the newest text.
    pub fn scroll_by(&mut self, rows: isize) -> Vec<Op> {
        if let Overlay::Preview { scroll, lines, .. } = &mut self.overlay {
            // In a preview, "up" means towards the top of the file.
            let max = lines.len().saturating_sub(1) as isize;
            *scroll = (*scroll as isize - rows).clamp(0, max.max(0)) as usize;
            return Vec::new();
        }
        self.scroll = (self.scroll as isize + rows).max(0) as usize;
        Vec::new()
    }

    fn open_preview(&mut self, path: String) {
        self.preview_generation += 1;
        self.preview_request = Some((self.preview_generation, path.clone()));
        self.overlay = Overlay::Preview {
            path,
            lines: Vec::new(),
            scroll: 0,
            error: None,
        };
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

    fn decide(&mut self, accept: bool, whole_file: bool) -> Vec<Op> {
        let Some(review) = &mut self.review else {
            return Vec::new();
        };
        let Some((f, h)) = review.current() else {
            return Vec::new();
        };
        let file = &review.bundle.files[f];
        let ids: Vec<String> = if whole_file {
            file.hunks.iter().map(|h| h.hunk_id.clone()).collect()
        } else {
            vec![file.hunks[h].hunk_id.clone()]
        };
        // Move on to the next hunk, as reviewers expect.
        if !whole_file {
            let n = review.positions().len();
            review.cursor = (review.cursor + 1).min(n.saturating_sub(1));
        }
        let (accept_ids, reject_ids) = if accept {
            (ids, Vec::new())
        } else {
            (Vec::new(), ids)
        };
        vec![Op::Decide {
            job_id: review.job_id.clone(),
            accept: accept_ids,
            reject: reject_ids,
            accept_all: false,
        }]
    }

    fn send(&mut self) -> Vec<Op> {
        let text = self.input.lines().join("\n");
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Vec::new();
        }
        let command = match trimmed {
            "/ask" => Some(Mode::Ask),
            "/plan" => Some(Mode::Plan),
            "/agent" => Some(Mode::Agent),
            _ => None,
        };
        self.set_input("");
        self.history_pos = None;
        if let Some(mode) = command {
            self.mode = mode;
            return Vec::new();
        }
        if self.job_running() {
            self.transcript.push(Entry::Notice(
                "A job is running; wait for it or press Esc to cancel it.".into(),
            ));
            self.set_input(&text);
            return Vec::new();
        }
        self.history.push(text.clone());
        self.transcript.push(Entry::User(text.clone()));
        let text = if self.pinned.is_empty() {
            text
        } else {
            format!(
                "{text}\n\n[Pinned context: the user pinned these files; read them with read_file: {}]",
                self.pinned.join(", ")
            )
        };
        self.scroll = 0;
        let job_id = format!("job_tui_{}_{:x}", self.next_job, fastrand::u32(..));
        self.next_job += 1;
        self.job = Some(JobView {
            id: job_id.clone(),
            status: JobStatus::Queued,
            steps: 0,
            max_steps: self.max_tool_calls,
        });
        vec![Op::StartJob {
            job_id,
            prompt: text,
            mode: self.mode,
            max_tool_calls: None,
        }]
    }

    /// Applies an engine event.
    pub fn on_event(&mut self, event: &Event) {
        let is_current = self.job.as_ref().is_some_and(|j| j.id == event.job_id);
        if let (Some(status), true) = (event.body.status(), is_current)
            && let Some(job) = &mut self.job
        {
            job.status = status;
        }
        match &event.body {
            EventBody::JobStarted { .. } => {
                self.streaming = false;
                self.attempt = 1;
            }
            EventBody::LlmDelta { text, attempt } => {
                if self.streaming && *attempt != self.attempt {
                    // A retried request: its partial text is void.
                    if let Some(Entry::Assistant(t)) = self.transcript.last_mut() {
                        t.clear();
                    }
                }
                self.attempt = *attempt;
                match (self.streaming, self.transcript.last_mut()) {
                    (true, Some(Entry::Assistant(t))) => t.push_str(text),
                    _ => {
                        self.transcript.push(Entry::Assistant(text.clone()));
                        self.streaming = true;
                    }
                }
            }
            EventBody::ToolCallRequested {
                name, arguments, ..
            } => {
                self.streaming = false;
                if let Some(job) = &mut self.job {
                    job.steps += 1;
                }
                let summary: String = arguments.to_string().chars().take(120).collect();
                self.transcript.push(Entry::Tool {
                    name: name.clone(),
                    summary,
                    ok: None,
                });
            }
            EventBody::ToolCallCompleted { name, ok, .. } => {
                if let Some(Entry::Tool { ok: slot, .. }) = self
                    .transcript
                    .iter_mut()
                    .rev()
                    .find(|e| matches!(e, Entry::Tool { name: n, ok: None, .. } if n == name))
                {
                    *slot = Some(*ok);
                }
            }
            EventBody::ClarificationRequested { question, .. } => {
                self.overlay = Overlay::Clarify {
                    job_id: event.job_id.clone(),
                    question: question.clone(),
                    answer: String::new(),
                };
            }
            EventBody::DiffGenerated { bundle } | EventBody::ReviewUpdated { bundle, .. } => {
                self.set_bundle(&event.job_id, bundle)
            }
            EventBody::ApplyCompleted {
                checkpoint_id,
                files,
                hunk_ids,
                bundle,
            } => {
                self.set_bundle(&event.job_id, bundle);
                if let Some(cp) = self
                    .latest_checkpoint
                    .as_mut()
                    .filter(|cp| &cp.id == checkpoint_id)
                {
                    cp.hunks = bundle
                        .files
                        .iter()
                        .flat_map(|f| f.hunks.iter().map(move |h| (h, &f.file_path)))
                        .filter(|(h, _)| hunk_ids.contains(&h.hunk_id))
                        .map(|(h, f)| (h.hunk_id.clone(), f.clone()))
                        .collect();
                }
                self.transcript.push(Entry::Notice(format!(
                    "Applied {} hunk(s) to {}; checkpoint {checkpoint_id} (Ctrl+Z rolls back).",
                    hunk_ids.len(),
                    files.join(", ")
                )));
                if !bundle.is_pending() {
                    self.reviewing = false;
                    self.review = None;
                }
            }
            EventBody::ApplyFailed { error, .. } => self.transcript.push(Entry::Error(format!(
                "Apply failed, nothing was written: {error}"
            ))),
            EventBody::CheckpointCreated {
                checkpoint_id,
                files,
                ..
            } => {
                self.latest_checkpoint = Some(LatestCheckpoint {
                    id: checkpoint_id.clone(),
                    files: files.clone(),
                    hunks: Vec::new(),
                });
            }
            EventBody::RollbackCompleted {
                checkpoint_id,
                files,
                ..
            } => {
                self.transcript.push(Entry::Notice(format!(
                    "Rolled back {checkpoint_id}: {}.",
                    files.join(", ")
                )));
            }
            EventBody::RollbackFailed { error, .. } => self
                .transcript
                .push(Entry::Error(format!("Rollback failed: {error}"))),
            EventBody::JobCompleted {
                answer,
                usage,
                status,
            } => {
                if !self.streaming || !matches!(self.transcript.last(), Some(Entry::Assistant(_))) {
                    self.transcript.push(Entry::Assistant(answer.clone()));
                }
                self.streaming = false;
                self.tokens.add(*usage);
                if *status == JobStatus::AwaitingReview && self.review.is_some() {
                    self.reviewing = true;
                }
            }
            EventBody::JobFailed { error, .. } => {
                self.streaming = false;
                self.transcript.push(Entry::Error(error.clone()));
            }
            EventBody::JobCancelled {} => {
                self.streaming = false;
                self.transcript.push(Entry::Notice("Cancelled.".into()));
            }
            EventBody::ClarificationReceived { .. }
            | EventBody::EditsProposed { .. }
            | EventBody::ApplyStarted { .. }
            | EventBody::RollbackStarted { .. } => {}
        }
    }

    fn set_bundle(&mut self, job_id: &str, bundle: &DiffBundle) {
        let cursor = self
            .review
            .as_ref()
            .filter(|r| r.job_id == job_id)
            .map_or(0, |r| r.cursor);
        let review = ReviewView {
            job_id: job_id.to_string(),
            bundle: bundle.clone(),
            cursor,
        };
        let n = review.positions().len();
        self.review = Some(ReviewView {
            cursor: cursor.min(n.saturating_sub(1)),
            ..review
        });
    }
}
