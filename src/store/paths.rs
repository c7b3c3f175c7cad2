//! Where state lives: `$AGENT_TUI_HOME`, else the platform data dir; each
//! agent root is keyed by a hash of its canonical path.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The state home and the folder for one agent root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDirs {
    pub home: PathBuf,
    /// Where `home` came from, for `doctor`.
    pub origin: &'static str,
}

impl StateDirs {
    /// `$AGENT_TUI_HOME` if set and non-empty, else the data dir from
    /// `directories` (on Linux `$XDG_DATA_HOME/agent-tui`). `None` when
    /// neither can be determined (no home directory).
    pub fn locate(env: &dyn Fn(&str) -> Option<String>) -> Option<StateDirs> {
        if let Some(home) = env("AGENT_TUI_HOME").filter(|v| !v.is_empty()) {
            return Some(StateDirs {
                home: PathBuf::from(home),
                origin: "$AGENT_TUI_HOME",
            });
        }
        directories::ProjectDirs::from("", "", "agent-tui").map(|d| StateDirs {
            home: d.data_dir().to_path_buf(),
            origin: "platform data dir",
        })
    }

    /// Where earlier releases kept one folder per agent root (read once,
    /// for the upgrade import).
    pub fn legacy_roots(home: &Path) -> PathBuf {
        home.join("roots")
    }
}

/// A stable, file-name-safe key for a canonical root path: the first 16
/// bytes of its SHA-256, in hex.
pub fn root_key(root: &Path) -> String {
    let digest = Sha256::digest(root.as_os_str().as_encoded_bytes());
    digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_tui_home_wins() {
        let env = |k: &str| (k == "AGENT_TUI_HOME").then(|| "/state".to_string());
        let dirs = StateDirs::locate(&env).unwrap();
        assert_eq!(dirs.home, PathBuf::from("/state"));
        assert_ne!(root_key(Path::new("/p/a")), root_key(Path::new("/p/b")));
        assert_eq!(root_key(Path::new("/p/a")).len(), 32);
        assert_eq!(
            StateDirs::legacy_roots(&dirs.home),
            PathBuf::from("/state/roots")
        );
    }
}
