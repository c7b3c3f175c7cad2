//! Copying to the system clipboard with OSC 52: the terminal does it, so
//! it works over SSH. Inside tmux the sequence also goes through tmux's
//! passthrough, which reaches the outer terminal when `allow-passthrough`
//! is on; tmux itself takes the plain one when `set-clipboard` is on.

use std::io::Write;

use crossterm::Command;
use crossterm::clipboard::CopyToClipboard;

/// The OSC 52 sequence that sets the clipboard to `text` (crossterm's).
pub fn sequence(text: &str) -> String {
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = CopyToClipboard::to_clipboard_from(text).write_ansi(&mut out);
    out
}

/// The same, wrapped for tmux's passthrough (inner escapes doubled).
pub fn tmux_passthrough(sequence: &str) -> String {
    format!("\x1bPtmux;{}\x1b\\", sequence.replace('\x1b', "\x1b\x1b"))
}

/// Puts `text` on the clipboard through the terminal.
pub fn copy(text: &str) -> std::io::Result<()> {
    let plain = sequence(text);
    let mut out = std::io::stdout().lock();
    out.write_all(plain.as_bytes())?;
    if std::env::var_os("TMUX").is_some() {
        out.write_all(tmux_passthrough(&plain).as_bytes())?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences() {
        assert_eq!(sequence("hi"), "\x1b]52;c;aGk=\x1b\\");
        assert_eq!(
            tmux_passthrough("\x1b]52;c;aGk=\x1b\\"),
            "\x1bPtmux;\x1b\x1b]52;c;aGk=\x1b\x1b\\\x1b\\"
        );
    }
}
