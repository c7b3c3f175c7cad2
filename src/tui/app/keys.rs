//! How keys change the app: overlays first, then the key table of the
//! focused pane; returns the `Op`s to send.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_textarea::TextArea;

use super::{App, CheckpointRow, Entry, Focus, JobView, Overlay};
use crate::agent::NO_USER_ANSWER;
use crate::checkpoint::ThreeWay;
use crate::protocol::{JobStatus, Mode, Op};
use crate::tui::highlight::StyledLine;
use crate::tui::keymap::{Action, Context};

impl App {
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
                let action = self.keymap.lookup(Context::RollbackDialog, &key);
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
            Overlay::None
            | Overlay::Preview { .. }
            | Overlay::Checkpoints { .. }
            | Overlay::Sessions { .. } => {}
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
        match self.keymap.lookup(context, &key) {
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
                    | Context::Preview
                    | Context::Checkpoints
                    | Context::Sessions => {}
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
            Action::WholeFile => {
                if let Some(review) = &mut self.review
                    && review.whole_file.take().is_none()
                    && let Some((f, _)) = review.current()
                {
                    self.whole_file_request = Some(review.bundle.files[f].clone());
                }
                Vec::new()
            }
            Action::Checkpoints => {
                self.checkpoints_request = true;
                self.overlay = Overlay::Checkpoints {
                    rows: Vec::new(),
                    cursor: 0,
                    three_way: None,
                    file: 0,
                };
                Vec::new()
            }
            Action::Confirm => {
                if let Overlay::Sessions { rows, cursor } = &self.overlay {
                    self.session_choice = Some(rows.get(*cursor).map(|r| r.session_id.clone()));
                    self.overlay = Overlay::None;
                    return Vec::new();
                }
                if let Overlay::Checkpoints {
                    rows,
                    cursor,
                    three_way: None,
                    ..
                } = &self.overlay
                    && let Some(row) = rows.get(*cursor)
                {
                    self.three_way_request = Some(row.id.clone());
                }
                Vec::new()
            }
            Action::ToggleDetails => {
                self.tool_details = !self.tool_details;
                Vec::new()
            }
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
                if matches!(self.overlay, Overlay::Sessions { .. }) {
                    self.session_choice = Some(None);
                    self.overlay = Overlay::None;
                    return Vec::new();
                }
                if let Overlay::Checkpoints { three_way, .. } = &mut self.overlay
                    && three_way.is_some()
                {
                    *three_way = None;
                    return Vec::new();
                }
                if matches!(self.overlay, Overlay::Checkpoints { .. }) {
                    self.overlay = Overlay::None;
                    return Vec::new();
                }
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
                if let Overlay::Sessions { rows, cursor } = &mut self.overlay {
                    *cursor = (*cursor as isize + delta)
                        .clamp(0, rows.len().saturating_sub(1) as isize)
                        as usize;
                    return Vec::new();
                }
                if let Overlay::Checkpoints {
                    rows,
                    cursor,
                    three_way,
                    file,
                } = &mut self.overlay
                {
                    let (slot, len) = match three_way {
                        Some(views) => (file, views.len()),
                        None => (cursor, rows.len()),
                    };
                    *slot =
                        (*slot as isize + delta).clamp(0, len.saturating_sub(1) as isize) as usize;
                    return Vec::new();
                }
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
                    Some((crate::tui::tree::NodeKind::File, rel)) => self.open_preview(rel),
                    Some((crate::tui::tree::NodeKind::Dir { .. }, _)) | None => self.tree.toggle(),
                }
                Vec::new()
            }
            Action::MarkRange => {
                if let Overlay::Preview { mark, scroll, .. } = &mut self.overlay {
                    *mark = match mark {
                        Some(_) => None,
                        None => Some(*scroll),
                    };
                }
                Vec::new()
            }
            Action::Pin => {
                let path = match &mut self.overlay {
                    // With a range marked, pin those lines: `path:10-20`.
                    Overlay::Preview {
                        path, mark, scroll, ..
                    } if mark.is_some() => {
                        let m = mark.take().unwrap_or_default();
                        let (a, b) = (m.min(*scroll) + 1, m.max(*scroll) + 1);
                        Some(format!("{path}:{a}-{b}"))
                    }
                    Overlay::Preview { path, .. } => Some(path.clone()),
                    _ => self
                        .tree
                        .selected()
                        .filter(|n| n.kind == crate::tui::tree::NodeKind::File)
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
            Action::RollbackAll | Action::PickHunks | Action::ToggleChoice => Vec::new(),
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
            Overlay::Help
            | Overlay::Rollback { .. }
            | Overlay::Preview { .. }
            | Overlay::Checkpoints { .. }
            | Overlay::Sessions { .. } => {}
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
            mark: None,
        };
    }

    /// The whole-file view of `path` arrived.
    pub fn whole_file_loaded(&mut self, path: String, rows: Vec<super::WholeFileRow>) {
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
}
