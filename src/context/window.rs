//! The size of a model's context window and where it came from: the config,
//! the server, a table of well-known models, an overflow error, or the
//! default; plus what is reserved out of it for the reply and per tool result.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::llm::ServerWindow;

/// The window used when nothing better is known.
pub const DEFAULT_WINDOW: u32 = 8192;
/// The most a default reply reservation takes.
const MAX_DEFAULT_OUTPUT: u32 = 8192;

/// Where a window size came from, as `doctor` and the events say it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "from", content = "detail", rename_all = "snake_case")]
pub enum WindowSource {
    /// `[providers.NAME] context_window`.
    Config,
    /// What the server reported, e.g. "llama.cpp /props n_ctx".
    Server(String),
    /// The built-in table, by the model name it matched.
    Table(String),
    /// Nothing known: `DEFAULT_WINDOW`.
    Default,
    /// The server refused a request and stated its real limit.
    Learned(String),
}

impl fmt::Display for WindowSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WindowSource::Config => f.write_str("context_window in the config"),
            WindowSource::Server(detail) => write!(f, "the server: {detail}"),
            WindowSource::Table(model) => write!(f, "built-in table, model {model}"),
            WindowSource::Default => write!(
                f,
                "default; set context_window for this provider if it is wrong"
            ),
            WindowSource::Learned(detail) => write!(f, "the server's own error: {detail}"),
        }
    }
}

/// A window size (tokens) and its origin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextWindow {
    pub tokens: u32,
    pub source: WindowSource,
}

impl ContextWindow {
    /// Config first, then the server, then the table, then the default.
    pub fn resolve(
        configured: Option<u32>,
        server: Option<ServerWindow>,
        model: &str,
    ) -> ContextWindow {
        if let Some(tokens) = configured {
            return ContextWindow {
                tokens,
                source: WindowSource::Config,
            };
        }
        if let Some(s) = server {
            return ContextWindow {
                tokens: s.tokens,
                source: WindowSource::Server(s.detail),
            };
        }
        match known_window(model) {
            Some((tokens, matched)) => ContextWindow {
                tokens,
                source: WindowSource::Table(matched.to_string()),
            },
            None => ContextWindow {
                tokens: DEFAULT_WINDOW,
                source: WindowSource::Default,
            },
        }
    }

    /// Tokens kept free for the reply: the configured amount, else an
    /// eighth of the window (at most 8192). Small local windows need the
    /// room for the conversation; servers shorten a reply that would not fit.
    pub fn output_reserve(&self, configured: Option<u32>) -> u32 {
        configured
            .unwrap_or((self.tokens / 8).min(MAX_DEFAULT_OUTPUT))
            .min(self.tokens / 2)
    }

    /// Most tokens of one tool result the model sees: the configured cap,
    /// never more than a quarter of the window.
    pub fn tool_output_cap(&self, configured: u32) -> u32 {
        configured.min(self.tokens / 4).max(64)
    }
}

/// Context windows of well-known model families, by name prefix (after any
/// `vendor/` prefix and Ollama `:tag`), longest prefix first.
const TABLE: &[(&str, u32)] = &[
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385),
    ("gpt-5", 400_000),
    ("o1-mini", 128_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("claude", 200_000),
    ("gemini", 1_048_576),
    ("llama3.1", 131_072),
    ("llama3.2", 131_072),
    ("llama3.3", 131_072),
    ("llama-3.1", 131_072),
    ("llama-3.2", 131_072),
    ("llama-3.3", 131_072),
    ("llama3", 8_192),
    ("qwen2.5", 32_768),
    ("qwen3", 32_768),
    ("qwen", 32_768),
    ("codestral", 32_768),
    ("mistral", 32_768),
    ("mixtral", 32_768),
    ("deepseek", 131_072),
    ("gemma3", 131_072),
    ("gemma2", 8_192),
    ("phi4", 16_384),
    ("smollm", 8_192),
];

/// The table's window for `model` and the prefix that matched.
pub fn known_window(model: &str) -> Option<(u32, &'static str)> {
    let lower = model.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    let name = name.split(':').next().unwrap_or(name);
    TABLE
        .iter()
        .filter(|(prefix, _)| name.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(prefix, tokens)| (*tokens, *prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_beats_server_beats_table_beats_default() {
        let server = || {
            Some(ServerWindow {
                tokens: 2048,
                detail: "llama.cpp /props n_ctx".into(),
            })
        };
        let w = ContextWindow::resolve(Some(4096), server(), "gpt-4o");
        assert_eq!((w.tokens, w.source), (4096, WindowSource::Config));
        let w = ContextWindow::resolve(None, server(), "gpt-4o");
        assert_eq!(w.tokens, 2048);
        assert!(w.source.to_string().contains("/props"));
        let w = ContextWindow::resolve(None, None, "openai/gpt-4o-mini");
        assert_eq!(w.tokens, 128_000);
        assert_eq!(w.source, WindowSource::Table("gpt-4o".into()));
        let w = ContextWindow::resolve(None, None, "my-own-model");
        assert_eq!(
            (w.tokens, w.source),
            (DEFAULT_WINDOW, WindowSource::Default)
        );
    }

    #[test]
    fn table_matches_longest_prefix_and_strips_tags() {
        assert_eq!(known_window("gpt-4.1-mini").unwrap().0, 1_047_576);
        assert_eq!(known_window("gpt-4-0613").unwrap().0, 8_192);
        assert_eq!(known_window("llama3.2:3b").unwrap().0, 131_072);
        assert_eq!(known_window("llama3:8b").unwrap().0, 8_192);
        assert_eq!(known_window("o1-mini").unwrap().0, 128_000);
        assert_eq!(known_window("Claude-Sonnet-4-5").unwrap().0, 200_000);
        assert!(known_window("bench").is_none());
    }

    #[test]
    fn reservations_scale_with_the_window() {
        let w = |tokens| ContextWindow {
            tokens,
            source: WindowSource::Default,
        };
        assert_eq!(w(2048).output_reserve(None), 256);
        assert_eq!(w(65_536).output_reserve(None), 8192);
        assert_eq!(w(200_000).output_reserve(None), 8192);
        assert_eq!(w(8192).output_reserve(Some(1000)), 1000);
        assert_eq!(w(2048).output_reserve(Some(5000)), 1024, "never half");
        assert_eq!(w(2048).tool_output_cap(4000), 512);
        assert_eq!(w(200_000).tool_output_cap(4000), 4000);
    }
}
