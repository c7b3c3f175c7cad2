//! Checking a model's edits against the files on disk: ranges in bounds,
//! `old_text` matching (or relocated by a unique exact match), creates only
//! for new files, no overlaps, text files only. Errors show nearby lines.

use crate::protocol::words::counted;
use serde::Deserialize;

use super::doc::{Doc, text_of};
use super::indent::{Reindent, same_dedented};
use super::{EditOperation, ProposedEdit};
use crate::workspace::{Workspace, close_matches, sha256_hex};

/// Lines of context shown around a bad range.
const NEARBY: usize = 3;

/// One edit as the model sends it in `propose_edits`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditRequest {
    pub file_path: String,
    pub operation: EditOperation,
    pub start_line: Option<usize>,
    pub end_line: Option<usize>,
    pub old_text: Option<String>,
    pub new_text: Option<String>,
    pub rationale: Option<String>,
}

/// Why edit number `index` (1-based in its call) was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditError {
    pub index: usize,
    pub summary: String,
    pub reason: String,
    /// The path's own error code (`read_only_scope`, `outside_root` …), or
    /// `invalid_edits`.
    pub code: &'static str,
}

impl std::fmt::Display for EditError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "edit {} ({}): {}", self.index, self.summary, self.reason)
    }
}

/// Validates `requests` in order against the disk and against `existing`
/// edits of the same job. All or nothing: any error refuses the whole call.
pub fn validate_edits(
    workspace: &Workspace,
    requests: &[EditRequest],
    existing: &[ProposedEdit],
    next_id: &mut u32,
) -> Result<Vec<ProposedEdit>, Vec<EditError>> {
    let mut accepted: Vec<ProposedEdit> = Vec::new();
    let mut errors = Vec::new();
    for (i, request) in requests.iter().enumerate() {
        if super::intent::repeated(&requests[..i], request) {
            continue;
        }
        let summary = summary_of(request);
        let earlier: Vec<&ProposedEdit> = existing.iter().chain(accepted.iter()).collect();
        let resolved = workspace
            .resolve_writable(&request.file_path)
            .map_err(|e| (e.code(), e.to_string()));
        let scope_folder = resolved.as_ref().ok().and_then(|at| {
            let scope = workspace.scope_of(at);
            (!scope.primary()).then(|| scope.root.display().to_string())
        });
        let checked = resolved
            .and_then(|at| check(workspace, at, request, &earlier).map_err(|e| (INVALID, e)));
        match checked {
            Ok((start_line, end_line, expected_hash, file_path, reindent)) => {
                let new_text = request.new_text.clone().unwrap_or_default();
                let new_text = match reindent {
                    Some(r) => r.apply(&new_text),
                    None => new_text,
                };
                let edit = ProposedEdit {
                    edit_id: format!("e_{}", *next_id + accepted.len() as u32),
                    file_path,
                    operation: request.operation,
                    start_line,
                    end_line,
                    new_text,
                    expected_hash,
                    rationale: request.rationale.clone(),
                    scope_folder,
                };
                accepted.push(edit);
            }
            Err((code, reason)) => errors.push(EditError {
                index: i + 1,
                summary,
                reason,
                code,
            }),
        }
    }
    if errors.is_empty() {
        *next_id += accepted.len() as u32;
        Ok(accepted)
    } else {
        Err(errors)
    }
}

fn summary_of(r: &EditRequest) -> String {
    let op = match r.operation {
        EditOperation::Replace => "replace",
        EditOperation::Insert => "insert",
        EditOperation::Delete => "delete",
        EditOperation::Create => "create",
    };
    match (r.start_line, r.end_line) {
        (Some(s), Some(e)) => format!("{op} {} lines {s}-{e}", r.file_path),
        (Some(s), None) => format!("{op} {} at line {s}", r.file_path),
        (None, _) => format!("{op} {}", r.file_path),
    }
}

/// Where an edit lands (1-based lines), the hash of those lines, its
/// path, and how its `new_text` moves when `old_text` was quoted with
/// another indentation.
type Checked = (usize, usize, String, String, Option<Reindent>);

