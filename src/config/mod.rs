//! Configuration types with their defaults (the same values `config.example.toml`
//! documents) and the semantic checks that run after parsing.

mod detect;
#[doc(hidden)]
pub mod fuzzing; // fuzz doors: any bytes in, a panic only when a property fails
pub mod hooks;
mod index;
mod load;
mod notify;
mod routing;
mod server;
mod sessions;
mod shape;
pub use shape::{MISSHAPEN, misshapen, problems as shape_problems};
mod storage;
mod tools;
mod verify;
pub mod vision;
pub mod web;

pub use self::notify::{NotifyConfig, NotifyKind, NotifyWhen};
pub use detect::{DetectedProvider, ProviderChoice, SETUP_HINT, detect_provider, ollama_answers};
pub use hooks::{
    HookDef, HookEvent, HookMatch, HooksConfig, HooksFile, MatchOn, OnError, PROJECT_FILE,
    glob_matches,
};
pub use index::IndexConfig;
pub use load::{ConfigError, ConfigOrigin, LoadedConfig, load, locate};
pub use routing::{RoutingConfig, RoutingMode};
pub use server::{ServerConfig, ServerUser, ServerWorkspace};
pub use sessions::SessionLimits;
pub use storage::{StorageConfig, check_url, redact_url};
pub use tools::{ApprovalPolicy, ApprovalsConfig, ExecConfig, GitConfig, McpServerConfig, Shell};
pub use verify::{VerifyCommand, VerifyConfig, detect as detect_verify};
pub use vision::Vision;

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

use crate::protocol::Mode;

/// The whole configuration file. Every section is optional; a missing key
/// takes the default shown in `config.example.toml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Provider used when `--provider` is not given. Unset: detected from the
    /// environment (see `detect_provider`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Named providers. The built-in `openai`, `anthropic` and `ollama` entries
    /// are always present; a table with one of those names overrides only the
    /// keys it sets.
    #[serde(deserialize_with = "merge_providers")]
    pub providers: BTreeMap<String, ProviderConfig>,
    pub agent: AgentConfig,
    pub limits: Limits,
    pub exec: ExecConfig,
    pub ui: UiConfig,
    pub workspace: WorkspaceConfig,
    pub git: GitConfig,
    pub approvals: ApprovalsConfig,
    pub sessions: SessionLimits,
    pub storage: StorageConfig,
    pub context: ContextConfig,
    pub routing: RoutingConfig,
    pub server: ServerConfig,
    pub verify: VerifyConfig,
    pub index: IndexConfig,
    pub notify: NotifyConfig,
    pub web: web::WebConfig,
    pub hooks: HooksConfig,
    /// TUI key overrides: action name -> key (`apply = "ctrl+w"`).
    pub keys: BTreeMap<String, String>,
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
}

impl Config {
    /// The environment variables that hold secrets no child may see: the
    /// providers' API keys, the store's password (and its URL).
    pub fn secret_env_names(&self) -> Vec<String> {
        let store = [
            self.storage.password_env.clone(),
            Some("PGPASSWORD".into()),
            Some("AGENT_TUI_DB_PASSWORD".into()),
            Some("AGENT_TUI_DATABASE_URL".into()),
        ];
        self.providers
            .values()
            .map(|p| p.api_key_env.clone())
            .chain(store)
            .flatten()
            .filter(|v| !v.is_empty())
            .collect()
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            provider: None,
            providers: builtin_providers(),
            agent: AgentConfig::default(),
            limits: Limits::default(),
            exec: ExecConfig::default(),
            ui: UiConfig::default(),
            workspace: WorkspaceConfig::default(),
            git: GitConfig::default(),
            approvals: ApprovalsConfig::default(),
            sessions: SessionLimits::default(),
            storage: StorageConfig::default(),
            context: ContextConfig::default(),
            routing: RoutingConfig::default(),
            server: ServerConfig::default(),
            verify: VerifyConfig::default(),
            index: IndexConfig::default(),
            notify: NotifyConfig::default(),
            web: web::WebConfig::default(),
            hooks: HooksConfig::default(),
            keys: BTreeMap::new(),
            mcp_servers: BTreeMap::new(),
        }
    }
}

