//! Choosing the provider: `--provider`, then the config's `provider`, then
//! zero-config detection from the environment (a pure function, tested alone).

use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use super::{Config, ConfigError, ProviderConfig};

/// What the user sees when no provider could be found.
pub const SETUP_HINT: &str = "no LLM provider is set up. Export OPENAI_API_KEY (and optionally \
OPENAI_BASE_URL) or ANTHROPIC_API_KEY (and optionally ANTHROPIC_BASE_URL), start Ollama on \
127.0.0.1:11434, or name a provider in the config file (see config.example.toml).";

/// The outcome of zero-config detection, before the config's tables are consulted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DetectedProvider {
    /// Built-in provider name: `openai`, `anthropic` or `ollama`.
    pub name: &'static str,
    /// Base URL taken from `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL`, if set.
    pub base_url: Option<String>,
    /// Why this one was chosen, for `doctor` and the TUI's status line.
    pub reason: String,
}

/// Zero-config detection order: `OPENAI_API_KEY` (+ `OPENAI_BASE_URL`), then
/// `ANTHROPIC_API_KEY` (+ `ANTHROPIC_BASE_URL`), then a local Ollama server if
/// `ollama_up` says one answers, else nothing. Empty variables count as unset.
/// `ollama_up` is only called when no key is set.
pub fn detect_provider(
    env: &dyn Fn(&str) -> Option<String>,
    ollama_up: impl FnOnce() -> bool,
) -> Option<DetectedProvider> {
    let set = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    if set("OPENAI_API_KEY").is_some() {
        return Some(DetectedProvider {
            name: "openai",
            base_url: set("OPENAI_BASE_URL"),
            reason: "OPENAI_API_KEY is set".into(),
        });
    }
    if set("ANTHROPIC_API_KEY").is_some() {
        return Some(DetectedProvider {
            name: "anthropic",
            base_url: set("ANTHROPIC_BASE_URL"),
            reason: "ANTHROPIC_API_KEY is set".into(),
        });
    }
    if ollama_up() {
        return Some(DetectedProvider {
            name: "ollama",
            base_url: None,
            reason: "an Ollama server answers on 127.0.0.1:11434".into(),
        });
    }
    None
}

/// Whether something accepts TCP connections on Ollama's default port.
pub fn ollama_answers() -> bool {
    let addr = SocketAddr::from(([127, 0, 0, 1], 11434));
    TcpStream::connect_timeout(&addr, Duration::from_millis(300)).is_ok()
}

/// The provider a job will use and why.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderChoice {
    pub name: String,
    pub provider: ProviderConfig,
    pub reason: String,
}

impl Config {
    /// Picks the provider: `cli_provider`, else `provider` from the file, else
    /// detection. `Ok(None)` means nothing is set up (show `SETUP_HINT`).
    pub fn choose_provider(
        &self,
        cli_provider: Option<&str>,
        cli_model: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
        ollama_up: impl FnOnce() -> bool,
    ) -> Result<Option<ProviderChoice>, ConfigError> {
        let explicit = cli_provider
            .map(|n| (n.to_string(), "--provider".to_string()))
            .or_else(|| {
                self.provider
                    .clone()
                    .map(|n| (n, "`provider` in the config file".to_string()))
            });
        let choice = match explicit {
            Some((name, reason)) => {
                let Some(provider) = self.providers.get(&name) else {
                    return Err(ConfigError::UnknownProvider {
                        name,
                        known: self.provider_names(),
                    });
                };
                ProviderChoice {
                    name,
                    provider: provider.clone(),
                    reason,
                }
            }
            None => {
                let Some(found) = detect_provider(env, ollama_up) else {
                    return Ok(None);
                };
                let Some(provider) = self.providers.get(found.name) else {
                    return Ok(None);
                };
                let mut provider = provider.clone();
                if let Some(url) = found.base_url {
                    provider.base_url = url;
                }
                ProviderChoice {
                    name: found.name.to_string(),
                    provider,
                    reason: found.reason,
                }
            }
        };
        Ok(Some(match cli_model {
            Some(model) => ProviderChoice {
                provider: ProviderConfig {
                    model: model.to_string(),
                    ..choice.provider
                },
                ..choice
            },
            None => choice,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(name, _)| *name == k)
                .map(|(_, v)| v.to_string())
        }
    }

    fn never() -> bool {
        panic!("ollama must not be probed when a key is set")
    }

    #[test]
    fn openai_key_wins_and_carries_base_url() {
        let env = env_of(&[
            ("OPENAI_API_KEY", "sk-x"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
            ("ANTHROPIC_API_KEY", "a"),
        ]);
        let d = detect_provider(&env, never).unwrap();
        assert_eq!(d.name, "openai");
        assert_eq!(d.base_url.as_deref(), Some("http://127.0.0.1:9/v1"));
    }

    #[test]
    fn anthropic_when_only_its_key() {
        let env = env_of(&[("ANTHROPIC_API_KEY", "a"), ("OPENAI_BASE_URL", "http://x")]);
        let d = detect_provider(&env, never).unwrap();
        assert_eq!(d.name, "anthropic");
        assert_eq!(d.base_url, None);
    }

    #[test]
    fn empty_key_counts_as_unset() {
        let env = env_of(&[("OPENAI_API_KEY", " "), ("ANTHROPIC_API_KEY", "a")]);
        assert_eq!(detect_provider(&env, never).unwrap().name, "anthropic");
    }

    #[test]
    fn ollama_then_nothing() {
        let env = env_of(&[]);
        assert_eq!(detect_provider(&env, || true).unwrap().name, "ollama");
        assert_eq!(detect_provider(&env, || false), None);
    }

    #[test]
    fn explicit_choices_beat_detection() {
        let env = env_of(&[("OPENAI_API_KEY", "sk")]);
        let mut config = Config::default();
        let c = config
            .choose_provider(Some("anthropic"), Some("m1"), &env, never)
            .unwrap()
            .unwrap();
        assert_eq!(
            (c.name.as_str(), c.provider.model.as_str()),
            ("anthropic", "m1")
        );
        config.provider = Some("ollama".into());
        let c = config
            .choose_provider(None, None, &env, never)
            .unwrap()
            .unwrap();
        assert_eq!(c.name, "ollama");
        let err = config
            .choose_provider(Some("nope"), None, &env, never)
            .unwrap_err();
        assert!(
            err.to_string().contains("anthropic, ollama, openai"),
            "{err}"
        );
    }

    #[test]
    fn detection_applies_env_base_url_to_the_builtin() {
        let env = env_of(&[
            ("OPENAI_API_KEY", "sk"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:1/v1"),
        ]);
        let c = Config::default()
            .choose_provider(None, None, &env, never)
            .unwrap()
            .unwrap();
        assert_eq!(c.provider.base_url, "http://127.0.0.1:1/v1");
        assert_eq!(c.provider.api_key_env.as_deref(), Some("OPENAI_API_KEY"));
    }

    #[test]
    fn nothing_detected_is_none() {
        let env = env_of(&[]);
        assert_eq!(
            Config::default()
                .choose_provider(None, None, &env, || false)
                .unwrap(),
            None
        );
    }
}
