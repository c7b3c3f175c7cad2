//! Pinned files and pages as an instruction carries them (the markers are
//! `protocol::pins`'): a resumed session reads them back (the user's text
//! shown without them, the files and pages pinned again). `/web URL` pins a
//! page the way `p` pins a file.

pub use crate::protocol::pins::{split_pinned, with_pinned};

use super::App;

impl App {
    /// `/web URL`: the page joins the pins (the model reads it with
    /// `web_fetch`, not asked again: the user chose it).
    pub(super) fn pin_page(&mut self, url: &str) {
        let url = url.trim();
        let parsed = url::Url::parse(url)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some());
        if parsed.is_none() {
            self.status_note = Some(match url {
                "" => "/web takes a page's address: /web https://…".to_string(),
                _ => format!("/web takes an http or https address, not `{url}`."),
            });
            return;
        }
        if self.pinned.iter().any(|p| p == url) {
            self.status_note = Some(format!("{url} is pinned already."));
            return;
        }
        self.pinned.push(url.to_string());
        self.status_note = Some(format!(
            "Pinned {url}: the model reads it with the next message."
        ));
    }
}
