//! The tamper-evident audit chain (SPEC section 9): each record's `hash` is
//! `sha256:<hex>` of its canonical JSON (every field but `hash`, in a fixed
//! order), and its `prev` is the hash of the record before (`sha256:` and
//! 64 zeros for the first); `seq` starts at 1 and grows by one. Editing,
//! deleting, reordering or inserting a record breaks the chain at (or right
//! after) the touched record, which `verify` reports. The store keeps one
//! chain per agent root; earlier releases kept it in `audit.jsonl`, read
//! here for the upgrade.

use std::io::{self, BufRead, BufReader};
use std::path::Path;

pub use crate::protocol::audit::{AuditRecord, Verification};
use crate::workspace::sha256_hex;

/// `prev` of the first record.
pub const GENESIS: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

/// One audit record as the caller describes it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AuditEntry {
    pub session: Option<String>,
    pub job: Option<String>,
    /// The server's user whose request caused it (`None`: done locally).
    #[serde(default)]
    pub user: Option<String>,
    /// e.g. "tool_call", "decision", "apply", "rollback", "approval"
    pub action: String,
    /// what it acted on: a tool name + path, a hunk id, a checkpoint id ...
    pub target: String,
    /// whether it was approved (by policy or by the user); None when not applicable
    pub approved: Option<bool>,
    /// "ok", "error: ...", "conflict", ...
    pub outcome: String,
}

/// The hashed part of a record: every field but `hash`, in stored order.
#[derive(serde::Serialize)]
struct Canonical<'a> {
    seq: u64,
    time: &'a str,
    session: &'a Option<String>,
    job: &'a Option<String>,
    /// Left out when there is none, so records from before the field
    /// existed keep their hashes.
    #[serde(skip_serializing_if = "Option::is_none")]
    user: &'a Option<String>,
    action: &'a str,
    target: &'a str,
    approved: Option<bool>,
    outcome: &'a str,
    prev: &'a str,
}

impl AuditRecord {
    /// The record that follows `prev` (`None`: the first), hashed.
    pub fn next(prev: Option<(u64, &str)>, entry: AuditEntry, time: String) -> AuditRecord {
        let (seq, prev) = prev.map_or((0, GENESIS), |(s, h)| (s, h));
        let mut record = AuditRecord {
            seq: seq.saturating_add(1),
            time,
            session: entry.session,
            job: entry.job,
            user: entry.user,
            action: entry.action,
            target: entry.target,
            approved: entry.approved,
            outcome: entry.outcome,
            prev: prev.to_string(),
            hash: String::new(),
        };
        record.hash = record.compute_hash();
        record
    }

    /// `sha256:<hex>` of the canonical JSON of this record without `hash`.
    pub fn compute_hash(&self) -> String {
        let canonical = Canonical {
            seq: self.seq,
            time: &self.time,
            session: &self.session,
            job: &self.job,
            user: &self.user,
            action: &self.action,
            target: &self.target,
            approved: self.approved,
            outcome: &self.outcome,
            prev: &self.prev,
        };
        // Strings, numbers and options only: encoding cannot fail.
        let bytes = serde_json::to_vec(&canonical).unwrap_or_default();
        sha256_hex(&bytes)
    }
}

