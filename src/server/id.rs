//! The ids a client names in a query or a body (sessions, jobs,
//! checkpoints): `[A-Za-z0-9_]+`, at most 200 characters, as the store keeps
//! them (the document says so with a pattern); anything else is refused
//! while the request is read (400 naming the field), never looked up.

use serde::Deserialize;

/// An id as the store keeps them.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct Id(String);

/// Longest id taken.
const MAX: usize = 200;

impl TryFrom<String> for Id {
    type Error = String;

    fn try_from(id: String) -> Result<Id, String> {
        let plain = id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if id.is_empty() || id.len() > MAX || !plain {
            return Err(format!(
                "{id:?} is not an id (letters, digits and _, at most {MAX} of them)"
            ));
        }
        Ok(Id(id))
    }
}

impl std::ops::Deref for Id {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Id {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<Id> for String {
    fn from(id: Id) -> String {
        id.0
    }
}

#[cfg(test)]
mod tests {
    use super::Id;

    #[test]
    fn only_plain_ids_are_taken() {
        assert!(Id::try_from("job_1795_00ab".to_string()).is_ok());
        for bad in ["", "a-b", "a b", "../x", "ü", &"x".repeat(201)] {
            assert!(Id::try_from(bad.to_string()).is_err(), "{bad:?}");
        }
    }
}
