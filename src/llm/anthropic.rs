//! Anthropic adapter: `POST {base_url}/v1/messages` with `stream: true`,
//! `tool_use` blocks streamed as `input_json_delta`, `tool_result` blocks back.

use std::collections::BTreeMap;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::http::{self, Endpoint, WireAdapter};
use super::openai::parse_arguments;
use super::think::Pending;
use super::{Delta, FinishReason, LlmError, Message, Request, TextSink, ToolCall, Turn};
use crate::protocol::Usage;

const API_VERSION: &str = "2023-06-01";
/// `max_tokens` when the request sets no output limit.
const MAX_TOKENS: u32 = 8192;

pub struct Anthropic {
    ep: Endpoint,
}

impl Anthropic {
    pub fn new(ep: Endpoint) -> Anthropic {
        Anthropic { ep }
    }

    fn headers(&self, builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        let builder = builder.header("anthropic-version", API_VERSION);
        match &self.ep.key {
            Some(key) => builder.header("x-api-key", key),
            None => builder,
        }
    }

    async fn stream(&self, request: Request<'_>, on_text: TextSink<'_>) -> Result<Turn, LlmError> {
        let url = format!("{}/v1/messages", self.ep.base_url);
        let body = request_body(&self.ep.model, request);
        let response = http::send(
            self.headers(self.ep.client.post(&url)).json(&body),
            &url,
            self.ep.idle,
        )
        .await?;
        let mut events = http::SseBatches::new(response, &url, self.ep.idle);
        let mut state = StreamState::default();
        let mut batch = Vec::new();
        let mut pending = Pending::default();
        while events.next(&mut batch).await? {
            for event in batch.drain(..) {
                if event.data.trim().is_empty() {
                    continue;
                }
                let data = http::json_data(&url, &event.data)?;
                let kind = if event.event.is_empty() || event.event == "message" {
                    data["type"].as_str().unwrap_or_default().to_string()
                } else {
                    event.event.clone()
                };
                match state.absorb(&kind, &data, &mut |d: Delta<'_>| pending.push(d)) {
                    Ok(false) => {}
                    Ok(true) => {
                        pending.flush(on_text);
                        return Ok(state.into_turn());
                    }
                    Err((error, retryable)) => {
                        pending.flush(on_text);
                        return Err(http::in_stream_error(&url, &error, retryable));
                    }
                }
            }
            pending.flush(on_text);
        }
        Err(LlmError::StreamCut {
            url,
            detail: "the stream ended before message_stop".into(),
        })
    }
}

impl WireAdapter for Anthropic {
    fn endpoint(&self) -> &Endpoint {
        &self.ep
    }

    fn authorize(&self, builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        self.headers(builder)
    }

    fn models_url(&self) -> String {
        format!("{}/v1/models", self.ep.base_url)
    }

    /// Every current Claude model reads images; the config may say otherwise.
    fn server_sight(&self) -> BoxFuture<'_, super::Sight> {
        let said = super::vision::configured(&self.ep).unwrap_or(super::Sight::Sees {
            how: "Anthropic's models read images".into(),
        });
        Box::pin(async move { said })
    }

    fn image_rule(&self) -> crate::protocol::ImageRule {
        crate::protocol::ImageRule::Anthropic
    }

    fn run<'a>(
        &'a self,
        request: Request<'a>,
        on_text: TextSink<'a>,
    ) -> BoxFuture<'a, Result<Turn, LlmError>> {
        Box::pin(self.stream(request, on_text))
    }
}

/// A base64 `image` block; an image whose bytes are gone is named instead.
fn image_block(image: &super::Image) -> Value {
    match &image.data {
        Some(data) => json!({"type": "image", "source": {
            "type": "base64",
            "media_type": image.meta.media_type,
            "data": crate::protocol::image::encode_base64(data),
        }}),
        None => json!({"type": "text", "text": image.missing()}),
    }
}

