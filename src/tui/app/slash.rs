//! The `/` popup (SPEC 19): typing `/` lists the built-in commands and the
//! custom ones (the project's and the user's prompt files) with their
//! descriptions; Tab completes the first that fits.

use super::App;
use crate::protocol::Mode;

/// The TUI's own commands, which no prompt file can shadow.
const BUILT_IN: [(&str, &str); 8] = [
    ("ask", "switch to Ask mode"),
    ("plan", "switch to Plan mode"),
    ("agent", "switch to Agent mode"),
    ("compact", "summarize the older turns now"),
    ("model", "pick the provider and model of the next messages"),
    ("web", "pin a web page (URL) for the model to read"),
    (
        "memory",
        "the instruction files the model is given, and their tokens",
    ),
    ("hooks", "the hooks that run here: source, trust, last runs"),
];
/// Most rows the popup shows.
const ROWS: usize = 12;

impl App {
    /// `(name, description)` of the commands the input's `/word` can be.
    pub fn slash_matches(&self) -> Vec<(String, String)> {
        let lines = self.input.lines();
        let [line] = lines else {
            return Vec::new();
        };
        let Some(typed) = line.strip_prefix('/') else {
            return Vec::new();
        };
        if typed.starts_with('/') || typed.contains(char::is_whitespace) {
            return Vec::new();
        }
        let own = BUILT_IN.iter().map(|(n, d)| (n.to_string(), d.to_string()));
        let custom = self.commands.iter().map(|c| {
            let mode = c
                .mode
                .map_or(String::new(), |m| format!(" ({} mode)", m.as_str()));
            (c.name.clone(), format!("{}{mode}", c.description))
        });
        custom
            .chain(own)
            .filter(|(n, _)| n.starts_with(typed))
            .take(ROWS)
            .collect()
    }

    /// Runs `text` if it is one of the TUI's own commands that start no
    /// job (modes, `/memory`, `/model`, `/web URL`); whether it was.
    pub(super) fn own_command(&mut self, text: &str) -> bool {
        match text {
            "/ask" => self.mode = Mode::Ask,
            "/plan" => self.mode = Mode::Plan,
            "/agent" => self.mode = Mode::Agent,
            "/memory" => self.loads.push(super::Load::Memory),
            "/hooks" => self.loads.push(super::Load::Hooks),
            "/model" => self.open_models(),
            "/web" => self.pin_page(""),
            _ => match text.strip_prefix("/web ") {
                Some(url) => self.pin_page(url),
                None => return false,
            },
        }
        true
    }

    /// Tab on `/wo`: the first command that fits, and a space after it.
    pub(super) fn complete_slash(&mut self) -> bool {
        let Some((name, _)) = self.slash_matches().into_iter().next() else {
            return false;
        };
        self.set_input(&format!("/{name} "));
        true
    }
}
