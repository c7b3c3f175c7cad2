//! Property tests of the review pipeline over random files and random edit
//! sets: accept all = the proposed content; accept none = nothing; any subset
//! = what `patch` makes of those hunks; splitting never changes the result.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agent_tui::config::Limits;
use agent_tui::review::{
    ApplyError, DiffBundle, EditOperation, EditRequest, ProposedEdit, build_bundle, plan_apply,
    validate_edits,
};
use agent_tui::workspace::Workspace;
use proptest::prelude::*;

const WORDS: &[&str] = &[
    "alpha",
    "beta",
    "",
    "gamma",
    "delta",
    "",
    "fn x() {}",
    "}",
    "épsilon 🙂",
];

#[derive(Debug, Clone)]
struct Case {
    lines: Vec<String>,
    crlf: bool,
    final_newline: bool,
    /// (operation, start, len, new lines) on 0-based line indices, non-overlapping
    edits: Vec<(EditOperation, usize, usize, Vec<String>)>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        proptest::collection::vec(0..WORDS.len(), 1..60),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_flat_map(|(idx, crlf, final_newline)| {
            let lines: Vec<String> = idx.iter().map(|&i| WORDS[i].to_string()).collect();
            let n = lines.len();
            let edit = (
                0..3u8,
                0..=n,
                0..4usize,
                proptest::collection::vec(0..WORDS.len(), 1..4),
            );
            (
                Just(lines),
                Just(crlf),
                Just(final_newline),
                proptest::collection::vec(edit, 1..8),
            )
        })
        .prop_map(|(lines, crlf, final_newline, raw)| {
            let n = lines.len();
            let mut edits: Vec<(EditOperation, usize, usize, Vec<String>)> = Vec::new();
            let mut taken_to = 0usize;
            let mut raw = raw;
            raw.sort_by_key(|r| r.1);
            for (kind, start, len, words) in raw {
                let new: Vec<String> = words.iter().map(|&i| format!("new {}", WORDS[i])).collect();
                if start < taken_to {
                    continue;
                }
                match kind {
                    0 if start < n => {
                        let len = len.clamp(1, n - start);
                        edits.push((EditOperation::Replace, start, len, new));
                        taken_to = start + len;
                    }
                    1 if start < n => {
                        let len = len.clamp(1, n - start);
                        edits.push((EditOperation::Delete, start, len, vec![]));
                        taken_to = start + len;
                    }
                    _ => {
                        edits.push((EditOperation::Insert, start, 0, new));
                        taken_to = start + 1;
                    }
                }
            }
            // A last empty line only exists if it is terminated.
            let final_newline = final_newline || lines.last().is_some_and(String::is_empty);
            Case {
                lines,
                crlf,
                final_newline,
                edits,
            }
        })
}

fn file_bytes(c: &Case) -> Vec<u8> {
    let eol = if c.crlf { "\r\n" } else { "\n" };
    let mut s = c.lines.join(eol);
    if c.final_newline {
        s.push_str(eol);
    }
    s.into_bytes()
}

/// Independent reference: edits applied bottom-up on plain lines.
fn expected(c: &Case) -> Vec<u8> {
    // New lines take the file's ending; a file with no terminated line says LF.
    let eol = if c.crlf && (c.lines.len() > 1 || c.final_newline) {
        "\r\n"
    } else {
        "\n"
    };
    let mut lines = c.lines.clone();
    let mut ends_open = !c.final_newline;
    for (op, start, len, new) in c.edits.iter().rev() {
        if *start + *len == lines.len()
            && *len > 0
            && matches!(op, EditOperation::Replace | EditOperation::Delete)
        {
            // Replacing the last line: new_text ends with a newline.
            ends_open = false;
        }
        if *start == lines.len() && matches!(op, EditOperation::Insert) {
            ends_open = false;
        }
        lines.splice(*start..*start + *len, new.iter().cloned());
    }
    let mut s = lines.join(eol);
    if !lines.is_empty() && !ends_open {
        s.push_str(eol);
    }
    s.into_bytes()
}

fn requests(c: &Case) -> Vec<EditRequest> {
    c.edits
        .iter()
        .map(|(op, start, len, new)| EditRequest {
            file_path: "f.txt".into(),
            operation: *op,
            start_line: Some(start + 1),
            end_line: (*len > 0).then_some(start + len),
            old_text: None,
            new_text: (!new.is_empty()).then(|| new.iter().map(|l| format!("{l}\n")).collect()),
            rationale: None,
        })
        .collect()
}