/// The code of an edit refused for anything but its path.
pub const INVALID: &str = "invalid_edits";

fn check(
    workspace: &Workspace,
    resolved: crate::workspace::Resolved,
    r: &EditRequest,
    earlier: &[&ProposedEdit],
) -> Result<Checked, String> {
    if resolved.inner.is_empty() {
        let scope = workspace.scope_of(&resolved);
        return Err(if scope.primary() {
            "file_path names the agent root, not a file".into()
        } else {
            format!("file_path names the folder of the scope `{scope}`, not a file")
        });
    }
    let path = resolved.rel.clone();
    let same_file: Vec<&&ProposedEdit> = earlier.iter().filter(|e| e.file_path == path).collect();
    if let Some(create) = same_file
        .iter()
        .find(|e| e.operation == EditOperation::Create)
    {
        return Err(format!(
            "`{path}` is being created by {}; put all of its content in that create",
            create.edit_id
        ));
    }
    let meta = workspace.metadata(&resolved);
    let exists = meta.is_ok();
    if r.operation == EditOperation::Create {
        if exists {
            return Err(format!(
                "`{path}` already exists; use replace, insert or delete to change it"
            ));
        }
        if !same_file.is_empty() {
            return Err(format!("`{path}` already has edits in this job"));
        }
        if let Some(clash) = earlier.iter().find(|e| {
            e.operation == EditOperation::Create
                && (e.file_path.starts_with(&format!("{path}/"))
                    || path.starts_with(&format!("{}/", e.file_path)))
        }) {
            return Err(format!(
                "`{path}` and `{}` (created by {}) cannot both be created: one would be a \
                 file and a folder at once",
                clash.file_path, clash.edit_id
            ));
        }
        if r.old_text.is_some() {
            return Err("a create has no old_text".into());
        }
        let Some(text) = &r.new_text else {
            return Err("new_text is required: the content of the new file".into());
        };
        if text.is_empty() {
            return Err(format!(
                "new_text is empty: a file with no lines makes no hunk to review, so `{path}` \
                 would never be written; give it at least one line (a comment will do, as in an \
                 `__init__.py`)"
            ));
        }
        return Ok((1, 0, sha256_hex(b""), path, None));
    }
    if !exists {
        let near = close_matches(workspace, &path, 3);
        let hint = if near.is_empty() {
            String::new()
        } else {
            format!(
                " (did you mean {}?)",
                near.iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        return Err(format!(
            "`{path}` does not exist{hint}; use operation \"create\" for a new file"
        ));
    }
    if !meta.is_ok_and(|m| m.is_file()) {
        return Err(format!("`{path}` is not a regular file"));
    }
    let bytes = workspace
        .read_opt(&resolved)
        .and_then(|b| b.ok_or_else(|| std::io::ErrorKind::NotFound.into()))
        .map_err(|e| format!("cannot read `{path}`: {e}"))?;
    let doc = Doc::parse(&bytes).map_err(|e| format!("`{path}`: {e}"))?;
    let total = doc.lines.len();
    let (start, end) = match range_of(r, &doc) {
        Ok(range) => range,
        // Line numbers that cannot be right, and an old_text that says
        // exactly where: it lands there.
        Err(e) => match (&r.old_text, r.operation) {
            (Some(old), EditOperation::Replace | EditOperation::Delete) => {
                one_place(&doc, old).ok_or(e)?
            }
            _ => return Err(e),
        },
    };
    if matches!(r.operation, EditOperation::Replace | EditOperation::Delete) {
        if r.operation == EditOperation::Replace && r.new_text.is_none() {
            return Err("new_text is required for replace (use delete to remove lines)".into());
        }
        if r.operation == EditOperation::Delete
            && r.new_text.as_deref().is_some_and(|t| !t.is_empty())
        {
            return Err("a delete has no new_text (use replace to change lines)".into());
        }
    }
    if r.operation == EditOperation::Insert && r.new_text.as_deref().is_none_or(str::is_empty) {
        return Err("new_text is required for insert".into());
    }
    let (start, end, reindent) = match (&r.old_text, r.operation) {
        (Some(old), EditOperation::Replace | EditOperation::Delete) => {
            relocate(&doc, old, start, end)?
        }
        _ => (start, end, None),
    };
    if r.operation == EditOperation::Replace
        && let Some((n, line)) = super::intent::left_out(
            &doc.lines[start.saturating_sub(1)..end].concat(),
            r.new_text.as_deref().unwrap_or_default(),
        )
    {
        return Err(format!(
            "new_text line {n} (`{line}`) stands for code it leaves out, but a replace writes \
             new_text as it is, so the code of lines {start}-{end} it stands for would be deleted; \
             send the full new text of those lines (or narrow start_line..end_line to the lines \
             that change)"
        ));
    }
    let candidate = (start.saturating_sub(1), end);
    for other in &same_file {
        let o = other.old_range();
        if overlaps(candidate, (o.start, o.end)) {
            return Err(format!(
                "it overlaps {} (lines {}-{}); merge them into one edit",
                other.edit_id, other.start_line, other.end_line
            ));
        }
    }
    let target: String = doc.lines[start.saturating_sub(1)..end].concat();
    let _ = total;
    Ok((start, end, sha256_hex(target.as_bytes()), path, reindent))
}

/// The requested 1-based range, checked against the file's length.
fn range_of(r: &EditRequest, doc: &Doc) -> Result<(usize, usize), String> {
    let total = doc.lines.len();
    let Some(start) = r.start_line else {
        return Err("start_line is required".into());
    };
    if r.operation == EditOperation::Insert {
        if start == 0 || start > total + 1 {
            return Err(format!(
                "start_line {start} is outside the file: it has {}, so insert takes 1 to {} \
                 (new_text goes before start_line; {} appends)",
                counted(total, "line"),
                total + 1,
                total + 1
            ));
        }
        return Ok((start, start - 1));
    }
    let Some(end) = r.end_line else {
        return Err("end_line is required (the last line to change, inclusive)".into());
    };
    if start == 0 || end < start || end > total {
        return Err(format!(
            "lines {start}-{end} are not a range of this file, which has {}{}",
            counted(total, "line"),
            nearby(doc, start.min(total).max(1), end.min(total).max(1))
        ));
    }
    Ok((start, end))
}

/// The one place where `old` is the file's text exactly, else the one
/// place where it is once indentation is set aside (1-based lines).
fn one_place(doc: &Doc, old: &str) -> Option<(usize, usize)> {
    let texts: Vec<&str> = doc.lines.iter().map(|l| text_of(l)).collect();
    let quote = old
        .strip_suffix('\n')
        .map(|t| t.strip_suffix('\r').unwrap_or(t))
        .unwrap_or(old);
    let wanted: Vec<&str> = quote
        .split('\n')
        .map(|l| l.trim_end_matches('\r'))
        .collect();
    let exact = |s: usize| texts.get(s..s + wanted.len()) == Some(&wanted[..]);
    let dedented = |s: usize| {
        texts
            .get(s..s + wanted.len())
            .is_some_and(|w| same_dedented(w, &wanted))
    };
    let comparisons: [&dyn Fn(usize) -> bool; 2] = [&exact, &dedented];
    for fits in comparisons {
        let hits: Vec<usize> = (0..texts.len()).filter(|&s| fits(s)).collect();
        match hits.as_slice() {
            [] => continue,
            [one] => return Some((one + 1, one + wanted.len())),
            _ => return None,
        }
    }
    None
}

/// Where an `old_text` fits the file.
enum Fit {
    At(usize, usize),
    /// There once indentation is set aside: the replacement moves as
    /// the quote differs from the file.
    Dedented(usize, usize),
    /// In several places (0-based starts), none of them the lines given;
    /// `how` says under which comparison.
    Ambiguous(Vec<usize>, &'static str),
    Nowhere,
}

/// Checks `old_text` against the lines; if they moved, a unique match
/// elsewhere relocates the edit. Exact text first; then, as a careful
/// reader would, ignoring trailing spaces and tabs (line endings never
/// count); then a block quoted with another indentation (copied flush
/// left, say), whose replacement takes the file's. Two or more equally
/// good places: refused, with the nearby lines. The quote's final line
/// ending ends its last line; should nothing fit, any further trailing
/// newlines are taken as noise.
fn relocate(
    doc: &Doc,
    old: &str,
    start: usize,
    end: usize,
) -> Result<(usize, usize, Option<Reindent>), String> {
    let texts: Vec<&str> = doc.lines.iter().map(|l| text_of(l)).collect();
    let one = old
        .strip_suffix('\n')
        .map(|t| t.strip_suffix('\r').unwrap_or(t))
        .unwrap_or(old);
    let all = old.trim_end_matches(['\n', '\r']);
    let mut fit = Fit::Nowhere;
    let mut wanted: Vec<&str> = Vec::new();
    for quote in [one, all] {
        wanted = quote
            .split('\n')
            .map(|l| l.trim_end_matches('\r'))
            .collect();
        fit = locate(&texts, &wanted, start, end);
        if !matches!(fit, Fit::Nowhere) || one == all {
            break;
        }
    }
    match fit {
        Fit::At(s, e) => Ok((s, e, None)),
        Fit::Dedented(s, e) => Ok((s, e, Reindent::between(&texts[s - 1..e], &wanted))),
        Fit::Ambiguous(many, how) => Err(format!(
            "old_text does not match lines {start}-{end} and occurs {} times elsewhere{how} (lines {}); \
             give the right start_line and end_line{}",
            many.len(),
            many.iter()
                .map(|h| (h + 1).to_string())
                .collect::<Vec<_>>()
                .join(", "),
            nearby(doc, start, end)
        )),
        Fit::Nowhere => Err(format!(
            "old_text does not match lines {start}-{end} and was not found anywhere else in the file; \
             read the file again and resend the edit{}",
            nearby(doc, start, end)
        )),
    }
}

/// `wanted` among `texts`: at the lines given (1-based `start..=end`) if
/// they hold it, trailing whitespace aside (or, failing that, indentation);
/// else its one exact place; else its one place ignoring trailing
/// whitespace; else its one place ignoring indentation.
fn locate(texts: &[&str], wanted: &[&str], start: usize, end: usize) -> Fit {
    let loose = |l: &str| l.trim_end_matches([' ', '\t']).len();
    let same_loose = |a: &str, b: &str| a[..loose(a)] == b[..loose(b)];
    let window = |s: usize| texts.get(s..s + wanted.len());
    let exact = |s: usize| window(s) == Some(wanted);
    let tolerant =
        |s: usize| window(s).is_some_and(|w| w.iter().zip(wanted).all(|(a, b)| same_loose(a, b)));
    let dedented = |s: usize| window(s).is_some_and(|w| same_dedented(w, wanted));
    if end + 1 - start == wanted.len() {
        if tolerant(start - 1) {
            return Fit::At(start, end);
        }
        if dedented(start - 1) {
            return Fit::Dedented(start, end);
        }
    }
    let comparisons: [(&dyn Fn(usize) -> bool, &'static str); 3] = [
        (&exact, ""),
        (&tolerant, " when trailing spaces are ignored"),
        (&dedented, " when indentation is ignored"),
    ];
    for (n, (fits, how)) in comparisons.into_iter().enumerate() {
        let hits: Vec<usize> = (0..texts.len()).filter(|&s| fits(s)).collect();
        match hits.as_slice() {
            [] => continue,
            [one] if n == 2 => return Fit::Dedented(one + 1, one + wanted.len()),
            [one] => return Fit::At(one + 1, one + wanted.len()),
            many => return Fit::Ambiguous(many.to_vec(), how),
        }
    }
    Fit::Nowhere
}

/// Half-open ranges; an empty range (insert point) overlaps only ranges it
/// falls strictly inside.
fn overlaps(a: (usize, usize), b: (usize, usize)) -> bool {
    match (a.0 == a.1, b.0 == b.1) {
        (true, true) => false,
        (true, false) => b.0 < a.0 && a.0 < b.1,
        (false, true) => a.0 < b.0 && b.0 < a.1,
        (false, false) => a.0 < b.1 && b.0 < a.1,
    }
}

/// "Current lines A-B:" with numbers, around `start..=end`.
fn nearby(doc: &Doc, start: usize, end: usize) -> String {
    let total = doc.lines.len();
    if total == 0 {
        return ". The file is empty.".into();
    }
    let from = start.saturating_sub(NEARBY).max(1);
    let to = (end + NEARBY).min(total);
    let mut out = format!(". Current lines {from}-{to}:\n");
    for n in from..=to {
        out.push_str(&format!("{n:>5}| {}\n", text_of(&doc.lines[n - 1])));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws(files: &[(&str, &str)]) -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        for (p, t) in files {
            std::fs::write(dir.path().join(p), t).unwrap();
        }
        let w = Workspace::open(dir.path()).unwrap();
        (dir, w)
    }

    fn req(
        path: &str,
        op: EditOperation,
        s: Option<usize>,
        e: Option<usize>,
        old: Option<&str>,
        new: Option<&str>,
    ) -> EditRequest {
        EditRequest {
            file_path: path.into(),
            operation: op,
            start_line: s,
            end_line: e,
            old_text: old.map(Into::into),
            new_text: new.map(Into::into),
            rationale: None,
        }
    }

    const FILE: &str = "one\ntwo\nthree\nfour\nfive\n";

    #[test]
    fn valid_edits_get_ids_and_hashes() {
        let (_d, w) = ws(&[("a.txt", FILE)]);
        let mut next = 1;
        let edits = validate_edits(
            &w,
            &[
                req(
                    "a.txt",
                    EditOperation::Replace,
                    Some(2),
                    Some(3),
                    Some("two\nthree"),
                    Some("2\n3\n"),
                ),
                req(
                    "a.txt",
                    EditOperation::Insert,
                    Some(6),
                    None,
                    None,
                    Some("six\n"),
                ),
                req(
                    "new/b.txt",
                    EditOperation::Create,
                    None,
                    None,
                    None,
                    Some("hi\n"),
                ),
            ],
            &[],
            &mut next,
        )
        .unwrap();
        assert_eq!(next, 4);
        assert_eq!(edits[0].edit_id, "e_1");
        assert_eq!(edits[0].expected_hash, sha256_hex(b"two\nthree\n"));
        assert_eq!((edits[1].start_line, edits[1].end_line), (6, 5));
        assert_eq!(edits[2].expected_hash, sha256_hex(b""));
    }

    #[test]
    fn old_text_relocates_when_lines_moved() {
        let (_d, w) = ws(&[("a.txt", FILE)]);
        let edits = validate_edits(
            &w,
            &[req(
                "a.txt",
                EditOperation::Replace,
                Some(1),
                Some(1),
                Some("four"),
                Some("4"),
            )],
            &[],
            &mut 1,
        )
        .unwrap();
        assert_eq!((edits[0].start_line, edits[0].end_line), (4, 4));
    }

    #[test]
    fn old_text_tolerates_trailing_whitespace_and_line_endings_only() {
        let file = "fn a() {  \r\n    one();\t\r\n}\r\nfn b() {\r\n    two();\r\n}\r\n";
        let (_d, w) = ws(&[("a.rs", file), ("twice.rs", "x \ny\nx\t\ny\n")]);
        let one = |path: &str, s: usize, e: usize, old: &str| {
            validate_edits(
                &w,
                &[req(
                    path,
                    EditOperation::Replace,
                    Some(s),
                    Some(e),
                    Some(old),
                    Some("z\n"),
                )],
                &[],
                &mut 1,
            )
        };
        // The model dropped the trailing spaces and wrote LF: still lines 1-2.
        let e = one("a.rs", 1, 2, "fn a() {\n    one();").unwrap();
        assert_eq!((e[0].start_line, e[0].end_line), (1, 2));
        assert_eq!(
            e[0].expected_hash,
            sha256_hex(b"fn a() {  \r\n    one();\t\r\n")
        );
        // Wrong lines given, the text (with extra trailing spaces) found once.
        let e = one("a.rs", 1, 1, "    two();   ").unwrap();
        assert_eq!((e[0].start_line, e[0].end_line), (5, 5));
        // Quoted without its indentation: found there, and the
        // replacement takes the line's indentation.
        let e = one("a.rs", 2, 2, "one();").unwrap();
        assert_eq!((e[0].start_line, e[0].end_line), (2, 2));
        assert_eq!(e[0].new_text, "    z\n");
        // Other text is not found however it is indented.
        let err = one("a.rs", 2, 2, "three();").unwrap_err();
        assert!(err[0].reason.contains("was not found"), "{}", err[0].reason);
        // Equal once trailing spaces go, in two places, neither given: refused.
        let err = one("twice.rs", 2, 2, "x").unwrap_err();
        assert!(
            err[0]
                .reason
                .contains("occurs 2 times elsewhere when trailing spaces are ignored (lines 1, 3)"),
            "{}",
            err[0].reason
        );
        // Elsewhere, an exact match wins over loose ones.
        let (_d2, w2) = ws(&[("b.rs", "x \ny\nx\n")]);
        let e = validate_edits(
            &w2,
            &[req(
                "b.rs",
                EditOperation::Replace,
                Some(2),
                Some(2),
                Some("x"),
                Some("z\n"),
            )],
            &[],
            &mut 1,
        )
        .unwrap();
        assert_eq!(e[0].start_line, 3);
    }

    #[test]
    fn errors_name_the_edit_and_show_nearby_lines() {
        let (_d, w) = ws(&[("a.txt", FILE), ("dup.txt", "x\ny\nx\n"), ("bin", "a\0b")]);
        let cases = [
            (
                req(
                    "a.txt",
                    EditOperation::Replace,
                    Some(4),
                    Some(9),
                    None,
                    Some("x"),
                ),
                "has 5 lines",
            ),
            (
                req(
                    "a.txt",
                    EditOperation::Replace,
                    Some(2),
                    Some(2),
                    Some("nope"),
                    Some("x"),
                ),
                "Current lines 1-5",
            ),
            (
                req(
                    "dup.txt",
                    EditOperation::Replace,
                    Some(2),
                    Some(2),
                    Some("x"),
                    Some("z"),
                ),
                "occurs 2 times",
            ),
            (
                req("a.txt", EditOperation::Create, None, None, None, Some("x")),
                "already exists",
            ),
            (
                req(
                    "b.txt",
                    EditOperation::Replace,
                    Some(1),
                    Some(1),
                    None,
                    Some("x"),
                ),
                "\"create\"",
            ),
            (
                req(
                    "bin",
                    EditOperation::Replace,
                    Some(1),
                    Some(1),
                    None,
                    Some("x"),
                ),
                "binary",
            ),
            (
                req(
                    "a.txt",
                    EditOperation::Insert,
                    Some(7),
                    None,
                    None,
                    Some("x"),
                ),
                "1 to 6",
            ),
            (
                req(
                    "a.txt",
                    EditOperation::Replace,
                    Some(1),
                    Some(1),
                    None,
                    None,
                ),
                "new_text is required",
            ),
            (
                req("../x", EditOperation::Create, None, None, None, Some("x")),
                "climbs out of the agent root",
            ),
            (
                req("new.py", EditOperation::Create, None, None, None, Some("")),
                "at least one line",
            ),
        ];
        for (r, needle) in cases {
            let errs = validate_edits(&w, std::slice::from_ref(&r), &[], &mut 1).unwrap_err();
            let text = errs[0].to_string();
            assert!(text.starts_with("edit 1 ("), "{text}");
            assert!(text.contains(needle), "{needle}: {text}");
        }
    }

    #[test]
    fn a_created_file_cannot_also_be_a_created_folder() {
        let (_d, w) = ws(&[("a.txt", FILE)]);
        let create = |p: &str| req(p, EditOperation::Create, None, None, None, Some("x\n"));
        for pair in [["sub", "sub/x.txt"], ["sub/x.txt", "sub"]] {
            let errs =
                validate_edits(&w, &[create(pair[0]), create(pair[1])], &[], &mut 1).unwrap_err();
            assert_eq!(errs.len(), 1);
            assert!(errs[0].reason.contains("file and a folder"), "{}", errs[0]);
        }
        // Siblings and names that only share a prefix are fine.
        let ok = [create("sub/a"), create("sub/b"), create("subway")];
        assert_eq!(validate_edits(&w, &ok, &[], &mut 1).unwrap().len(), 3);
    }

    #[test]
    fn a_block_quoted_without_its_indentation_lands_reindented_when_it_is_one_of_a_kind() {
        let file =
            "impl A {\n    fn a(&self) {\n        if x {\n            go();\n        }\n    }\n}\n";
        let twice = "fn a() {\n    if x {\n        go();\n    }\n}\nfn b() {\n  if x {\n      go();\n  }\n}\n";
        let (_d, w) = ws(&[("a.rs", file), ("twice.rs", twice)]);
        let edit = |path: &str, s: Option<usize>, e: Option<usize>| {
            validate_edits(
                &w,
                &[req(
                    path,
                    EditOperation::Replace,
                    s,
                    e,
                    Some("if x {\n    go();\n}\n"),
                    Some("if y {\n    stop();\n}\n"),
                )],
                &[],
                &mut 1,
            )
        };
        // Wrong lines, and no lines at all: the one dedented match decides.
        for (s, e) in [(Some(1), Some(3)), (None, None), (Some(40), Some(42))] {
            let got = edit("a.rs", s, e).unwrap();
            assert_eq!((got[0].start_line, got[0].end_line), (3, 5), "{s:?}-{e:?}");
            assert_eq!(
                got[0].new_text,
                "        if y {\n            stop();\n        }\n"
            );
            assert_eq!(
                got[0].expected_hash,
                sha256_hex(b"        if x {\n            go();\n        }\n")
            );
        }
        // Two places once indentation is set aside: still refused.
        let err = edit("twice.rs", Some(6), Some(8)).unwrap_err();
        assert!(
            err[0].reason.contains("when indentation is ignored") && err[0].reason.contains("2, 7"),
            "{}",
            err[0].reason
        );
        assert!(edit("twice.rs", None, None).is_err());
    }

    #[test]
    fn overlapping_edits_are_refused_across_calls() {
        let (_d, w) = ws(&[("a.txt", FILE)]);
        let mut next = 1;
        let first = validate_edits(
            &w,
            &[req(
                "a.txt",
                EditOperation::Replace,
                Some(2),
                Some(4),
                None,
                Some("x"),
            )],
            &[],
            &mut next,
        )
        .unwrap();
        let err = validate_edits(
            &w,
            &[req(
                "a.txt",
                EditOperation::Delete,
                Some(4),
                Some(5),
                None,
                None,
            )],
            &first,
            &mut next,
        )
        .unwrap_err();
        assert!(err[0].reason.contains("overlaps e_1"), "{}", err[0]);
        let err = validate_edits(
            &w,
            &[req(
                "a.txt",
                EditOperation::Insert,
                Some(3),
                None,
                None,
                Some("y"),
            )],
            &first,
            &mut next,
        )
        .unwrap_err();
        assert!(err[0].reason.contains("overlaps"), "{}", err[0]);
        assert!(
            validate_edits(
                &w,
                &[req(
                    "a.txt",
                    EditOperation::Insert,
                    Some(2),
                    None,
                    None,
                    Some("y")
                )],
                &first,
                &mut next
            )
            .is_ok()
        );
        assert!(overlaps((1, 3), (2, 4)) && !overlaps((1, 3), (3, 5)) && !overlaps((2, 2), (2, 2)));
    }
}
