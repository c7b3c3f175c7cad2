//! Scrolling by a row or a page: the chat, a file preview, the review's
//! hunk or whole-file view. A page is the rows the view shows (in the
//! terminal as last drawn) less two, so a little of the last page stays.

use super::{App, Overlay, ReviewScroll, View};
use crate::protocol::Command;
use crate::tui::render;

/// A page's rows before the first frame (the size is not known yet).
const PAGE_BEFORE_A_FRAME: usize = 10;

impl App {
    /// Scrolls the view in front up (positive: towards the top) or down;
    /// the transcript at 0 follows the newest text.
    pub fn scroll_by(&mut self, rows: isize) -> Vec<Command> {
        if let Overlay::Preview { scroll, lines, .. } = &mut self.overlay {
            // In a preview, "up" means towards the top of the file.
            let max = lines.len().saturating_sub(1) as isize;
            *scroll = (*scroll as isize - rows).clamp(0, max.max(0)) as usize;
            return Vec::new();
        }
        if self.view == View::Review && self.overlay == Overlay::None {
            self.scroll_review(rows);
            return Vec::new();
        }
        self.scroll = (self.scroll as isize + rows).max(0) as usize;
        Vec::new()
    }

    /// PgUp (`pages` 1) / PgDn (-1): a page of the view in front.
    pub(super) fn scroll_page(&mut self, pages: isize) -> Vec<Command> {
        let page = self.page_rows().saturating_sub(2).max(1) as isize;
        self.scroll_by(pages * page)
    }

    /// The rows the view in front shows.
    fn page_rows(&self) -> usize {
        let Some(screen) = self.screen else {
            return PAGE_BEFORE_A_FRAME + 2;
        };
        match (&self.overlay, self.view) {
            (Overlay::Preview { .. }, _) => render::preview_rows(screen),
            (_, View::Review) => render::review_window(self, screen)
                .map_or(PAGE_BEFORE_A_FRAME + 2, |(_, height, _)| height),
            (_, View::Chat) => render::chat_rows(self, screen),
        }
    }

    /// The review's hunk (or whole file) up or down, within its rows.
    fn scroll_review(&mut self, rows: isize) {
        let window = self.screen.and_then(|s| render::review_window(self, s));
        let Some(review) = &mut self.review else {
            return;
        };
        let (start, last) = match (window, review.scroll) {
            (Some((start, height, total)), _) => (start, total.saturating_sub(height)),
            (None, ReviewScroll::At(n)) => (n, usize::MAX),
            (None, ReviewScroll::ToHunk) => (0, usize::MAX),
        };
        let to = (start as isize - rows).clamp(0, last.min(isize::MAX as usize) as isize);
        review.scroll = ReviewScroll::At(to as usize);
    }
}
