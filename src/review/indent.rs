//! Indentation of a quoted block: an `old_text` copied without the
//! indentation its lines have in the file (or with more) is found by its
//! dedented form, and the `new_text` that replaces it is moved to the
//! indentation of the place it lands.

/// The leading spaces and tabs every non-blank line shares.
pub fn common_indent<'a>(lines: &[&'a str]) -> &'a str {
    let mut common: Option<&str> = None;
    for line in lines.iter().filter(|l| !is_blank(l)) {
        let own = &line[..line.len() - line.trim_start_matches([' ', '\t']).len()];
        common = Some(match common {
            None => own,
            Some(c) => {
                let n = c
                    .bytes()
                    .zip(own.bytes())
                    .take_while(|(a, b)| a == b)
                    .count();
                &c[..n]
            }
        });
    }
    common.unwrap_or("")
}

fn is_blank(line: &str) -> bool {
    line.trim_matches([' ', '\t', '\r', '\n']).is_empty()
}

/// Whether `window` holds `wanted` once each side's common indentation is
/// taken off (trailing spaces aside; a blank line matches a blank line).
pub fn same_dedented(window: &[&str], wanted: &[&str]) -> bool {
    if window.len() != wanted.len() {
        return false;
    }
    let (at, quoted) = (common_indent(window), common_indent(wanted));
    window.iter().zip(wanted).all(|(a, b)| {
        if is_blank(a) || is_blank(b) {
            return is_blank(a) && is_blank(b);
        }
        let (a, b) = (
            a.trim_end_matches([' ', '\t']),
            b.trim_end_matches([' ', '\t']),
        );
        a.strip_prefix(at) == b.strip_prefix(quoted)
    })
}

/// How a replacement moves from the quote's indentation to the file's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reindent {
    /// The common indentation of the lines as quoted.
    pub quoted: String,
    /// ... and of those lines in the file.
    pub file: String,
}

impl Reindent {
    /// The move from `wanted` (as quoted) to `window` (the file's lines);
    /// `None` when both have the same indentation.
    pub fn between(window: &[&str], wanted: &[&str]) -> Option<Reindent> {
        let (file, quoted) = (common_indent(window), common_indent(wanted));
        (file != quoted).then(|| Reindent {
            quoted: quoted.to_string(),
            file: file.to_string(),
        })
    }

    /// `text` with each non-blank line moved as the quote was: deeper by
    /// what the file adds (the usual case: a block quoted flush left), or
    /// shallower by what the quote had too much; where the two differ in
    /// kind (tabs against spaces), the quote's indentation is replaced by
    /// the file's on the lines that start with it.
    pub fn apply(&self, text: &str) -> String {
        let (quoted, file) = (self.quoted.as_str(), self.file.as_str());
        text.split_inclusive('\n')
            .map(|line| {
                if is_blank(line) {
                    return line.to_string();
                }
                if let Some(deeper) = file.strip_prefix(quoted) {
                    format!("{deeper}{line}")
                } else if let Some(extra) = quoted.strip_prefix(file) {
                    line.strip_prefix(extra).unwrap_or(line).to_string()
                } else {
                    match line.strip_prefix(quoted) {
                        Some(rest) => format!("{file}{rest}"),
                        None => line.to_string(),
                    }
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_indent_skips_blank_lines() {
        assert_eq!(common_indent(&["    a", "", "      b", "  "]), "    ");
        assert_eq!(common_indent(&["\t\tx", "\ty"]), "\t");
        assert_eq!(common_indent(&["x", "    y"]), "");
        assert_eq!(common_indent(&["", " "]), "");
    }

    #[test]
    fn a_block_quoted_flush_left_matches_its_indented_lines() {
        let file = ["    if x {", "        go();", "", "    }"];
        assert!(same_dedented(&file, &["if x {", "    go();", "", "}"]));
        assert!(same_dedented(&file, &["if x {  ", "    go();", "  ", "}"]));
        // Another shape inside is another text.
        assert!(!same_dedented(&file, &["if x {", "go();", "", "}"]));
        assert!(!same_dedented(&file, &["if x {", "    go();", "}"]));
        assert!(!same_dedented(&file, &["if x {", "    go();", "x", "}"]));
    }

    #[test]
    fn the_replacement_takes_the_file_s_indentation() {
        let file = ["    if x {", "        go();", "    }"];
        let r = Reindent::between(&file, &["if x {", "    go();", "}"]).unwrap();
        assert_eq!(
            r.apply("if y {\n    stop();\n\n}\n"),
            "    if y {\n        stop();\n\n    }\n"
        );
        // Quoted deeper than the file: the extra goes.
        let r = Reindent::between(&["a", "  b"], &["    a", "      b"]).unwrap();
        assert_eq!(r.apply("    c\n      d"), "c\n  d");
        // Tabs in the file, spaces in the quote.
        let r = Reindent::between(&["\tx", "\t\ty"], &["  x", "    y"]).unwrap();
        assert_eq!(r.apply("  z\n    w\n"), "\tz\n\t  w\n");
        assert_eq!(Reindent::between(&["  a"], &["  a"]), None);
    }
}
