//! Talking to language models: the `Provider` trait and the normalized
//! message, tool-call and turn types; one adapter per wire protocol. Nothing
//! provider-specific leaves this module.

mod anthropic;
mod discover;
mod error;
#[doc(hidden)]
pub mod fuzzing; // fuzz doors: any bytes in, a panic only when a property fails
mod http;
mod json_action;
mod json_protocol;
mod json_reply;
mod openai;
mod openai_wire;
mod overflow;
mod repeat;
mod retry;
mod sse;
mod text_calls;
mod think;
mod vision;

pub use error::{LlmError, Overflow};
pub use retry::RetryPolicy;
pub use text_calls::loose_call;
pub use vision::Sight;

use std::time::Duration;

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::{ProviderConfig, ProviderKind, ToolProtocol};
use crate::protocol::Usage;

/// One message of the conversation (the system prompt travels separately).
/// Sessions store it as JSON (`{"user": …}`, `{"assistant": …}`, `{"tool": …}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Message {
    User(String),
    Assistant {
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    Tool(ToolResult),
    /// An image the user attached, just before the prompt it goes with
    /// (sent in that prompt's user turn).
    Image(Image),
}

/// An attached image in the conversation. Sessions record what it is; its
/// bytes are kept in the store by sha256 and filled in when a job loads
/// the session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Image {
    #[serde(flatten)]
    pub meta: crate::protocol::ImageMeta,
    /// Tokens the model reads for it, by its provider's rule.
    pub tokens: u32,
    /// Whether `tokens` is the provider's own rule (else an estimate).
    #[serde(default)]
    pub exact: bool,
    #[serde(skip)]
    pub data: Option<std::sync::Arc<Vec<u8>>>,
}

impl Image {
    /// What the model reads in place of an image whose bytes are gone.
    pub fn missing(&self) -> String {
        format!(
            "[image {} was attached here; it is no longer kept]",
            self.meta.name
        )
    }

    /// What a model that cannot see reads in its place.
    pub fn unseen(&self) -> String {
        format!(
            "[image {} was attached here; this model cannot see images]",
            self.meta.name
        )
    }
}

/// A tool call requested by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub tool_call_id: String,
    pub name: String,
    /// The arguments object; a `Value::String` holds arguments text that was
    /// not valid JSON, so the loop can tell the model what went wrong.
    pub arguments: Value,
}

/// The outcome of a tool call, as sent back to the model. The whole
/// outcome is kept (sessions, the TUI); `content` is what the model reads,
/// which the context layer may cut to fit its window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    pub tool_call_id: String,
    pub name: String,
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// `{"code", "message"}` when `ok` is false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
    /// Derived from the outcome; rebuilt (and capped) when loaded.
    #[serde(skip)]
    pub content: String,
}

impl ToolResult {
    /// A result whose content is the whole outcome as JSON.
    pub fn new(tool_call_id: String, name: String, outcome: Result<Value, Value>) -> ToolResult {
        let (ok, result, error) = match outcome {
            Ok(value) => (true, Some(value), None),
            Err(e) => (false, None, Some(e)),
        };
        let mut r = ToolResult {
            tool_call_id,
            name,
            ok,
            result,
            error,
            content: String::new(),
        };
        r.content = r.outcome().to_string();
        r
    }

    /// The outcome as the model reads it: the result, or `{"error": …}`.
    pub fn outcome(&self) -> Value {
        if self.ok {
            self.result.clone().unwrap_or(Value::Null)
        } else {
            serde_json::json!({ "error": self.error.clone().unwrap_or(Value::Null) })
        }
    }

    /// The text the model reads.
    pub fn content(&self) -> &str {
        &self.content
    }
}

/// A tool as offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
}

/// Everything one model request needs.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub system: &'a str,
    pub messages: &'a [Message],
    /// Empty: the model must answer in text.
    pub tools: &'a [ToolDef],
    /// Tokens kept free for the reply. Anthropic always sends it; OpenAI-
    /// compatible servers get it only when `max_output_tokens` is configured.
    pub max_output_tokens: Option<u32>,
    /// A small window: where the tools are described in the text (the
    /// JSON-action protocol), one line each.
    pub brief_tools: bool,
    /// A JSON Schema the reply must follow, for servers that constrain
    /// their decoding to one (llama.cpp's `response_format`); a server that
    /// refuses it is asked without.
    pub reply_schema: Option<&'a serde_json::Value>,
    /// In a small window with no `max_output_tokens` configured, what the
    /// request leaves of it: llama.cpp's server would otherwise go on
    /// generating past its window, shifting the context out under the
    /// reply. The OpenAI-compatible wire sends it as `n_predict`, which
    /// only llama.cpp reads (as `max_tokens` it could make a server that
    /// counts the request higher than we do refuse it).
    pub reply_limit: Option<u32>,
    /// A small window's model: a reply that goes round in a loop (the same
    /// block three times over) is stopped there, the block kept once.
    pub stop_repeats: bool,
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishReason {
    Stop,
    ToolCalls,
    Length,
    /// Stopped by us: the reply went round in a loop (`stop_repeats`), the
    /// same `period` bytes `copies` times in a row.
    Repeated {
        period: u32,
        copies: u32,
    },
    Other,
}

