//! A unified diff (`diff -u`, `git diff`) applied to the root's files as a
//! person's own write (the server's `fs/patch`): every hunk must find its
//! old lines exactly, at the line it names or else at one place only in
//! the file; otherwise nothing is written. The result is whole-file
//! writes, each checked against the hash it was computed from.

use crate::protocol::{EngineError, UserWrite};

/// One file of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePatch {
    pub path: String,
    /// `--- /dev/null`: the file is created.
    pub create: bool,
    pub hunks: Vec<PatchHunk>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchHunk {
    /// 1-based line the old side starts at (0 for an empty old side).
    pub old_start: usize,
    /// The old side's lines (context and removed), without newlines.
    pub old: Vec<String>,
    /// The new side's lines (context and added).
    pub new: Vec<String>,
    /// `\ No newline at end of file` after the new side's last line.
    pub new_no_eol: bool,
}

fn strip_prefix(path: &str) -> String {
    let path = path.split('\t').next().unwrap_or(path).trim();
    path.strip_prefix("a/")
        .or_else(|| path.strip_prefix("b/"))
        .unwrap_or(path)
        .to_string()
}

/// `@@ -l,s +l,s @@` → (old start, old count, new count).
fn hunk_header(line: &str) -> Option<(usize, usize, usize)> {
    let rest = line.strip_prefix("@@ -")?;
    let (ranges, _) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let range = |r: &str| -> Option<(usize, usize)> {
        match r.split_once(',') {
            Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    let (old_start, old_count) = range(old)?;
    let (_, new_count) = range(new)?;
    Some((old_start, old_count, new_count))
}

/// Reads the files and hunks of `text`.
pub fn parse(text: &str) -> Result<Vec<FilePatch>, EngineError> {
    let bad = |n: usize, why: &str| EngineError::invalid(format!("patch line {n}: {why}"));
    let lines: Vec<&str> = text.lines().collect();
    let mut files: Vec<FilePatch> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(old) = line.strip_prefix("--- ") {
            let Some(new) = lines.get(i + 1).and_then(|l| l.strip_prefix("+++ ")) else {
                return Err(bad(i + 2, "a `---` line must be followed by `+++`"));
            };
            if new.trim() == "/dev/null" {
                return Err(bad(i + 2, "deleting a file is not supported here"));
            }
            files.push(FilePatch {
                path: strip_prefix(new),
                create: old.trim() == "/dev/null",
                hunks: Vec::new(),
            });
            i += 2;
            continue;
        }
        if line.starts_with("@@") {
            let (old_start, old_count, new_count) = hunk_header(line)
                .ok_or_else(|| bad(i + 1, "not a hunk header (@@ -l,s +l,s @@)"))?;
            let file = files
                .last_mut()
                .ok_or_else(|| bad(i + 1, "a hunk before any `---`/`+++` file header"))?;
            let mut hunk = PatchHunk {
                old_start,
                old: Vec::new(),
                new: Vec::new(),
                new_no_eol: false,
            };
            i += 1;
            while hunk.old.len() < old_count || hunk.new.len() < new_count {
                let Some(l) = lines.get(i) else {
                    return Err(bad(i, "the hunk ends before its header's counts"));
                };
                match l.chars().next() {
                    Some(' ') | None => {
                        let body = l.get(1..).unwrap_or_default().to_string();
                        hunk.old.push(body.clone());
                        hunk.new.push(body);
                    }
                    Some('-') => hunk.old.push(l[1..].to_string()),
                    Some('+') => hunk.new.push(l[1..].to_string()),
                    Some('\\') => {}
                    _ => return Err(bad(i + 1, "a hunk line starts with ' ', '-' or '+'")),
                }
                i += 1;
            }
            if lines.get(i).is_some_and(|l| l.starts_with('\\')) {
                hunk.new_no_eol = lines
                    .get(i.wrapping_sub(1))
                    .is_some_and(|l| l.starts_with('+') || l.starts_with(' '));
                i += 1;
            }
            file.hunks.push(hunk);
            continue;
        }
        // `diff --git`, `index …` and other header lines.
        i += 1;
    }
    if files.is_empty() || files.iter().any(|f| f.hunks.is_empty()) {
        return Err(EngineError::invalid(
            "the patch has no file with hunks (a unified diff: ---, +++, @@ lines)",
        ));
    }
    Ok(files)
}

/// Where `old` stands in `lines`: at `hint` (0-based) if it matches
/// there, else at its only match.
fn locate(lines: &[&str], old: &[String], hint: usize) -> Option<usize> {
    let at = |i: usize| {
        lines.len() >= i + old.len() && lines[i..i + old.len()].iter().zip(old).all(|(a, b)| a == b)
    };
    if at(hint) {
        return Some(hint);
    }
    let mut found = (0..=lines.len().saturating_sub(old.len())).filter(|&i| at(i));
    match (found.next(), found.next()) {
        (Some(i), None) => Some(i),
        _ => None,
    }
}

/// The whole new text of `file` from its current text (`None`: missing),
/// or why its hunks do not fit. Lines the patch does not touch keep their
/// bytes (a BOM, CRLF or mixed endings); its new lines take the file's
/// ending (its first line's). Lines are compared without their endings, so
/// a patch made with LF endings fits a CRLF file.
pub fn apply(file: &FilePatch, current: Option<&str>) -> Result<String, String> {
    let text = match (current, file.create) {
        (Some(_), true) => return Err("it exists already (the patch creates it)".into()),
        (None, false) => return Err("it does not exist".into()),
        (t, _) => t.unwrap_or_default(),
    };
    // A byte-order mark is the first line's, as `diff` and git see it;
    // a patch made without it (an editor that hides it) applies under it.
    let patch_has_bom = file
        .hunks
        .iter()
        .any(|h| h.old_start <= 1 && h.old.first().is_some_and(|l| l.starts_with('\u{feff}')));
    let (bom, body) = match text.strip_prefix('\u{feff}') {
        Some(rest) if !patch_has_bom => ("\u{feff}", rest),
        _ => ("", text),
    };
    let eol = match body.split_once('\n') {
        Some((first, _)) if first.ends_with('\r') => "\r\n",
        _ => "\n",
    };
    let raw: Vec<&str> = body.split_inclusive('\n').collect();
    let lines: Vec<&str> = raw
        .iter()
        .map(|l| {
            l.strip_suffix('\n')
                .map_or(*l, |l| l.strip_suffix('\r').unwrap_or(l))
        })
        .collect();
    let mut out = String::from(bom);
    let mut next = 0;
    let mut cut_end = false;
    for (n, hunk) in file.hunks.iter().enumerate() {
        let hint = hunk.old_start.saturating_sub(1).max(next);
        let at = locate(&lines[next..], &hunk.old, hint - next)
            .map(|i| i + next)
            .ok_or_else(|| format!("hunk {} no longer matches the file", n + 1))?;
        raw[next..at].iter().for_each(|l| out.push_str(l));
        for line in &hunk.new {
            out.push_str(line);
            out.push_str(eol);
        }
        next = at + hunk.old.len();
        cut_end = next == lines.len() && hunk.new_no_eol;
    }
    raw[next..].iter().for_each(|l| out.push_str(l));
    if cut_end && next == lines.len() && out.ends_with(eol) {
        out.truncate(out.len() - eol.len());
    }
    Ok(out)
}

/// The writes a patch makes, given each file's current text and hash:
/// 409 naming every file whose hunks do not fit.
pub fn writes(
    files: &[FilePatch],
    read: impl Fn(&str) -> Result<Option<(String, String)>, EngineError>,
) -> Result<Vec<UserWrite>, EngineError> {
    let mut out = Vec::new();
    let mut conflicts = Vec::new();
    for f in files {
        let current = read(&f.path)?;
        match apply(f, current.as_ref().map(|(t, _)| t.as_str())) {
            Ok(content) => out.push(UserWrite {
                file_path: f.path.clone(),
                expected_hash: current.map(|(_, h)| h),
                content,
            }),
            Err(reason) => {
                conflicts.push(serde_json::json!({"file_path": f.path, "reason": reason}))
            }
        }
    }
    if !conflicts.is_empty() {
        return Err(EngineError::Conflict {
            message: "nothing was written: the patch no longer matches".into(),
            conflicts,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATCH: &str = "diff --git a/src/a.rs b/src/a.rs\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1,3 +1,3 @@\n fn a() {\n-    one();\n+    uno();\n }\n--- /dev/null\n+++ b/notes.md\n@@ -0,0 +1,2 @@\n+# Notes\n+two\n";

    #[test]
    fn a_patch_applies_at_its_line_or_its_only_match() {
        let files = parse(PATCH).unwrap();
        assert_eq!(files.len(), 2);
        assert!(files[1].create);
        let a = "fn a() {\n    one();\n}\n";
        assert_eq!(
            apply(&files[0], Some(a)).unwrap(),
            "fn a() {\n    uno();\n}\n"
        );
        // Moved down by two lines: found where it is now.
        let moved = format!("// x\n// y\n{a}");
        assert_eq!(
            apply(&files[0], Some(&moved)).unwrap(),
            "// x\n// y\nfn a() {\n    uno();\n}\n"
        );
        assert_eq!(apply(&files[1], None).unwrap(), "# Notes\ntwo\n");
        assert!(apply(&files[1], Some("x")).is_err());
        assert!(apply(&files[0], Some("fn a() {\n    three();\n}\n")).is_err());
        // Two places it could go: refused, not guessed.
        let twice = format!("{a}// z\n{a}");
        let mut far = files[0].clone();
        far.hunks[0].old_start = 3;
        assert!(apply(&far, Some(&twice)).is_err());
    }

    #[test]
    fn a_byte_order_mark_is_the_first_lines_when_the_patch_has_it() {
        // Found by the patch fuzz target: git's diff of a file with a BOM
        // has it in line 1, which never matched the file without it.
        let bom = "\u{feff}";
        let file = format!("{bom}a\nb\n");
        let with = parse(&format!(
            "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-{bom}a\n+a\n b\n"
        ))
        .unwrap();
        assert_eq!(apply(&with[0], Some(&file)).unwrap(), "a\nb\n");
        // Made without it (an editor that hides it): applied under it.
        let without = parse("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n").unwrap();
        assert_eq!(
            apply(&without[0], Some(&file)).unwrap(),
            format!("{bom}A\nb\n")
        );
    }

    #[test]
    fn untouched_lines_keep_their_bytes_and_new_ones_the_files_ending() {
        let files = parse("--- a/f\n+++ b/f\n@@ -2,1 +2,1 @@\n-b\n+B\n").unwrap();
        let crlf = "\u{feff}a\r\nb\r\nc\r\n";
        assert_eq!(
            apply(&files[0], Some(crlf)).unwrap(),
            "\u{feff}a\r\nB\r\nc\r\n"
        );
        let mixed = "a\nb\r\nc";
        assert_eq!(apply(&files[0], Some(mixed)).unwrap(), "a\nB\nc");
        // A hunk at the end decides the last line's ending.
        let files =
            parse("--- a/f\n+++ b/f\n@@ -3,1 +3,1 @@\n-c\n+C\n\\ No newline at end of file\n")
                .unwrap();
        assert_eq!(apply(&files[0], Some(crlf)).unwrap(), "\u{feff}a\r\nb\r\nC");
    }

    #[test]
    fn malformed_patches_are_clear_errors() {
        for bad in [
            "",
            "hello",
            "--- a/x\n@@ -1 +1 @@\n-a\n+b\n",
            "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\n",
            "--- a/x\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