/// Checks one record against the previous good one (`None` before the first).
fn check(rec: &AuditRecord, prev: Option<&AuditRecord>) -> Result<(), String> {
    if rec.compute_hash() != rec.hash {
        return Err("hash does not match its contents".to_string());
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
    Ok(())
}

/// Verifies a chain given in stored order.
pub fn verify(records: impl IntoIterator<Item = AuditRecord>) -> Verification {
    let mut prev: Option<AuditRecord> = None;
    let mut count = 0u64;
    for rec in records {
        count += 1;
        if let Err(reason) = check(&rec, prev.as_ref()) {
            return Verification::Broken {
                line: count,
                seq: Some(rec.seq),
                reason,
            };
        }
        prev = Some(rec);
    }
    Verification::Intact { records: count }
}

/// Verifies a chain given in stored order against the head the store
/// keeps for it (read before the records: later appends only add to the
/// chain): the head's record must be in the chain, with its hash. A chain
/// that stops short of its head lost its newest records.
pub fn verify_to_head(
    records: impl IntoIterator<Item = AuditRecord>,
    head: Option<(u64, String)>,
) -> Verification {
    let records: Vec<AuditRecord> = records.into_iter().collect();
    let last = records.last().map(|r| r.seq);
    let count = records.len() as u64;
    let by_seq: Option<&AuditRecord> = head
        .as_ref()
        .and_then(|(seq, _)| records.iter().find(|r| r.seq == *seq));
    let verdict = verify(records.iter().cloned());
    if !matches!(verdict, Verification::Intact { .. }) {
        return verdict;
    }
    let broken = |seq: Option<u64>, reason: String| Verification::Broken {
        line: count.max(1),
        seq,
        reason,
    };
    match (head, by_seq, last) {
        (None, _, None) => verdict,
        (None, _, Some(last)) => broken(
            Some(last),
            "the store keeps no head for this chain (it was removed): its newest records \
             cannot be checked"
                .into(),
        ),
        (Some((seq, _)), None, last) => broken(
            Some(seq),
            format!(
                "the chain ends at seq {} but its head is seq {seq}: the newest records were \
                 removed",
                last.unwrap_or(0)
            ),
        ),
        (Some((seq, hash)), Some(rec), _) if rec.hash != hash => broken(
            Some(seq),
            format!("record seq {seq} is not the record the chain's head names"),
        ),
        (Some(_), Some(_), _) => verdict,
    }
}

/// The records of an earlier release's `audit.jsonl`, in file order; lines
/// that are not whole records (a torn last line) are left out.
pub fn read_legacy(path: &Path) -> io::Result<Vec<AuditRecord>> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    let mut reader = BufReader::new(file);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf)? == 0 {
            return Ok(out);
        }
        if let Ok(rec) = serde_json::from_slice::<AuditRecord>(buf.trim_ascii_end()) {
            out.push(rec);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn entry(i: usize) -> AuditEntry {
        AuditEntry {
            session: Some("s1".to_string()),
            job: i.is_multiple_of(2).then(|| format!("job-{i}")),
            user: i.is_multiple_of(3).then(|| "bob".to_string()),
            action: "tool_call".to_string(),
            target: format!("read_file src/f{i}.rs \"quoted\"\nnewline"),
            approved: [Some(true), Some(false), None][i % 3],
            outcome: "ok".to_string(),
        }
    }

    fn chain(n: usize) -> Vec<AuditRecord> {
        let mut out: Vec<AuditRecord> = Vec::new();
        for i in 0..n {
            let prev = out.last().map(|r| (r.seq, r.hash.as_str()));
            let rec = AuditRecord::next(prev, entry(i), "2026-11-23T10:00:00.000Z".into());
            out.push(rec);
        }
        out
    }

    fn broken_at(records: Vec<AuditRecord>) -> (u64, String) {
        match verify(records) {
            Verification::Broken { line, reason, .. } => (line, reason),
            other @ Verification::Intact { .. } => panic!("expected Broken, got {other:?}"),
        }
    }

    #[test]
    fn intact_chain_and_canonical_form() {
        let records = chain(100);
        assert_eq!(records[0].prev, GENESIS);
        assert_eq!(
            verify(records.clone()),
            Verification::Intact { records: 100 }
        );
        assert_eq!(verify(Vec::new()), Verification::Intact { records: 0 });
        // The stored JSON keeps the hashed field order.
        let json = serde_json::to_string(&records[0]).unwrap();
        assert!(json.starts_with("{\"seq\":1,\"time\":"), "{json}");
        assert!(json.ends_with(&format!("\"hash\":\"{}\"}}", records[0].hash)));
    }

    #[test]
    fn the_user_is_hashed_and_records_without_one_keep_the_old_form() {
        // A record as a release before the field wrote it: no `user`.
        let canonical = format!(
            "{{\"seq\":1,\"time\":\"2026-11-01T10:00:00.000Z\",\"session\":null,\"job\":null,\
             \"action\":\"apply\",\"target\":\"c_1\",\"approved\":true,\"outcome\":\"ok\",\
             \"prev\":\"{GENESIS}\"}}"
        );
        let hash = sha256_hex(canonical.as_bytes());
        let stored = format!(
            "{},\"hash\":\"{hash}\"}}",
            &canonical[..canonical.len() - 1]
        );
        let old: AuditRecord = serde_json::from_str(&stored).unwrap();
        assert_eq!(old.user, None);
        assert_eq!(
            verify(vec![old.clone()]),
            Verification::Intact { records: 1 }
        );
        // Shown with `"user": null`, hashed without it.
        let shown = serde_json::to_value(&old).unwrap();
        assert_eq!(shown["user"], serde_json::Value::Null);
        // A record with a user: changing who did it breaks the chain.
        let mut with_user = chain(4);
        assert_eq!(with_user[3].user.as_deref(), Some("bob"));
        assert_eq!(
            verify(with_user.clone()),
            Verification::Intact { records: 4 }
        );
        with_user[3].user = Some("mallory".into());
        assert_eq!(broken_at(with_user.clone()).0, 4);
        with_user[3].user = None;
        assert_eq!(broken_at(with_user).0, 4);
    }

    #[test]
    fn tampering_is_found_where_it_happened() {
        let mut edited = chain(10);
        edited[4].outcome = "error".into();
        assert_eq!(
            broken_at(edited),
            (5, "hash does not match its contents".into())
        );

        let mut approved = chain(10);
        approved[2].approved = Some(true);
        approved[2].approved = approved[2].approved.map(|a| !a).or(Some(true));
        assert_eq!(broken_at(approved).0, 3);

        let mut deleted = chain(10);
        deleted.remove(3);
        let (line, reason) = broken_at(deleted);
        assert_eq!(line, 4);
        assert!(
            reason.contains("prev does not match the hash of record 3"),
            "{reason}"
        );

        let mut swapped = chain(10);
        swapped.swap(5, 6);
        assert_eq!(broken_at(swapped).0, 6);

        // Re-hashing a tampered record moves the break to the next one.
        let mut rehashed = chain(10);
        rehashed[6].target = "x".into();
        rehashed[6].hash = rehashed[6].compute_hash();
        assert_eq!(broken_at(rehashed).0, 8);

        let mut bad_time = chain(3);
        bad_time[1].time = "yesterday".into();
        bad_time[1].hash = bad_time[1].compute_hash();
        bad_time[2].prev = bad_time[1].hash.clone();
        bad_time[2].hash = bad_time[2].compute_hash();
        assert!(broken_at(bad_time).1.contains("RFC 3339"));
    }

    #[test]
    fn legacy_file_skips_torn_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let records = chain(3);
        let mut text: String = records
            .iter()
            .map(|r| serde_json::to_string(r).unwrap() + "\n")
            .collect();
        text.push_str("{\"seq\":4,\"ti");
        std::fs::write(&path, text).unwrap();
        assert_eq!(read_legacy(&path).unwrap(), records);
        assert!(read_legacy(&dir.path().join("none")).unwrap().is_empty());
    }
}
