//! OpenAI-compatible adapter: `POST {base_url}/chat/completions` with
//! `stream: true` (OpenAI, Ollama, llama.cpp, vLLM, OpenRouter ...).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::ServerWindow;
use super::discover::{self, Tokenizer};
use super::http::{self, Endpoint, WireAdapter};
use super::openai_wire::{WireChunk, request_body, wire};
use super::repeat::RepeatWatch;
use super::think::{Pending, ThinkTags};
use super::{Delta, FinishReason, LlmError, Request, TextSink, ToolCall, Turn};
use crate::protocol::Usage;

pub struct OpenAi {
    ep: Endpoint,
    /// Cleared once the server refuses `stream_options` (some reject fields
    /// they do not know); streams then carry no usage and it is estimated.
    usage_in_stream: AtomicBool,
    /// The tokenizer endpoint the server answers (or that it has none).
    tokenizer: Mutex<Tokenizer>,
    /// The server refused a constrained reply (`response_format`).
    no_reply_schema: AtomicBool,
    /// The server refused llama.cpp's `n_predict` (a strict one).
    no_reply_limit: AtomicBool,
    /// What discovery found lately (each new session asks; llama-cpp-
    /// python's answer costs a long prompt's tokenizing).
    window: Mutex<Option<(Instant, Option<ServerWindow>)>>,
}

/// How long a discovered window is taken as the server's own: a server
/// restarted with another window within it is corrected by its first
/// refusal, as any wrong window is.
const WINDOW_KEPT: Duration = Duration::from_secs(600);

impl OpenAi {
    pub fn new(ep: Endpoint) -> OpenAi {
        OpenAi {
            ep,
            usage_in_stream: AtomicBool::new(true),
            tokenizer: Mutex::new(Tokenizer::Unknown),
            no_reply_schema: AtomicBool::new(false),
            no_reply_limit: AtomicBool::new(false),
            window: Mutex::new(None),
        }
    }

    /// The server's window: discovered, or as found in the last
    /// `WINDOW_KEPT`.
    async fn window(&self) -> Option<ServerWindow> {
        let kept = self.window.lock().ok().and_then(|w| w.clone());
        if let Some((at, window)) = kept
            && at.elapsed() < WINDOW_KEPT
        {
            return window;
        }
        let found = discover::openai_compatible(&self.ep).await;
        if let Ok(mut kept) = self.window.lock() {
            *kept = Some((Instant::now(), found.clone()));
        }
        found
    }

    /// Posts a chat completion request.
    async fn post(
        &self,
        request: Request<'_>,
        stream: bool,
    ) -> Result<(reqwest::Response, String), LlmError> {
        let url = format!("{}/chat/completions", self.ep.base_url);
        let usage = stream && self.usage_in_stream.load(Ordering::Relaxed);
        let sent = self.without_refused(request);
        let error = match self
            .send(&url, request_body(&self.ep, sent, stream, usage))
            .await
        {
            Ok(response) => return Ok((response, url)),
            Err(e) => e,
        };
        // A refusal of an optional field (the one it names, else the
        // constrained reply): asked once more without it, and never again.
        let LlmError::Status {
            status: 400 | 422,
            message,
            ..
        } = &error
        else {
            return Err(error);
        };
        let (flag, refused) = if usage && message.contains("stream_options") {
            (&self.usage_in_stream, false)
        } else if sent.reply_limit.is_some() && message.contains("n_predict") {
            (&self.no_reply_limit, true)
        } else if sent.reply_schema.is_some() {
            (&self.no_reply_schema, true)
        } else {
            return Err(error);
        };
        flag.store(refused, Ordering::Relaxed);
        let usage = usage && self.usage_in_stream.load(Ordering::Relaxed);
        let body = request_body(&self.ep, self.without_refused(sent), stream, usage);
        Ok((self.send(&url, body).await?, url))
    }

