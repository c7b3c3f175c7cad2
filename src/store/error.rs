//! What can go wrong with the store, typed so callers can choose an exit
//! code; every message names the store (its location, password redacted).

/// A store error, with the store's location in every message.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The store cannot be reached or opened (wrong URL, refused password,
    /// server gone, unreadable file).
    #[error("store {store}: cannot open it: {reason}")]
    Open { store: String, reason: String },
    /// The store was written by a newer agent-tui.
    #[error(
        "store {store}: its schema is version {found}, newer than this agent-tui \
         understands (version {supported}); upgrade agent-tui (nothing was written)"
    )]
    Newer {
        store: String,
        found: i64,
        supported: i64,
    },
    /// The file is not a database or its pages are damaged.
    #[error("store {store}: it is damaged ({reason}); restore a backup or move it aside")]
    Corrupt { store: String, reason: String },
    /// A query failed while the store was open.
    #[error("store {store}: {reason}")]
    Query { store: String, reason: String },
    /// What was asked for is not in the store.
    #[error("{0}")]
    NotFound(String),
    /// A caller's input is unusable (a malformed id).
    #[error("{0}")]
    Invalid(String),
}

impl StoreError {
    /// Whether the store itself is unusable (exit 2), not just one request.
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            StoreError::Open { .. } | StoreError::Newer { .. } | StoreError::Corrupt { .. }
        )
    }
}

impl From<StoreError> for std::io::Error {
    fn from(e: StoreError) -> std::io::Error {
        let kind = match e {
            StoreError::NotFound(_) => std::io::ErrorKind::NotFound,
            StoreError::Invalid(_) => std::io::ErrorKind::InvalidInput,
            _ => std::io::ErrorKind::Other,
        };
        std::io::Error::new(kind, e.to_string())
    }
}

/// Turns a driver error into a store error for `store`.
pub(super) fn classify(store: &str, e: &sqlx::Error) -> StoreError {
    let text = e.to_string();
    let store = store.to_string();
    let lower = text.to_ascii_lowercase();
    if lower.contains("file is not a database")
        || lower.contains("malformed")
        || lower.contains("corrupt")
    {
        return StoreError::Corrupt {
            store,
            reason: text,
        };
    }
    match e {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::Configuration(_) => StoreError::Open {
            store,
            reason: text,
        },
        sqlx::Error::Database(db)
            if db.code().is_some_and(|c| {
                // PostgreSQL: invalid password / authorization; cannot connect now.
                matches!(
                    &*c,
                    "28P01" | "28000" | "3D000" | "57P01" | "57P03" | "08006"
                )
            }) =>
        {
            // The server's own words, without the line of its source code
            // they came from ("... at line 334"), and what to do.
            let hint = match db.code().as_deref() {
                Some("28P01" | "28000") => {
                    "; the password comes from the variable [storage] password_env names (none \
                     is sent without it)"
                }
                Some("3D000") => "; create the database (createdb) or name another in the URL",
                _ => "",
            };
            StoreError::Open {
                store,
                reason: format!("{}{hint}", db.message()),
            }
        }
        sqlx::Error::Database(db) if lower.contains("database or disk is full") => {
            let _ = db;
            StoreError::Query {
                store,
                reason: "the disk holding it is full (SQLITE_FULL); free some space and try again"
                    .into(),
            }
        }
        _ => StoreError::Query {
            store,
            reason: text,
        },
    }
}
