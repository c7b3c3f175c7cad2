//! The conversation a job sends, with a token count kept per message so the
//! size of the next request is known after counting only what is new. Tool
//! results are capped as they come in; the counts are scaled by what the
//! provider reports it actually counted.

use crate::llm::{Message, ToolCall};

use super::cap;
use super::tokens::TokenCounter;

/// Tokens of framing per message (role, separators), as chat templates add.
const PER_MESSAGE: u32 = 4;
/// Tokens of framing per tool call (id, type, name keys).
const PER_CALL: u32 = 8;
/// Bounds of the correction factor learned from reported usage. Real
/// tokenizers stay above half the estimate; a server that reports less
/// (cached tokens left out, a proxy's fake numbers) is not believed further.
const FACTOR_RANGE: (f64, f64) = (0.5, 4.0);

/// Messages plus their token counts.
#[derive(Debug, Clone)]
pub struct Conversation {
    messages: Vec<Message>,
    sizes: Vec<u32>,
    total: u64,
    counter: TokenCounter,
    /// Most tokens of one tool result the model sees.
    cap: u32,
    /// Reported tokens per counted token, from the last response's usage.
    factor: f64,
}

impl Conversation {
    /// Counts (and caps) every message once.
    pub fn new(messages: Vec<Message>, counter: TokenCounter, cap: u32) -> Conversation {
        let mut c = Conversation {
            messages: Vec::with_capacity(messages.len()),
            sizes: Vec::with_capacity(messages.len()),
            total: 0,
            counter,
            cap,
            factor: 1.0,
        };
        for m in messages {
            c.push(m);
        }
        c
    }

    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    pub fn len(&self) -> usize {
        self.messages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    pub fn counter(&self) -> &TokenCounter {
        &self.counter
    }

    pub fn cap(&self) -> u32 {
        self.cap
    }

    /// Adds a message, capping a tool result to what the model may see;
    /// only this message is counted.
    pub fn push(&mut self, mut message: Message) -> &Message {
        if let Message::Tool(result) = &mut message {
            result.content = cap::shown(&result.outcome(), self.cap, &self.counter);
        }
        let size = message_tokens(&self.counter, &message);
        self.total += u64::from(size);
        self.sizes.push(size);
        self.messages.push(message);
        &self.messages[self.messages.len() - 1]
    }

    /// Replaces every message (after a compaction).
    pub fn replace(&mut self, messages: Vec<Message>) {
        self.messages.clear();
        self.sizes.clear();
        self.total = 0;
        for m in messages {
            self.push(m);
        }
    }

    /// A new cap (the window changed): results are cut again and recounted.
    pub fn set_cap(&mut self, cap: u32) {
        if cap != self.cap {
            self.cap = cap;
            let messages = std::mem::take(&mut self.messages);
            self.replace(messages);
        }
    }

    /// Counts with `counter` from now on, recounting what is there (and
    /// forgetting a correction learned for the old counts).
    pub fn set_counter(&mut self, counter: TokenCounter) {
        self.counter = counter;
        self.factor = 1.0;
        let messages = std::mem::take(&mut self.messages);
        self.replace(messages);
    }

    /// Counted tokens of the messages (before the usage correction).
    pub fn counted(&self) -> u64 {
        self.total
    }

    /// Counted tokens of one message.
    pub fn size_of(&self, index: usize) -> u32 {
        self.sizes.get(index).copied().unwrap_or(0)
    }

    /// Estimated tokens of a request carrying these messages plus `extra`
    /// counted tokens (system prompt, tool definitions).
    pub fn estimate(&self, extra: u64) -> u64 {
        self.scaled(self.total + extra)
    }

    /// Counted tokens converted into the provider's tokens.
    pub fn scaled(&self, counted: u64) -> u64 {
        (counted as f64 * self.factor).ceil() as u64
    }

    /// Learns from a response: the request we counted as `counted` tokens
    /// was `reported` tokens to the provider.
    pub fn calibrate(&mut self, counted: u64, reported: u64) {
        if counted > 0 && reported > 0 {
            let factor = reported as f64 / counted as f64;
            self.factor = factor.clamp(FACTOR_RANGE.0, FACTOR_RANGE.1);
        }
    }

    pub fn factor(&self) -> f64 {
        self.factor
    }

    /// Starts from a factor learned earlier in the session.
    pub fn set_factor(&mut self, factor: f64) {
        self.factor = factor.clamp(FACTOR_RANGE.0, FACTOR_RANGE.1);
    }

    /// Gives every tool call a result: a job that stopped mid-turn leaves
    /// calls unanswered, which providers refuse to see.
    pub fn answer_dangling_calls(messages: &mut Vec<Message>) {
        let mut i = 0;
        while i < messages.len() {
            if let Message::Assistant { tool_calls, .. } = &messages[i] {
                let calls: Vec<ToolCall> = tool_calls.clone();
                let mut j = i + 1;
                let mut answered = Vec::new();
                while let Some(Message::Tool(r)) = messages.get(j) {
                    answered.push(r.tool_call_id.clone());
                    j += 1;
                }
                for call in calls.iter().filter(|c| !answered.contains(&c.tool_call_id)) {
                    messages.insert(
                        j,
                        Message::Tool(crate::llm::ToolResult::new(
                            call.tool_call_id.clone(),
                            call.name.clone(),
                            Err(serde_json::json!({
                                "code": "not_run",
                                "message": "the job ended before this call ran"
                            })),
                        )),
                    );
                    j += 1;
                }
                i = j;
            } else {
                i += 1;
            }
        }
    }
}

/// Counted tokens of one message as sent.
pub fn message_tokens(counter: &TokenCounter, message: &Message) -> u32 {
    PER_MESSAGE
        + match message {
            Message::User(text) => counter.count(text),
            Message::Assistant { text, tool_calls } => {
                counter.count(text)
                    + tool_calls
                        .iter()
                        .map(|c| {
                            PER_CALL
                                + counter.count(&c.name)
                                + counter.count(&c.tool_call_id)
                                + counter.count(&arguments_text(&c.arguments))
                        })
                        .sum::<u32>()
            }
            Message::Tool(result) => {
                counter.count(&result.tool_call_id) + counter.count(result.content())
            }
            Message::Image(image) => image.tokens,
        }
}

fn arguments_text(arguments: &serde_json::Value) -> std::borrow::Cow<'_, str> {
    match arguments {
        serde_json::Value::String(raw) => raw.as_str().into(),
        other => other.to_string().into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolResult;
    use serde_json::json;

    fn call(id: &str) -> ToolCall {
        ToolCall {
            tool_call_id: id.into(),
            name: "read_file".into(),
            arguments: json!({"file_path": "a.txt"}),
        }
    }

    fn result(id: &str, text: &str) -> Message {
        Message::Tool(ToolResult::new(
            id.into(),
            "read_file".into(),
            Ok(json!({"content": text})),
        ))
    }

    #[test]
    fn counts_are_kept_per_message_and_summed() {
        let counter = TokenCounter::estimating();
        let mut c = Conversation::new(vec![Message::User("hello there".into())], counter, 1000);
        let first = c.counted();
        assert_eq!(first, u64::from(message_tokens(&counter, &c.messages()[0])));
        c.push(Message::Assistant {
            text: String::new(),
            tool_calls: vec![call("c1")],
        });
        c.push(result("c1", "some file text"));
        let sum: u64 = (0..c.len()).map(|i| u64::from(c.size_of(i))).sum();
        assert_eq!(c.counted(), sum);
        assert!(c.counted() > first);
    }

    #[test]
    fn tool_results_are_capped_when_pushed_and_again_when_the_cap_changes() {
        let big = "word ".repeat(20_000);
        let mut c = Conversation::new(vec![result("c1", &big)], TokenCounter::estimating(), 2000);
        assert!(c.size_of(0) <= 2000 + 64, "{}", c.size_of(0));
        let Message::Tool(r) = &c.messages()[0] else {
            panic!()
        };
        assert!(r.content().contains("cut from the middle"));
        assert_eq!(
            r.result.as_ref().unwrap()["content"],
            big.as_str(),
            "the whole result is kept"
        );
        c.set_cap(500);
        assert!(c.size_of(0) <= 500 + 64);
    }

    #[test]
    fn usage_scales_the_estimate() {
        let mut c = Conversation::new(
            vec![Message::User("x".repeat(3200))],
            TokenCounter::estimating(),
            100,
        );
        let counted = c.estimate(0);
        c.calibrate(counted, counted / 2);
        assert_eq!(c.estimate(0), counted / 2);
        c.calibrate(10, 1_000_000);
        assert_eq!(c.factor(), FACTOR_RANGE.1, "clamped");
    }

    #[test]
    fn unanswered_calls_get_a_not_run_result() {
        let mut messages = vec![
            Message::User("go".into()),
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![call("a"), call("b")],
            },
            result("a", "x"),
            Message::User("next".into()),
        ];
        Conversation::answer_dangling_calls(&mut messages);
        assert_eq!(messages.len(), 5);
        let Message::Tool(r) = &messages[3] else {
            panic!("{messages:?}")
        };
        assert_eq!(r.tool_call_id, "b");
        assert!(!r.ok);
    }
}
