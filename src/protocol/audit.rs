//! The audit chain on the wire (SPEC section 9): a record as stored and
//! hashed, and what verifying a chain found. Hashing is the store's.

use serde::{Deserialize, Serialize};

/// A record as stored, in this field order (the order that is hashed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditRecord {
    pub seq: u64,
    pub time: String,
    pub session: Option<String>,
    pub job: Option<String>,
    /// The server's user whose request caused it; `None` for what was
    /// done on this machine (the TUI, a command line). Records made before
    /// the field existed have none, and hash without it.
    #[serde(default)]
    pub user: Option<String>,
    pub action: String,
    pub target: String,
    pub approved: Option<bool>,
    pub outcome: String,
    pub prev: String,
    pub hash: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Verification {
    /// every record's hash and link checked
    Intact { records: u64 },
    /// the first record that does not verify: its position (1-based), its
    /// seq, and why ("hash does not match its contents", "prev does not
    /// match the hash of record 4", "seq 7 follows 5")
    Broken {
        line: u64,
        seq: Option<u64>,
        reason: String,
    },
}

/// What `store check` found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreCheck {
    /// Where the store is (never its password), its kind and schema.
    pub store: String,
    pub kind: String,
    pub schema_version: i64,
    pub sessions: u64,
    pub checkpoints: u64,
    pub snapshots: u64,
    pub audit_records: u64,
    /// Problems in the order found; empty when the store is sound.
    pub problems: Vec<String>,
}
