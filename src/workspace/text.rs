//! Reading text files: one streaming pass that hashes the whole file, counts
//! its lines, refuses binary or non-UTF-8 content and keeps a line range.

use std::fs::File;
use std::io::{self, BufRead, BufReader};

use sha2::{Digest, Sha256};
use thiserror::Error;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

#[derive(Debug, Error)]
pub enum DecodeError {
    #[error("binary file (it contains NUL bytes); only text files can be read")]
    Binary,
    #[error("line {line} is not valid UTF-8; only UTF-8 text files can be read")]
    NotUtf8 { line: usize },
    #[error("start_line {start} is past the end of the file, which has {total} lines")]
    StartPastEnd { start: usize, total: usize },
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// Which lines to return and how much at most.
#[derive(Debug, Clone, Copy)]
pub struct ReadRange {
    /// First line, 1-based.
    pub start_line: usize,
    /// Last line, inclusive; `None`: `max_lines` lines from `start_line`.
    pub end_line: Option<usize>,
    pub max_lines: usize,
    /// Bytes of content at most; the content ends at a line boundary unless a
    /// single line is longer than this.
    pub max_bytes: usize,
}

/// The lines read plus facts about the whole file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextSlice {
    /// The lines, line endings kept as they are in the file (LF or CRLF),
    /// without a UTF-8 byte-order mark.
    pub content: String,
    pub start_line: usize,
    /// Last line included (`start_line - 1` when nothing was included).
    pub end_line: usize,
    pub total_lines: usize,
    /// `sha256:<hex>` of every byte of the file, BOM included.
    pub file_hash: String,
    /// Stopped early because of `max_bytes` or `max_lines`.
    pub truncated: bool,
    /// The one line read was longer than `max_bytes`: `content` is its head.
    pub line_cut: bool,
    pub has_bom: bool,
    pub crlf: bool,
}

/// `sha256:<hex>` of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex_digest(Sha256::digest(bytes).as_slice())
}

fn hex_digest(digest: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(7 + digest.len() * 2);
    out.push_str("sha256:");
    for b in digest {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0xf)]));
    }
    out
}

/// The longest start of `text` within `max` bytes that ends on a
/// character boundary.
fn head(text: &str, max: usize) -> &str {
    let mut cut = max.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    &text[..cut]
}

/// Why a read of a file of `total` lines from line `start` gives nothing:
/// a line that is not UTF-8, or a start past the end.
fn readable(bad_line: Option<usize>, start: usize, total: usize) -> Result<(), DecodeError> {
    if let Some(line) = bad_line {
        return Err(DecodeError::NotUtf8 { line });
    }
    if start > total && !(start == 1 && total == 0) {
        return Err(DecodeError::StartPastEnd { start, total });
    }
    Ok(())
}

