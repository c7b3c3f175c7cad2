//! The OpenAI chat-completions wire format as typed, borrowing structs:
//! request bodies serialized straight from the conversation (no JSON tree,
//! no copies of its strings) and reply chunks read without one.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::http::Endpoint;
use super::{LlmError, Message, Request};

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    messages: Vec<OutMessage<'a>>,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    /// llama.cpp's own name for the reply's limit: only it reads it (the
    /// others ignore the field), and it never refuses a request for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    n_predict: Option<u32>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<OutTool<'a>>,
    /// `{"type": "json_object", "schema": …}`: the reply constrained.
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<serde_json::Value>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
struct OutMessage<'a> {
    role: &'static str,
    content: Option<Content<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<OutCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
}

/// A message's content: text, or (a user turn with images) parts.
#[derive(Serialize)]
#[serde(untagged)]
enum Content<'a> {
    Text(&'a str),
    Parts(Vec<Part<'a>>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part<'a> {
    Text { text: Cow<'a, str> },
    ImageUrl { image_url: ImageUrl },
}

#[derive(Serialize)]
struct ImageUrl {
    /// `data:image/png;base64,…`.
    url: String,
}

/// An attached image as a content part; one whose bytes are gone is named.
fn image_part(image: &super::Image) -> Part<'static> {
    match &image.data {
        Some(data) => Part::ImageUrl {
            image_url: ImageUrl {
                url: format!(
                    "data:{};base64,{}",
                    image.meta.media_type,
                    crate::protocol::image::encode_base64(data)
                ),
            },
        },
        None => Part::Text {
            text: Cow::Owned(image.missing()),
        },
    }
}

#[derive(Serialize)]
struct OutCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: OutFunction<'a>,
}

#[derive(Serialize)]
struct OutFunction<'a> {
    name: &'a str,
    /// JSON text (raw text if it never parsed).
    arguments: Cow<'a, str>,
}

#[derive(Serialize)]
struct OutTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: OutToolFunction<'a>,
}

#[derive(Serialize)]
struct OutToolFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

fn message(m: &Message) -> OutMessage<'_> {
    match m {
        Message::User(text) => OutMessage {
            role: "user",
            content: Some(Content::Text(text)),
            tool_calls: Vec::new(),
            tool_call_id: None,
        },
        Message::Assistant { text, tool_calls } => OutMessage {
            role: "assistant",
            // Never null: llama-cpp-python's server refuses a null content
            // (HTTP 500, "Input should be a valid string"); "" is taken by all.
            content: Some(Content::Text(text)),
            tool_calls: tool_calls
                .iter()
                .map(|c| OutCall {
                    id: &c.tool_call_id,
                    kind: "function",
                    function: OutFunction {
                        name: &c.name,
                        arguments: match &c.arguments {
                            Value::String(raw) => Cow::Borrowed(raw),
                            other => Cow::Owned(other.to_string()),
                        },
                    },
                })
                .collect(),
            tool_call_id: None,
        },
        Message::Tool(result) => OutMessage {
            role: "tool",
            content: Some(Content::Text(result.content())),
            tool_calls: Vec::new(),
            tool_call_id: Some(&result.tool_call_id),
        },
        Message::Image(image) => user_parts(vec![image_part(image)]),
    }
}

fn user_parts(parts: Vec<Part<'_>>) -> OutMessage<'_> {
    OutMessage {
        role: "user",
        content: Some(Content::Parts(parts)),
        tool_calls: Vec::new(),
        tool_call_id: None,
    }
}

/// The conversation as messages: images go in the user turn they precede.
fn messages<'a>(conversation: &'a [Message], out: &mut Vec<OutMessage<'a>>) {
    let mut images: Vec<Part<'a>> = Vec::new();
    for m in conversation {
        match m {
            Message::Image(image) => images.push(image_part(image)),
            Message::User(text) if !images.is_empty() => {
                let mut parts = std::mem::take(&mut images);
                parts.push(Part::Text {
                    text: Cow::Borrowed(text),
                });
                out.push(user_parts(parts));
            }
            other => {
                if !images.is_empty() {
                    out.push(user_parts(std::mem::take(&mut images)));
                }
                out.push(message(other));
            }
        }
    }
    if !images.is_empty() {
        out.push(user_parts(images));
    }
}