    /// `request` without the optional fields this server refused before.
    fn without_refused<'a>(&self, request: Request<'a>) -> Request<'a> {
        Request {
            reply_schema: request
                .reply_schema
                .filter(|_| !self.no_reply_schema.load(Ordering::Relaxed)),
            reply_limit: request
                .reply_limit
                .filter(|_| !self.no_reply_limit.load(Ordering::Relaxed)),
            ..request
        }
    }

    async fn send(&self, url: &str, body: Vec<u8>) -> Result<reqwest::Response, LlmError> {
        http::send(
            self.ep
                .bearer(self.ep.client.post(url))
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body),
            url,
            self.ep.idle,
        )
        .await
    }

    async fn stream(&self, request: Request<'_>, on_text: TextSink<'_>) -> Result<Turn, LlmError> {
        let (response, url) = self.post(request, true).await?;
        let mut events = http::SseBatches::new(response, &url, self.ep.idle);
        let mut state = StreamState::default();
        let mut batch = Vec::new();
        let mut pending = Pending::default();
        let mut seen = 0usize;
        let mut watch = request.stop_repeats.then(RepeatWatch::default);
        loop {
            match events.next(&mut batch).await {
                Ok(true) => {}
                Ok(false) => break,
                // Cut before its first event: the server failed on this
                // request (llama-cpp-python may reset the connection).
                Err(LlmError::StreamCut { .. }) if seen == 0 => {
                    return self.whole(request, on_text).await;
                }
                Err(e) => return Err(e),
            }
            for event in batch.drain(..) {
                seen += 1;
                if event.data.trim() == "[DONE]" {
                    state.done = true;
                    break;
                }
                if event.data.trim().is_empty() {
                    continue;
                }
                let chunk = wire(&url, &event.data)?;
                if let Err(e) = state.absorb(chunk, &mut |d: Delta<'_>| pending.push(d)) {
                    pending.flush(on_text);
                    return Err(e.at(&url));
                }
            }
            if state.done || state.finish.is_some() {
                state.end(&mut |d: Delta<'_>| pending.push(d));
            }
            // One delta per batch of events that arrived together.
            pending.flush(on_text);
            if state.done {
                break;
            }
            // A reply gone round in a loop ends here (dropping the stream
            // closes it, and the server stops generating).
            if let Some(found) = watch.as_mut().and_then(|w| w.look(&state.text)) {
                state.text.truncate(found.keep);
                state.finish = Some(FinishReason::Repeated {
                    period: u32::try_from(found.period).unwrap_or(u32::MAX),
                    copies: u32::try_from(found.copies).unwrap_or(u32::MAX),
                });
                return Ok(state.into_turn());
            }
        }
        if seen == 0 {
            // The server failed before its first event (llama-cpp-python
            // ends the stream empty when the prompt overflows): ask once
            // without streaming, which makes it answer with its real error.
            return self.whole(request, on_text).await;
        }
        if !state.done && state.finish.is_none() {
            return Err(LlmError::StreamCut {
                url,
                detail: "the stream ended before the reply was complete".into(),
            });
        }
        Ok(state.into_turn())
    }

    /// The same request without streaming (`stream: false`).
    async fn whole(&self, request: Request<'_>, on_text: TextSink<'_>) -> Result<Turn, LlmError> {
        let (response, url) = self.post(request, false).await?;
        let bytes = tokio::time::timeout(self.ep.idle, response.bytes())
            .await
            .map_err(|_| LlmError::Timeout {
                url: url.clone(),
                secs: self.ep.idle.as_secs(),
            })?
            .map_err(|e| http::transport_error(&url, &e, self.ep.idle))?;
        let text = String::from_utf8_lossy(&bytes);
        // The whole message reads like one big delta.
        let reply = wire(&url, &text)?;
        if reply.choices.is_empty() && reply.error.is_none() {
            return Err(LlmError::StreamCut {
                url,
                detail: "the server sent an empty stream and then a reply without choices".into(),
            });
        }
        let mut state = StreamState::default();
        state.absorb(reply, on_text).map_err(|e| e.at(&url))?;
        state.end(on_text);
        Ok(state.into_turn())
    }
}

impl WireAdapter for OpenAi {
    fn endpoint(&self) -> &Endpoint {
        &self.ep
    }

    fn authorize(&self, builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        self.ep.bearer(builder)
    }

    fn models_url(&self) -> String {
        format!("{}/models", self.ep.base_url)
    }

