//! The config's `[keys]` table checked for the TUI (and by `doctor`), its
//! mistakes named with the file, line and column as every config error is.

use crate::config::LoadedConfig;
use crate::tui::KeyMap;

/// The TUI's key map from `loaded`'s `[keys]`, or what is wrong there.
pub fn keymap(loaded: &LoadedConfig) -> Result<KeyMap, String> {
    KeyMap::from_config(&loaded.config.keys).map_err(|e| match where_is(loaded, &e.name) {
        Some(place) => format!("{place}: {e}"),
        None => e.to_string(),
    })
}

/// `FILE:LINE:COLUMN` of the `[keys]` entry `name`.
fn where_is(loaded: &LoadedConfig, name: &str) -> Option<String> {
    let path = loaded.path.as_ref()?;
    let text = std::fs::read_to_string(path).ok()?;
    let (line, column) = locate(&text, name)?;
    Some(format!("{}:{line}:{column}", path.display()))
}

/// Line and column (1-based) of key `name` in the `[keys]` table of `text`.
fn locate(text: &str, name: &str) -> Option<(usize, usize)> {
    let mut in_keys = false;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('[') {
            in_keys = trimmed.trim_end() == "[keys]";
            continue;
        }
        let key = trimmed.split('=').next().unwrap_or_default().trim();
        if in_keys && key.trim_matches('"') == name {
            return Some((i + 1, line.len() - trimmed.len() + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_key_in_its_table_only() {
        let text = "[ui]\naply = 1\n\n[keys]\n  apply = \"ctrl+s\"\n\"aply\" = \"x\"\n";
        assert_eq!(locate(text, "aply"), Some((6, 1)));
        assert_eq!(locate(text, "apply"), Some((5, 3)));
        assert_eq!(locate(text, "nope"), None);
    }
}
