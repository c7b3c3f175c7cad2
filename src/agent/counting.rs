//! Token counts from the server's own tokenizer when its streams report no
//! usage (llama-cpp-python): the request's text is counted there once per
//! job, and the estimate is calibrated by it (the factor then persists in
//! the session like one learned from reported usage).

use super::job::Job;
use crate::llm::{Message, ToolDef};

/// The text a request carries: system prompt, messages, tool definitions.
fn request_text(system: &str, messages: &[Message], tools: &str) -> String {
    let mut text = String::with_capacity(system.len() + tools.len());
    text.push_str(system);
    for m in messages {
        text.push('\n');
        match m {
            Message::User(t) => text.push_str(t),
            Message::Assistant {
                text: t,
                tool_calls,
            } => {
                text.push_str(t);
                for c in tool_calls {
                    text.push_str(&c.name);
                    text.push_str(&c.arguments.to_string());
                }
            }
            Message::Tool(result) => text.push_str(result.content()),
        }
    }
    text.push('\n');
    text.push_str(tools);
    text
}

impl Job<'_> {
    /// Asks the server to count the request just answered without usage
    /// (once per job) and calibrates the estimate by its answer.
    pub(super) async fn count_on_server(&mut self, system: &str, tools: &[ToolDef]) {
        if std::mem::replace(&mut self.server_counted, true) {
            return;
        }
        let ctx = self.ctx.clone();
        let Some(provider) = self.route.provider(&ctx) else {
            return;
        };
        let tools = if tools.is_empty() { "" } else { &self.texts.1 };
        let text = request_text(system, self.conv.messages(), tools);
        if let Some(counted) = provider.count_tokens(&text).await {
            let ours = u64::from(self.conv.counter().count(&text));
            self.conv.calibrate(ours, counted);
        }
    }
}
