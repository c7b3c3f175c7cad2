//! `[verify]` (SPEC 17): the project's own check that a verify runs on the
//! accepted hunks in a scratch copy, its timeout and network. Unset, the
//! command is detected from the project's build files.

use std::path::Path;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VerifyConfig {
    /// The check; unset: detected (`detect`); `""`: verify is off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    pub timeout_secs: u64,
    /// Whether the check may reach the network (off: confined like a
    /// command without it).
    pub network: bool,
    /// Verify whenever a review opens or its decisions change.
    pub auto: bool,
}

impl Default for VerifyConfig {
    fn default() -> Self {
        VerifyConfig {
            command: None,
            timeout_secs: 300,
            network: false,
            auto: false,
        }
    }
}

/// Where a verify command comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VerifyCommand {
    /// `[verify] command`.
    Set(String),
    /// Found from the project: the command and the file that told.
    Detected { command: String, from: &'static str },
    /// `command = ""`, or nothing to detect it from.
    Off,
}

impl VerifyConfig {
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.timeout_secs == 0 {
            out.push("verify.timeout_secs must be at least 1".into());
        }
        out
    }

    /// The command for the project at `root`.
    pub fn command_for(&self, root: &Path) -> VerifyCommand {
        match self.command.as_deref().map(str::trim) {
            Some("") => VerifyCommand::Off,
            Some(c) => VerifyCommand::Set(c.to_string()),
            None => match detect(root) {
                Some((command, from)) => VerifyCommand::Detected {
                    command: command.to_string(),
                    from,
                },
                None => VerifyCommand::Off,
            },
        }
    }
}

/// The check a project's build files name, and which file named it: Cargo,
/// an npm `test` script, pytest, Go (in that order).
pub fn detect(root: &Path) -> Option<(&'static str, &'static str)> {
    if root.join("Cargo.toml").is_file() {
        return Some(("cargo check", "Cargo.toml"));
    }
    let npm_test = std::fs::read_to_string(root.join("package.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|p| p["scripts"]["test"].is_string());
    if npm_test {
        return Some(("npm test", "package.json"));
    }
    for (file, needs) in [
        ("pytest.ini", None),
        ("pyproject.toml", Some("pytest")),
        ("setup.cfg", Some("[tool:pytest]")),
        ("tox.ini", Some("[pytest]")),
    ] {
        let Ok(text) = std::fs::read_to_string(root.join(file)) else {
            continue;
        };
        if needs.is_none_or(|n| text.contains(n)) {
            return Some(("pytest -q", file));
        }
    }
    if root.join("go.mod").is_file() {
        return Some(("go vet ./... && go test ./...", "go.mod"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (p, t) in files {
            std::fs::write(dir.path().join(p), t).unwrap();
        }
        dir
    }

    /// A project's files, and the command and file detection should find.
    type Case<'a> = (&'a [(&'a str, &'a str)], Option<(&'a str, &'a str)>);

    #[test]
    fn the_command_is_found_from_the_project() {
        let cases: [Case<'_>; 7] = [
            (
                &[("Cargo.toml", "[package]\n")],
                Some(("cargo check", "Cargo.toml")),
            ),
            (
                &[("package.json", r#"{"scripts": {"test": "vitest run"}}"#)],
                Some(("npm test", "package.json")),
            ),
            (
                &[("package.json", r#"{"scripts": {"build": "tsc"}}"#)],
                None,
            ),
            (
                &[("pyproject.toml", "[tool.pytest.ini_options]\n")],
                Some(("pytest -q", "pyproject.toml")),
            ),
            (&[("pyproject.toml", "[project]\nname = 'x'\n")], None),
            (
                &[("go.mod", "module x\n")],
                Some(("go vet ./... && go test ./...", "go.mod")),
            ),
            (&[("README.md", "# x\n")], None),
        ];
        for (files, want) in cases {
            let dir = with(files);
            assert_eq!(detect(dir.path()), want, "{files:?}");
        }
    }

    #[test]
    fn set_off_and_detected() {
        let dir = with(&[("Cargo.toml", "[package]\n")]);
        let mut c = VerifyConfig::default();
        assert_eq!(
            c.command_for(dir.path()),
            VerifyCommand::Detected {
                command: "cargo check".into(),
                from: "Cargo.toml"
            }
        );
        c.command = Some("cargo test -q".into());
        assert_eq!(
            c.command_for(dir.path()),
            VerifyCommand::Set("cargo test -q".into())
        );
        c.command = Some(String::new());
        assert_eq!(c.command_for(dir.path()), VerifyCommand::Off);
        c.timeout_secs = 0;
        assert_eq!(c.problems().len(), 1);
    }
}
