//! Taking over the terminal and always giving it back: raw mode, the
//! alternate screen and mouse capture are undone on a normal exit and on a
//! panic in any thread (the process then ends, so no UI is left running on a
//! restored terminal).

use crossterm::event::{DisableMouseCapture, EnableMouseCapture};

/// Raw mode, alternate screen and mouse capture on; a panic hook that undoes
/// them, prints the panic and ends the process with exit code 101.
pub fn enter() -> ratatui::DefaultTerminal {
    // ratatui's init installs its own restoring hook; ours runs first.
    let terminal = ratatui::init();
    let _ = crossterm::execute!(std::io::stdout(), EnableMouseCapture);
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = crossterm::execute!(std::io::stdout(), DisableMouseCapture);
        ratatui::restore();
        previous(info);
        // A panic off the UI thread would leave the UI drawing on a cooked
        // terminal; end here instead. Sessions are flushed at every event.
        std::process::exit(101);
    }));
    terminal
}

/// Gives the terminal back (mouse capture off, cooked mode, main screen).
pub fn leave() {
    let _ = crossterm::execute!(std::io::stdout(), DisableMouseCapture);
    ratatui::restore();
}
