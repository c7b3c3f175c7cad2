//! Trigrams for `search_project`: each indexed file's distinct byte
//! trigrams (ASCII letters lower-cased), and the trigrams a literal or a
//! regex needs in any line it matches. A file that lacks one of them
//! cannot match and is skipped; everything the index cannot vouch for is
//! searched, so the results stay exactly those of a full scan.

use regex_syntax::hir::{Hir, HirKind};

/// Three bytes as one number (big-endian, so numbers sort as bytes do).
pub type Trigram = u32;

fn key(w: &[u8]) -> Trigram {
    (u32::from(w[0].to_ascii_lowercase()) << 16)
        | (u32::from(w[1].to_ascii_lowercase()) << 8)
        | u32::from(w[2].to_ascii_lowercase())
}

pub fn bytes_of(t: Trigram) -> [u8; 3] {
    [(t >> 16) as u8, (t >> 8) as u8, t as u8]
}

/// A file's distinct trigrams, sorted, and whether it holds a character
/// that folds to an ASCII letter under Unicode's case folding (the Kelvin
/// sign, the long s): such a file is always searched when case is ignored.
pub fn of_file(bytes: &[u8]) -> (Vec<Trigram>, bool) {
    let mut all: Vec<Trigram> = bytes.windows(3).map(key).collect();
    all.sort_unstable();
    all.dedup();
    let folds = bytes.windows(3).any(|w| w == [0xE2, 0x84, 0xAA])
        || bytes.windows(2).any(|w| w == [0xC5, 0xBF]);
    (all, folds)
}

/// The trigrams every match of `query` holds (`regex`: a pattern, else a
/// literal), ASCII only so case does not matter; `None`: none are known.
pub fn required(query: &str, regex: bool) -> Option<Vec<Trigram>> {
    let strings = if regex {
        let hir = regex_syntax::ParserBuilder::new()
            .build()
            .parse(query)
            .ok()?;
        let mut out = Vec::new();
        needs(&hir, &mut out);
        out
    } else {
        vec![query.as_bytes().to_vec()]
    };
    let mut all: Vec<Trigram> = strings
        .iter()
        .flat_map(|s| s.windows(3))
        .filter(|w| w.iter().all(u8::is_ascii) && !w.contains(&b'\n'))
        .map(key)
        .collect();
    all.sort_unstable();
    all.dedup();
    (!all.is_empty()).then_some(all)
}

/// Literal strings every match of `hir` contains.
fn needs(hir: &Hir, out: &mut Vec<Vec<u8>>) {
    match hir.kind() {
        HirKind::Literal(lit) => out.push(lit.0.to_vec()),
        HirKind::Capture(c) => needs(&c.sub, out),
        HirKind::Repetition(r) if r.min >= 1 => needs(&r.sub, out),
        HirKind::Concat(parts) => {
            // Adjacent literals join into one run.
            let mut run: Vec<u8> = Vec::new();
            for part in parts {
                match part.kind() {
                    HirKind::Literal(lit) => run.extend_from_slice(&lit.0),
                    _ => {
                        if !run.is_empty() {
                            out.push(std::mem::take(&mut run));
                        }
                        needs(part, out);
                    }
                }
            }
            if !run.is_empty() {
                out.push(run);
            }
        }
        // An alternation needs only what all its branches need: left out.
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &[Trigram]) -> Vec<String> {
        t.iter()
            .map(|t| String::from_utf8_lossy(&bytes_of(*t)).into_owned())
            .collect()
    }

    #[test]
    fn literals_and_patterns_need_their_runs() {
        assert_eq!(text(&required("Read", false).unwrap()), ["ead", "rea"]);
        assert_eq!(required("ab", false), None);
        assert_eq!(
            text(&required("fn \\w+_all", true).unwrap()),
            ["_al", "all", "fn "]
        );
        assert_eq!(required("foo|bar", true), None);
        assert_eq!(text(&required("(abc)+x?", true).unwrap()), ["abc"]);
        assert_eq!(required("[", true), None);
        assert_eq!(required("é", false), None);
        assert_eq!(text(&required("xé yz", false).unwrap()), [" yz"]);
    }

    #[test]
    fn files_fold_their_case() {
        let (t, folds) = of_file(b"ABcd");
        assert_eq!(text(&t), ["abc", "bcd"]);
        assert!(!folds);
        assert!(of_file("a\u{212A}b".as_bytes()).1);
        assert!(of_file("\u{17F}".as_bytes()).1);
    }
}
