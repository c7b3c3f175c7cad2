//! Finding and reading the config file: `--config`, then `$AGENT_TUI_CONFIG`,
//! then the platform config dir; parse errors carry file, line and column.

use std::fmt;
use std::path::{Path, PathBuf};

use thiserror::Error;

use super::Config;

/// Where the config file path came from; explicit choices must exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigOrigin {
    Flag,
    EnvVar,
    Default,
}

impl fmt::Display for ConfigOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ConfigOrigin::Flag => "--config",
            ConfigOrigin::EnvVar => "$AGENT_TUI_CONFIG",
            ConfigOrigin::Default => "default location",
        })
    }
}

#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("config file {path} (from {origin}) does not exist")]
    Missing { path: PathBuf, origin: ConfigOrigin },
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}:{column}: {message}")]
    Parse {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path}: invalid configuration:\n  - {}", problems.join("\n  - "))]
    Invalid { path: String, problems: Vec<String> },
    #[error("unknown provider \"{name}\"; known providers: {}", known.join(", "))]
    UnknownProvider { name: String, known: Vec<String> },
}

/// The configuration in force and the file it came from (`None`: no file,
/// every key at its default).
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    pub config: Config,
    pub path: Option<PathBuf>,
    pub origin: ConfigOrigin,
}

/// The file to read, in lookup order. `env` is the process environment
/// (injected so tests need not mutate it).
pub fn locate(
    flag: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<(PathBuf, ConfigOrigin)> {
    if let Some(path) = flag {
        return Some((path.to_path_buf(), ConfigOrigin::Flag));
    }
    if let Some(path) = env("AGENT_TUI_CONFIG").filter(|v| !v.is_empty()) {
        return Some((PathBuf::from(path), ConfigOrigin::EnvVar));
    }
    directories::ProjectDirs::from("", "", "agent-tui")
        .map(|dirs| (dirs.config_dir().join("config.toml"), ConfigOrigin::Default))
}

/// Locates, reads, parses and validates the configuration.
pub fn load(
    flag: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<LoadedConfig, ConfigError> {
    let Some((path, origin)) = locate(flag, env) else {
        return Ok(LoadedConfig {
            config: Config::default(),
            path: None,
            origin: ConfigOrigin::Default,
        });
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if origin == ConfigOrigin::Default {
                return Ok(LoadedConfig {
                    config: Config::default(),
                    path: None,
                    origin,
                });
            }
            return Err(ConfigError::Missing { path, origin });
        }
        Err(source) => return Err(ConfigError::Read { path, source }),
    };
    let config = parse(&text, &path)?;
    Ok(LoadedConfig {
        config,
        path: Some(path),
        origin,
    })
}

/// Parses `text` (the contents of `path`) and runs the semantic checks.
pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
    let config: Config = toml::from_str(text).map_err(|e| {
        let (line, column) = e
            .span()
            .map(|span| line_column(text, span.start))
            .unwrap_or((1, 1));
        ConfigError::Parse {
            path: path.to_path_buf(),
            line,
            column,
            message: describe(text, line, column, e.message().trim()),
        }
    })?;
    let mut problems = super::shape::problems(text, &config);
    problems.extend(config.problems());
    if problems.is_empty() {
        Ok(config)
    } else {
        Err(ConfigError::Invalid {
            path: path.display().to_string(),
            problems,
        })
    }
}

/// The parser's message, prefixed with the dotted key when the error points
/// at a value (`limits.max_hunk_lines: invalid type ...`).
fn describe(text: &str, line: usize, column: usize, message: &str) -> String {
    let message = message
        .replace("expected usize", "expected a whole number")
        .replace("expected u32", "expected a whole number")
        .replace("expected u64", "expected a whole number");
    let Some(current) = text.lines().nth(line - 1) else {
        return message;
    };
    let Some((key, _)) = current.split_once('=') else {
        return message;
    };
    if key.chars().count() >= column || message.contains("unknown field") {
        return message;
    }
    let key = key.trim().trim_matches('"');
    let table = text
        .lines()
        .take(line - 1)
        .filter_map(|l| {
            let l = l.trim();
            l.strip_prefix('[').map(|rest| {
                rest.trim_start_matches('[')
                    .trim_end_matches(']')
                    .trim_end_matches(']')
            })
        })
        .last();
    match table {
        Some(table) => format!("`{table}.{key}`: {message}"),
        None => format!("`{key}`: {message}"),
    }
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn parse_err(text: &str) -> ConfigError {
        parse(text, Path::new("cfg.toml")).unwrap_err()
    }

    #[test]
    #[cfg(unix)]
    fn lookup_order_flag_then_env_then_default() {
        let env = |k: &str| (k == "AGENT_TUI_CONFIG").then(|| "/from/env.toml".to_string());
        let (p, o) = locate(Some(Path::new("/from/flag.toml")), &env).unwrap();
        assert_eq!(
            (p.to_str().unwrap(), o),
            ("/from/flag.toml", ConfigOrigin::Flag)
        );
        let (p, o) = locate(None, &env).unwrap();
        assert_eq!(
            (p.to_str().unwrap(), o),
            ("/from/env.toml", ConfigOrigin::EnvVar)
        );
        let (p, o) = locate(None, &no_env).unwrap();
        assert_eq!(o, ConfigOrigin::Default);
        assert!(p.ends_with("agent-tui/config.toml"), "{}", p.display());
    }

    #[test]
    fn unknown_key_is_named_with_position() {
        let err = parse_err("[agent]\nmax_tool_calls_per_job = 3\nmax_tools = 4\n");
        let ConfigError::Parse {
            line,
            column,
            message,
            ..
        } = &err
        else {
            panic!("{err:?}")
        };
        assert_eq!((*line, *column), (3, 1));
        assert!(message.contains("max_tools"), "{message}");
        assert!(err.to_string().starts_with("cfg.toml:3:1: "), "{err}");
    }

    #[test]
    fn syntax_error_has_line_and_column() {
        let err = parse_err("provider = \"openai\"\n[limits\nmax_hunk_lines = 3\n");
        let ConfigError::Parse { line, column, .. } = err else {
            panic!("{err:?}")
        };
        assert_eq!(line, 2);
        assert!(column >= 1);
    }

    #[test]
    fn wrong_type_points_at_the_value() {
        let err = parse_err("[limits]\nmax_hunk_lines = \"eighty\"\n");
        let ConfigError::Parse {
            line,
            column,
            message,
            ..
        } = err
        else {
            panic!()
        };
        assert_eq!((line, column), (2, 18));
        assert!(
            message.starts_with("`limits.max_hunk_lines`: "),
            "{message}"
        );
        assert!(message.contains("whole number"), "{message}");
    }

    #[test]
    fn bad_enum_lists_choices() {
        let err = parse_err("[ui]\ndefault_mode = \"chat\"\n").to_string();
        assert!(err.contains("ask") && err.contains("agent"), "{err}");
    }

    #[test]
    fn semantic_problems_are_reported_together() {
        let err = parse_err("provider = \"nope\"\n[limits]\nmax_read_bytes_default = 0\n");
        let text = err.to_string();
        assert!(text.contains("provider = \"nope\""), "{text}");
        assert!(text.contains("limits.max_read_bytes_default"), "{text}");
    }

    #[test]
    fn line_column_counts_characters() {
        assert_eq!(line_column("ab\ncé\nx", 7), (3, 1));
        assert_eq!(line_column("ab\ncé", 4), (2, 2));
        assert_eq!(line_column("", 10), (1, 1));
    }
}
