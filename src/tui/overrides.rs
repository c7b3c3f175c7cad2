//! `[keys]` in the config: users rebind actions (`apply = "ctrl+w"`). The
//! table is checked at start; a rebound action answers only to its new key,
//! in the same panes as before, and help shows the new key.

use std::collections::BTreeMap;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::keymap::{Action, BINDINGS, Context, help_rows, lookup_except};

#[derive(Debug)]
struct Override {
    action: Action,
    code: KeyCode,
    mods: KeyModifiers,
    label: String,
}

/// Which pane's hints the status bar shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HintPane {
    Review,
    Chat,
    Other,
}

/// The default key table plus the user's overrides.
#[derive(Debug, Default)]
pub struct KeyMap {
    overrides: Vec<Override>,
}

/// What the input understands besides instructions.
const COMMANDS: [(&str, &str); 5] = [
    ("/ask /plan /agent", "switch mode"),
    ("/compact", "summarize older turns now (frees context)"),
    ("/model", "pick the provider and model of the next messages"),
    ("/memory", "the instruction files the model is given"),
    (
        "/web URL",
        "pin a web page: the model reads it with web_fetch",
    ),
];

/// A `[keys]` entry that cannot be used: which one, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyError {
    /// The entry's name (the action it means to rebind).
    pub name: String,
    message: String,
}

impl std::fmt::Display for KeyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for KeyError {}

impl KeyMap {
    pub fn from_config(keys: &BTreeMap<String, String>) -> Result<KeyMap, KeyError> {
        let refused = |name: &str, message: String| KeyError {
            name: name.to_string(),
            message,
        };
        let mut overrides = Vec::new();
        for (name, spec) in keys {
            let action = BINDINGS
                .iter()
                .map(|b| b.action)
                .find(|a| a.name() == name && *a != Action::Quit)
                .ok_or_else(|| {
                    let mut names: Vec<&str> = Vec::new();
                    for n in BINDINGS.iter().map(|b| b.action.name()) {
                        if n != "quit" && !names.contains(&n) {
                            names.push(n);
                        }
                    }
                    let why = format!(
                        "[keys] {name}: no such action; actions are {}",
                        names.join(", ")
                    );
                    refused(name, why)
                })?;
            let (code, mods) = parse_key(spec).ok_or_else(|| {
                refused(name, format!("[keys] {name} = \"{spec}\" is not a key; write keys like \"ctrl+s\", \"alt+enter\", \"f2\", \"y\""))
            })?;
            overrides.push(Override {
                action,
                code,
                mods,
                label: spec.clone(),
            });
        }
        Ok(KeyMap { overrides })
    }

    pub fn lookup(&self, context: Context, key: &KeyEvent) -> Option<Action> {
        let mods =
            key.modifiers & (KeyModifiers::CONTROL | KeyModifiers::SHIFT | KeyModifiers::ALT);
        let bound_here = |a: Action| {
            BINDINGS
                .iter()
                .any(|b| b.action == a && (b.context == context || b.context == Context::Global))
        };
        if let Some(o) = self
            .overrides
            .iter()
            .find(|o| o.code == key.code && o.mods == mods && bound_here(o.action))
        {
            return Some(o.action);
        }
        lookup_except(context, key, &|a| {
            self.overrides.iter().any(|o| o.action == a)
        })
    }

