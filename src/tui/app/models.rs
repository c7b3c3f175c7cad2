//! `/model` (SPEC 19): a picker over the configured providers and the
//! models each one lists (typing narrows it); the pick applies to this
//! session's next messages, queued ones included, and shows in the status
//! bar. A provider that cannot be asked is marked (its key unset, or its
//! server silent); one without its key cannot be picked.

use crossterm::event::{KeyCode, KeyEvent};

use super::{App, Load, Overlay};
use crate::protocol::{Command, ModelChoice, ProviderModels, Reach};

/// One line of the picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRow {
    pub provider: String,
    pub model: String,
    /// The engine's own provider and its model (jobs without a pick).
    pub default: bool,
    /// Why the provider's list is missing (`no key: …`, `offline: …`).
    pub note: Option<String>,
    /// A provider whose key is unset cannot run a job.
    pub usable: bool,
}

/// The picker's rows: each provider's listed models (its configured one
/// first), or its configured model alone with why nothing was listed.
pub fn rows(lists: &[ProviderModels]) -> Vec<ModelRow> {
    let mut out = Vec::new();
    let mut lists: Vec<&ProviderModels> = lists.iter().collect();
    // The engine's own provider first, then by name.
    lists.sort_by_key(|p| (!p.current, p.name.clone()));
    for p in lists {
        let (note, usable) = match &p.reach {
            Reach::Listed => (None, true),
            Reach::NoKey { var } => (Some(format!("no key: set {var}")), false),
            Reach::Offline { error } => (Some(format!("offline: {error}")), true),
        };
        let mut models = vec![p.model.clone()];
        models.extend(p.models.iter().filter(|m| **m != p.model).cloned());
        for model in models {
            out.push(ModelRow {
                provider: p.name.clone(),
                default: p.current && model == p.model,
                model,
                note: note.clone(),
                usable,
            });
        }
    }
    out
}

/// The rows whose `provider model` holds every typed word.
pub fn shown<'a>(rows: &'a [ModelRow], typed: &str) -> Vec<&'a ModelRow> {
    let words: Vec<String> = typed.split_whitespace().map(str::to_lowercase).collect();
    rows.iter()
        .filter(|r| {
            let text = format!("{} {}", r.provider, r.model).to_lowercase();
            words.iter().all(|w| text.contains(w.as_str()))
        })
        .collect()
}

impl App {
    /// Opens the picker; its rows come when the providers have answered.
    pub(super) fn open_models(&mut self) {
        self.overlay = Overlay::Models {
            input: String::new(),
            rows: Vec::new(),
            cursor: 0,
            loading: true,
        };
        self.loads.push(Load::Models);
    }

    /// The providers' answers, the row in use under the cursor.
    pub fn models_loaded(&mut self, lists: &[ProviderModels]) {
        let choice = self.choice.clone();
        if let Overlay::Models {
            rows: shown_rows,
            cursor,
            loading,
            ..
        } = &mut self.overlay
        {
            *shown_rows = rows(lists);
            *loading = false;
            *cursor = shown_rows
                .iter()
                .position(|r| match &choice {
                    Some(c) => {
                        c.provider.as_deref() == Some(&r.provider)
                            && c.model.as_deref() == Some(&r.model)
                    }
                    None => r.default,
                })
                .unwrap_or(0);
        }
    }

    pub(super) fn models_key(&mut self, key: KeyEvent) -> Vec<Command> {
        let Overlay::Models {
            input,
            rows,
            cursor,
            ..
        } = &mut self.overlay
        else {
            return Vec::new();
        };
        let count = shown(rows, input).len();
        match key.code {
            KeyCode::Esc => self.overlay = Overlay::None,
            KeyCode::Enter => {
                let picked = shown(rows, input).get(*cursor).map(|r| (*r).clone());
                if let Some(row) = picked {
                    self.pick_model(&row);
                }
            }
            KeyCode::Down => *cursor = (*cursor + 1).min(count.saturating_sub(1)),
            KeyCode::Up => *cursor = cursor.saturating_sub(1),
            KeyCode::Char(c) => {
                input.push(c);
                *cursor = 0;
            }
            KeyCode::Backspace => {
                input.pop();
                *cursor = 0;
            }
            _ => {}
        }
        Vec::new()
    }

    /// `row` for the next messages; the engine's own undoes a pick.
    fn pick_model(&mut self, row: &ModelRow) {
        if !row.usable {
            let why = row.note.clone().unwrap_or_default();
            self.status_note = Some(format!("{} cannot be used here ({why}).", row.provider));
            return;
        }
        self.overlay = Overlay::None;
        self.choice = (!row.default).then(|| ModelChoice {
            provider: Some(row.provider.clone()),
            model: Some(row.model.clone()),
        });
        self.status_note = Some(match &self.choice {
            Some(c) => format!("Next messages go to {}.", c.label()),
            None => format!("Next messages go to {} (the default).", self.provider_label),
        });
    }

    /// The status bar's provider: the pick, else the engine's.
    pub fn shown_provider(&self) -> String {
        match &self.choice {
            Some(c) => format!("{} (/model)", c.label()),
            None => self.provider_label.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(
        name: &str,
        model: &str,
        current: bool,
        models: &[&str],
        reach: Reach,
    ) -> ProviderModels {
        ProviderModels {
            name: name.into(),
            kind: "openai".into(),
            model: model.into(),
            current,
            models: models.iter().map(|m| m.to_string()).collect(),
            reach,
        }
    }

    #[test]
    fn rows_put_the_default_first_and_mark_what_cannot_be_asked() {
        let lists = vec![
            listed(
                "anthropic",
                "claude",
                false,
                &[],
                Reach::NoKey {
                    var: "ANTHROPIC_API_KEY".into(),
                },
            ),
            listed("local", "qwen", true, &["llama", "qwen"], Reach::Listed),
        ];
        let r = rows(&lists);
        let names: Vec<(&str, &str, bool)> = r
            .iter()
            .map(|r| (r.provider.as_str(), r.model.as_str(), r.default))
            .collect();
        assert_eq!(
            names,
            vec![
                ("local", "qwen", true),
                ("local", "llama", false),
                ("anthropic", "claude", false)
            ]
        );
        assert!(!r[2].usable);
        assert_eq!(r[2].note.as_deref(), Some("no key: set ANTHROPIC_API_KEY"));
        assert_eq!(shown(&r, "LOC lla").len(), 1);
        // A server that did not answer: its configured model, marked, still usable.
        let silent = vec![listed(
            "lan",
            "coder",
            false,
            &[],
            Reach::Offline {
                error: "connection refused".into(),
            },
        )];
        let r = rows(&silent);
        assert_eq!(
            (r.len(), r[0].model.as_str(), r[0].usable),
            (1, "coder", true)
        );
        assert_eq!(r[0].note.as_deref(), Some("offline: connection refused"));
    }
}
