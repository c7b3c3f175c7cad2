//! Editing the input: typing, history recall, paste, `@path` completion.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui_textarea::TextArea;

use super::{App, Overlay};

impl App {
    pub(super) fn type_key(&mut self, key: KeyEvent) {
        match key.code {
            KeyCode::Up if self.input.lines().len() <= 1 => self.recall(-1),
            KeyCode::Down if self.input.lines().len() <= 1 => self.recall(1),
            _ => {
                self.input.input(key);
            }
        }
    }

    /// Up/Down in a one-line input walk the history of sent prompts.
    pub(super) fn recall(&mut self, step: isize) {
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

    pub(super) fn set_input(&mut self, text: &str) {
        let mut area = TextArea::new(text.lines().map(str::to_string).collect());
        area.set_placeholder_text(super::PLACEHOLDER);
        area.move_cursor(ratatui_textarea::CursorMove::End);
        self.input = area;
    }

    /// Pasted text goes into the input (or the answer of a question).
    pub fn paste(&mut self, text: &str) {
        match &mut self.overlay {
            Overlay::Clarify { answer, .. } => answer.push_str(text),
            Overlay::OpenRoot {
                input,
                cursor,
                status,
                ..
            } => {
                input.push_str(text.trim_end_matches(['\n', '\r']));
                *cursor = None;
                *status = super::RootDialog::Editing;
            }
            Overlay::Find { input, cursor, .. } => {
                input.push_str(text.trim_end_matches(['\n', '\r']));
                *cursor = 0;
                let typed = input.clone();
                self.loads.push(super::Load::Find {
                    typed,
                    purpose: super::FindFor::Dialog,
                });
            }
            Overlay::EditHunk { editor, .. } => {
                editor.0.insert_str(text);
            }
            Overlay::Models { input, cursor, .. } => {
                input.push_str(text.trim_end_matches(['\n', '\r']));
                *cursor = 0;
            }
            Overlay::None => match super::attach::pasted_image_path(text) {
                // A dropped or pasted image file goes with the message.
                Some(path) => self.attach(super::attach::ImageFrom::File(path)),
                None => {
                    self.input.insert_str(text);
                }
            },
            Overlay::Help { .. }
            | Overlay::Approval { .. }
            | Overlay::Rollback { .. }
            | Overlay::Preview { .. }
            | Overlay::Checkpoints { .. }
            | Overlay::Sessions { .. } => {}
        }
    }

    /// Completes a trailing `@partial` in the input with the best matching
    /// path: a path starting with it, else one whose file name does; else
    /// the code index is asked for a symbol so named (`@readFile` becomes
    /// `@src/fs.rs:42` when its answer comes).
    pub(super) fn complete_path(&mut self) -> bool {
        let line = self.input.lines().last().cloned().unwrap_or_default();
        let Some(token) = line
            .split_whitespace()
            .last()
            .filter(|t| t.starts_with('@') && line.ends_with(*t))
        else {
            return false;
        };
        let partial = &token[1..];
        // A scope's files are `@docs/…`: `@docs/gu` completes to them.
        let by_path = self
            .paths
            .iter()
            .filter(|p| {
                p.starts_with(partial)
                    || p.strip_prefix('@').is_some_and(|s| s.starts_with(partial))
            })
            .min_by_key(|p| p.len());
        let by_name = || {
            self.paths
                .iter()
                .filter(|p| p.rsplit('/').next().is_some_and(|n| n.starts_with(partial)))
                .min_by_key(|p| p.len())
        };
        let Some(found) = by_path.or_else(by_name).map(str::to_string) else {
            let symbol_like = !partial.is_empty()
                && partial
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '$');
            if symbol_like && self.index != super::IndexGauge::Off {
                self.loads.push(super::Load::Find {
                    typed: partial.to_string(),
                    purpose: super::FindFor::Completion,
                });
                return true;
            }
            return false;
        };
        if found == partial {
            return false;
        }
        // The token's own `@` goes too when the path brings one.
        let own_at = usize::from(found.starts_with('@') && !partial.starts_with('@'));
        for _ in 0..partial.chars().count() + own_at {
            self.input.delete_char();
        }
        self.input.insert_str(&found);
        if super::attach::is_image_name(&found) {
            self.attach(super::attach::ImageFrom::Root(found));
        }
        true
    }
}