/// Which wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// OpenAI-compatible `/chat/completions` (OpenAI, Ollama, vLLM, OpenRouter ...).
    Openai,
    /// Anthropic `/v1/messages`.
    Anthropic,
}

/// How tools reach the model: the provider's native tool-calling, tools
/// described in the prompt and calls parsed from the reply, or (`auto`)
/// native until the server shows its chat template dropped the tools,
/// then described in the prompt for the rest of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolProtocol {
    #[default]
    Auto,
    Native,
    Json,
}

/// One provider after defaults are filled in.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    pub base_url: String,
    /// Name of the environment variable holding the API key; the key itself
    /// never appears in configuration. `None` for servers without keys,
    /// written back as `""` (left out, the kind's default key would return).
    #[serde(serialize_with = "key_env_as_written")]
    pub api_key_env: Option<String>,
    pub model: String,
    pub tool_protocol: ToolProtocol,
    /// The model's context window in tokens. Unset: asked of the server,
    /// else a table of well-known models, else 8192 (SPEC section 11).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u32>,
    /// Tokens kept free for the reply. Unset: an eighth of the window, at
    /// most 8192. When set, it is also sent as the request's output limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// US dollars per million tokens, for cost in eval reports.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price_input_per_mtok: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price_output_per_mtok: Option<f64>,
    /// Whether the model reads images.
    pub vision: Vision,
}

/// `api_key_env` as the file says it: `""` for no key.
fn key_env_as_written<S: serde::Serializer>(var: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(var.as_deref().unwrap_or_default())
}

/// A provider table as written in the file: every key optional.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProviderEntry {
    kind: Option<ProviderKind>,
    base_url: Option<String>,
    api_key_env: Option<String>,
    model: Option<String>,
    tool_protocol: Option<ToolProtocol>,
    context_window: Option<u32>,
    max_output_tokens: Option<u32>,
    price_input_per_mtok: Option<f64>,
    price_output_per_mtok: Option<f64>,
    vision: Option<Vision>,
}

fn builtin_providers() -> BTreeMap<String, ProviderConfig> {
    let mut map = BTreeMap::new();
    map.insert(
        "openai".to_string(),
        ProviderConfig {
            kind: ProviderKind::Openai,
            base_url: "https://api.openai.com/v1".into(),
            api_key_env: Some("OPENAI_API_KEY".into()),
            model: "gpt-4.1".into(),
            tool_protocol: ToolProtocol::Auto,
            context_window: None,
            max_output_tokens: None,
            price_input_per_mtok: None,
            price_output_per_mtok: None,
            vision: Vision::Auto,
        },
    );
    map.insert(
        "anthropic".to_string(),
        ProviderConfig {
            kind: ProviderKind::Anthropic,
            base_url: "https://api.anthropic.com".into(),
            api_key_env: Some("ANTHROPIC_API_KEY".into()),
            model: "claude-sonnet-4-5".into(),
            tool_protocol: ToolProtocol::Auto,
            context_window: None,
            max_output_tokens: None,
            price_input_per_mtok: None,
            price_output_per_mtok: None,
            vision: Vision::Auto,
        },
    );
    map.insert(
        "ollama".to_string(),
        ProviderConfig {
            kind: ProviderKind::Openai,
            base_url: "http://127.0.0.1:11434/v1".into(),
            api_key_env: None,
            model: "llama3.2".into(),
            tool_protocol: ToolProtocol::Auto,
            context_window: None,
            max_output_tokens: None,
            price_input_per_mtok: None,
            price_output_per_mtok: None,
            vision: Vision::Auto,
        },
    );
    map
}

/// Defaults for a provider of `kind` that is not one of the built-ins.
fn kind_defaults(kind: ProviderKind) -> ProviderConfig {
    let name = match kind {
        ProviderKind::Openai => "openai",
        ProviderKind::Anthropic => "anthropic",
    };
    let builtins = builtin_providers();
    match builtins.get(name) {
        Some(p) => p.clone(),
        None => ProviderConfig {
            kind,
            base_url: String::new(),
            api_key_env: None,
            model: String::new(),
            tool_protocol: ToolProtocol::Auto,
            context_window: None,
            max_output_tokens: None,
            price_input_per_mtok: None,
            price_output_per_mtok: None,
            vision: Vision::Auto,
        },
    }
}

