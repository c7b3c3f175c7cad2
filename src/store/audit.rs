//! Tamper-evident, append-only audit log: one hash-chained JSON record per line, with a verifier.
//!
//! Each line is an [`AuditRecord`] whose `hash` is `sha256:<hex>` of the canonical (compact,
//! fixed key order) JSON of the record without its `hash` field, and whose `prev` is the `hash`
//! of the line before it (`sha256:` + 64 zeros for the first). `seq` starts at 1 and grows by one.
//! Editing, deleting, reordering or inserting a line therefore breaks the chain at (or right
//! after) the touched line, which [`verify`] reports.
//!
//! Crash recovery: a write that was cut short leaves a *torn* last line (no trailing newline, or
//! not a valid record). [`AuditLog::open`] ignores it for chaining and the next append first
//! writes a newline, so later records stay one per line and chain from the last good record.
//! The torn line stays in the file as evidence, so after such a recovery [`verify`] reports that
//! torn line as the first broken one; that is expected, not a new tamper. One exception: if the
//! unterminated last line is a complete record that chains correctly (only its newline was lost),
//! `open` adopts it and the log verifies intact again after the next append.

#![deny(clippy::unwrap_used, clippy::expect_used)]

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::workspace::sha256_hex;

/// `prev` of the first record.
const GENESIS: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

/// One audit record as the caller describes it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AuditEntry {
    pub session: Option<String>,
    pub job: Option<String>,
    /// e.g. "tool_call", "decision", "apply", "rollback", "approval"
    pub action: String,
    /// what it acted on: a tool name + path, a hunk id, a checkpoint id ...
    pub target: String,
    /// whether it was approved (by policy or by the user); None when not applicable
    pub approved: Option<bool>,
    /// "ok", "error: ...", "conflict", ...
    pub outcome: String,
}

/// A record as stored: one JSON object per line:
/// {"seq", "time" (RFC 3339 UTC with millis), "session", "job", "action", "target", "approved", "outcome", "prev", "hash"}
/// `prev` is the `hash` of the previous record ("sha256:" + 64 zeros for the first);
/// `hash` is "sha256:<hex>" of the canonical JSON of the record WITHOUT the `hash` field (keys in the order listed above, serde_json compact).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditRecord {
    pub seq: u64,
    pub time: String,
    pub session: Option<String>,
    pub job: Option<String>,
    pub action: String,
    pub target: String,
    pub approved: Option<bool>,
    pub outcome: String,
    pub prev: String,
    pub hash: String,
}

/// The hashed part of a record: every field but `hash`, in stored order.
#[derive(serde::Serialize)]
struct Canonical<'a> {
    seq: u64,
    time: &'a str,
    session: &'a Option<String>,
    job: &'a Option<String>,
    action: &'a str,
    target: &'a str,
    approved: Option<bool>,
    outcome: &'a str,
    prev: &'a str,
}

impl AuditRecord {
    /// `sha256:<hex>` of the canonical JSON of this record without `hash`.
    fn compute_hash(&self) -> Result<String, serde_json::Error> {
        let canonical = Canonical {
            seq: self.seq,
            time: &self.time,
            session: &self.session,
            job: &self.job,
            action: &self.action,
            target: &self.target,
            approved: self.approved,
            outcome: &self.outcome,
            prev: &self.prev,
        };
        let bytes = serde_json::to_vec(&canonical)?;
        Ok(sha256_hex(&bytes))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    #[error("audit log {}: I/O error: {source} (check the path exists and is readable/writable)", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("audit log {}: cannot encode record as JSON: {source}", path.display())]
    Encode {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("audit log {}: sequence number exhausted; rotate to a new log file", path.display())]
    SeqExhausted { path: PathBuf },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> AuditError + '_ {
    move |source| AuditError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Reads `path` line by line (bytes, `\n`-terminated), calling `f(line_without_newline, terminated)`.
fn for_each_line(
    path: &Path,
    file: File,
    mut f: impl FnMut(&[u8], bool) -> bool,
) -> Result<(), AuditError> {
    let mut reader = BufReader::new(file);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf).map_err(io_err(path))?;
        if n == 0 {
            return Ok(());
        }
        let terminated = buf.last() == Some(&b'\n');
        if terminated {
            buf.pop();
        }
        if !f(&buf, terminated) {
            return Ok(());
        }
    }
}

