//! The `/` popup (SPEC 19): typing `/` lists the built-in commands and the
//! custom ones (the project's and the user's prompt files) with their
//! descriptions; Tab completes the first that fits.

use super::App;

/// The TUI's own commands, which no prompt file can shadow.
const BUILT_IN: [(&str, &str); 6] = [
    ("ask", "switch to Ask mode"),
    ("plan", "switch to Plan mode"),
    ("agent", "switch to Agent mode"),
    ("compact", "summarize the older turns now"),
    ("model", "pick the provider and model of the next messages"),
    (
        "memory",
        "the instruction files the model is given, and their tokens",
    ),
];
/// Most rows the popup shows.
const ROWS: usize = 10;

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

    /// Tab on `/wo`: the first command that fits, and a space after it.
    pub(super) fn complete_slash(&mut self) -> bool {
        let Some((name, _)) = self.slash_matches().into_iter().next() else {
            return false;
        };
        self.set_input(&format!("/{name} "));
        true
    }
}