fn merge_providers<'de, D>(de: D) -> Result<BTreeMap<String, ProviderConfig>, D::Error>
where
    D: Deserializer<'de>,
{
    use serde::de::Error;
    let written = BTreeMap::<String, ProviderEntry>::deserialize(de)?;
    let mut merged = builtin_providers();
    for (name, entry) in written {
        let base = match (merged.get(&name), entry.kind) {
            (Some(builtin), None) => builtin.clone(),
            (Some(builtin), Some(kind)) if builtin.kind == kind => builtin.clone(),
            (_, Some(kind)) => kind_defaults(kind),
            (None, None) => {
                return Err(D::Error::custom(format!(
                    "providers.{name}: missing key `kind` (\"openai\" or \"anthropic\")"
                )));
            }
        };
        let provider = ProviderConfig {
            kind: entry.kind.unwrap_or(base.kind),
            base_url: entry.base_url.unwrap_or(base.base_url),
            // `api_key_env = ""` says the server needs no key (llama.cpp, vLLM ...).
            api_key_env: match entry.api_key_env {
                Some(var) if var.is_empty() => None,
                Some(var) => Some(var),
                None => base.api_key_env,
            },
            model: entry.model.unwrap_or(base.model),
            tool_protocol: entry.tool_protocol.unwrap_or(base.tool_protocol),
            context_window: entry.context_window.or(base.context_window),
            max_output_tokens: entry.max_output_tokens.or(base.max_output_tokens),
            price_input_per_mtok: entry.price_input_per_mtok.or(base.price_input_per_mtok),
            price_output_per_mtok: entry.price_output_per_mtok.or(base.price_output_per_mtok),
            vision: entry.vision.unwrap_or(base.vision),
        };
        merged.insert(name, provider);
    }
    Ok(merged)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AgentConfig {
    pub max_tool_calls_per_job: u32,
    pub max_schema_retries: u32,
    /// Longest silence on a model connection before it counts as timed out.
    pub request_timeout_secs: u64,
    /// Retries of a failed model request (connection, timeout, 429, 5xx).
    pub max_retries: u32,
    /// First retry delay; doubles per retry, with jitter.
    pub retry_base_delay_ms: u64,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            max_tool_calls_per_job: 12,
            max_schema_retries: 5,
            request_timeout_secs: 120,
            max_retries: 4,
            retry_base_delay_ms: 500,
        }
    }
}

/// Bounds on what one tool call may return. `*_default` applies when the
/// model gives no limit, `*_cap` is the most it may ask for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    pub max_search_results_default: usize,
    pub max_search_results_cap: usize,
    pub max_search_snippet_lines: usize,
    pub max_read_bytes_default: usize,
    pub max_read_bytes_cap: usize,
    pub max_read_lines_default: usize,
    pub max_list_files_default: usize,
    pub max_list_files_cap: usize,
    pub max_hunk_lines: usize,
    pub max_hunk_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_search_results_default: 20,
            max_search_results_cap: 50,
            max_search_snippet_lines: 20,
            max_read_bytes_default: 65_536,
            max_read_bytes_cap: 1_048_576,
            max_read_lines_default: 800,
            max_list_files_default: 200,
            max_list_files_cap: 2_000,
            max_hunk_lines: 80,
            max_hunk_bytes: 8_192,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Theme {
    #[default]
    Dark,
    Light,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UiConfig {
    pub default_mode: Mode,
    pub theme: Theme,
}

impl Default for UiConfig {
    fn default() -> Self {
        UiConfig {
            default_mode: Mode::Agent,
            theme: Theme::Dark,
        }
    }
}

/// `[workspace]`: folders beside the agent root (SPEC 14).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkspaceConfig {
    /// `DIR`, `DIR:ro` or `DIR:rw`; a relative `DIR` is relative to the
    /// agent root, `~/` is the home folder. Read-only unless `:rw`.
    pub extra_roots: Vec<String>,
}

/// How the conversation is kept inside the model's context window
/// (SPEC section 11).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ContextConfig {
    /// Most tokens of one tool result the model sees (never more than a
    /// quarter of the window); the middle of a longer one is cut.
    pub max_tool_output_tokens: u32,
    /// Older turns are summarized once the conversation fills this share
    /// of the window.
    pub compact_at_percent: u8,
    /// Exchanges kept word for word when older ones are summarized.
    pub keep_recent_turns: u32,
}