/// An open audit log, positioned to append after its last good record.
pub struct AuditLog {
    path: PathBuf,
    file: File,
    last_seq: u64,
    last_hash: String,
    /// The file does not end with '\n' (torn last line): write one before the next record.
    needs_newline: bool,
}

impl AuditLog {
    /// Opens (creating parent dirs and the file if needed) and reads the tail to learn the last seq/hash.
    /// Reading the tail must not load a huge file fully into memory if avoidable; reading it line by line is fine.
    /// If the last line is torn (a crash mid-write: no trailing newline or invalid JSON), it is ignored for chaining
    /// purposes but `verify` will report it; appending after a torn line must first write a newline so records stay one per line.
    pub fn open(path: &Path) -> Result<AuditLog, AuditError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(io_err(parent))?;
        }
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .map_err(io_err(path))?;
        let reader = file.try_clone().map_err(io_err(path))?;
        let mut last: Option<(u64, String)> = None;
        let mut needs_newline = false;
        for_each_line(path, reader, |line, terminated| {
            needs_newline = !terminated;
            let Ok(rec) = serde_json::from_slice::<AuditRecord>(line) else {
                return true;
            };
            // An unterminated last line is adopted only if it is a whole record that chains on.
            let chains = || {
                let (seq, hash) = last
                    .as_ref()
                    .map_or((0, GENESIS), |(s, h)| (*s, h.as_str()));
                Some(rec.seq) == seq.checked_add(1)
                    && rec.prev == hash
                    && rec.compute_hash().is_ok_and(|h| h == rec.hash)
            };
            if terminated || chains() {
                last = Some((rec.seq, rec.hash));
            }
            true
        })?;
        let (last_seq, last_hash) = last.unwrap_or_else(|| (0, GENESIS.to_string()));
        Ok(AuditLog {
            path: path.to_path_buf(),
            file,
            last_seq,
            last_hash,
            needs_newline,
        })
    }

    /// Appends one record (one write_all of the whole line incl. '\n', then flush; file opened in append mode) and returns it.
    pub fn append(&mut self, entry: AuditEntry) -> Result<AuditRecord, AuditError> {
        let seq = self
            .last_seq
            .checked_add(1)
            .ok_or_else(|| AuditError::SeqExhausted {
                path: self.path.clone(),
            })?;
        let mut record = AuditRecord {
            seq,
            time: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            session: entry.session,
            job: entry.job,
            action: entry.action,
            target: entry.target,
            approved: entry.approved,
            outcome: entry.outcome,
            prev: self.last_hash.clone(),
            hash: String::new(),
        };
        let encode_err = |source| AuditError::Encode {
            path: self.path.clone(),
            source,
        };
        record.hash = record.compute_hash().map_err(encode_err)?;
        let mut line = Vec::with_capacity(256);
        if self.needs_newline {
            line.push(b'\n');
        }
        serde_json::to_writer(&mut line, &record).map_err(encode_err)?;
        line.push(b'\n');

        let written = self.file.write_all(&line).and_then(|()| self.file.flush());
        if let Err(source) = written {
            // A partial write may have left a torn line; find out before the next append.
            self.needs_newline = !ends_with_newline_or_empty(&self.file).unwrap_or(false);
            return Err(AuditError::Io {
                path: self.path.clone(),
                source,
            });
        }
        self.needs_newline = false;
        self.last_seq = record.seq;
        self.last_hash.clone_from(&record.hash);
        Ok(record)
    }

    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn ends_with_newline_or_empty(file: &File) -> std::io::Result<bool> {
    let mut f = file;
    let len = f.seek(SeekFrom::End(0))?;
    if len == 0 {
        return Ok(true);
    }
    f.seek(SeekFrom::End(-1))?;
    let mut byte = [0u8; 1];
    f.read_exact(&mut byte)?;
    Ok(byte[0] == b'\n')
}

#[derive(Debug, Clone, PartialEq)]
pub enum Verification {
    /// every record's hash and link checked
    Intact { records: u64 },
    /// the first record that does not verify: its 1-based line number, its seq if readable, and why
    /// (e.g. "hash does not match its contents", "prev does not match the hash of record 4", "not valid JSON", "seq 7 follows 5")
    Broken {
        line: u64,
        seq: Option<u64>,
        reason: String,
    },
}