struct Setup {
    _dir: tempfile::TempDir,
    ws: Workspace,
    edits: Vec<ProposedEdit>,
    bundle: DiffBundle,
}

fn setup(c: &Case, limits: &Limits) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), file_bytes(c)).unwrap();
    let ws = Workspace::open(dir.path()).unwrap();
    let edits = validate_edits(&ws, &requests(c), &[], &mut 1).unwrap();
    let bundle = build_bundle(&ws, "j", &edits, limits, None, &mut 1).unwrap();
    Setup {
        _dir: dir,
        ws,
        edits,
        bundle,
    }
}

fn apply_selected(s: &Setup, pick: &[bool]) -> Result<Vec<u8>, ApplyError> {
    let mut bundle = s.bundle.clone();
    for (h, keep) in bundle
        .files
        .iter_mut()
        .flat_map(|f| f.hunks.iter_mut())
        .zip(pick.iter().cycle())
    {
        h.state = if *keep {
            agent_tui::review::HunkState::Accepted
        } else {
            agent_tui::review::HunkState::Rejected
        };
    }
    let plans = plan_apply(&s.ws, &bundle, &s.edits)?;
    Ok(plans[0].after.clone())
}

fn tiny_limits() -> Limits {
    Limits {
        max_hunk_lines: 4,
        max_hunk_bytes: 60,
        ..Limits::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn accepting_everything_gives_the_proposed_content(c in case()) {
        for limits in [Limits::default(), tiny_limits()] {
            let s = setup(&c, &limits);
            let want = expected(&c);
            if want == file_bytes(&c) {
                prop_assert!(s.bundle.hunks().next().is_none());
                continue;
            }
            let got = apply_selected(&s, &[true]).unwrap();
            prop_assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want));
        }
    }

    #[test]
    fn accepting_nothing_writes_nothing(c in case()) {
        let s = setup(&c, &Limits::default());
        prop_assert!(matches!(apply_selected(&s, &[false]), Err(ApplyError::NothingAccepted)));
    }

    #[test]
    fn split_hunks_compose_like_unsplit_ones(c in case(), pick in proptest::collection::vec(any::<bool>(), 1..6)) {
        // A subset of the split hunks equals applying the same edits' content
        // through unsplit hunks only when the subset is all or nothing; here we
        // check the weaker, always-true property: every subset applies cleanly
        // and its bytes are valid UTF-8 text with the file's line endings.
        let s = setup(&c, &tiny_limits());
        if s.bundle.hunks().next().is_none() {
            return Ok(());
        }
        match apply_selected(&s, &pick) {
            Ok(bytes) => {
                let text = String::from_utf8(bytes).unwrap();
                if c.crlf && (c.lines.len() > 1 || c.final_newline) {
                    prop_assert!(!text.replace("\r\n", "").contains('\n'), "{text:?}");
                }
            }
            Err(ApplyError::NothingAccepted) => {}
            Err(e) => prop_assert!(false, "{e}"),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Any subset of hunks gives the same bytes as `patch` applying those hunks.
    #[test]
    fn any_subset_matches_gnu_patch(c in case(), pick in proptest::collection::vec(any::<bool>(), 1..6)) {
        let s = setup(&c, &Limits::default());
        let mut bundle = s.bundle.clone();
        let mut chosen = Vec::new();
        for (h, keep) in bundle.files.iter_mut().flat_map(|f| f.hunks.iter_mut()).zip(pick.iter().cycle()) {
            h.state = if *keep { agent_tui::review::HunkState::Accepted } else { agent_tui::review::HunkState::Rejected };
            if *keep {
                chosen.push(h.patch.clone());
            }
        }
        if chosen.is_empty() {
            return Ok(());
        }
        let ours = plan_apply(&s.ws, &bundle, &s.edits).unwrap()[0].after.clone();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f.txt"), file_bytes(&c)).unwrap();
        let diff = format!("--- a/f.txt\n+++ b/f.txt\n{}", chosen.concat());
        std::fs::write(dir.path().join("p.diff"), &diff).unwrap();
        let out = std::process::Command::new("patch")
            .args(["-s", "-p1", "-F0", "--binary", "--no-backup-if-mismatch", "-i", "p.diff"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        prop_assert!(out.status.success(), "patch failed: {}\n{diff}", String::from_utf8_lossy(&out.stdout));
        let theirs = std::fs::read(dir.path().join("f.txt")).unwrap();
        prop_assert_eq!(String::from_utf8_lossy(&ours), String::from_utf8_lossy(&theirs), "{}", diff);
    }
}

mod rollback {
    use super::*;
    use agent_tui::checkpoint::{
        CheckpointKind, CheckpointStore, FileChange, hard_rollback, scoped_rollback,
    };
    use agent_tui::review::write_plans;
    use agent_tui::store::{Store, Target};

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(150))]

        /// Hard rollback restores the original bytes; scoped rollback of every
        /// hunk of the apply gives the same bytes when nothing changed since.
        #[test]
        fn rollbacks_restore_the_original(c in case(), tiny in any::<bool>(), pick in proptest::collection::vec(any::<bool>(), 1..6)) {
            let limits = if tiny { tiny_limits() } else { Limits::default() };
            let s = setup(&c, &limits);
            let mut bundle = s.bundle.clone();
            for (h, keep) in bundle.files.iter_mut().flat_map(|f| f.hunks.iter_mut()).zip(pick.iter().cycle()) {
                h.state = if *keep { agent_tui::review::HunkState::Accepted } else { agent_tui::review::HunkState::Rejected };
            }
            let Ok(plans) = plan_apply(&s.ws, &bundle, &s.edits) else { return Ok(()) };
            let state_dir = tempfile::tempdir().unwrap();
            let opened = Store::open_target(&Target::Sqlite(state_dir.path().join("state.db"))).unwrap();
            let store = CheckpointStore::new(&opened.root(s.ws.root()));
            let changes: Vec<FileChange> = plans.iter().map(FileChange::from).collect();
            let cp = store.record(&s.ws, None, "j", CheckpointKind::Apply, None, &changes).unwrap();
            write_plans(&s.ws, &plans).unwrap();
            let path = s.ws.root().join("f.txt");
            let applied = std::fs::read(&path).unwrap();
            prop_assert_eq!(&applied, &plans[0].after);

            let ids: Vec<String> = cp.affected_files[0].hunks.iter().map(|h| h.hunk_id.clone()).collect();
            let scoped = scoped_rollback(&s.ws, &store, &cp, &ids);
            prop_assert!(scoped.is_ok(), "{:?}", scoped.err());
            let now = String::from_utf8(std::fs::read(&path).unwrap()).unwrap();
            let original = String::from_utf8(file_bytes(&c)).unwrap();
            prop_assert_eq!(now, original);

            // Undo the rollback (hard), then hard-roll back the apply.
            hard_rollback(&s.ws, &store, &scoped.unwrap()).unwrap();
            prop_assert_eq!(&std::fs::read(&path).unwrap(), &applied);
            hard_rollback(&s.ws, &store, &cp).unwrap();
            prop_assert_eq!(std::fs::read(&path).unwrap(), file_bytes(&c));
        }
    }
}

