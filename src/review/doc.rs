//! A text file as lines that keep their own line endings, plus its BOM, so
//! an edit changes exactly the lines it touches and nothing else.

use thiserror::Error;

const BOM: &str = "\u{feff}";

#[derive(Debug, Error, PartialEq, Eq)]
pub enum DocError {
    #[error("it is a binary file (it contains NUL bytes); only UTF-8 text files can be edited")]
    Binary,
    #[error("it is not valid UTF-8; only UTF-8 text files can be edited")]
    NotUtf8,
}

/// The lines of a UTF-8 text file. Each line keeps its ending (`\n`,
/// `\r\n`, or none for a last line without one).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Doc {
    pub bom: bool,
    pub lines: Vec<String>,
}

impl Doc {
    pub fn parse(bytes: &[u8]) -> Result<Doc, DocError> {
        if bytes.contains(&0) {
            return Err(DocError::Binary);
        }
        let text = std::str::from_utf8(bytes).map_err(|_| DocError::NotUtf8)?;
        let (bom, text) = match text.strip_prefix(BOM) {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        Ok(Doc {
            bom,
            lines: text.split_inclusive('\n').map(str::to_string).collect(),
        })
    }

    /// The ending new lines get: the file's first one, else `\n`.
    pub fn eol(&self) -> &'static str {
        match self.lines.iter().find(|l| l.ends_with('\n')) {
            Some(l) if l.ends_with("\r\n") => "\r\n",
            Some(_) | None => "\n",
        }
    }

    pub fn render(&self) -> Vec<u8> {
        render_lines(self.bom, &self.lines, self.eol())
    }
}

/// Joins lines into file bytes. A line without an ending that is followed
/// by another line gets `eol`, so lines never run together.
pub fn render_lines(bom: bool, lines: &[String], eol: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(lines.iter().map(String::len).sum::<usize>() + 8);
    if bom {
        out.extend_from_slice(BOM.as_bytes());
    }
    let last = lines.len().saturating_sub(1);
    for (i, line) in lines.iter().enumerate() {
        out.extend_from_slice(line.as_bytes());
        if i < last && !line.ends_with('\n') {
            out.extend_from_slice(eol.as_bytes());
        }
    }
    out
}

/// Gives every line but the last an ending (`eol`) if it has none, so the
/// lines are exactly what `render_lines` will write.
pub fn terminate_inner(lines: &mut [String], eol: &str) {
    let last = lines.len().saturating_sub(1);
    for line in lines.iter_mut().take(last) {
        if !line.ends_with('\n') {
            line.push_str(eol);
        }
    }
}

/// A line's text without its ending.
pub fn text_of(line: &str) -> &str {
    let line = line.strip_suffix('\n').unwrap_or(line);
    line.strip_suffix('\r').unwrap_or(line)
}

/// `new_text` as lines ending in `eol`. The last line keeps no ending when
/// `new_text` has none and `open_end` is set (it replaces the file's
/// unterminated last line, or it is a new file written as given).
pub fn lines_of(new_text: &str, eol: &str, open_end: bool) -> Vec<String> {
    let mut out: Vec<String> = new_text
        .split_inclusive('\n')
        .map(|l| format!("{}{eol}", text_of(l)))
        .collect();
    if open_end
        && !new_text.ends_with('\n')
        && let Some(last) = out.last_mut()
    {
        last.truncate(last.len() - eol.len());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_shape() {
        for bytes in [
            &b""[..],
            b"a",
            b"a\n",
            b"a\r\nb\r\n",
            b"a\nb\r\nc",
            b"\xEF\xBB\xBFbom\n",
            b"\n\n\n",
        ] {
            let doc = Doc::parse(bytes).unwrap();
            assert_eq!(doc.render(), bytes, "{bytes:?}");
        }
    }

    #[test]
    fn refuses_binary_and_non_utf8() {
        assert_eq!(Doc::parse(b"a\0b"), Err(DocError::Binary));
        assert_eq!(Doc::parse(b"caf\xe9"), Err(DocError::NotUtf8));
    }

    #[test]
    fn new_lines_take_the_file_ending() {
        assert_eq!(lines_of("x\ny", "\r\n", false), ["x\r\n", "y\r\n"]);
        assert_eq!(lines_of("x\r\ny\n", "\n", false), ["x\n", "y\n"]);
        assert_eq!(lines_of("x\ny", "\n", true), ["x\n", "y"]);
        assert!(lines_of("", "\n", false).is_empty());
        assert_eq!(Doc::parse(b"a\r\nb").unwrap().eol(), "\r\n");
        assert_eq!(
            render_lines(false, &["a".into(), "b\n".into()], "\r\n"),
            b"a\r\nb\n"
        );
    }
}
