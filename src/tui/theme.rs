//! `[ui] theme`. The screen is drawn for a dark background; with `light`
//! the finished frame's colours are mapped to ones that read on a light
//! one: named accents to darker tones, the diff tints to pale ones, and
//! the (light) syntax colours darkened. One pure pass over the frame.

use ratatui::buffer::Buffer;
use ratatui::style::Color;

use crate::config::Theme;

/// Maps every cell's colours for `theme` (nothing to do for dark).
pub fn adapt(buf: &mut Buffer, theme: Theme) {
    if theme == Theme::Dark {
        return;
    }
    for cell in &mut buf.content {
        cell.fg = foreground(cell.fg);
        cell.bg = background(cell.bg);
    }
}

fn foreground(c: Color) -> Color {
    match c {
        Color::Yellow | Color::LightYellow => Color::Rgb(0x8a, 0x5c, 0x00),
        Color::Cyan | Color::LightCyan => Color::Rgb(0x00, 0x6b, 0x80),
        Color::Green | Color::LightGreen => Color::Rgb(0x1a, 0x7f, 0x37),
        Color::Red | Color::LightRed => Color::Rgb(0xb3, 0x1d, 0x28),
        Color::LightMagenta | Color::Magenta => Color::Rgb(0x8a, 0x2b, 0x9e),
        Color::LightBlue | Color::Blue => Color::Rgb(0x0b, 0x5c, 0xad),
        Color::DarkGray => Color::Rgb(0x6a, 0x73, 0x7d),
        Color::White => Color::Black,
        Color::Rgb(r, g, b) if luminance(r, g, b) > 0.45 => {
            // Pastels made for a dark background: same hue, darker.
            let k = 0.45 / luminance(r, g, b);
            let scale = |v: u8| (f64::from(v) * k).round().clamp(0.0, 255.0) as u8;
            Color::Rgb(scale(r), scale(g), scale(b))
        }
        other => other,
    }
}

fn background(c: Color) -> Color {
    match c {
        // The review's added / removed line tints.
        Color::Rgb(0, 50, 0) => Color::Rgb(0xdc, 0xf5, 0xdc),
        Color::Rgb(60, 0, 0) => Color::Rgb(0xfb, 0xe1, 0xe1),
        // Black-on-colour badges stay legible as they are.
        other => other,
    }
}

/// Relative luminance, 0 (black) to 1 (white).
fn luminance(r: u8, g: u8, b: u8) -> f64 {
    (0.2126 * f64::from(r) + 0.7152 * f64::from(g) + 0.0722 * f64::from(b)) / 255.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;

    #[test]
    fn light_maps_accents_tints_and_pastels_dark_leaves_all() {
        let mut buf = Buffer::empty(Rect::new(0, 0, 3, 1));
        buf.content[0].fg = Color::Yellow;
        buf.content[1].bg = Color::Rgb(0, 50, 0);
        buf.content[2].fg = Color::Rgb(0xc0, 0xc5, 0xce);
        let dark = buf.clone();
        adapt(&mut buf, Theme::Dark);
        assert_eq!(buf, dark);
        adapt(&mut buf, Theme::Light);
        assert_eq!(buf.content[0].fg, Color::Rgb(0x8a, 0x5c, 0x00));
        assert_eq!(buf.content[1].bg, Color::Rgb(0xdc, 0xf5, 0xdc));
        let Color::Rgb(r, g, b) = buf.content[2].fg else {
            panic!()
        };
        assert!(luminance(r, g, b) <= 0.46, "{r} {g} {b}");
    }
}