/// The Messages API body. Roles must alternate, so consecutive messages of
/// one role (tool results, then a note) are merged into one message.
fn request_body(model: &str, request: Request<'_>) -> Value {
    let max_tokens = request.max_output_tokens.unwrap_or(MAX_TOKENS);
    let mut messages: Vec<(&str, Vec<Value>)> = Vec::new();
    for message in request.messages {
        let (role, blocks) = match message {
            Message::User(text) => ("user", vec![json!({"type": "text", "text": text})]),
            Message::Assistant { text, tool_calls } => {
                let mut blocks = Vec::new();
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for c in tool_calls {
                    let input = match &c.arguments {
                        Value::Object(_) => c.arguments.clone(),
                        // Input must be an object; what never parsed goes as text.
                        other => json!({"_unparsed_arguments": other}),
                    };
                    blocks.push(json!({"type": "tool_use", "id": c.tool_call_id, "name": c.name, "input": input}));
                }
                ("assistant", blocks)
            }
            Message::Tool(result) => (
                "user",
                vec![
                    json!({"type": "tool_result", "tool_use_id": result.tool_call_id,
                    "content": result.content(), "is_error": !result.ok}),
                ],
            ),
            // Merged into the user turn of the prompt it goes with.
            Message::Image(image) => ("user", vec![image_block(image)]),
        };
        match messages.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => messages.push((role, blocks)),
        }
    }
    let messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let mut body = json!({
        "model": model,
        "max_tokens": max_tokens,
        "system": request.system,
        "messages": messages,
        "stream": true,
    });
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
        body["tools"] = Value::Array(tools);
    }
    body
}

struct Block {
    id: String,
    name: String,
    json: String,
}

#[derive(Default)]
struct StreamState {
    text: String,
    tools: BTreeMap<u64, Block>,
    stop: Option<FinishReason>,
    usage: Option<Usage>,
}

