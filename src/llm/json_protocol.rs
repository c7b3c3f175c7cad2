//! The JSON tool protocol for models without native tool calling: tools are
//! described in the system prompt, the model replies with a JSON action,
//! and the wrapper turns it back into a normal `Turn`. `tool_protocol =
//! "json"` uses it from the start; `"auto"` once the job finds the
//! server's chat template dropped the native tool definitions.

use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::ServerWindow;
use super::json_action::{self, Action, PromptTool};
use super::json_reply;
use super::text_calls::{self, TextCall};
use super::{Delta, FinishReason, LlmError, Message, Provider, Request, TextSink, ToolCall, Turn};

/// A provider whose tools go through JSON actions (`json`), or natively
/// until the job settles that they must not (`auto`, `settle_tools`): then,
/// for the rest of the run, through JSON actions, the conversation carried
/// over (tool messages become text).
pub struct ToolsWrapper {
    inner: Box<dyn Provider>,
    next_id: AtomicU64,
    state: std::sync::Mutex<AutoState>,
}

/// Where the tools go.
#[derive(Debug, Clone, PartialEq, Eq)]
enum AutoState {
    /// `auto`, not yet checked: native.
    Unchecked,
    Native,
    /// Through JSON actions, and why.
    Json(String),
}

impl ToolsWrapper {
    /// `tool_protocol = "auto"`.
    pub fn auto(inner: Box<dyn Provider>) -> ToolsWrapper {
        ToolsWrapper::with(inner, AutoState::Unchecked)
    }

    /// `tool_protocol = "json"`.
    pub fn json(inner: Box<dyn Provider>) -> ToolsWrapper {
        ToolsWrapper::with(inner, AutoState::Json("tool_protocol = \"json\"".into()))
    }

    fn with(inner: Box<dyn Provider>, state: AutoState) -> ToolsWrapper {
        ToolsWrapper {
            inner,
            next_id: AtomicU64::new(1),
            state: std::sync::Mutex::new(state),
        }
    }

    fn state(&self) -> AutoState {
        self.state.lock().map_or(AutoState::Native, |s| s.clone())
    }
}

impl Provider for ToolsWrapper {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn model(&self) -> &str {
        self.inner.model()
    }

    fn supports_native_tools(&self) -> bool {
        !matches!(self.state(), AutoState::Json(_))
    }

    fn context_window(&self) -> Option<u32> {
        self.inner.context_window()
    }

    fn max_output_tokens(&self) -> Option<u32> {
        self.inner.max_output_tokens()
    }

    fn step<'a>(
        &'a self,
        request: Request<'a>,
        on_text: TextSink<'a>,
    ) -> BoxFuture<'a, Result<Turn, LlmError>> {
        match self.state() {
            AutoState::Json(_) => {
                Box::pin(json_step(&*self.inner, &self.next_id, request, on_text))
            }
            AutoState::Unchecked | AutoState::Native if !request.tools.is_empty() => {
                Box::pin(native_step(&*self.inner, &self.next_id, request, on_text))
            }
            AutoState::Unchecked | AutoState::Native => self.inner.step(request, on_text),
        }
    }

    fn probe(&self) -> BoxFuture<'_, Result<String, LlmError>> {
        self.inner.probe()
    }

    fn discover_window(&self) -> BoxFuture<'_, Option<ServerWindow>> {
        self.inner.discover_window()
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, LlmError>> {
        self.inner.list_models()
    }

    fn sight(&self) -> BoxFuture<'_, super::Sight> {
        self.inner.sight()
    }

    fn images_counted(&self) -> crate::protocol::ImageRule {
        self.inner.images_counted()
    }

    fn count_tokens<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Option<u64>> {
        self.inner.count_tokens(text)
    }

    fn prompt_tokens<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Option<u64>> {
        self.inner.prompt_tokens(request)
    }

    fn tool_check_pending(&self) -> bool {
        self.state() == AutoState::Unchecked
    }

    fn tools_refused(&self, why: String) -> bool {
        let Ok(mut state) = self.state.lock() else {
            return false;
        };
        if matches!(*state, AutoState::Json(_)) {
            return false;
        }
        *state = AutoState::Json(why);
        true
    }

    fn settle_tools(&self, dropped: Option<String>) {
        if let Ok(mut state) = self.state.lock()
            && *state == AutoState::Unchecked
        {
            *state = dropped.map_or(AutoState::Native, AutoState::Json);
        }
    }
}