#[test]
fn oversized_hunks_are_split_then_flagged_and_ids_stay_stable() {
    let dir = tempfile::tempdir().unwrap();
    // 30 lines without a blank line, then blank-separated paragraphs.
    let mut text: String = (0..30).map(|i| format!("dense {i}\n")).collect();
    for p in 0..6 {
        text.push_str(&format!("para {p} a\npara {p} b\n\n"));
    }
    std::fs::write(dir.path().join("f.txt"), &text).unwrap();
    let ws = Workspace::open(dir.path()).unwrap();
    let limits = Limits {
        max_hunk_lines: 10,
        ..Limits::default()
    };
    let replace_all = |start: usize, end: usize, prefix: &str| EditRequest {
        file_path: "f.txt".into(),
        operation: EditOperation::Replace,
        start_line: Some(start),
        end_line: Some(end),
        old_text: None,
        new_text: Some((start..=end).map(|i| format!("{prefix} {i}\n")).collect()),
        rationale: None,
    };
    let mut next_edit = 1;
    let first = validate_edits(&ws, &[replace_all(1, 30, "new")], &[], &mut next_edit).unwrap();
    let mut next_hunk = 1;
    let bundle = build_bundle(&ws, "j", &first, &limits, None, &mut next_hunk).unwrap();
    assert!(bundle.hunks().count() >= 2, "split");
    assert!(
        bundle.hunks().any(|h| h.oversized),
        "no blank line to split at: flagged"
    );
    let ids: Vec<String> = bundle.hunks().map(|h| h.hunk_id.clone()).collect();
    // A second call adds an edit to the paragraphs: earlier hunks keep their ids.
    let upper: String = text
        .lines()
        .skip(30)
        .map(|l| format!("{}\n", l.to_uppercase()))
        .collect();
    let paragraphs = EditRequest {
        new_text: Some(upper),
        ..replace_all(31, 48, "")
    };
    let second = validate_edits(&ws, &[paragraphs], &first, &mut next_edit).unwrap();
    let all: Vec<ProposedEdit> = first.iter().chain(&second).cloned().collect();
    let again = build_bundle(&ws, "j", &all, &limits, Some(&bundle), &mut next_hunk).unwrap();
    let again_ids: Vec<String> = again.hunks().map(|h| h.hunk_id.clone()).collect();
    assert!(again_ids.starts_with(&ids), "{ids:?} vs {again_ids:?}");
    let paragraph_hunks: Vec<_> = again.hunks().filter(|h| h.edit_ids == ["e_2"]).collect();
    assert!(paragraph_hunks.len() >= 2, "split at blank lines");
    assert!(paragraph_hunks.iter().all(|h| !h.oversized));
}

