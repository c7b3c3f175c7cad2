//! Fuzz door of the config file (`fuzz/`, `tests/fuzz_corpus.rs`): any
//! text is a config or a clear error; a config that parses comes back the
//! same from its own TOML, and its sections' keys are the ones
//! `config.example.toml` documents.

use std::path::Path;

/// The example every key must appear in.
const EXAMPLE: &str = include_str!("../../config.example.toml");

/// Whether `key` of `section` is written in the example (`key =`, set or
/// commented, or a `[section.key]` / `[[section.key]]` table).
fn documented(section: &str, key: &str) -> bool {
    let table = format!("[{section}.{key}]");
    let tables = format!("[[{section}.{key}]]");
    EXAMPLE.lines().any(|line| {
        let line = line.trim_start_matches(['#', ' ']);
        line.starts_with(&table)
            || line.starts_with(&tables)
            || line
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
    })
}

/// The property over one config text.
pub fn config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("fuzz.toml");
    let config = match super::load::parse(text, path) {
        Ok(config) => config,
        Err(e) => {
            assert!(!e.to_string().trim().is_empty(), "an error says something");
            return;
        }
    };
    let written = match toml::to_string(&config) {
        Ok(written) => written,
        Err(e) => panic!("a parsed config cannot be written back: {e}\n{text}"),
    };
    match super::load::parse(&written, path) {
        Ok(again) => assert_eq!(again, config, "round trip through\n{written}"),
        Err(e) => panic!("its own TOML does not parse: {e}\n{written}"),
    }
    let Ok(table) = written.parse::<toml::Table>() else {
        return;
    };
    for (section, value) in &table {
        let Some(keys) = value.as_table() else {
            assert!(
                documented("", section),
                "`{section}` is not in config.example.toml"
            );
            continue;
        };
        for (key, value) in keys {
            if !value.is_table() {
                assert!(
                    documented(section, key),
                    "`{section}.{key}` is not in config.example.toml"
                );
            }
        }
    }
}
