//! Fuzz door of the review (`fuzz/`, `tests/fuzz_corpus.rs`): edits a
//! model proposes for a generated file, validated, bundled, a subset of
//! hunks accepted and planned, maybe reformatted by a hook, then every
//! accepted hunk rolled back: the file must be byte-identical to what it
//! was.

use arbitrary::{Arbitrary, Unstructured};

use super::doc::Doc;
use super::{
    EditOperation, EditRequest, FilePlan, HunkRegion, build_bundle, plan_apply, render_lines,
    validate_edits,
};
use crate::workspace::Workspace;

/// A file and what a model proposes for it.
#[derive(Debug, Arbitrary)]
struct Case {
    lines: Vec<Line>,
    crlf: bool,
    bom: bool,
    last_newline: bool,
    edits: Vec<Edit>,
    accept: Vec<bool>,
    /// A formatter's change on top (`apply.before`): lines it rewrites.
    hook: Vec<(u8, Line)>,
}

/// A short line from a small alphabet, so edits find their text again.
#[derive(Debug)]
struct Line(String);

impl<'a> Arbitrary<'a> for Line {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Line> {
        let n = u.int_in_range(0..=6)?;
        let mut s = String::new();
        for _ in 0..n {
            s.push(*u.choose(&['a', 'b', ' ', '{', '}', 'é', '\t', ';'])?);
        }
        Ok(Line(s))
    }
}

#[derive(Debug, Arbitrary)]
struct Edit {
    op: u8,
    start: u8,
    len: u8,
    new_lines: Vec<Line>,
    /// Name the old text instead of (or besides) the line numbers.
    by_text: Option<bool>,
}

fn text_of(lines: &[Line], eol: &str, last_newline: bool) -> String {
    let mut out = lines
        .iter()
        .map(|l| l.0.as_str())
        .collect::<Vec<_>>()
        .join(eol);
    if last_newline && !lines.is_empty() {
        out.push_str(eol);
    }
    out
}

/// The request a model would send for `edit` on `old` (its lines).
fn request(edit: &Edit, old: &[String], eol: &str) -> EditRequest {
    let n = old.len();
    let start = usize::from(edit.start) % (n + 2) + 1;
    let end = (start + usize::from(edit.len) % 4).saturating_sub(1);
    let operation = match edit.op % 4 {
        0 => EditOperation::Replace,
        1 => EditOperation::Insert,
        2 => EditOperation::Delete,
        _ => EditOperation::Replace,
    };
    let new_text = text_of(&edit.new_lines, eol, true);
    let old_text = old
        .get(start.saturating_sub(1)..end.min(n))
        .map(|l| l.concat());
    let by_text = edit.by_text.unwrap_or(false);
    EditRequest {
        file_path: "f.txt".into(),
        operation,
        start_line: (!by_text || edit.by_text.is_none()).then_some(start),
        end_line: (!by_text || edit.by_text.is_none()).then_some(end.max(start)),
        old_text: if by_text { old_text } else { None },
        new_text: (operation != EditOperation::Delete).then_some(new_text),
        rationale: None,
    }
}

/// Every region undone, last first: the lines before the apply.
fn undo(lines: &[String], regions: &[HunkRegion]) -> Vec<String> {
    let mut lines = lines.to_vec();
    let mut sorted: Vec<&HunkRegion> = regions.iter().collect();
    sorted.sort_by_key(|r| r.after_start);
    for r in sorted.iter().rev() {
        let end = (r.after_start + r.after_lines.len()).min(lines.len());
        assert_eq!(
            lines[r.after_start.min(end)..end],
            r.after_lines[..],
            "region {} is not where it says",
            r.hunk_id
        );
        lines.splice(r.after_start.min(end)..end, r.before_lines.iter().cloned());
    }
    lines
}

/// The property over one generated case (see the module's line).
pub fn edit(data: &[u8]) {
    let Ok(case) = Case::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    let eol = if case.crlf { "\r\n" } else { "\n" };
    let mut original = if case.bom {
        "\u{feff}".to_string()
    } else {
        String::new()
    };
    original.push_str(&text_of(&case.lines, eol, case.last_newline));
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    if std::fs::write(dir.path().join("f.txt"), &original).is_err() {
        return;
    }
    let Ok(ws) = Workspace::open(dir.path()) else {
        return;
    };
    let old = Doc::parse(original.as_bytes())
        .map(|d| d.lines)
        .unwrap_or_default();
    let requests: Vec<EditRequest> = case.edits.iter().map(|e| request(e, &old, eol)).collect();
    let Ok(edits) = validate_edits(&ws, &requests, &[], &mut 1) else {
        return;
    };
    let limits = crate::config::Limits::default();
    let Ok(mut bundle) = build_bundle(&ws, "job", &edits, &limits, None, &mut 1) else {
        return;
    };
    let ids: Vec<String> = bundle.hunks().map(|h| h.hunk_id.clone()).collect();
    let accept: Vec<String> = ids
        .iter()
        .zip(case.accept.iter().chain(std::iter::repeat(&true)))
        .filter(|(_, yes)| **yes)
        .map(|(id, _)| id.clone())
        .collect();
    bundle.decide(&accept, &[], false);
    let Ok(mut plans) = plan_apply(&ws, &bundle, &edits) else {
        return;
    };
    let plan: &mut FilePlan = &mut plans[0];
    if !case.hook.is_empty() {
        let mut lines = Doc::parse(&plan.after).map(|d| d.lines).unwrap_or_default();
        for (at, line) in &case.hook {
            if lines.is_empty() {
                lines.push(format!("{}{eol}", line.0));
                continue;
            }
            let at = usize::from(*at) % lines.len();
            lines[at] = format!("{}{eol}", line.0);
        }
        let doc = Doc::parse(&plan.after).unwrap_or_default();
        let now = render_lines(doc.bom, &lines, doc.eol());
        if now != plan.after {
            plan.hooked("fmt", now);
        }
    }
    if plan.regions.is_empty() {
        // Kept whole (a hook's bytes it could not prove): nothing scoped.
        return;
    }
    let after = match Doc::parse(&plan.after) {
        Ok(after) => after,
        Err(e) => panic!("the plan's bytes are not text: {e}"),
    };
    let back = undo(&after.lines, &plan.regions);
    let bytes = render_lines(after.bom, &back, after.eol());
    assert_eq!(
        String::from_utf8_lossy(&bytes),
        original,
        "rolling back every hunk restores the file"
    );
}