    /// The help, one section per pane or dialog with a heading (and the
    /// slash commands last), in the
    /// order the overlay shows them: (heading, [(key label, text)]).
    pub fn help_sections(&self) -> Vec<(&'static str, Vec<(String, &'static str)>)> {
        const SECTIONS: [(Context, &str); 11] = [
            (Context::Global, "Everywhere"),
            (Context::Input, "Input"),
            (Context::Chat, "Chat"),
            (Context::Tree, "File tree"),
            (Context::Preview, "Preview"),
            (Context::Review, "Review"),
            (Context::HunkEditor, "Hunk editor"),
            (Context::RollbackDialog, "Roll back"),
            (Context::Checkpoints, "Checkpoints"),
            (Context::Sessions, "Session picker"),
            (Context::Approval, "Approval"),
        ];
        let rows = self.help_rows();
        let mut sections: Vec<(&'static str, Vec<(String, &'static str)>)> = SECTIONS
            .iter()
            .map(|(context, title)| {
                let keys = rows
                    .iter()
                    .filter(|r| r.2 == *context)
                    .map(|(label, help, _)| (label.clone(), *help))
                    .collect();
                (*title, keys)
            })
            .filter(|(_, keys): &(_, Vec<_>)| !keys.is_empty())
            .collect();
        sections.push((
            "Commands (type them, then Enter)",
            COMMANDS
                .iter()
                .map(|(c, h)| ((*c).to_string(), *h))
                .collect(),
        ));
        sections
    }

    /// How many lines the help overlay has: a heading and a blank line
    /// between sections, one line per key.
    pub fn help_line_count(&self) -> usize {
        let sections = self.help_sections();
        sections
            .iter()
            .map(|(_, keys)| keys.len() + 1)
            .sum::<usize>()
            + sections.len().saturating_sub(1)
    }

    /// The status bar's hints for a pane, most useful first, each with the
    /// key that does it now (a rebound key as configured).
    pub fn status_hints(&self, pane: HintPane) -> Vec<String> {
        use Action as A;
        let (context, hints): (Context, &[(&[Action], &str)]) = match pane {
            HintPane::Review => (
                Context::Review,
                &[
                    (&[A::Accept, A::Reject], "hunk"),
                    (&[A::Apply], "apply"),
                    (&[A::Verify], "verify"),
                    (&[A::Down, A::Up], "move"),
                    (&[A::AcceptFile, A::RejectFile], "file"),
                    (&[A::EditHunk], "edit"),
                    (&[A::WholeFile], "whole file"),
                    (&[A::Cancel], "back"),
                    (&[A::Help], "help"),
                ],
            ),
            HintPane::Chat => (
                Context::Chat,
                &[
                    (&[A::CopyMessage], "copy message"),
                    (&[A::CopyCode], "copy code"),
                    (&[A::ToggleDetails], "details"),
                    (&[A::ScrollDown, A::ScrollUp], "scroll"),
                    (&[A::Help], "help"),
                ],
            ),
            HintPane::Other => (
                Context::Global,
                &[
                    (&[A::Help], "help"),
                    (&[A::FocusNext], "focus"),
                    (&[A::CycleMode], "mode"),
                    (&[A::OpenReview], "review"),
                    (&[A::Rollback], "undo"),
                ],
            ),
        };
        hints
            .iter()
            .filter_map(|(actions, text)| {
                let keys: Vec<String> = actions
                    .iter()
                    .filter_map(|a| self.key_of(context, *a))
                    .collect();
                (!keys.is_empty()).then(|| format!("{} {text}", keys.join("/")))
            })
            .collect()
    }

    /// The key that does `action` in `context`, written short: a rebound
    /// key as configured, else the default's function key, letter (with
    /// Ctrl+) or first spelling.
    fn key_of(&self, context: Context, action: Action) -> Option<String> {
        if let Some(o) = self.overrides.iter().find(|o| o.action == action) {
            return Some(o.label.clone());
        }
        let bound: Vec<&super::keymap::Binding> = BINDINGS
            .iter()
            .filter(|b| {
                b.action == action && (b.context == context || b.context == Context::Global)
            })
            .collect();
        let pick = bound
            .iter()
            .find(|b| matches!(b.code, KeyCode::F(_)))
            .or_else(|| bound.iter().find(|b| matches!(b.code, KeyCode::Char(_))))
            .or_else(|| bound.first())?;
        Some(match pick.code {
            KeyCode::Char(c) if pick.mods.contains(KeyModifiers::CONTROL) => {
                format!("Ctrl+{}", c.to_ascii_uppercase())
            }
            KeyCode::Char(c) => c.to_string(),
            _ => pick
                .label
                .split(" / ")
                .next()
                .unwrap_or(pick.label)
                .trim_end_matches(" ×2")
                .to_string(),
        })
    }

    /// Help rows with rebound keys shown as configured.
    pub fn help_rows(&self) -> Vec<(String, &'static str, Context)> {
        let mut rows: Vec<(String, &'static str, Context)> = Vec::new();
        for (label, help, context) in help_rows() {
            let action = BINDINGS
                .iter()
                .find(|b| b.label == label && b.help == help)
                .map(|b| b.action);
            let label = match action.and_then(|a| self.overrides.iter().find(|o| o.action == a)) {
                Some(o) => o.label.clone(),
                None => label.to_string(),
            };
            rows.push((label, help, context));
        }
        rows
    }
}

