//! Reading a wire type that the contract says is one JSON object: serde's
//! derived structs also take an array and fill their fields by position
//! (`["block", "why"]` read as a hook's decision and reason), which no
//! contract here allows, so anything but an object is refused by name.

use serde::de::{DeserializeOwned, Error as _};

/// `bytes` as `T` when they hold one JSON object (surrounding whitespace
/// allowed); malformed JSON gives serde_json's own error, with its line
/// and column, and well-formed JSON of another kind says what it is.
pub fn from_object<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, serde_json::Error> {
    if bytes.trim_ascii_start().first() == Some(&b'{') {
        return serde_json::from_slice(bytes);
    }
    let value: serde_json::Value = serde_json::from_slice(bytes)?;
    let kind = match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    };
    Err(serde_json::Error::custom(format!(
        "expected one JSON object, found {kind}"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Answer {
        decision: Option<String>,
        reason: Option<String>,
    }

    #[test]
    fn an_object_is_read_and_an_array_is_refused_by_name() {
        let answer: Answer = from_object(b" {\"decision\": \"block\"}\n").unwrap();
        assert_eq!(answer.decision.as_deref(), Some("block"));
        // What serde alone would take as (decision, reason).
        let positional: Answer = serde_json::from_str(r#"["block", ""]"#).unwrap();
        assert_eq!(positional.decision.as_deref(), Some("block"));
        let refused = from_object::<Answer>(br#"["block", ""]"#).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "expected one JSON object, found an array"
        );
        let refused = from_object::<Answer>(b"\"block\"").unwrap_err();
        assert!(refused.to_string().contains("found a string"), "{refused}");
        let malformed = from_object::<Answer>(b"[\"block\"").unwrap_err();
        assert!(malformed.is_eof(), "{malformed}");
    }
}