    fn run<'a>(
        &'a self,
        request: Request<'a>,
        on_text: TextSink<'a>,
    ) -> BoxFuture<'a, Result<Turn, LlmError>> {
        Box::pin(self.stream(request, on_text))
    }

    fn server_window(&self) -> BoxFuture<'_, Option<ServerWindow>> {
        Box::pin(self.window())
    }

    fn server_sight(&self) -> BoxFuture<'_, super::Sight> {
        Box::pin(super::vision::openai_compatible(&self.ep))
    }

    fn image_rule(&self) -> crate::protocol::ImageRule {
        if self.ep.base_url.contains("api.openai.com") {
            crate::protocol::ImageRule::OpenAi
        } else {
            crate::protocol::ImageRule::Estimate
        }
    }

    fn server_count<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Option<u64>> {
        Box::pin(async move {
            let known = self.tokenizer.lock().map_or(Tokenizer::Missing, |t| *t);
            let (found, counted) = discover::count_tokens(&self.ep, known, text).await;
            if let Ok(mut tokenizer) = self.tokenizer.lock() {
                *tokenizer = found;
            }
            counted
        })
    }

    fn server_prompt_count<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Option<u64>> {
        Box::pin(async move {
            let one = Request {
                max_output_tokens: Some(1),
                ..request
            };
            let url = format!("{}/chat/completions", self.ep.base_url);
            let mut body: serde_json::Value =
                serde_json::from_slice(&request_body(&self.ep, one, false, false)).ok()?;
            body["max_tokens"] = serde_json::json!(1);
            let bytes = serde_json::to_vec(&body).ok()?;
            let response = self.send(&url, bytes).await.ok()?;
            let answer: serde_json::Value = response.json().await.ok()?;
            answer["usage"]["prompt_tokens"].as_u64()
        })
    }
}

#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

#[derive(Default)]
struct StreamState {
    text: String,
    calls: BTreeMap<u64, PartialCall>,
    finish: Option<FinishReason>,
    usage: Option<Usage>,
    done: bool,
    /// A `<think>` block opening the content.
    think: ThinkTags,
}

/// An error the server put inside its stream.
struct InStreamError(Value);

impl InStreamError {
    fn at(self, url: &str) -> LlmError {
        http::in_stream_error(url, &self.0, true)
    }
}

impl StreamState {
    fn absorb(&mut self, chunk: WireChunk<'_>, on_text: TextSink<'_>) -> Result<(), InStreamError> {
        if let Some(error) = chunk.error.filter(|e| !e.is_null()) {
            return Err(InStreamError(error));
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some(Usage {
                input_tokens: usage.prompt_tokens,
                output_tokens: usage.completion_tokens,
                requests: 0,
            });
        }
        for choice in chunk.choices {
            if let Some(delta) = choice.delta {
                let thinking = delta.reasoning_content.or(delta.reasoning);
                if let Some(thinking) = thinking.filter(|t| !t.is_empty()) {
                    on_text(Delta::Reasoning(&thinking));
                }
                if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                    let answer = &mut self.text;
                    self.think.split(&text, &mut |d| {
                        if let Delta::Text(t) = d {
                            answer.push_str(t);
                        }
                        on_text(d);
                    });
                }
                for (position, call) in delta.tool_calls.into_iter().flatten().enumerate() {
                    let partial = self
                        .calls
                        .entry(call.index.unwrap_or(position as u64))
                        .or_default();
                    if let Some(id) = call.id
                        && partial.id.is_empty()
                    {
                        partial.id = id.into_owned();
                    }
                    let Some(function) = call.function else {
                        continue;
                    };
                    if let Some(name) = function.name {
                        partial.name.push_str(&name);
                    }
                    match function.arguments {
                        Some(Value::String(part)) => partial.arguments.push_str(&part),
                        Some(object @ Value::Object(_)) => partial.arguments = object.to_string(),
                        Some(_) | None => {}
                    }
                }
            }
            if let Some(reason) = choice.finish_reason {
                self.finish = Some(match reason.as_ref() {
                    "stop" => FinishReason::Stop,
                    "tool_calls" | "function_call" => FinishReason::ToolCalls,
                    "length" => FinishReason::Length,
                    _ => FinishReason::Other,
                });
            }
        }
        Ok(())
    }

    /// The content ended: text held back for a possible `<think>` tag goes out.
    fn end(&mut self, on_text: TextSink<'_>) {
        let answer = &mut self.text;
        self.think.end(&mut |d| {
            if let Delta::Text(t) = d {
                answer.push_str(t);
            }
            on_text(d);
        });
    }

    fn into_turn(self) -> Turn {
        let tool_calls: Vec<ToolCall> = self
            .calls
            .into_iter()
            .map(|(index, c)| ToolCall {
                tool_call_id: if c.id.is_empty() {
                    format!("call_{index}")
                } else {
                    c.id
                },
                name: c.name,
                arguments: parse_arguments(&c.arguments),
            })
            .collect();
        let finish = match self.finish {
            Some(f) => f,
            None if tool_calls.is_empty() => FinishReason::Stop,
            None => FinishReason::ToolCalls,
        };
        Turn {
            text: self.text,
            tool_calls,
            finish,
            usage: self.usage,
            invalid_action: None,
        }
    }
}