/// "ctrl+s", "shift+tab", "alt+enter", "f2", "esc", "space", "y" ...
fn parse_key(spec: &str) -> Option<(KeyCode, KeyModifiers)> {
    let mut mods = KeyModifiers::NONE;
    let parts: Vec<&str> = spec.split('+').map(str::trim).collect();
    let (last, modifiers) = parts.split_last()?;
    for m in modifiers {
        mods |= match m.to_lowercase().as_str() {
            "ctrl" | "control" => KeyModifiers::CONTROL,
            "alt" | "meta" => KeyModifiers::ALT,
            "shift" => KeyModifiers::SHIFT,
            _ => return None,
        };
    }
    let lower = last.to_lowercase();
    let code = match lower.as_str() {
        "enter" | "return" => KeyCode::Enter,
        "esc" | "escape" => KeyCode::Esc,
        "tab" if mods.contains(KeyModifiers::SHIFT) => KeyCode::BackTab,
        "tab" => KeyCode::Tab,
        "backtab" => KeyCode::BackTab,
        "space" => KeyCode::Char(' '),
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        "pageup" => KeyCode::PageUp,
        "pagedown" => KeyCode::PageDown,
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        f if f.len() > 1 && f.starts_with('f') => {
            KeyCode::F(f[1..].parse().ok().filter(|n| (1..=12).contains(n))?)
        }
        _ => {
            let mut chars = last.chars();
            let c = chars.next()?;
            if chars.next().is_some() {
                return None;
            }
            // Letters are case-insensitive with ctrl/alt; a bare capital means shift.
            if c.is_uppercase() && mods.is_empty() {
                mods |= KeyModifiers::SHIFT;
                KeyCode::Char(c)
            } else {
                KeyCode::Char(if mods.is_empty() {
                    c
                } else {
                    c.to_ascii_lowercase()
                })
            }
        }
    };
    Some((code, mods))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> Result<KeyMap, String> {
        map_typed(pairs).map_err(|e| e.to_string())
    }

    fn map_typed(pairs: &[(&str, &str)]) -> Result<KeyMap, KeyError> {
        KeyMap::from_config(
            &pairs
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
        )
    }

    #[test]
    fn rebinding_moves_the_action_to_the_new_key() {
        let keys = map(&[("apply", "ctrl+w"), ("accept", "a")]).unwrap();
        let ctrl = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL);
        assert_eq!(
            keys.lookup(Context::Review, &ctrl('w')),
            Some(Action::Apply)
        );
        assert_eq!(
            keys.lookup(Context::Review, &ctrl('s')),
            None,
            "the old key is free"
        );
        assert_eq!(
            keys.lookup(
                Context::Review,
                &KeyEvent::new(KeyCode::Char('a'), KeyModifiers::NONE)
            ),
            Some(Action::Accept)
        );
        assert_eq!(
            keys.lookup(Context::Input, &ctrl('w')),
            None,
            "apply is not bound in the input"
        );
        let help = keys.help_rows();
        assert!(
            help.iter()
                .any(|(l, h, _)| l == "ctrl+w" && *h == "apply the accepted hunks")
        );
    }

    #[test]
    fn bad_tables_are_refused_with_the_key_named() {
        assert!(
            map(&[("aply", "ctrl+w")])
                .unwrap_err()
                .contains("[keys] aply: no such action")
        );
        assert!(
            map(&[("apply", "ctrl+")])
                .unwrap_err()
                .contains("[keys] apply = \"ctrl+\"")
        );
        assert!(map(&[("apply", "hyper+x")]).is_err());
        // The entry is named for whoever places it in the file.
        assert_eq!(map_typed(&[("aply", "ctrl+w")]).unwrap_err().name, "aply");
        assert_eq!(map_typed(&[("apply", "ctrl+")]).unwrap_err().name, "apply");
        assert!(map(&[("quit", "q")]).is_err());
        assert_eq!(parse_key("F2"), Some((KeyCode::F(2), KeyModifiers::NONE)));
        assert_eq!(
            parse_key("shift+tab"),
            Some((KeyCode::BackTab, KeyModifiers::SHIFT))
        );
        assert_eq!(
            parse_key("Ctrl+S"),
            Some((KeyCode::Char('s'), KeyModifiers::CONTROL))
        );
    }
}