/// A line as a model might quote it: trailing spaces or tabs dropped or added.
fn smudge(line: &str, how: u8) -> String {
    match how % 4 {
        0 => line.to_string(),
        1 => line.trim_end_matches([' ', '\t']).to_string(),
        2 => format!("{line}  "),
        _ => format!("{}\t", line.trim_end()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// `old_text` that differs from the file's lines only in trailing spaces,
    /// tabs or line endings locates them: at the given lines, or (given the
    /// wrong lines) at the one place it fits; two places that fit equally
    /// are refused; and a located edit always names lines whose text, minus
    /// trailing whitespace, is the quoted text.
    #[test]
    fn old_text_is_found_despite_trailing_whitespace(
        idx in proptest::collection::vec(0..WORDS.len(), 2..30),
        pads in proptest::collection::vec(0..3u8, 30),
        smudges in proptest::collection::vec(any::<u8>(), 4),
        crlf in any::<bool>(),
        start in 0usize..30,
        len in 1usize..4,
        shift in 0usize..4,
    ) {
        let lines: Vec<String> = idx
            .iter()
            .zip(pads.iter().cycle())
            .map(|(&i, &p)| format!("{}{}", WORDS[i], ["", " ", "\t "][p as usize]))
            .collect();
        let n = lines.len();
        let start = start % n;
        let len = len.min(n - start);
        let eol = if crlf { "\r\n" } else { "\n" };
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f.txt"), lines.join(eol) + eol).unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let quoted: Vec<String> = lines[start..start + len]
            .iter()
            .zip(smudges.iter().cycle())
            .map(|(l, &h)| smudge(l, h))
            .collect();
        let old_text: String = quoted.iter().map(|l| format!("{l}\n")).collect();
        let loose = |l: &str| l.trim_end_matches([' ', '\t']).to_string();
        let fits = |s: usize| {
            lines[s..s + len].iter().map(|l| loose(l)).eq(quoted.iter().map(|l| loose(l)))
        };
        let request = |first: usize| EditRequest {
            file_path: "f.txt".into(),
            operation: EditOperation::Replace,
            start_line: Some(first + 1),
            end_line: Some(first + len),
            old_text: Some(old_text.clone()),
            new_text: Some("new\n".into()),
            rationale: None,
        };
        // The right lines given: found there.
        let found = validate_edits(&ws, &[request(start)], &[], &mut 1).unwrap();
        prop_assert_eq!((found[0].start_line, found[0].end_line), (start + 1, start + len));
        // Wrong lines given: the one place that fits, or a refusal.
        let wrong = (start + shift + 1) % (n - len + 1);
        let places: Vec<usize> = (0..=n - len).filter(|&s| fits(s)).collect();
        match validate_edits(&ws, &[request(wrong)], &[], &mut 1) {
            Ok(found) => {
                let at = found[0].start_line - 1;
                prop_assert!(fits(at), "located at {} where the text does not fit", at + 1);
                let exact: Vec<usize> = (0..=n - len)
                    .filter(|&s| lines[s..s + len].iter().eq(quoted.iter()))
                    .collect();
                prop_assert!(at == wrong || places.len() == 1 || exact == [at],
                    "picked {} among {:?}", at + 1, places);
            }
            Err(errors) => {
                prop_assert!(places.len() > 1 && !fits(wrong), "refused: {}", errors[0].reason);
                prop_assert!(errors[0].reason.contains("times elsewhere"), "{}", errors[0].reason);
            }
        }
    }
}
