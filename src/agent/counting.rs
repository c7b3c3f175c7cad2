//! Token counts from the server's own tokenizer when its streams report no
//! usage (llama-cpp-python): the request's text is counted there once per
//! job, and the estimate is calibrated by it (the factor then persists in
//! the session like one learned from reported usage).

use std::time::Instant;

use super::job::Job;
use super::routing::bounded;
use crate::llm::{Message, Provider, ToolDef};

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
            // Counted apart (`Image::tokens`): a tokenizer reads no pixels.
            Message::Image(_) => {}
        }
    }
    text.push('\n');
    text.push_str(tools);
    text
}

/// The server's counts for `auto`'s tools check: its tokenizer's count of
/// the request without the tools and with them, and the prompt it counts
/// for a one-token request that carries them. `None`: it cannot tell.
async fn tool_counts(
    provider: &dyn Provider,
    system: &str,
    messages: &[Message],
    tools: &[ToolDef],
    tools_text: &str,
) -> Option<(u64, u64, u64)> {
    let base = provider
        .count_tokens(&request_text(system, messages, ""))
        .await?;
    let full = provider
        .count_tokens(&request_text(system, messages, tools_text))
        .await
        .unwrap_or(base);
    let request = crate::llm::Request {
        system,
        messages,
        tools,
        max_output_tokens: Some(1),
        brief_tools: false,
        reply_schema: None,
        reply_limit: None,
        stop_repeats: false,
    };
    let counted = provider.prompt_tokens(request).await?;
    Some((base, full, counted))
}

impl Job<'_> {
    /// Asks the server to count the request just answered without usage
    /// (once per job) and calibrates the estimate by its answer.
    pub(super) async fn count_on_server(&mut self, system: &str, tools: &[ToolDef]) {
        if std::mem::replace(&mut self.server_counted, true) {
            return;
        }
        let ctx = self.ctx.clone();
        let Some(provider) = self.route.provider(&ctx, self.spec) else {
            return;
        };
        let tools = if tools.is_empty() { "" } else { &self.texts.1 };
        let text = request_text(system, self.conv.messages(), tools);
        let Some(Some(counted)) = self.probe(provider.count_tokens(&text)).await else {
            return;
        };
        let ours = u64::from(self.conv.counter().count(&text));
        self.conv.calibrate(ours, counted);
    }

    /// `tool_protocol = "auto"`, before the first request that carries
    /// native tools: whether the server's chat template drops them. The
    /// prompt the server counts for the request (one non-streamed request
    /// of one token, whose prompt a llama.cpp server keeps cached for the
    /// real one) is set against its own tokenizer's counts of the request
    /// without and with the tools: below the first plus a quarter of the
    /// tools' share, the tools would never reach the model. Without a
    /// tokenizer nothing can be told and tools stay native. `Some(reason)`
    /// when the run switched to tools in the prompt.
    pub(super) async fn check_tools(&mut self, system: &str, tools: &[ToolDef]) -> Option<String> {
        let ctx = self.ctx.clone();
        let provider = self.route.provider(&ctx, self.spec)?;
        if tools.is_empty() || !provider.supports_native_tools() || !provider.tool_check_pending() {
            return None;
        }
        // hybrid_auto: within the local request's time; when it runs out
        // nothing is settled (tools stay native, and the next job asks).
        let started = Instant::now();
        let counts = tool_counts(provider, system, self.conv.messages(), tools, &self.texts.1);
        let counts = bounded(self.local_budget(), counts).await;
        if self.local_deadline().is_some() {
            self.probed += started.elapsed();
        }
        let (base, full, counted) = match counts {
            Some(Some(counts)) => counts,
            Some(None) => {
                provider.settle_tools(None);
                return None;
            }
            None => return None,
        };
        let tools_share = full.saturating_sub(base);
        if tools_share == 0 || counted >= base + tools_share / 4 {
            provider.settle_tools(None);
            return None;
        }
        let reason = format!(
            "the server counted {counted} prompt tokens for a request of about {full} with \
             the tools, {base} without them"
        );
        provider.settle_tools(Some(reason.clone()));
        Some(reason)
    }
}

/// The tool definitions as the request carries them, for counting.
pub(super) fn tool_text(tools: &[ToolDef]) -> String {
    tools
        .iter()
        .map(|t| format!("{} {} {}", t.name, t.description, t.parameters))
        .collect::<Vec<_>>()
        .join("\n")
}
