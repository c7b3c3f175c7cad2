//! How keys change the app: overlays first, then the key table of the
//! focused pane; returns the commands to send to the engine. One small
//! handler per group of actions.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{
    App, Details, Entry, Focus, JobPurpose, JobView, Load, Overlay, Quit, VerifyState, View,
};
use crate::protocol::{Command, JobStatus, Mode, SessionRef};
use crate::tui::keymap::{Action, Context};

impl App {
    /// Applies a key; returns the commands to send to the engine. What it
    /// says while an answer streams waits for the answer's end.
    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Command> {
        let before = self.transcript.len();
        let commands = self.key(key);
        self.defer_since(before);
        commands
    }

    fn key(&mut self, key: KeyEvent) -> Vec<Command> {
        let ctrl_c =
            key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl_c {
            if self.quit == Quit::Armed {
                self.quit = Quit::Now;
            } else {
                self.quit = Quit::Armed;
                self.transcript
                    .push(Entry::Notice("Press Ctrl+C again to quit.".into()));
            }
            return Vec::new();
        }
        self.quit = Quit::No;
        self.status_note = None;
        if let Some(commands) = self.dialog_key(key) {
            return commands;
        }
        let context = self.context();
        if key.code == KeyCode::Char('?') && (context != Context::Input || self.input.is_empty()) {
            self.overlay = Overlay::Help { scroll: 0 };
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
                    | Context::Sessions
                    | Context::HunkEditor
                    | Context::Approval => {}
                }
                Vec::new()
            }
        }
    }

    fn act(&mut self, action: Action) -> Vec<Command> {
        match action {
            Action::Send => self.send(),
            Action::Queue => self.queue(),
            Action::Unqueue => self.unqueue(),
            Action::Cancel => self.cancel(),
            Action::Confirm => {
                self.confirm();
                Vec::new()
            }
            Action::Down | Action::Up => {
                self.move_by(if action == Action::Down { 1 } else { -1 });
                Vec::new()
            }
            Action::Accept | Action::Reject => self.decide(action == Action::Accept, false),
            Action::AcceptFile | Action::RejectFile => {
                self.decide(action == Action::AcceptFile, true)
            }
            Action::Apply => self.apply(),
            Action::Verify => self.verify(),
            Action::Feedback => self.feedback(),
            Action::ScrollUp => self.scroll_by(1),
            Action::ScrollDown => self.scroll_by(-1),
            Action::PageUp => self.scroll_page(1),
            Action::PageDown => self.scroll_page(-1),
            Action::RollbackAll
            | Action::PickHunks
            | Action::ToggleChoice
            | Action::SaveEdit
            | Action::Allow
            | Action::Deny
            | Action::Quit => Vec::new(),
            other => {
                self.act_locally(other);
                Vec::new()
            }
        }
    }

    /// Actions that change only the app.
    /// Ctrl+K: the checkpoints list, loading.
    fn open_checkpoints(&mut self) {
        self.loads.push(Load::Checkpoints);
        self.overlay = Overlay::Checkpoints {
            rows: Vec::new(),
            cursor: 0,
            three_way: None,
            file: 0,
        };
    }

    fn act_locally(&mut self, action: Action) {
        match action {
            Action::WholeFile => self.toggle_whole_file(),
            Action::Checkpoints => self.open_checkpoints(),
            Action::ToggleDetails => {
                self.details = match self.details {
                    Details::Folded => Details::Shown,
                    Details::Shown => Details::Folded,
                };
            }
            Action::CopyMessage => self.copy_request = Some(super::CopyRequest::Message),
            Action::CopyCode => self.copy_request = Some(super::CopyRequest::LastCode),
            Action::PasteImage => self.attach(super::attach::ImageFrom::Clipboard),
            Action::Complete => {
                if !self.complete_slash() && !self.complete_path() {
                    self.act_locally(Action::FocusNext);
                }
            }
            Action::FocusNext | Action::FocusPrev => {
                let order = [Focus::Tree, Focus::Chat, Focus::Input];
                let i = order.iter().position(|f| *f == self.focus).unwrap_or(2) as isize;
                let step = if action == Action::FocusNext { 1 } else { -1 };
                self.focus = order[(i + step).rem_euclid(3) as usize];
                if self.focus == Focus::Tree {
                    // Files made since (by hand, too) show up.
                    self.refresh_tree();
                }
            }
            Action::CycleMode => {
                self.mode = match self.mode {
                    Mode::Ask => Mode::Plan,
                    Mode::Plan => Mode::Agent,
                    Mode::Agent => Mode::Ask,
                };
            }
            Action::OpenRoot => self.open_root_dialog(),
            Action::Find => self.open_find(),
            Action::Newline => self.input.insert_newline(),
            Action::OpenReview => self.open_review(),
            Action::Open => self.open_selected(),
            Action::MarkRange => self.mark_range(),
            Action::Pin => self.pin(),
            Action::Rollback => self.offer_rollback(),
            Action::EditHunk => self.open_hunk_editor(),
            Action::Help => self.overlay = Overlay::Help { scroll: 0 },
            // Those that send commands are `act`'s.
            Action::Send
            | Action::Queue
            | Action::Unqueue
            | Action::Cancel
            | Action::Confirm
            | Action::Down
            | Action::Up
            | Action::Accept
            | Action::Reject
            | Action::AcceptFile
            | Action::RejectFile
            | Action::Apply
            | Action::Verify
            | Action::Feedback
            | Action::ScrollUp
            | Action::ScrollDown
            | Action::PageUp
            | Action::PageDown
            | Action::RollbackAll
            | Action::PickHunks
            | Action::ToggleChoice
            | Action::SaveEdit
            | Action::Allow
            | Action::Deny
            | Action::Quit => {}
        }
    }

    /// Enter in a list overlay: pick the session, open the checkpoint.
    fn confirm(&mut self) {
        if let Overlay::Sessions { rows, cursor } = &self.overlay {
            let picked = rows.get(*cursor).map(|r| r.session_id.clone());
            self.overlay = Overlay::None;
            if let Some(id) = picked {
                self.session = Some(id.clone());
                self.loads.push(Load::Session(id));
            }
            return;
        }
        if let Overlay::Checkpoints {
            rows,
            cursor,
            three_way: None,
            ..
        } = &self.overlay
            && let Some(row) = rows.get(*cursor)
        {
            self.loads.push(Load::ThreeWay(row.id.clone()));
        }
    }

    /// Esc: close what is open, innermost first; else cancel the job.
    fn cancel(&mut self) -> Vec<Command> {
        match &mut self.overlay {
            // No pick: a new session.
            Overlay::Sessions { .. } | Overlay::Preview { .. } => {
                self.overlay = Overlay::None;
                return Vec::new();
            }
            Overlay::Checkpoints { three_way, .. } => {
                if three_way.take().is_none() {
                    self.overlay = Overlay::None;
                }
                return Vec::new();
            }
            _ => {}
        }
        if self.view == View::Review {
            // A running verify is stopped first; the review stays.
            if let Some(r) = &self.review
                && matches!(r.verify, VerifyState::Running { .. })
            {
                return vec![Command::CancelVerify {
                    job_id: r.job_id.clone(),
                }];
            }
            self.view = View::Chat;
            return Vec::new();
        }
        match &self.job {
            Some(job) if self.job_running() => vec![Command::Cancel {
                job_id: job.id.clone(),
            }],
            _ => Vec::new(),
        }
    }

    /// Down / Up: in the open list, the review, or the tree.
    fn move_by(&mut self, delta: isize) {
        let step = |at: &mut usize, len: usize| {
            *at = (*at as isize + delta).clamp(0, len.saturating_sub(1) as isize) as usize;
        };
        match &mut self.overlay {
            Overlay::Sessions { rows, cursor } => return step(cursor, rows.len()),
            Overlay::Checkpoints {
                rows,
                cursor,
                three_way,
                file,
            } => {
                return match three_way {
                    Some(views) => step(file, views.len()),
                    None => step(cursor, rows.len()),
                };
            }
            _ => {}
        }
        if self.view == View::Review {
            if let Some(r) = &mut self.review {
                r.go_to((r.cursor as isize + delta).max(0) as usize);
            }
        } else {
            self.tree.move_by(delta);
        }
    }

    fn toggle_whole_file(&mut self) {
        if let Some(review) = &mut self.review {
            review.scroll = super::ReviewScroll::ToHunk;
        }
        if let Some(review) = &mut self.review
            && review.whole_file.take().is_none()
            && let Some((f, _)) = review.current()
        {
            self.loads
                .push(Load::WholeFile(review.bundle.files[f].clone()));
        }
    }

    /// Enter in the tree: preview a file, fold or unfold a folder.
    fn open_selected(&mut self) {
        match self.tree.selected().map(|n| (n.kind, n.rel.clone())) {
            Some((crate::tui::tree::NodeKind::File, rel)) => self.open_preview(rel),
            Some((crate::tui::tree::NodeKind::Dir { .. }, _)) | None => {
                if let Some((rel, depth)) = self.tree.toggle() {
                    self.loads.push(Load::TreeDir { rel, depth });
                }
            }
        }
    }

    fn mark_range(&mut self) {
        if let Overlay::Preview { mark, scroll, .. } = &mut self.overlay {
            *mark = match mark {
                Some(_) => None,
                None => Some(*scroll),
            };
        }
    }

    /// `p`: pins (or unpins) the previewed file, its marked lines, or the
    /// tree's file as context for the next instructions.
    fn pin(&mut self) {
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
    }

    /// Ctrl+Z: the rollback dialog for the newest checkpoint.
    fn offer_rollback(&mut self) {
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
    }

    fn decide(&mut self, accept: bool, whole_file: bool) -> Vec<Command> {
        let Some(review) = &mut self.review else {
            return Vec::new();
        };
        let Some((f, h)) = review.current() else {
            return Vec::new();
        };
        self.review_error = None;
        let file = &review.bundle.files[f];
        let ids: Vec<String> = if whole_file {
            file.hunks.iter().map(|h| h.hunk_id.clone()).collect()
        } else {
            vec![file.hunks[h].hunk_id.clone()]
        };
        // Move on to the next hunk, as reviewers expect.
        if !whole_file {
            review.go_to(review.cursor + 1);
        }
        let (accept_ids, reject_ids) = if accept {
            (ids, Vec::new())
        } else {
            (Vec::new(), ids)
        };
        vec![Command::Decide {
            job_id: review.job_id.clone(),
            accept: accept_ids,
            reject: reject_ids,
            accept_all: false,
        }]
    }

    /// Ctrl+S: applies the accepted hunks; after a failed verify that
    /// still matches the decisions, only once asked again.
    fn apply(&mut self) -> Vec<Command> {
        let Some(r) = &mut self.review else {
            return Vec::new();
        };
        if !r.apply_confirm {
            let ask = match (r.verify.running(), r.failed_verdict()) {
                (true, _) => Some(
                    "A verify of these hunks is still running: Ctrl+S again stops it and applies \
                     now (or wait for its result)."
                        .to_string(),
                ),
                (false, Some(failed)) => Some(format!(
                    "The verify {}: Ctrl+S again applies them anyway.",
                    failed.outcome.verdict()
                )),
                (false, None) => None,
            };
            if let Some(ask) = ask {
                r.apply_confirm = true;
                self.status_note = Some(ask);
                return Vec::new();
            }
        }
        r.apply_confirm = false;
        if !r.bundle.is_pending() && r.bundle.to_apply().next().is_none() {
            // Every hunk decided, none accepted: there is nothing to write,
            // and that is no failure; the review is over.
            self.review = None;
            self.review_error = None;
            self.view = View::Chat;
            self.transcript.push(Entry::Notice(
                "Nothing accepted: nothing written; the review is closed.".into(),
            ));
            self.look_for_other_review();
            return Vec::new();
        }
        vec![Command::Apply {
            job_id: r.job_id.clone(),
        }]
    }

    /// `v`: runs the project's check on the accepted hunks (decisions
    /// sent just before it are recorded first: the engine takes commands
    /// in order; nothing accepted is its refusal, shown in the review).
    fn verify(&mut self) -> Vec<Command> {
        let Some(r) = &mut self.review else {
            return Vec::new();
        };
        r.apply_confirm = false;
        vec![Command::Verify {
            job_id: r.job_id.clone(),
        }]
    }

    /// `f`: sends the failed verify to the model as feedback; the chat
    /// follows the new job.
    fn feedback(&mut self) -> Vec<Command> {
        let Some(r) = &self.review else {
            return Vec::new();
        };
        let failed = match r.verdict.as_ref().filter(|v| !v.passed) {
            Some(result) => result.clone(),
            None => {
                self.status_note =
                    Some("No failed verify to send: v runs one on the accepted hunks.".into());
                return Vec::new();
            }
        };
        let job_id = r.job_id.clone();
        let new_job_id = self.new_job(JobPurpose::Instruction);
        self.transcript.push(Entry::Notice(format!(
            "Sent the failed verify (`{}`) to the model for a corrected proposal.",
            failed.command
        )));
        self.view = View::Chat;
        vec![Command::VerifyFeedback { job_id, new_job_id }]
    }

    pub(super) fn send(&mut self) -> Vec<Command> {
        let text = self.input.lines().join("\n");
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Vec::new();
        }
        self.set_input("");
        self.history_pos = None;
        if self.own_command(trimmed) {
            return Vec::new();
        }
        if self.job_running() {
            let Some(job_id) = self
                .job
                .as_ref()
                .filter(|j| j.purpose == JobPurpose::Instruction)
                .map(|j| j.id.clone())
            else {
                self.transcript.push(Entry::Notice(
                    "The conversation is being compacted; send this when it is done.".into(),
                ));
                self.set_input(&text);
                return Vec::new();
            };
            // Steers the running job: the chat shows it once the model has it.
            self.history.push(text.clone());
            self.status_note = Some("Steering: the model reads it at its next step.".into());
            return vec![Command::Steer {
                job_id,
                text: super::pinned::with_pinned(trimmed, &self.pinned),
            }];
        }
        if trimmed == "/compact" {
            let job_id = self.new_job(JobPurpose::Compact);
            self.transcript.push(Entry::Notice(
                "Compacting the conversation: the model summarizes the older turns…".into(),
            ));
            let session = self.session_ref();
            return vec![Command::Compact { session, job_id }];
        }
        if self.review_left_behind() {
            // Said once; the text stays for the next Enter.
            self.set_input(&text);
            return Vec::new();
        }
        self.history.push(text.clone());
        self.transcript.push(Entry::User(text.clone()));
        if !self.pinned.is_empty() {
            self.transcript.push(Entry::Pinned(self.pinned.clone()));
        }
        let chips = self.attached.chips(&text);
        if !chips.is_empty() {
            self.transcript.push(Entry::Images(chips));
        }
        let images = self.attached.take(&text, &self.paths);
        // The model reads the pins from the prompt (a resumed session too).
        let text = super::pinned::with_pinned(&text, &self.pinned);
        let job_id = self.new_job(JobPurpose::Instruction);
        self.sent_last = Some(job_id.clone());
        vec![Command::StartJob {
            session: self.session_ref(),
            job_id,
            prompt: text,
            mode: self.mode,
            max_tool_calls: None,
            choice: self.choice.clone(),
            images,
            workspace: None,
        }]
    }

    /// The session the next job goes to.
    pub(super) fn session_ref(&self) -> SessionRef {
        match &self.session {
            Some(id) => SessionRef::Id(id.clone()),
            None => SessionRef::New,
        }
    }

    /// A job id not used before in this app.
    pub(super) fn fresh_job_id(&mut self) -> String {
        self.next_job += 1;
        format!("job_tui_{}_{:x}", self.next_job - 1, fastrand::u32(..))
    }

    /// A fresh job id, now the current job.
    fn new_job(&mut self, purpose: JobPurpose) -> String {
        self.scroll = 0;
        let job_id = self.fresh_job_id();
        self.job = Some(JobView {
            id: job_id.clone(),
            purpose,
            status: JobStatus::Queued,
            steps: 0,
            max_steps: self.max_tool_calls,
        });
        job_id
    }
}