impl Default for ContextConfig {
    fn default() -> Self {
        ContextConfig {
            max_tool_output_tokens: 4000,
            compact_at_percent: 80,
            keep_recent_turns: 2,
        }
    }
}

impl Config {
    /// Checks that parsing cannot express: cross-key bounds and references.
    /// Each problem names the key so the user can find it.
    pub fn problems(&self) -> Vec<String> {
        let mut out = self.routing.problems(&self.provider_names());
        out.extend(self.sessions.problems());
        out.extend(self.storage.problems());
        out.extend(self.server.problems());
        out.extend(self.verify.problems());
        out.extend(self.index.problems());
        out.extend(self.notify.problems());
        out.extend(self.hooks.problems("hooks"));
        for (name, server) in &self.mcp_servers {
            out.extend(server.problems(name));
        }
        if let Some(name) = &self.provider
            && !self.providers.contains_key(name)
        {
            out.push(format!(
                "provider = \"{name}\" names no provider; known: {}",
                self.provider_names().join(", ")
            ));
        }
        for (name, p) in &self.providers {
            if !(p.base_url.starts_with("http://") || p.base_url.starts_with("https://")) {
                out.push(format!(
                    "providers.{name}.base_url = \"{}\" must start with http:// or https://",
                    p.base_url
                ));
            }
            if p.model.trim().is_empty() {
                out.push(format!("providers.{name}.model must not be empty"));
            }
            if p.context_window.is_some_and(|w| w < MIN_CONTEXT_WINDOW) {
                out.push(format!(
                    "providers.{name}.context_window must be at least {MIN_CONTEXT_WINDOW} tokens"
                ));
            }
            match (p.max_output_tokens, p.context_window) {
                (Some(0), _) => out.push(format!(
                    "providers.{name}.max_output_tokens must be at least 1"
                )),
                (Some(out_tokens), Some(window)) if out_tokens >= window / 2 => out.push(format!(
                    "providers.{name}.max_output_tokens ({out_tokens}) must be less than half of \
                     context_window ({window}), or nothing would be left for the conversation"
                )),
                _ => {}
            }
            if let Some(var) = &p.api_key_env
                && !is_env_var_name(var)
            {
                out.push(format!(
                    "providers.{name}.api_key_env = \"{var}\" is not an environment variable name \
                     (put the variable's name here, never the key itself)"
                ));
            }
        }
        let l = &self.limits;
        let pairs = [
            (
                "max_search_results",
                l.max_search_results_default,
                l.max_search_results_cap,
            ),
            (
                "max_read_bytes",
                l.max_read_bytes_default,
                l.max_read_bytes_cap,
            ),
            (
                "max_list_files",
                l.max_list_files_default,
                l.max_list_files_cap,
            ),
        ];
        for (key, default, cap) in pairs {
            if default > cap {
                out.push(format!(
                    "limits.{key}_default ({default}) is larger than limits.{key}_cap ({cap})"
                ));
            }
        }
        let positive = [
            (
                "limits.max_search_results_default",
                l.max_search_results_default as u64,
            ),
            (
                "limits.max_search_snippet_lines",
                l.max_search_snippet_lines as u64,
            ),
            (
                "limits.max_read_bytes_default",
                l.max_read_bytes_default as u64,
            ),
            (
                "limits.max_read_lines_default",
                l.max_read_lines_default as u64,
            ),
            (
                "limits.max_list_files_default",
                l.max_list_files_default as u64,
            ),
            ("limits.max_hunk_lines", l.max_hunk_lines as u64),
            ("limits.max_hunk_bytes", l.max_hunk_bytes as u64),
            (
                "agent.max_tool_calls_per_job",
                u64::from(self.agent.max_tool_calls_per_job),
            ),
            (
                "agent.request_timeout_secs",
                self.agent.request_timeout_secs,
            ),
            ("exec.timeout_secs", self.exec.timeout_secs),
            ("exec.max_output_bytes", self.exec.max_output_bytes),
            (
                "sessions.max_jobs_per_session",
                self.sessions.max_jobs_per_session as u64,
            ),
            (
                "sessions.max_events_per_job",
                self.sessions.max_events_per_job as u64,
            ),
        ];
        for (key, value) in positive {
            if value == 0 {
                out.push(format!("{key} must be at least 1"));
            }
        }
        let c = &self.context;
        if c.max_tool_output_tokens < 100 {
            out.push("context.max_tool_output_tokens must be at least 100".to_string());
        }
        if !(10..=95).contains(&c.compact_at_percent) {
            out.push(format!(
                "context.compact_at_percent = {} must be between 10 and 95",
                c.compact_at_percent
            ));
        }
        out.extend(self.exec.problems());
        out
    }

