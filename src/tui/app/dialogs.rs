//! Keys of the modal dialogs: help, clarification, approval, rollback
//! choice and the hunk editor. While one is open it takes every key.

use crossterm::event::{KeyCode, KeyEvent};

use super::{App, Editor, Entry, Overlay};
use crate::agent::NO_USER_ANSWER;
use crate::protocol::Command;
use crate::tui::keymap::{Action, Context};

impl App {
    /// The commands of `key` when a modal dialog is open (it takes the key).
    pub(super) fn dialog_key(&mut self, key: KeyEvent) -> Option<Vec<Command>> {
        // How far the help scrolls: its lines as drawn on this screen.
        let help_lines = match self.screen {
            Some(screen) if matches!(self.overlay, Overlay::Help { .. }) => {
                crate::tui::render::help_line_count(self, screen)
            }
            Some(_) | None => self.keymap.help_line_count(),
        };
        match &mut self.overlay {
            Overlay::Help { scroll } => {
                // Arrows and pages scroll; any other key closes.
                let step: isize = match key.code {
                    KeyCode::Down | KeyCode::Char('j') => 1,
                    KeyCode::Up | KeyCode::Char('k') => -1,
                    KeyCode::PageDown | KeyCode::Char(' ') => 10,
                    KeyCode::PageUp => -10,
                    _ => 0,
                };
                if step == 0 {
                    self.overlay = Overlay::None;
                } else {
                    // Like a preview: down to the last line at the top.
                    let last = help_lines.saturating_sub(1) as isize;
                    *scroll = (*scroll as isize + step).clamp(0, last) as usize;
                }
                Some(Vec::new())
            }
            Overlay::Clarify { .. } => Some(self.clarify_key(key)),
            Overlay::Rollback { .. } => Some(self.rollback_key(key)),
            Overlay::EditHunk { .. } => Some(self.editor_key(key)),
            Overlay::Approval { .. } => Some(self.approval_key(key)),
            Overlay::OpenRoot { .. } => Some(self.open_root_key(key)),
            Overlay::Find { .. } => Some(self.find_key(key)),
            Overlay::Models { .. } => Some(self.models_key(key)),
            Overlay::None
            | Overlay::Preview { .. }
            | Overlay::Checkpoints { .. }
            | Overlay::Sessions { .. } => None,
        }
    }

    fn clarify_key(&mut self, key: KeyEvent) -> Vec<Command> {
        let Overlay::Clarify { job_id, answer, .. } = &mut self.overlay else {
            return Vec::new();
        };
        let job_id = job_id.clone();
        match key.code {
            KeyCode::Enter => {
                let text = if answer.trim().is_empty() {
                    NO_USER_ANSWER.to_string()
                } else {
                    answer.clone()
                };
                self.overlay = Overlay::None;
                vec![Command::Answer { job_id, text }]
            }
            KeyCode::Esc => {
                self.overlay = Overlay::None;
                vec![Command::Answer {
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
        }
    }

    fn rollback_key(&mut self, key: KeyEvent) -> Vec<Command> {
        let action = self.keymap.lookup(Context::RollbackDialog, &key);
        let Overlay::Rollback {
            checkpoint_id,
            hunks,
            picking,
            ..
        } = &mut self.overlay
        else {
            return Vec::new();
        };
        let id = checkpoint_id.clone();
        match (action, picking) {
            (Some(Action::RollbackAll), None) => {
                self.overlay = Overlay::None;
                vec![Command::Rollback {
                    checkpoint_id: id,
                    hunks: Vec::new(),
                    files: vec![],
                    tell: self.session.clone(),
                }]
            }
            (Some(Action::PickHunks), picking @ None) if !hunks.is_empty() => {
                *picking = Some((vec![false; hunks.len()], 0));
                Vec::new()
            }
            (Some(Action::Down | Action::Up), Some((_, cursor))) => {
                let step: isize = if action == Some(Action::Down) { 1 } else { -1 };
                *cursor = (*cursor as isize + step).clamp(0, hunks.len() as isize - 1) as usize;
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
                vec![Command::Rollback {
                    checkpoint_id: id,
                    hunks: picked,
                    files: vec![],
                    tell: self.session.clone(),
                }]
            }
            (Some(Action::Cancel), _) => {
                self.overlay = Overlay::None;
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    /// y/Enter allows the call once, n/Esc denies it; other keys wait.
    fn approval_key(&mut self, key: KeyEvent) -> Vec<Command> {
        let action = self.keymap.lookup(Context::Approval, &key);
        let Overlay::Approval {
            job_id,
            tool_call_id,
            ..
        } = &self.overlay
        else {
            return Vec::new();
        };
        let approved = match action {
            Some(Action::Allow) => true,
            Some(Action::Deny) => false,
            _ => return Vec::new(),
        };
        let command = Command::Approve {
            job_id: job_id.clone(),
            tool_call_id: tool_call_id.clone(),
            approved,
            reason: None,
        };
        self.overlay = Overlay::None;
        vec![command]
    }

    /// Ctrl+S keeps the text (the engine accepts the hunk as `origin=user`),
    /// Esc drops it; every other key edits.
    fn editor_key(&mut self, key: KeyEvent) -> Vec<Command> {
        let action = self.keymap.lookup(Context::HunkEditor, &key);
        let Overlay::EditHunk {
            job_id,
            hunk_id,
            editor,
            ..
        } = &mut self.overlay
        else {
            return Vec::new();
        };
        match action {
            Some(Action::SaveEdit) => {
                let command = Command::EditHunk {
                    job_id: job_id.clone(),
                    hunk_id: hunk_id.clone(),
                    new_text: editor.text(),
                };
                self.overlay = Overlay::None;
                self.review_error = None;
                vec![command]
            }
            Some(Action::Cancel) => {
                self.overlay = Overlay::None;
                Vec::new()
            }
            _ => {
                editor.0.input(key);
                Vec::new()
            }
        }
    }

    /// `e` in the review: opens the editor on the current hunk's new text.
    pub(super) fn open_hunk_editor(&mut self) {
        let Some(review) = &self.review else { return };
        let Some((f, h)) = review.current() else {
            return;
        };
        let file = &review.bundle.files[f];
        let hunk = &file.hunks[h];
        if hunk.state.is_applied() {
            self.review_error = Some(super::Refusal::Edit(format!(
                "{} is already applied; Ctrl+Z rolls it back",
                hunk.hunk_id
            )));
            self.transcript.push(Entry::Notice(format!(
                "{} is already applied and cannot be edited.",
                hunk.hunk_id
            )));
            return;
        }
        self.overlay = Overlay::EditHunk {
            job_id: review.job_id.clone(),
            hunk_id: hunk.hunk_id.clone(),
            file_path: file.file_path.clone(),
            first_line: hunk.changes.iter().map(|c| c.old_start).min().unwrap_or(0) + 1,
            editor: Box::new(Editor::new(&hunk.proposed_text())),
        };
    }
}