/// Checks one line against the previous good record (`None` before the first); `Err(reason)` if broken.
fn check_line(
    line: &[u8],
    terminated: bool,
    prev: Option<&AuditRecord>,
) -> Result<AuditRecord, String> {
    if !terminated {
        return Err("torn last line: no trailing newline (a crash mid-write?)".to_string());
    }
    let rec: AuditRecord = serde_json::from_slice(line).map_err(|e| {
        if serde_json::from_slice::<serde_json::Value>(line).is_ok() {
            format!("not a valid audit record: {e}")
        } else {
            format!("not valid JSON: {e}")
        }
    })?;
    match rec.compute_hash() {
        Ok(h) if h == rec.hash => {}
        Ok(_) => return Err("hash does not match its contents".to_string()),
        Err(e) => return Err(format!("hash cannot be recomputed: {e}")),
    }
    let (prev_seq, prev_hash) = prev.map_or((0, GENESIS), |p| (p.seq, p.hash.as_str()));
    if rec.prev != prev_hash {
        return Err(match prev {
            Some(p) => format!("prev does not match the hash of record {}", p.seq),
            None => "prev of the first record is not the all-zero genesis hash".to_string(),
        });
    }
    if prev_seq.checked_add(1) != Some(rec.seq) {
        return Err(match prev {
            Some(p) => format!("seq {} follows {}", rec.seq, p.seq),
            None => format!("first record has seq {}, expected 1", rec.seq),
        });
    }
    if humantime::parse_rfc3339(&rec.time).is_err() {
        return Err(format!("time {:?} is not RFC 3339 UTC", rec.time));
    }
    Ok(rec)
}