/// One request through `inner` with the tools described in the prompt and
/// the reply's JSON action turned back into a tool call.
async fn json_step(
    inner: &dyn Provider,
    next_id: &AtomicU64,
    request: Request<'_>,
    on_text: TextSink<'_>,
) -> Result<Turn, LlmError> {
    let prompt_tools: Vec<PromptTool<'_>> = request
        .tools
        .iter()
        .map(|t| PromptTool {
            name: &t.name,
            description: &t.description,
            parameters: &t.parameters,
        })
        .collect();
    let system = if prompt_tools.is_empty() {
        request.system.to_string()
    } else {
        let tools = if request.brief_tools {
            json_action::render_brief_tool_instructions(&prompt_tools)
        } else {
            json_action::render_tool_instructions(&prompt_tools)
        };
        format!("{}\n\n{tools}", request.system)
    };
    let messages = as_plain_messages(request.messages);
    // A small window's model is held to the shapes a reply may take (only
    // `{"answer": ...}` when no tool is offered).
    let shapes = request
        .brief_tools
        .then(|| json_reply::reply_shapes(request.tools));
    let plain = Request {
        system: &system,
        messages: &messages,
        tools: &[],
        max_output_tokens: request.max_output_tokens,
        brief_tools: false,
        reply_schema: shapes.as_ref(),
        reply_limit: request.reply_limit,
        stop_repeats: request.stop_repeats,
    };
    // The reply may be a JSON action, which is not for the user's eyes:
    // hold the text back until it is known to be the answer.
    let mut thinking = String::new();
    let mut held = |d: Delta<'_>| {
        if let Delta::Reasoning(t) = d {
            thinking.push_str(t);
        }
    };
    let turn = inner.step(plain, &mut held).await?;
    if !thinking.is_empty() {
        on_text(Delta::Reasoning(&thinking));
    }
    if request.tools.is_empty() {
        let text = match shapes {
            Some(_) => json_reply::unwrap_answer(&turn.text),
            None => turn.text,
        };
        on_text(Delta::Text(&text));
        return Ok(Turn { text, ..turn });
    }
    Ok(
        match json_action::extract_action(&json_reply::unwrap_answer(&turn.text)) {
            Action::Call { name, arguments } => Turn {
                text: turn.text.clone(),
                ..call_turn(turn, "json_call", next_id, name, arguments)
            },
            Action::Final(answer) => {
                on_text(Delta::Text(&answer));
                Turn {
                    text: answer,
                    ..turn
                }
            }
            Action::Invalid(problem) => Turn {
                invalid_action: Some(json_action::correction_message(&problem)),
                ..turn
            },
        },
    )
}

/// One request with native tools whose reply, when the model wrote a call
/// as text instead (the server passed it on as content), is read back as
/// that call; the text is held back until it is known not to be one.
async fn native_step(
    inner: &dyn Provider,
    next_id: &AtomicU64,
    request: Request<'_>,
    on_text: TextSink<'_>,
) -> Result<Turn, LlmError> {
    let tools = request.tools;
    let mut gate = text_calls::Gate::new(request.brief_tools);
    let mut gated = |d: Delta<'_>| match d {
        Delta::Text(t) => {
            if let Some(shown) = gate.pass(t) {
                on_text(Delta::Text(&shown));
            }
        }
        Delta::Reasoning(_) => on_text(d),
    };
    let turn = inner.step(request, &mut gated).await?;
    let Some(held) = gate.held() else {
        return Ok(turn);
    };
    let offered: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    if turn.tool_calls.is_empty() {
        match text_calls::read_call(&turn.text, &offered) {
            TextCall::Call(name, arguments) => {
                tracing::debug!(tool = %name, "a tool call written as text read back as a call");
                return Ok(call_turn(turn, "text_call", next_id, name, arguments));
            }
            TextCall::Broken(problem) => {
                let correction = format!(
                    "[agent-tui] Your tool call could not be read: {problem}. Call the tool \
                     again, its arguments one valid JSON object."
                );
                return Ok(Turn {
                    invalid_action: Some(correction),
                    ..turn
                });
            }
            TextCall::Answer => {}
        }
    }
    if !held.is_empty() {
        on_text(Delta::Text(&held));
    }
    Ok(turn)
}

/// `turn` as the one call `name(arguments)` read from its text (the text
/// itself dropped), its id `<prefix>_<n>`.
fn call_turn(
    turn: Turn,
    prefix: &str,
    next_id: &AtomicU64,
    name: String,
    arguments: Value,
) -> Turn {
    Turn {
        text: String::new(),
        tool_calls: vec![ToolCall {
            tool_call_id: format!("{prefix}_{}", next_id.fetch_add(1, Ordering::Relaxed)),
            name,
            arguments,
        }],
        finish: FinishReason::ToolCalls,
        ..turn
    }
}

/// The conversation without native tool messages: calls become the JSON the
/// model wrote, results become user messages.
fn as_plain_messages(messages: &[Message]) -> Vec<Message> {
    messages
        .iter()
        .map(|m| match m {
            Message::User(_) | Message::Image(_) => m.clone(),
            Message::Assistant { text, tool_calls } => {
                let text = match tool_calls.first() {
                    Some(call) if text.trim().is_empty() => {
                        json!({"tool": call.name, "arguments": call.arguments}).to_string()
                    }
                    Some(_) | None => text.clone(),
                };
                Message::Assistant {
                    text,
                    tool_calls: Vec::new(),
                }
            }
            Message::Tool(result) => Message::User(format!(
                "Result of tool `{}` (call {}):\n{}",
                result.name,
                result.tool_call_id,
                result.content()
            )),
        })
        .collect()
}
