//! `Ctrl+O`: the dialog that opens another folder as the agent root. The
//! user types a path (Tab completes folder names) or picks a recent root;
//! the event loop opens it off the UI task and swaps the engine.

use crossterm::event::{KeyCode, KeyEvent};

use super::{App, Entry, Load, Overlay};
use crate::protocol::Command;

/// Where the dialog stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RootDialog {
    Editing,
    /// The folder is being opened.
    Opening,
    /// It could not be opened: why.
    Failed(String),
}

impl App {
    /// Opens the dialog, unless a job is running (it must end first).
    pub(super) fn open_root_dialog(&mut self) {
        // The session picker of a root just opened is answered first.
        if matches!(self.overlay, Overlay::Sessions { .. }) {
            return;
        }
        if self.job_running() {
            self.transcript.push(Entry::Notice(
                "A job is running: let it finish or press Esc to cancel it, then Ctrl+O opens another folder."
                    .into(),
            ));
            return;
        }
        self.overlay = Overlay::OpenRoot {
            input: String::new(),
            choices: Vec::new(),
            cursor: None,
            status: RootDialog::Editing,
        };
        self.loads.push(Load::RecentRoots);
    }

    pub(super) fn open_root_key(&mut self, key: KeyEvent) -> Vec<Command> {
        let Overlay::OpenRoot {
            input,
            choices,
            cursor,
            status,
        } = &mut self.overlay
        else {
            return Vec::new();
        };
        if *status == RootDialog::Opening {
            return Vec::new();
        }
        match key.code {
            KeyCode::Esc => self.overlay = Overlay::None,
            KeyCode::Enter => {
                let path = match (input.trim(), *cursor) {
                    ("", Some(i)) => choices.get(i).cloned().unwrap_or_default(),
                    (typed, _) => typed.to_string(),
                };
                if !path.is_empty() {
                    *status = RootDialog::Opening;
                    self.loads.push(Load::OpenRoot(path));
                }
            }
            KeyCode::Tab => {
                self.loads.push(Load::RootCompletion(input.clone()));
            }
            KeyCode::Down | KeyCode::Up if !choices.is_empty() => {
                let last = choices.len() - 1;
                let next = match (*cursor, key.code) {
                    (None, KeyCode::Down) => 0,
                    (None, _) => last,
                    (Some(i), KeyCode::Down) => (i + 1).min(last),
                    (Some(i), _) => i.saturating_sub(1),
                };
                *cursor = Some(next);
                *input = choices[next].clone();
                *status = RootDialog::Editing;
            }
            KeyCode::Backspace => {
                input.pop();
                *cursor = None;
                *status = RootDialog::Editing;
            }
            KeyCode::Char(c) => {
                input.push(c);
                *cursor = None;
                *status = RootDialog::Editing;
            }
            _ => {}
        }
        Vec::new()
    }

    /// The recent roots, offered while nothing is typed.
    pub fn recent_roots_loaded(&mut self, recent: Vec<String>) {
        if let Overlay::OpenRoot { input, choices, .. } = &mut self.overlay
            && input.is_empty()
        {
            *choices = recent;
        }
    }

    /// The folders `typed` can complete to: one fills the input, several
    /// are offered.
    pub fn root_completions_loaded(&mut self, typed: &str, found: Vec<String>) {
        let Overlay::OpenRoot {
            input,
            choices,
            cursor,
            ..
        } = &mut self.overlay
        else {
            return;
        };
        if input != typed {
            return;
        }
        if let [only] = found.as_slice() {
            input.clone_from(only);
        } else if let Some(common) = common_prefix(&found)
            && common.len() > input.len()
        {
            *input = common;
        }
        *choices = found;
        *cursor = None;
    }

    /// What to say of the review on screen when another root opens: it
    /// stays pending in this one, and how to come back to it (`latest`:
    /// this root's newest session, the one `--continue` opens).
    pub fn left_review_note(&self, latest: Option<&str>) -> Option<String> {
        self.review.as_ref().filter(|r| r.bundle.is_pending())?;
        let how = match (&self.session, latest) {
            (Some(s), Some(l)) if s != l => format!("agent-tui --resume {s}"),
            _ => "agent-tui --continue".to_string(),
        };
        Some(format!(
            "The review pending in {} stays there ({how} in that folder).",
            self.root
        ))
    }

    /// The folder could not be opened: the dialog stays, with the reason.
    pub fn root_open_failed(&mut self, why: String) {
        if let Overlay::OpenRoot { status, .. } = &mut self.overlay {
            *status = RootDialog::Failed(why);
        }
    }
}

/// The longest prefix all of `items` share, if there are any.
fn common_prefix(items: &[String]) -> Option<String> {
    let first = items.first()?;
    let mut len = first.len();
    for item in &items[1..] {
        len = first
            .char_indices()
            .zip(item.chars())
            .take_while(|((_, a), b)| a == b)
            .last()
            .map_or(0, |((i, a), _)| i + a.len_utf8())
            .min(len);
    }
    Some(first[..len].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completions_share_their_prefix() {
        let dir = tempfile::tempdir().unwrap();
        for d in ["alpha", "alps", "beta", ".hidden"] {
            std::fs::create_dir(dir.path().join(d)).unwrap();
        }
        std::fs::write(dir.path().join("alpine.txt"), "x").unwrap();
        let base = format!("{}/", dir.path().display());
        let found = crate::agent::complete_folder(&format!("{base}al"));
        assert_eq!(common_prefix(&found), Some(format!("{base}alp")));
    }
}