/// The model's reply to one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub finish: FinishReason,
    /// Tokens as the server counted them; `None` if it did not say.
    pub usage: Option<Usage>,
    /// Set by the JSON tool protocol when the reply tried to call a tool but
    /// could not be used; the text is the correction to send back.
    pub invalid_action: Option<String>,
}

/// A piece of a streamed reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delta<'a> {
    /// Answer text.
    Text(&'a str),
    /// The model's thinking (`reasoning_content`, Anthropic thinking blocks,
    /// a leading `<think>` block): shown apart, never part of the answer.
    Reasoning(&'a str),
}

/// Receives the streamed reply as it arrives.
pub type TextSink<'a> = &'a mut (dyn FnMut(Delta<'_>) + Send);

/// A window size a server reported about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerWindow {
    pub tokens: u32,
    pub detail: String,
}

/// A language model endpoint speaking one wire protocol.
pub trait Provider: Send + Sync {
    /// Provider name, for events and messages.
    fn name(&self) -> &str;
    /// The model asked for.
    fn model(&self) -> &str;
    /// Whether tools go through the API's native tool calling.
    fn supports_native_tools(&self) -> bool;
    /// `context_window` from the provider's config, if set.
    fn context_window(&self) -> Option<u32>;
    /// `max_output_tokens` from the provider's config, if set.
    fn max_output_tokens(&self) -> Option<u32>;
    /// Sends one request and streams the reply, text deltas to `on_text`.
    fn step<'a>(
        &'a self,
        request: Request<'a>,
        on_text: TextSink<'a>,
    ) -> BoxFuture<'a, Result<Turn, LlmError>>;
    /// A cheap request that proves the endpoint and key work (lists models).
    fn probe(&self) -> BoxFuture<'_, Result<String, LlmError>>;
    /// The context window the server says it serves, if it says
    /// (llama.cpp `/props`, Ollama `/api/show`, `/v1/models` fields).
    fn discover_window(&self) -> BoxFuture<'_, Option<ServerWindow>>;
    /// The models the server lists (its models list's ids), sorted; a
    /// provider with no such list gives none.
    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, LlmError>> {
        Box::pin(async { Ok(Vec::new()) })
    }
    /// Whether the model reads images (`vision`, or its server asked).
    fn sight(&self) -> BoxFuture<'_, Sight> {
        Box::pin(async { Sight::Unknown })
    }
    /// How the model counts an image's tokens.
    fn images_counted(&self) -> crate::protocol::ImageRule {
        crate::protocol::ImageRule::Estimate
    }
    /// How many tokens the server's tokenizer makes of `text`, if it can
    /// say (for servers whose streams report no usage).
    fn count_tokens<'a>(&'a self, _text: &'a str) -> BoxFuture<'a, Option<u64>> {
        Box::pin(async { None })
    }
    /// The prompt tokens the server counts for `request` as its chat
    /// template renders it (one reply token asked, not streamed), if it
    /// says.
    fn prompt_tokens<'a>(&'a self, _request: Request<'a>) -> BoxFuture<'a, Option<u64>> {
        Box::pin(async { None })
    }
    /// `tool_protocol = "auto"` and not yet settled: the next native
    /// request's prompt count should be checked.
    fn tool_check_pending(&self) -> bool {
        false
    }
    /// Settles `auto`: `Some(why)` switches to tools described in the
    /// prompt for the rest of the run.
    fn settle_tools(&self, _dropped: Option<String>) {}
    /// `auto`, the server refused native tools for this model: switches
    /// to tools described in the prompt (whatever was settled); whether it
    /// did (an explicit `native` never does).
    fn tools_refused(&self, _why: String) -> bool {
        false
    }
}

/// Builds the provider for `config`; `env` supplies the API key variable.
pub fn build_provider(
    name: &str,
    config: &ProviderConfig,
    request_timeout: Duration,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Box<dyn Provider>, LlmError> {
    let key = match &config.api_key_env {
        Some(var) => match env(var).filter(|v| !v.trim().is_empty()) {
            Some(key) => Some(key),
            None => {
                return Err(LlmError::MissingKey {
                    provider: name.to_string(),
                    var: var.clone(),
                });
            }
        },
        None => None,
    };
    let endpoint = http::Endpoint::new(name, config, key, request_timeout)?;
    let inner: Box<dyn Provider> = match config.kind {
        ProviderKind::Openai => Box::new(openai::OpenAi::new(endpoint)),
        ProviderKind::Anthropic => Box::new(anthropic::Anthropic::new(endpoint)),
    };
    Ok(match config.tool_protocol {
        ToolProtocol::Native => inner,
        ToolProtocol::Json => Box::new(json_protocol::ToolsWrapper::json(inner)),
        ToolProtocol::Auto => Box::new(json_protocol::ToolsWrapper::auto(inner)),
    })
}