impl StreamState {
    /// Applies one event; `true` once the message is complete. An `error`
    /// event comes back as its error object and whether it is retryable.
    fn absorb(
        &mut self,
        kind: &str,
        data: &Value,
        on_text: TextSink<'_>,
    ) -> Result<bool, (Value, bool)> {
        match kind {
            "message_start" => {
                let usage = &data["message"]["usage"];
                self.usage = Some(Usage {
                    // Cached prompt tokens are part of the prompt too.
                    input_tokens: [
                        "input_tokens",
                        "cache_read_input_tokens",
                        "cache_creation_input_tokens",
                    ]
                    .iter()
                    .filter_map(|k| usage[*k].as_u64())
                    .sum(),
                    output_tokens: usage["output_tokens"].as_u64().unwrap_or(0),
                    requests: 0,
                });
            }
            "content_block_start" => {
                let block = &data["content_block"];
                if block["type"] == "tool_use" {
                    let index = data["index"].as_u64().unwrap_or(0);
                    let initial = match &block["input"] {
                        Value::Object(map) if !map.is_empty() => block["input"].to_string(),
                        _ => String::new(),
                    };
                    self.tools.insert(
                        index,
                        Block {
                            id: block["id"].as_str().unwrap_or_default().to_string(),
                            name: block["name"].as_str().unwrap_or_default().to_string(),
                            json: initial,
                        },
                    );
                }
            }
            "content_block_delta" => {
                let delta = &data["delta"];
                match delta["type"].as_str() {
                    Some("text_delta") => {
                        if let Some(text) = delta["text"].as_str() {
                            self.text.push_str(text);
                            on_text(Delta::Text(text));
                        }
                    }
                    Some("thinking_delta") => {
                        if let Some(thinking) = delta["thinking"].as_str() {
                            on_text(Delta::Reasoning(thinking));
                        }
                    }
                    Some("input_json_delta") => {
                        let index = data["index"].as_u64().unwrap_or(0);
                        if let (Some(block), Some(part)) =
                            (self.tools.get_mut(&index), delta["partial_json"].as_str())
                        {
                            block.json.push_str(part);
                        }
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(reason) = data["delta"]["stop_reason"].as_str() {
                    self.stop = Some(match reason {
                        "end_turn" | "stop_sequence" => FinishReason::Stop,
                        "tool_use" => FinishReason::ToolCalls,
                        "max_tokens" => FinishReason::Length,
                        _ => FinishReason::Other,
                    });
                }
                if let (Some(out), Some(usage)) =
                    (data["usage"]["output_tokens"].as_u64(), self.usage.as_mut())
                {
                    usage.output_tokens = out;
                }
            }
            "message_stop" => return Ok(true),
            "error" => {
                let error = &data["error"];
                let kind = error["type"].as_str().unwrap_or("error");
                let retryable =
                    matches!(kind, "overloaded_error" | "api_error" | "rate_limit_error");
                let mut error = error.clone();
                error["message"] = Value::String(format!(
                    "{kind}: {}",
                    error["message"].as_str().unwrap_or("no message")
                ));
                return Err((error, retryable));
            }
            // ping, content_block_stop and future event types carry nothing we need.
            _ => {}
        }
        Ok(false)
    }

    fn into_turn(self) -> Turn {
        let tool_calls: Vec<ToolCall> = self
            .tools
            .into_values()
            .map(|b| ToolCall {
                tool_call_id: b.id,
                name: b.name,
                arguments: parse_arguments(&b.json),
            })
            .collect();
        let finish = self.stop.unwrap_or(if tool_calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        });
        Turn {
            text: self.text,
            tool_calls,
            finish,
            usage: self.usage,
            invalid_action: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolResult;

    #[test]
    fn tool_results_and_notes_merge_into_one_user_message() {
        let messages = [
            Message::User("hi".into()),
            Message::Assistant {
                text: "looking".into(),
                tool_calls: vec![
                    ToolCall {
                        tool_call_id: "t1".into(),
                        name: "a".into(),
                        arguments: json!({}),
                    },
                    ToolCall {
                        tool_call_id: "t2".into(),
                        name: "b".into(),
                        arguments: json!({"x": 1}),
                    },
                ],
            },
            Message::Tool(ToolResult::new("t1".into(), "a".into(), Ok(json!(1)))),
            Message::Tool(ToolResult::new(
                "t2".into(),
                "b".into(),
                Err(json!({"code": "x"})),
            )),
            Message::User("budget note".into()),
        ];
        let body = request_body(
            "m",
            Request {
                system: "sys",
                messages: &messages,
                tools: &[],
                max_output_tokens: None,
                brief_tools: false,
                reply_schema: None,
                reply_limit: None,
                stop_repeats: false,
            },
        );
        assert_eq!(body["system"], "sys");
        assert_eq!(body["max_tokens"], MAX_TOKENS);
        let m = body["messages"].as_array().unwrap();
        assert_eq!(m.len(), 3);
        assert_eq!(m[1]["content"][1]["type"], "tool_use");
        assert_eq!(m[2]["role"], "user");
        assert_eq!(m[2]["content"][0]["tool_use_id"], "t1");
        assert_eq!(m[2]["content"][1]["is_error"], true);
        assert_eq!(m[2]["content"][2]["text"], "budget note");
        assert!(body.get("tools").is_none());
    }

    #[test]
    fn stream_events_assemble_text_and_tools() {
        let mut state = StreamState::default();
        let mut seen = String::new();
        let mut sink = |d: Delta<'_>| {
            if let Delta::Text(t) = d {
                seen.push_str(t)
            }
        };
        let events = [
            (
                "message_start",
                json!({"type": "message_start", "message": {"usage": {"input_tokens": 7, "output_tokens": 1}}}),
            ),
            (
                "content_block_start",
                json!({"index": 0, "content_block": {"type": "text", "text": ""}}),
            ),
            (
                "content_block_delta",
                json!({"index": 0, "delta": {"type": "text_delta", "text": "Hi"}}),
            ),
            ("ping", json!({"type": "ping"})),
            (
                "content_block_start",
                json!({"index": 1, "content_block": {"type": "tool_use", "id": "tu", "name": "read_file", "input": {}}}),
            ),
            (
                "content_block_delta",
                json!({"index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"file_pa"}}),
            ),
            (
                "content_block_delta",
                json!({"index": 1, "delta": {"type": "input_json_delta", "partial_json": "th\": \"x\"}"}}),
            ),
            (
                "message_delta",
                json!({"delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 12}}),
            ),
        ];
        for (kind, data) in &events {
            assert!(!state.absorb(kind, data, &mut sink).unwrap());
        }
        assert!(state.absorb("message_stop", &json!({}), &mut sink).unwrap());
        let turn = state.into_turn();
        assert_eq!(seen, "Hi");
        assert_eq!(turn.tool_calls[0].arguments, json!({"file_path": "x"}));
        assert_eq!(turn.finish, FinishReason::ToolCalls);
        assert_eq!(
            turn.usage,
            Some(Usage {
                input_tokens: 7,
                output_tokens: 12,
                requests: 0,
            })
        );
        let (error, retryable) = StreamState::default()
            .absorb(
                "error",
                &json!({"error": {"type": "overloaded_error", "message": "Overloaded"}}),
                &mut |_| {},
            )
            .unwrap_err();
        assert!(retryable);
        assert!(http::in_stream_error("u", &error, retryable).is_retryable());
        let (error, retryable) = StreamState::default()
            .absorb(
                "error",
                &json!({"error": {"type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000 maximum"}}),
                &mut |_| {},
            )
            .unwrap_err();
        let overflow = http::in_stream_error("u", &error, retryable);
        assert_eq!(overflow.overflow().and_then(|o| o.limit), Some(200_000));
    }
}