/// The JSON body of a chat completion request; `usage` asks a stream to end
/// with the token counts (`stream_options.include_usage`).
pub(super) fn request_body(
    ep: &Endpoint,
    request: Request<'_>,
    stream: bool,
    usage: bool,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(request.messages.len() + 1);
    out.push(OutMessage {
        role: "system",
        content: Some(Content::Text(request.system)),
        tool_calls: Vec::new(),
        tool_call_id: None,
    });
    messages(request.messages, &mut out);
    // The reply's limit goes out only when the user set one: servers size
    // replies to what is left of the window by themselves. OpenAI's own API
    // wants the newer name (its reasoning models refuse the old one).
    let limit = request
        .max_output_tokens
        .filter(|_| ep.max_output_tokens.is_some());
    let openai = ep.base_url.contains("api.openai.com");
    let body = Body {
        model: &ep.model,
        messages: out,
        stream,
        stream_options: (stream && usage).then_some(StreamOptions {
            include_usage: true,
        }),
        max_tokens: limit.filter(|_| !openai),
        max_completion_tokens: limit.filter(|_| openai),
        // All but llama.cpp's server stop where the window ends; it goes on
        // (shifting the context out under the reply) unless told. As its
        // own field it cannot make a server that counts the request higher
        // than we do refuse it, as `max_tokens` would (vLLM, OpenAI).
        n_predict: request.reply_limit.filter(|_| !openai),
        tools: request
            .tools
            .iter()
            .map(|t| OutTool {
                kind: "function",
                function: OutToolFunction {
                    name: &t.name,
                    description: &t.description,
                    parameters: &t.parameters,
                },
            })
            .collect(),
        response_format: request
            .reply_schema
            .map(|schema| serde_json::json!({"type": "json_object", "schema": schema})),
    };
    // Serializing borrowed strings and numbers cannot fail.
    serde_json::to_vec(&body).unwrap_or_default()
}

/// One `chat.completion.chunk` (or a whole reply, whose choices carry a
/// `message` instead of a `delta`), read without building a JSON tree: its
/// strings borrow from the event's text where they can.
#[derive(Deserialize, Default)]
pub(super) struct WireChunk<'a> {
    #[serde(default, borrow)]
    pub choices: Vec<WireChoice<'a>>,
    #[serde(default)]
    pub usage: Option<WireUsage>,
    #[serde(default)]
    pub error: Option<Value>,
}

#[derive(Deserialize)]
pub(super) struct WireChoice<'a> {
    #[serde(default, borrow, alias = "message")]
    pub delta: Option<WireDelta<'a>>,
    #[serde(default, borrow)]
    pub finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
pub(super) struct WireDelta<'a> {
    #[serde(default, borrow)]
    pub content: Option<Cow<'a, str>>,
    /// Thinking, as llama.cpp, vLLM and DeepSeek name it.
    #[serde(default, borrow)]
    pub reasoning_content: Option<Cow<'a, str>>,
    /// Thinking, as Ollama and newer vLLM name it.
    #[serde(default, borrow)]
    pub reasoning: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub tool_calls: Option<Vec<WireCall<'a>>>,
}

#[derive(Deserialize)]
pub(super) struct WireCall<'a> {
    #[serde(default)]
    pub index: Option<u64>,
    #[serde(default, borrow)]
    pub id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub function: Option<WireFunction<'a>>,
}

#[derive(Deserialize)]
pub(super) struct WireFunction<'a> {
    #[serde(default, borrow)]
    pub name: Option<Cow<'a, str>>,
    /// Text (the norm) or, from some servers, the arguments object itself.
    #[serde(default)]
    pub arguments: Option<Value>,
}

#[derive(Deserialize)]
pub(super) struct WireUsage {
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
}

/// Parses one event's (or reply's) JSON.
pub(super) fn wire<'a>(url: &str, data: &'a str) -> Result<WireChunk<'a>, LlmError> {
    serde_json::from_str(data).map_err(|e| LlmError::Protocol {
        url: url.to_string(),
        detail: format!(
            "event data is not a chat completion chunk ({e}): {}",
            data.chars().take(200).collect::<String>()
        ),
    })
}