/// Reads `range` of the open text file `file` in one pass.
pub fn read_text_range(file: File, range: ReadRange) -> Result<TextSlice, DecodeError> {
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let start = range.start_line.max(1);
    let wanted_end = range
        .end_line
        .unwrap_or_else(|| start.saturating_add(range.max_lines.max(1) - 1));
    let mut hasher = Sha256::new();
    let mut line = Vec::with_capacity(256);
    let mut content = String::new();
    let mut total = 0usize;
    let mut last_included = start - 1;
    let mut collecting = true;
    let mut truncated = false;
    let mut line_cut = false;
    let mut has_bom = false;
    let mut crlf = false;
    let mut bad_line = None;
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        hasher.update(&line);
        total += 1;
        if line.contains(&0) {
            return Err(DecodeError::Binary);
        }
        let mut text_bytes = line.as_slice();
        if total == 1 {
            has_bom = text_bytes.starts_with(UTF8_BOM);
            if has_bom {
                text_bytes = &text_bytes[UTF8_BOM.len()..];
            }
            crlf = text_bytes.ends_with(b"\r\n");
        }
        let Ok(text) = std::str::from_utf8(text_bytes) else {
            // Keep scanning: a NUL further on makes it binary instead.
            bad_line.get_or_insert(total);
            continue;
        };
        if !collecting || total < start {
            continue;
        }
        if total > wanted_end {
            collecting = false;
            continue;
        }
        if content.len() + text.len() > range.max_bytes {
            if content.is_empty() {
                // One line longer than the budget: keep its head.
                content.push_str(head(text, range.max_bytes));
                last_included = total;
                line_cut = true;
            }
            truncated = true;
            collecting = false;
            continue;
        }
        content.push_str(text);
        last_included = total;
    }
    readable(bad_line, start, total)?;
    if range.end_line.is_none() && last_included < total && !truncated {
        truncated = last_included == wanted_end;
    }
    Ok(TextSlice {
        content,
        start_line: start,
        end_line: last_included,
        total_lines: total,
        file_hash: hex_digest(hasher.finalize().as_slice()),
        truncated,
        line_cut,
        has_bom,
        crlf,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_with(bytes: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(bytes).unwrap();
        f
    }

    fn all(max_bytes: usize) -> ReadRange {
        ReadRange {
            start_line: 1,
            end_line: None,
            max_lines: 800,
            max_bytes,
        }
    }

    #[test]
    fn hash_matches_known_vector() {
        assert_eq!(
            sha256_hex(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let f = file_with(b"abc");
        assert_eq!(
            read_text_range(File::open(f.path()).unwrap(), all(100))
                .unwrap()
                .file_hash,
            sha256_hex(b"abc")
        );
    }

    #[test]
    fn counts_lines_with_and_without_final_newline() {
        for (bytes, total) in [
            (&b""[..], 0),
            (b"a", 1),
            (b"a\n", 1),
            (b"a\nb", 2),
            (b"\n\n", 2),
        ] {
            let f = file_with(bytes);
            let s = read_text_range(File::open(f.path()).unwrap(), all(100)).unwrap();
            assert_eq!(s.total_lines, total, "{bytes:?}");
            assert_eq!(s.content.as_bytes(), bytes);
        }
    }

    #[test]
    fn bom_is_stripped_from_content_but_hashed() {
        let bytes = b"\xEF\xBB\xBFhello\r\nworld\r\n";
        let f = file_with(bytes);
        let s = read_text_range(File::open(f.path()).unwrap(), all(100)).unwrap();
        assert_eq!(s.content, "hello\r\nworld\r\n");
        assert!(s.has_bom && s.crlf);
        assert_eq!(s.file_hash, sha256_hex(bytes));
    }

    #[test]
    fn range_and_byte_budget() {
        let f = file_with(b"one\ntwo\nthree\nfour\n");
        let r = ReadRange {
            start_line: 2,
            end_line: Some(3),
            max_lines: 800,
            max_bytes: 100,
        };
        let s = read_text_range(File::open(f.path()).unwrap(), r).unwrap();
        assert_eq!(
            (s.content.as_str(), s.start_line, s.end_line, s.truncated),
            ("two\nthree\n", 2, 3, false)
        );
        let s = read_text_range(File::open(f.path()).unwrap(), all(9)).unwrap();
        assert_eq!(
            (s.content.as_str(), s.end_line, s.truncated),
            ("one\ntwo\n", 2, true)
        );
        let r = ReadRange {
            start_line: 1,
            end_line: None,
            max_lines: 3,
            max_bytes: 100,
        };
        let s = read_text_range(File::open(f.path()).unwrap(), r).unwrap();
        assert_eq!((s.end_line, s.truncated), (3, true));
    }

    #[test]
    fn overlong_single_line_is_cut_on_a_char_boundary() {
        let f = file_with("ééééé\n".as_bytes());
        let s = read_text_range(File::open(f.path()).unwrap(), all(5)).unwrap();
        assert_eq!(s.content, "éé");
        assert!(s.truncated);
    }

    #[test]
    fn refuses_binary_and_non_utf8() {
        let f = file_with(b"text\n\x00\x01\x02");
        assert!(matches!(
            read_text_range(File::open(f.path()).unwrap(), all(100)),
            Err(DecodeError::Binary)
        ));
        let f = file_with(b"ok\ncaf\xE9\n");
        assert!(matches!(
            read_text_range(File::open(f.path()).unwrap(), all(100)),
            Err(DecodeError::NotUtf8 { line: 2 })
        ));
        let f = file_with(b"\x89PNG\r\n\x1a\n\x00\x00");
        assert!(matches!(
            read_text_range(File::open(f.path()).unwrap(), all(100)),
            Err(DecodeError::Binary)
        ));
        let f = file_with(b"\xFF\xFEh\x00i\x00");
        assert!(matches!(
            read_text_range(File::open(f.path()).unwrap(), all(100)),
            Err(DecodeError::Binary)
        ));
    }

    #[test]
    fn start_past_end_is_an_error_but_empty_file_is_fine() {
        let f = file_with(b"a\nb\n");
        let r = ReadRange {
            start_line: 3,
            end_line: None,
            max_lines: 10,
            max_bytes: 100,
        };
        assert!(matches!(
            read_text_range(File::open(f.path()).unwrap(), r),
            Err(DecodeError::StartPastEnd { start: 3, total: 2 })
        ));
        let f = file_with(b"");
        let s = read_text_range(File::open(f.path()).unwrap(), all(100)).unwrap();
        assert_eq!((s.start_line, s.end_line, s.total_lines), (1, 0, 0));
    }
}
