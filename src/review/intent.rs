//! What a proposal means, where the model's own words say more than its
//! numbers: a replace whose `new_text` stands for code it leaves out (`//
//! ... existing code ...`, `# rest unchanged`, a bare `...` where code
//! was) would delete that code if written literally, so it is refused with
//! a request for the full text; the same edit given twice in one call is
//! one edit; and an `old_text` that is exact and unique places an edit
//! whose line numbers cannot be right. Nothing is written that the
//! proposal does not unambiguously mean.

use super::validate::EditRequest;

/// Words that, in a comment with or without an ellipsis, say "the code
/// that was here goes on unchanged".
const STANDS_FOR: &[&str] = &[
    "existing code",
    "rest of the code",
    "rest of code",
    "rest of the file",
    "rest of the function",
    "rest unchanged",
    "remains unchanged",
    "remain unchanged",
    "unchanged code",
    "code unchanged",
    "remains the same",
    "remaining code",
    "same as before",
    "previous code",
    "other code",
    "omitted for brevity",
    "keep existing",
    "existing implementation",
    "rest of implementation",
    "rest of the implementation",
];

/// Words that, next to an ellipsis in a comment, mean the same.
const NEAR_ELLIPSIS: &[&str] = &[
    "existing",
    "rest",
    "unchanged",
    "same",
    "remaining",
    "previous",
    "other",
    "omitted",
    "code",
    "as before",
];

/// The text of `line` inside comment markers, and whether it had any.
fn comment_body(line: &str) -> (String, bool) {
    let mut t = line.trim();
    let mut comment = false;
    for lead in ["<!--", "/*", "//", "--", "#", ";", "*"] {
        if let Some(rest) = t.strip_prefix(lead) {
            t = rest.trim();
            comment = true;
            break;
        }
    }
    for tail in ["-->", "*/"] {
        if let Some(rest) = t.strip_suffix(tail) {
            t = rest.trim();
        }
    }
    (t.to_lowercase(), comment)
}

/// Whether `line` is a placeholder for code left out.
fn placeholder(line: &str) -> bool {
    let (body, comment) = comment_body(line);
    let ellipsis = body.contains("...") || body.contains('…');
    let bare = body.trim_matches(|c: char| c == '.' || c == '…' || c.is_whitespace());
    if ellipsis && bare.is_empty() {
        return true;
    }
    if ellipsis && comment && NEAR_ELLIPSIS.iter().any(|w| body.contains(w)) {
        return true;
    }
    comment && STANDS_FOR.iter().any(|w| body.contains(w))
}

/// The first line of `new_text` (1-based, and its text) that stands for
/// code it leaves out: a placeholder that was not in `old` itself, where
/// some line of `old` that held code is missing from `new_text`.
pub fn left_out(old: &str, new_text: &str) -> Option<(usize, String)> {
    let kept = |line: &str| new_text.lines().any(|n| n.trim() == line.trim());
    let dropped = old
        .lines()
        .any(|l| !l.trim().is_empty() && !placeholder(l) && !kept(l));
    if !dropped {
        return None;
    }
    new_text
        .lines()
        .enumerate()
        .find(|(_, l)| placeholder(l) && !old.lines().any(|o| o.trim() == l.trim()))
        .map(|(i, l)| (i + 1, l.trim().to_string()))
}

/// Whether `r` repeats one of `earlier` (the same call's edits before it)
/// exactly: the model said it twice, it means it once.
pub fn repeated(earlier: &[EditRequest], r: &EditRequest) -> bool {
    earlier.iter().any(|o| same(o, r))
}

fn same(a: &EditRequest, b: &EditRequest) -> bool {
    a.file_path == b.file_path
        && a.operation == b.operation
        && a.start_line == b.start_line
        && a.end_line == b.end_line
        && a.old_text == b.old_text
        && a.new_text == b.new_text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_told_from_code() {
        for lazy in [
            "    // ... existing code ...",
            "# ... rest of the function unchanged",
            "    ...",
            "/* rest unchanged */",
            "<!-- … -->",
            "    # existing code",
            "// Rest of the code remains the same",
            "…",
        ] {
            assert!(placeholder(lazy), "{lazy:?}");
        }
        for code in [
            "    let x = 1; // keep the count",
            "    print(\"loading...\")",
            "    # retry: the server may be busy",
            "    args = [*rest]",
            "// see the notes",
            "foo(...args)",
        ] {
            assert!(!placeholder(code), "{code:?}");
        }
    }

    #[test]
    fn a_placeholder_counts_only_where_code_goes_missing() {
        let old = "fn a() {\n    one();\n    two();\n}\n";
        assert_eq!(
            left_out(
                old,
                "fn a() {\n    // ... existing code ...\n    three();\n}\n"
            ),
            Some((2, "// ... existing code ...".into()))
        );
        // Every old line kept: the comment is a comment.
        assert_eq!(
            left_out(
                old,
                "fn a() {\n    one();\n    two();\n    // ... existing code ...\n}\n"
            ),
            None
        );
        // A placeholder that was there already is the file's own text.
        let stub = "def f():\n    ...\n";
        assert_eq!(left_out(stub, "def f():\n    ...\n    return 1\n"), None);
    }
}
