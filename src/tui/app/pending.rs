//! The session's pending reviews: the engine keeps every job's review, the
//! app shows one. Sending an instruction while the one on screen still has
//! hunks to decide or to apply asks once; `Ctrl+R` once it is done opens
//! the session's other pending review (the engine's `pending_review`).

use super::{App, Entry, Load, ReviewView, View};
use crate::protocol::words::counted;
use crate::protocol::{DiffBundle, HunkState, PendingReview};

impl App {
    /// Whether an instruction should wait: the review on screen still has
    /// hunks not applied, and this is the first Enter since it said so
    /// (the next one sends; the review stays, Ctrl+R reaches it).
    pub(super) fn review_left_behind(&mut self) -> bool {
        let Some(r) = self.review.as_mut().filter(|r| r.bundle.is_pending()) else {
            return false;
        };
        if r.send_confirm {
            r.send_confirm = false;
            return false;
        }
        r.send_confirm = true;
        let note = left_note(&r.bundle);
        self.transcript.push(Entry::Notice(note.clone()));
        self.status_note = Some(note);
        true
    }

    /// Ctrl+R: the review on screen while it has something to decide or to
    /// apply; once it is done (or there is none), the session's other
    /// pending review, asked of the engine.
    pub(super) fn open_review(&mut self) {
        match (&self.review, &self.session) {
            (Some(r), _) if r.bundle.is_pending() => self.view = View::Review,
            (_, Some(session)) => self.loads.push(Load::PendingReview {
                session: session.clone(),
                open: true,
            }),
            (Some(_), None) => self.view = View::Review,
            (None, None) => self
                .transcript
                .push(Entry::Notice("Nothing to review.".into())),
        }
    }

    /// The review on screen is done: another one of the session still
    /// pending is said (not opened).
    pub(super) fn look_for_other_review(&mut self) {
        if let Some(session) = &self.session {
            self.loads.push(Load::PendingReview {
                session: session.clone(),
                open: false,
            });
        }
    }

    /// The session's newest pending review arrived (`open`: Ctrl+R asked).
    pub(super) fn pending_review_loaded(
        &mut self,
        open: bool,
        result: Result<Option<PendingReview>, String>,
    ) {
        let on_screen = self.review.as_ref().map(|r| r.job_id.clone());
        match (result, open) {
            // The one on screen (still pending): nothing else to open.
            (Ok(Some(p)), true) if on_screen.as_deref() == Some(p.job_id.as_str()) => {
                self.view = View::Review;
            }
            (Ok(Some(p)), true) => self.show_pending(p),
            (Ok(Some(p)), false) if on_screen.as_deref() != Some(p.job_id.as_str()) => {
                self.transcript.push(Entry::Notice(format!(
                    "The review of {} is still pending (an earlier instruction): Ctrl+R opens it.",
                    waiting_files(&p.bundle)
                )));
            }
            (Ok(None), true) if self.review.is_some() => self.view = View::Review,
            (Ok(None), true) => self
                .transcript
                .push(Entry::Notice("Nothing to review.".into())),
            (Err(why), true) => self
                .transcript
                .push(Entry::Error(format!("The review could not be read: {why}"))),
            (Ok(_) | Err(_), false) => {}
        }
    }

    /// Puts a pending review read from the store on screen, its decisions
    /// and last verify with it.
    pub(super) fn show_pending(&mut self, p: PendingReview) {
        let mut review = ReviewView::new(p.job_id, p.bundle, 0, None);
        if let Some(v) = p.verify {
            review.verified(&v);
            review.tree_changed = p.tree_changed;
        }
        self.badge_files(&review.bundle);
        self.review_error = None;
        self.show_review(review);
        self.view = View::Review;
    }
}

/// The files of `bundle` with hunks not applied: up to three by name.
fn waiting_files(bundle: &DiffBundle) -> String {
    let names: Vec<&str> = bundle
        .files
        .iter()
        .filter(|f| f.hunks.iter().any(|h| waits(&h.state)))
        .map(|f| f.file_path.as_str())
        .collect();
    match names.as_slice() {
        [] => "no file".into(),
        [a] => (*a).into(),
        [a, b] => format!("{a} and {b}"),
        [a, b, c] => format!("{a}, {b} and {c}"),
        [a, b, rest @ ..] => format!("{a}, {b} and {} more files", rest.len()),
    }
}

/// Not applied and not rejected: still to decide or to apply.
fn waits(state: &HunkState) -> bool {
    !matches!(state, HunkState::Applied | HunkState::Rejected)
}

/// What sending now would leave behind, and the keys that decide.
fn left_note(bundle: &DiffBundle) -> String {
    let waiting = bundle.hunks().filter(|h| waits(&h.state)).count();
    let accepted = match bundle.to_apply().count() {
        0 => "none accepted".to_string(),
        n => format!("{n} accepted"),
    };
    format!(
        "The review of {} has {} not applied ({accepted}): Enter again sends anyway \
         (the review stays: Ctrl+R), Ctrl+R opens it.",
        waiting_files(bundle),
        counted(waiting, "hunk"),
    )
}