/// Verifies the whole chain (a missing file is Intact { records: 0 }).
pub fn verify(path: &Path) -> Result<Verification, AuditError> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Verification::Intact { records: 0 });
        }
        Err(e) => return Err(io_err(path)(e)),
    };
    let mut prev: Option<AuditRecord> = None;
    let mut line_no: u64 = 0;
    let mut broken = None;
    for_each_line(path, file, |line, terminated| {
        line_no += 1;
        match check_line(line, terminated, prev.as_ref()) {
            Ok(rec) => {
                prev = Some(rec);
                true
            }
            Err(reason) => {
                let seq = serde_json::from_slice::<serde_json::Value>(line)
                    .ok()
                    .and_then(|v| v.get("seq").and_then(serde_json::Value::as_u64));
                broken = Some(Verification::Broken {
                    line: line_no,
                    seq,
                    reason,
                });
                false
            }
        }
    })?;
    Ok(broken.unwrap_or(Verification::Intact { records: line_no }))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn entry(i: usize) -> AuditEntry {
        AuditEntry {
            session: Some("s1".to_string()),
            job: if i.is_multiple_of(2) {
                Some(format!("job-{i}"))
            } else {
                None
            },
            action: "tool_call".to_string(),
            target: format!("write_file src/f{i}.rs"),
            approved: match i % 3 {
                0 => Some(true),
                1 => Some(false),
                _ => None,
            },
            outcome: "ok".to_string(),
        }
    }

    /// A log of `n` records in a fresh temp dir.
    fn log_with(n: usize) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let mut log = AuditLog::open(&path).unwrap();
        for i in 0..n {
            log.append(entry(i)).unwrap();
        }
        (dir, path)
    }

    fn lines(path: &Path) -> Vec<String> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    }

    fn write_lines(path: &Path, lines: &[String]) {
        std::fs::write(path, lines.join("\n") + "\n").unwrap();
    }

    /// Replaces field `key` of line `idx` (0-based) with `value`, keeping everything else.
    fn edit_field(path: &Path, idx: usize, key: &str, value: serde_json::Value) {
        let mut ls = lines(path);
        let mut v: serde_json::Value = serde_json::from_str(&ls[idx]).unwrap();
        v[key] = value;
        ls[idx] = serde_json::to_string(&v).unwrap();
        write_lines(path, &ls);
    }

    fn assert_broken(path: &Path, want_line: u64, reason_has: &str) {
        match verify(path).unwrap() {
            Verification::Broken { line, reason, .. } => {
                assert_eq!(line, want_line, "reason: {reason}");
                assert!(reason.contains(reason_has), "reason {reason:?}");
            }
            other @ Verification::Intact { .. } => panic!("expected Broken, got {other:?}"),
        }
    }

    #[test]
    fn round_trip_100_records() {
        let (_d, path) = log_with(100);
        assert_eq!(
            verify(&path).unwrap(),
            Verification::Intact { records: 100 }
        );
        let ls = lines(&path);
        assert_eq!(ls.len(), 100);
        let mut prev = GENESIS.to_string();
        for (i, l) in ls.iter().enumerate() {
            let r: AuditRecord = serde_json::from_str(l).unwrap();
            assert_eq!(r.seq, i as u64 + 1);
            assert_eq!(r.prev, prev);
            assert_eq!(r.target, format!("write_file src/f{i}.rs"));
            assert!(humantime::parse_rfc3339(&r.time).is_ok());
            assert!(r.time.ends_with('Z') && r.time.len() == 24, "{}", r.time);
            prev = r.hash;
        }
    }

    #[test]
    fn stored_format_is_canonical() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/audit.jsonl");
        let mut log = AuditLog::open(&path).unwrap();
        assert_eq!(log.path(), path);
        let rec = log.append(entry(2)).unwrap();
        assert_eq!(rec.prev, GENESIS);
        assert_eq!(rec.hash.len(), 7 + 64);
        let line = &lines(&path)[0];
        let keys: Vec<String> = serde_json::from_str::<serde_json::Value>(line)
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        let want = [
            "seq", "time", "session", "job", "action", "target", "approved", "outcome", "prev",
            "hash",
        ];
        assert_eq!(keys, want);
        // hash = sha256 of the compact line with the hash field cut off.
        let cut = line.find(",\"hash\":").unwrap();
        assert_eq!(
            rec.hash,
            sha256_hex(format!("{}}}", &line[..cut]).as_bytes())
        );
        assert_eq!(serde_json::from_str::<AuditRecord>(line).unwrap(), rec);
    }

    #[test]
    fn missing_file_is_intact_and_empty_log_appends_from_genesis() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("none.jsonl");
        assert_eq!(verify(&path).unwrap(), Verification::Intact { records: 0 });
        AuditLog::open(&path).unwrap();
        assert_eq!(verify(&path).unwrap(), Verification::Intact { records: 0 });
    }

    #[test]
    fn reopen_continues_chain() {
        let (_d, path) = log_with(5);
        let last: AuditRecord = serde_json::from_str(&lines(&path)[4]).unwrap();
        let mut log = AuditLog::open(&path).unwrap();
        let rec = log.append(entry(5)).unwrap();
        assert_eq!(rec.seq, 6);
        assert_eq!(rec.prev, last.hash);
        drop(log);
        let mut log = AuditLog::open(&path).unwrap();
        assert_eq!(log.append(entry(6)).unwrap().seq, 7);
        assert_eq!(verify(&path).unwrap(), Verification::Intact { records: 7 });
    }

    #[test]
    fn edited_outcome_breaks_at_that_line() {
        let (_d, path) = log_with(10);
        edit_field(&path, 4, "outcome", "error: nope".into());
        assert_broken(&path, 5, "hash");
        assert!(matches!(
            verify(&path).unwrap(),
            Verification::Broken { seq: Some(5), .. }
        ));
    }

    #[test]
    fn edited_approved_breaks_at_that_line() {
        let (_d, path) = log_with(10);
        edit_field(&path, 3, "approved", serde_json::Value::Null);
        assert_broken(&path, 4, "hash");
    }

    #[test]
    fn edited_time_breaks_at_that_line() {
        let (_d, path) = log_with(10);
        edit_field(&path, 6, "time", "1999-01-01T00:00:00.000Z".into());
        assert_broken(&path, 7, "hash");
    }

    #[test]
    fn edited_target_breaks_at_that_line() {
        let (_d, path) = log_with(10);
        edit_field(&path, 1, "target", "write_file /etc/passwd".into());
        assert_broken(&path, 2, "hash");
    }

    #[test]
    fn deleted_middle_line_breaks_at_following_line() {
        let (_d, path) = log_with(10);
        let mut ls = lines(&path);
        ls.remove(4);
        write_lines(&path, &ls);
        assert_broken(&path, 5, "prev does not match the hash of record 4");
    }

    #[test]
    fn swapped_lines_break() {
        let (_d, path) = log_with(10);
        let mut ls = lines(&path);
        ls.swap(3, 6);
        write_lines(&path, &ls);
        assert_broken(&path, 4, "prev");
    }

    #[test]
    fn rehashed_tampered_record_breaks_at_next_line() {
        let (_d, path) = log_with(10);
        let mut ls = lines(&path);
        let mut r: AuditRecord = serde_json::from_str(&ls[4]).unwrap();
        r.outcome = "ok (edited)".to_string();
        r.hash = r.compute_hash().unwrap();
        ls[4] = serde_json::to_string(&r).unwrap();
        write_lines(&path, &ls);
        assert_broken(&path, 6, "prev does not match the hash of record 5");
    }

    #[test]
    fn torn_last_line_then_append() {
        let (_d, path) = log_with(5);
        let text = std::fs::read_to_string(&path).unwrap();
        let good: AuditRecord = serde_json::from_str(&lines(&path)[3]).unwrap();
        // Cut the last record in half: a crash mid-write.
        std::fs::write(&path, &text[..text.len() - 40]).unwrap();
        match verify(&path).unwrap() {
            Verification::Broken { line, reason, .. } => {
                assert_eq!(line, 5);
                assert!(reason.contains("torn"), "{reason}");
            }
            other @ Verification::Intact { .. } => panic!("{other:?}"),
        }
        let mut log = AuditLog::open(&path).unwrap();
        let rec = log.append(entry(9)).unwrap();
        assert_eq!(rec.seq, 5);
        assert_eq!(rec.prev, good.hash);
        let ls = lines(&path);
        assert_eq!(ls.len(), 6);
        assert_eq!(serde_json::from_str::<AuditRecord>(&ls[5]).unwrap(), rec);
        // The torn line stays as evidence and is the first broken line; documented behaviour.
        assert_broken(&path, 5, "not valid JSON");
        // A second append chains on the first good record after the tear.
        let rec2 = AuditLog::open(&path).unwrap().append(entry(10)).unwrap();
        assert_eq!((rec2.seq, rec2.prev), (6, rec.hash));
    }

    #[test]
    fn lost_trailing_newline_is_adopted() {
        let (_d, path) = log_with(3);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.trim_end_matches('\n')).unwrap();
        assert_broken(&path, 3, "torn");
        let rec = AuditLog::open(&path).unwrap().append(entry(3)).unwrap();
        assert_eq!(rec.seq, 4);
        assert_eq!(verify(&path).unwrap(), Verification::Intact { records: 4 });
    }

    #[test]
    fn awkward_text_stays_on_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let mut log = AuditLog::open(&path).unwrap();
        let e = AuditEntry {
            session: Some("sé\u{2028}ssion".to_string()),
            job: Some("\"quoted\" \\ back".to_string()),
            action: "apply".to_string(),
            target: "line one\nline two\r\n\t✓ 日本語 \u{0}".to_string(),
            approved: Some(true),
            outcome: "error: \"x\"\n".to_string(),
        };
        let rec = log.append(e.clone()).unwrap();
        log.append(entry(1)).unwrap();
        let ls = lines(&path);
        assert_eq!(ls.len(), 2);
        let back: AuditRecord = serde_json::from_str(&ls[0]).unwrap();
        assert_eq!(back, rec);
        assert_eq!(back.target, e.target);
        assert_eq!(verify(&path).unwrap(), Verification::Intact { records: 2 });
    }

    #[test]
    fn inserted_or_unknown_content_breaks() {
        let (_d, path) = log_with(4);
        edit_field(&path, 2, "extra", "x".into());
        assert_broken(&path, 3, "not a valid audit record");

        let (_d2, path) = log_with(4);
        let mut ls = lines(&path);
        ls.insert(1, String::new());
        write_lines(&path, &ls);
        assert_broken(&path, 2, "not valid JSON");
    }

    #[test]
    fn seq_gap_is_reported() {
        let (_d, path) = log_with(6);
        let mut ls = lines(&path);
        // Re-sign record 5 as seq 7 with a correct hash and prev: only the seq check can catch it.
        let mut r: AuditRecord = serde_json::from_str(&ls[4]).unwrap();
        r.seq = 7;
        r.hash = r.compute_hash().unwrap();
        ls[4] = serde_json::to_string(&r).unwrap();
        write_lines(&path, &ls);
        assert_broken(&path, 5, "seq 7 follows 4");
    }
}
