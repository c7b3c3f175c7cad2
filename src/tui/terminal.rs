//! Taking over the terminal and always giving it back: raw mode, the
//! alternate screen and mouse capture are undone on a normal exit and on a
//! panic in any thread (the process then ends, so no UI is left running on a
//! restored terminal). The terminal's size is kept (`Screen`), not asked
//! for at every frame.

use std::io::Stdout;

use crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, DisableMouseCapture, EnableBracketedPaste,
    EnableFocusChange, EnableMouseCapture,
};
use ratatui::backend::{Backend, ClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};

/// The terminal the TUI draws on.
pub type Term = ratatui::Terminal<Screen>;

/// crossterm's backend with the terminal's size kept: crossterm opens
/// `/dev/tty` to ask for it, twice a frame; it changes only with a resize
/// event, which sets it (`resized`).
pub struct Screen {
    inner: CrosstermBackend<Stdout>,
    size: Size,
}

impl Screen {
    /// The size a resize event gives; the next frame is drawn at it.
    pub fn resized(&mut self, width: u16, height: u16) {
        self.size = Size::new(width, height);
    }
}

impl Backend for Screen {
    type Error = std::io::Error;

    fn draw<'a, I>(&mut self, content: I) -> std::io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        self.inner.draw(content)
    }

    fn hide_cursor(&mut self) -> std::io::Result<()> {
        self.inner.hide_cursor()
    }

    fn show_cursor(&mut self) -> std::io::Result<()> {
        self.inner.show_cursor()
    }

    fn get_cursor_position(&mut self) -> std::io::Result<Position> {
        self.inner.get_cursor_position()
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> std::io::Result<()> {
        self.inner.set_cursor_position(position)
    }

    fn clear(&mut self) -> std::io::Result<()> {
        self.inner.clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> std::io::Result<()> {
        self.inner.clear_region(clear_type)
    }

    fn size(&self) -> std::io::Result<Size> {
        Ok(self.size)
    }

    fn window_size(&mut self) -> std::io::Result<WindowSize> {
        self.inner.window_size()
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Backend::flush(&mut self.inner)
    }
}

/// Raw mode, alternate screen and mouse capture on; a panic hook that undoes
/// them, prints the panic and ends the process with exit code 101.
pub fn enter() -> Result<Term, String> {
    // ratatui's init: raw mode, the alternate screen and its own restoring
    // hook (ours runs first); its terminal gives way to one whose size is
    // kept.
    drop(ratatui::init());
    let inner = CrosstermBackend::new(std::io::stdout());
    let size = inner
        .size()
        .map_err(|e| format!("cannot read the terminal's size: {e}"))?;
    let terminal = ratatui::Terminal::new(Screen { inner, size })
        .map_err(|e| format!("cannot take the terminal: {e}"))?;
    // Focus reporting: notifications wait for the terminal to lose focus.
    // Bracketed paste: a pasted text (an image's path, several lines)
    // arrives whole, not as keys (its newlines would send it).
    let _ = crossterm::execute!(
        std::io::stdout(),
        EnableMouseCapture,
        EnableFocusChange,
        EnableBracketedPaste
    );
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = crossterm::execute!(
            std::io::stdout(),
            DisableMouseCapture,
            DisableFocusChange,
            DisableBracketedPaste
        );
        ratatui::restore();
        previous(info);
        // A panic off the UI thread would leave the UI drawing on a cooked
        // terminal; end here instead. Sessions are flushed at every event.
        std::process::exit(101);
    }));
    Ok(terminal)
}

/// Gives the terminal back (mouse capture off, cooked mode, main screen).
pub fn leave() {
    let _ = crossterm::execute!(
        std::io::stdout(),
        DisableMouseCapture,
        DisableFocusChange,
        DisableBracketedPaste
    );
    ratatui::restore();
}