/// `{}` for empty text, the parsed object, or the raw text when it is not JSON.
pub(crate) fn parse_arguments(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return json!({});
    }
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{Message, ToolDef, ToolResult};

    #[test]
    fn interleaved_tool_call_chunks_assemble() {
        let mut state = StreamState::default();
        let mut seen = String::new();
        let mut sink = |d: Delta<'_>| {
            if let Delta::Text(t) = d {
                seen.push_str(t)
            }
        };
        let chunks = [
            json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Let me look"}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "a", "type": "function", "function": {"name": "read_file", "arguments": ""}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "id": "b", "type": "function", "function": {"name": "list_files", "arguments": "{}"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"file_"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "path\": \"a.rs\"}"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
            json!({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}),
        ];
        for c in &chunks {
            let text = c.to_string();
            assert!(state.absorb(wire("u", &text).unwrap(), &mut sink).is_ok());
        }
        let turn = state.into_turn();
        assert_eq!(seen, "Let me look");
        assert_eq!(turn.finish, FinishReason::ToolCalls);
        assert_eq!(turn.tool_calls.len(), 2);
        assert_eq!(turn.tool_calls[0].arguments, json!({"file_path": "a.rs"}));
        assert_eq!(turn.tool_calls[1].name, "list_files");
        assert_eq!(
            turn.usage,
            Some(Usage {
                input_tokens: 10,
                output_tokens: 5,
                requests: 0,
            })
        );
    }

    #[test]
    fn malformed_arguments_are_kept_raw() {
        assert_eq!(
            parse_arguments("{\"a\": "),
            Value::String("{\"a\": ".into())
        );
        assert_eq!(parse_arguments(""), json!({}));
    }

    #[test]
    fn request_body_shape() {
        let messages = [
            Message::User("hi".into()),
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![ToolCall {
                    tool_call_id: "c1".into(),
                    name: "read_file".into(),
                    arguments: json!({"file_path": "a"}),
                }],
            },
            Message::Tool(ToolResult::new(
                "c1".into(),
                "read_file".into(),
                Err(json!({"code": "not_found", "message": "nope"})),
            )),
        ];
        let tools = [ToolDef {
            name: "read_file".into(),
            description: "d".into(),
            parameters: json!({"type": "object"}),
        }];
        let config = crate::config::ProviderConfig {
            kind: crate::config::ProviderKind::Openai,
            base_url: "http://127.0.0.1:1/v1".into(),
            api_key_env: None,
            model: "m".into(),
            tool_protocol: crate::config::ToolProtocol::Native,
            context_window: None,
            max_output_tokens: Some(100),
            price_input_per_mtok: None,
            price_output_per_mtok: None,
            vision: crate::config::Vision::Auto,
        };
        let ep = Endpoint::new("t", &config, None, std::time::Duration::from_secs(1)).unwrap();
        let body: Value = serde_json::from_slice(&request_body(
            &ep,
            Request {
                system: "sys",
                messages: &messages,
                tools: &tools,
                max_output_tokens: Some(100),
                brief_tools: false,
                reply_schema: None,
                reply_limit: None,
                stop_repeats: false,
            },
            true,
            true,
        ))
        .unwrap();
        assert_eq!(
            body["messages"][0],
            json!({"role": "system", "content": "sys"})
        );
        // An empty string, not null, beside tool calls (llama-cpp-python
        // refuses null).
        assert_eq!(body["messages"][2]["content"], "");
        assert_eq!(
            body["messages"][2]["tool_calls"][0]["function"]["arguments"],
            "{\"file_path\":\"a\"}"
        );
        assert_eq!(body["messages"][3]["role"], "tool");
        assert!(
            body["messages"][3]["content"]
                .as_str()
                .unwrap()
                .contains("not_found")
        );
        assert_eq!(body["tools"][0]["function"]["name"], "read_file");
        assert_eq!(body["stream_options"]["include_usage"], true);
        assert_eq!(body["max_tokens"], 100);
    }
}
