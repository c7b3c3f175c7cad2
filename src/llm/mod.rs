//! Talking to language models: the `Provider` trait and the normalized
//! message, tool-call and turn types; one adapter per wire protocol. Nothing
//! provider-specific leaves this module.

mod anthropic;
mod error;
mod http;
mod json_action;
mod json_protocol;
mod openai;
mod retry;

pub use error::LlmError;
pub use retry::RetryPolicy;

use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::config::{ProviderConfig, ProviderKind, ToolProtocol};
use crate::protocol::Usage;

/// One message of the conversation (the system prompt travels separately).
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    User(String),
    Assistant {
        text: String,
        tool_calls: Vec<ToolCall>,
    },
    Tool(ToolResult),
}

/// A tool call requested by the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub tool_call_id: String,
    pub name: String,
    /// The arguments object; a `Value::String` holds arguments text that was
    /// not valid JSON, so the loop can tell the model what went wrong.
    pub arguments: Value,
}

/// The outcome of a tool call, as sent back to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    pub tool_call_id: String,
    pub name: String,
    pub ok: bool,
    pub result: Option<Value>,
    /// `{"code", "message"}` when `ok` is false.
    pub error: Option<Value>,
}

impl ToolResult {
    /// The text the model reads: the result or the error, as JSON.
    pub fn content(&self) -> String {
        let value = if self.ok {
            self.result.clone().unwrap_or(Value::Null)
        } else {
            serde_json::json!({ "error": self.error.clone().unwrap_or(Value::Null) })
        };
        value.to_string()
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
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishReason {
    Stop,
    ToolCalls,
    Length,
    Other,
}

/// The model's reply to one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub finish: FinishReason,
    pub usage: Usage,
    /// Set by the JSON tool protocol when the reply tried to call a tool but
    /// could not be used; the text is the correction to send back.
    pub invalid_action: Option<String>,
}

/// Receives streamed answer text as it arrives.
pub type TextSink<'a> = &'a mut (dyn FnMut(&str) + Send);

/// A language model endpoint speaking one wire protocol.
pub trait Provider: Send + Sync {
    /// Provider name, for events and messages.
    fn name(&self) -> &str;
    /// The model asked for.
    fn model(&self) -> &str;
    /// Whether tools go through the API's native tool calling.
    fn supports_native_tools(&self) -> bool;
    /// Sends one request and streams the reply, text deltas to `on_text`.
    fn step<'a>(
        &'a self,
        request: Request<'a>,
        on_text: TextSink<'a>,
    ) -> BoxFuture<'a, Result<Turn, LlmError>>;
    /// A cheap request that proves the endpoint and key work (lists models).
    fn probe(&self) -> BoxFuture<'_, Result<String, LlmError>>;
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
        ToolProtocol::Json => Box::new(json_protocol::JsonProtocol::new(inner)),
    })
}
