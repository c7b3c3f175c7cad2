//! `Ctrl+P`: a file or a symbol by a fuzzy name, opened in the preview
//! (at the symbol's line); and `@` completion of a symbol's name to the
//! place that defines it. Both ask the engine's code index as the user
//! types; an answer to an older text is dropped.

use crossterm::event::{KeyCode, KeyEvent};

use super::{App, Load, Overlay};
use crate::protocol::{Command, Found};

/// Most rows the dialog lists.
pub const FIND_ROWS: usize = 30;

/// What a lookup was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindFor {
    Dialog,
    /// `Tab` after `@name` when no path starts with it.
    Completion,
}

/// The code index as the status bar shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexGauge {
    /// Not asked yet.
    Unknown,
    Building {
        done: usize,
        total: usize,
    },
    Ready {
        files: usize,
    },
    /// Turned off, or no state home.
    Off,
    Failed(String),
}

impl IndexGauge {
    /// `index 14.8k files`, `indexing 43 %`, or nothing.
    pub fn label(&self) -> Option<String> {
        match self {
            IndexGauge::Unknown | IndexGauge::Off => None,
            IndexGauge::Building { done, total } => {
                Some(format!("indexing {} %", done * 100 / (*total).max(1)))
            }
            IndexGauge::Ready { files } if *files >= 1000 => {
                Some(format!("index {:.1}k files", *files as f64 / 1000.0))
            }
            IndexGauge::Ready { files } => Some(format!("index {files} files")),
            IndexGauge::Failed(_) => Some("index failed".into()),
        }
    }
}

impl App {
    /// Opens the dialog (its list fills as the user types).
    pub(super) fn open_find(&mut self) {
        self.overlay = Overlay::Find {
            input: String::new(),
            found: Vec::new(),
            cursor: 0,
        };
        self.loads.push(Load::Find {
            typed: String::new(),
            purpose: FindFor::Dialog,
        });
    }

    pub(super) fn find_key(&mut self, key: KeyEvent) -> Vec<Command> {
        let Overlay::Find {
            input,
            found,
            cursor,
        } = &mut self.overlay
        else {
            return Vec::new();
        };
        match key.code {
            KeyCode::Esc => self.overlay = Overlay::None,
            KeyCode::Enter => {
                if let Some(f) = found.get(*cursor).cloned() {
                    self.open_found(&f);
                }
            }
            KeyCode::Down => *cursor = (*cursor + 1).min(found.len().saturating_sub(1)),
            KeyCode::Up => *cursor = cursor.saturating_sub(1),
            KeyCode::Backspace | KeyCode::Char(_) => {
                match key.code {
                    KeyCode::Char(c) => input.push(c),
                    _ => {
                        input.pop();
                    }
                }
                *cursor = 0;
                let typed = input.clone();
                self.loads.push(Load::Find {
                    typed,
                    purpose: FindFor::Dialog,
                });
            }
            _ => {}
        }
        Vec::new()
    }

    /// The preview of what was picked, a symbol's line near the top.
    fn open_found(&mut self, found: &Found) {
        self.open_preview(found.path.clone());
        if let (Some(line), Overlay::Preview { scroll, .. }) = (found.line, &mut self.overlay) {
            *scroll = (line as usize).saturating_sub(3);
        }
    }

    /// The index's answer for `typed`.
    pub fn found_loaded(&mut self, typed: &str, purpose: FindFor, list: Vec<Found>) {
        match purpose {
            FindFor::Dialog => {
                if let Overlay::Find {
                    input,
                    found,
                    cursor,
                } = &mut self.overlay
                    && input == typed
                {
                    *found = list;
                    *cursor = (*cursor).min(found.len().saturating_sub(1));
                }
            }
            FindFor::Completion => self.complete_symbol(typed, &list),
        }
    }

    /// `@typed` still ends the input: it becomes `@path:line` of the best
    /// symbol so named.
    fn complete_symbol(&mut self, typed: &str, list: &[Found]) {
        let line = self.input.lines().last().cloned().unwrap_or_default();
        if !line.ends_with(&format!("@{typed}")) {
            return;
        }
        let Some(best) = list.iter().find(|f| f.symbol.is_some()) else {
            self.status_note = Some(format!("nothing named like {typed}"));
            return;
        };
        for _ in 0..typed.chars().count() {
            self.input.delete_char();
        }
        let at = best.line.map(|l| format!(":{l}")).unwrap_or_default();
        self.input.insert_str(format!("{}{at}", best.path));
    }

    /// What the engine said of its index: the files it holds, or why not.
    pub fn index_loaded(&mut self, files: Result<usize, String>) {
        self.index = match files {
            Ok(files) => IndexGauge::Ready { files },
            Err(why) if why.contains("turned off") || why.contains("state home") => IndexGauge::Off,
            Err(why) => IndexGauge::Failed(why),
        };
    }

    /// A build's progress (files read of files listed).
    pub fn index_progress(&mut self, done: usize, total: usize) {
        if !matches!(self.index, IndexGauge::Ready { .. }) {
            self.index = IndexGauge::Building { done, total };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gauge_says_files_or_progress() {
        assert_eq!(
            IndexGauge::Ready { files: 14_812 }.label().unwrap(),
            "index 14.8k files"
        );
        assert_eq!(
            IndexGauge::Ready { files: 604 }.label().unwrap(),
            "index 604 files"
        );
        assert_eq!(
            IndexGauge::Building {
                done: 43,
                total: 100
            }
            .label()
            .unwrap(),
            "indexing 43 %"
        );
        assert_eq!(IndexGauge::Off.label(), None);
    }
}