    pub fn provider_names(&self) -> Vec<String> {
        self.providers.keys().cloned().collect()
    }
}

/// The smallest context window agent-tui can work in.
pub const MIN_CONTEXT_WINDOW: u32 = 1024;

fn is_env_var_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Config {
        toml::from_str(text).expect("valid config")
    }

    #[test]
    fn example_file_documents_the_defaults() {
        let text = include_str!("../../config.example.toml");
        let parsed = parse(text);
        assert_eq!(parsed, Config::default());
        assert!(parsed.problems().is_empty());
    }

    #[test]
    fn empty_file_is_all_defaults() {
        assert_eq!(parse(""), Config::default());
    }

    #[test]
    fn builtin_provider_override_keeps_unset_keys() {
        let c = parse("[providers.openai]\nmodel = \"gpt-5\"\n");
        let p = &c.providers["openai"];
        assert_eq!(p.model, "gpt-5");
        assert_eq!(p.base_url, "https://api.openai.com/v1");
        assert_eq!(p.api_key_env.as_deref(), Some("OPENAI_API_KEY"));
        assert!(c.providers.contains_key("anthropic"));
    }

    #[test]
    fn empty_api_key_env_means_no_key() {
        let c = parse(
            "[providers.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:8080/v1\"\napi_key_env = \"\"\n",
        );
        assert_eq!(c.providers["local"].api_key_env, None);
    }

    #[test]
    fn custom_provider_takes_kind_defaults() {
        let c = parse(
            "[providers.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:8080/v1\"\nmodel = \"qwen\"\n",
        );
        let p = &c.providers["local"];
        assert_eq!(p.kind, ProviderKind::Openai);
        assert_eq!(p.tool_protocol, ToolProtocol::Auto);
        assert_eq!(p.model, "qwen");
    }

    #[test]
    fn custom_provider_without_kind_is_an_error() {
        let err = toml::from_str::<Config>("[providers.local]\nmodel = \"x\"\n").unwrap_err();
        assert!(err.message().contains("providers.local"), "{err}");
        assert!(err.message().contains("kind"), "{err}");
    }

    #[test]
    fn problems_name_the_key() {
        let mut c = Config {
            provider: Some("nope".into()),
            ..Config::default()
        };
        c.limits.max_search_results_default = 99;
        c.agent.max_tool_calls_per_job = 0;
        c.providers.get_mut("openai").unwrap().api_key_env = Some("sk-123 secret".into());
        c.exec.allow.push(" ".into());
        c.exec.writable = vec!["../".into(), "~/.cargo".into(), "/opt/cache".into()];
        let all = c.problems().join("\n");
        assert!(all.contains("exec.writable[0] = \"../\""), "{all}");
        assert!(
            !all.contains("exec.writable[1]") && !all.contains("exec.writable[2]"),
            "{all}"
        );
        assert!(all.contains("provider = \"nope\""), "{all}");
        assert!(
            all.contains("limits.max_search_results_default (99)"),
            "{all}"
        );
        assert!(all.contains("agent.max_tool_calls_per_job"), "{all}");
        assert!(all.contains("providers.openai.api_key_env"), "{all}");
        assert!(all.contains("exec.allow[3]"), "{all}");
    }

    #[test]
    fn enums_use_spec_spelling() {
        let c = parse(
            "[ui]\ndefault_mode = \"plan\"\ntheme = \"light\"\n[approvals]\nexec = \"allowlisted-auto\"\nmcp = \"never\"\n",
        );
        assert_eq!(c.ui.default_mode, Mode::Plan);
        assert_eq!(c.ui.theme, Theme::Light);
        assert_eq!(c.approvals.exec, ApprovalPolicy::AllowlistedAuto);
        assert_eq!(c.approvals.mcp, ApprovalPolicy::Never);
    }
}
