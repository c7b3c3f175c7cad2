//! What the model is told about the edits it proposed: after the user's
//! review, which hunks were applied, rejected, rewritten by the user (with
//! their text) or are still waiting; and, during a compaction, the state of
//! the review that is still open.

use std::collections::BTreeSet;

use crate::context::{TokenCounter, cap};
use crate::review::{DiffBundle, Fate, Reported};

/// Most tokens of one hunk's text in a feedback message.
const HUNK_TEXT_TOKENS: u32 = 600;

/// A job's review and the applied hunks of it rolled back since.
pub type JobReview<'a> = (&'a str, &'a DiffBundle, Option<&'a BTreeSet<String>>);

/// A note on what changed since `reported` in the reviews of `jobs` (in
/// order), and the fates it reports; `None` when nothing changed.
pub fn review_feedback<'a>(
    jobs: impl Iterator<Item = JobReview<'a>>,
    reported: &Reported,
    counter: &TokenCounter,
) -> Option<(String, Reported)> {
    let mut lines = Vec::new();
    let mut now = Reported::new();
    for (job_id, bundle, rolled_back) in jobs {
        let before = reported.get(job_id);
        for file in &bundle.files {
            for hunk in &file.hunks {
                let undone = rolled_back.is_some_and(|r| r.contains(&hunk.hunk_id));
                let fate = Fate::of_hunk(hunk, undone);
                if before.and_then(|b| b.get(&hunk.hunk_id)) == Some(&fate) {
                    continue;
                }
                now.entry(job_id.to_string())
                    .or_default()
                    .insert(hunk.hunk_id.clone(), fate);
                let hook = hunk.origin.hook().filter(|_| fate == Fate::Applied);
                let mut line = match hook {
                    // Not the model's proposal: a hook the user runs changed
                    // the file as the edits were applied (a formatter).
                    Some(name) => format!(
                        "- {} ({}): changed by the user's hook {name} as your edits were \
                         applied: the file now contains it",
                        hunk.hunk_id, file.file_path
                    ),
                    None => format!(
                        "- {} ({}): {}",
                        hunk.hunk_id,
                        file.file_path,
                        fate.describe()
                    ),
                };
                let rewritten = matches!(fate, Fate::RewrittenAccepted | Fate::RewrittenApplied);
                if rewritten || hook.is_some() {
                    let whose = if rewritten {
                        "The user's"
                    } else {
                        "The hook's"
                    };
                    line.push_str(&format!(
                        ". {whose} version of the hunk:\n```diff\n{}```",
                        cap::fit_text(
                            &hunk.patch,
                            HUNK_TEXT_TOKENS,
                            counter,
                            "read the file for the rest"
                        )
                    ));
                }
                lines.push(line);
            }
        }
    }
    if lines.is_empty() {
        return None;
    }
    let text = format!(
        "[agent-tui: what happened to the edits you proposed, since you last heard]\n{}",
        lines.join("\n")
    );
    Some((text, now))
}

/// The open review of the running job, kept word for word when older turns
/// are summarized.
pub fn review_state(bundle: &DiffBundle, counter: &TokenCounter) -> String {
    let mut text = String::from(
        "[agent-tui: edits you proposed in this job, now in the user's review; they are not \
         written yet]\n",
    );
    for file in &bundle.files {
        for hunk in &file.hunks {
            text.push_str(&format!(
                "- {} ({}), {}:\n```diff\n{}```\n",
                hunk.hunk_id,
                file.file_path,
                Fate::of(hunk).describe(),
                cap::fit_text(
                    &hunk.patch,
                    HUNK_TEXT_TOKENS,
                    counter,
                    "read the file for the rest"
                )
            ));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::{FileDiff, Hunk, HunkOrigin, HunkState};

    fn hunk(id: &str, accepted: Option<bool>, applied: bool, origin: HunkOrigin) -> Hunk {
        Hunk {
            hunk_id: id.into(),
            patch: format!("@@ -1 +1 @@\n-old {id}\n+new {id}\n"),
            state: match (applied, accepted) {
                (true, _) => HunkState::Applied,
                (false, Some(true)) => HunkState::Accepted,
                (false, Some(false)) => HunkState::Rejected,
                (false, None) => HunkState::Pending,
            },
            edit_ids: vec![],
            oversized: false,
            origin,
            changes: vec![],
        }
    }

    fn bundle(hunks: Vec<Hunk>) -> DiffBundle {
        DiffBundle {
            job_id: "j1".into(),
            files: vec![FileDiff {
                file_path: "src/a.rs".into(),
                base_file_hash: None,
                hunks,
            }],
        }
    }

    #[test]
    fn reports_each_fate_once_with_the_users_text() {
        let counter = TokenCounter::estimating();
        let b = bundle(vec![
            hunk("h_1", Some(true), true, HunkOrigin::Agent),
            hunk("h_2", Some(false), false, HunkOrigin::Agent),
            hunk("h_3", Some(true), true, HunkOrigin::User),
            hunk("h_4", None, false, HunkOrigin::Agent),
        ]);
        let (text, fates) =
            review_feedback([("j1", &b, None)].into_iter(), &Reported::new(), &counter).unwrap();
        assert!(text.contains("h_1 (src/a.rs): applied"), "{text}");
        assert!(text.contains("h_2 (src/a.rs): rejected"), "{text}");
        assert!(
            text.contains("h_3 (src/a.rs): rewritten by the user and applied"),
            "{text}"
        );
        assert!(text.contains("+new h_3"), "{text}");
        assert!(text.contains("h_4 (src/a.rs): still waiting"), "{text}");
        assert_eq!(fates["j1"]["h_2"], Fate::Rejected);
        // Nothing new: nothing to say.
        assert!(review_feedback([("j1", &b, None)].into_iter(), &fates, &counter).is_none());
        // Only the hunk that changed is reported again.
        let mut later = b.clone();
        later.files[0].hunks[3].state = HunkState::Rejected;
        let (text, _) =
            review_feedback([("j1", &later, None)].into_iter(), &fates, &counter).unwrap();
        assert!(text.contains("h_4") && !text.contains("h_1"), "{text}");
    }

    #[test]
    fn a_hooks_change_is_told_as_the_hooks_with_its_text() {
        let counter = TokenCounter::estimating();
        let b = bundle(vec![
            hunk("h_1", Some(true), true, HunkOrigin::Agent),
            hunk("hook_1", Some(true), true, HunkOrigin::Hook("fmt".into())),
        ]);
        let (text, _) =
            review_feedback([("j1", &b, None)].into_iter(), &Reported::new(), &counter).unwrap();
        assert!(
            text.contains("hook_1 (src/a.rs): changed by the user's hook fmt"),
            "{text}"
        );
        assert!(
            text.contains("The hook's version") && text.contains("+new hook_1"),
            "{text}"
        );
        assert!(!text.contains("+new h_1"), "{text}");
    }

    #[test]
    fn open_review_lists_every_hunk_with_its_patch() {
        let b = bundle(vec![hunk("h_1", None, false, HunkOrigin::Agent)]);
        let text = review_state(&b, &TokenCounter::estimating());
        assert!(text.contains("h_1 (src/a.rs), still waiting"));
        assert!(text.contains("+new h_1"));
    }
}
