//! A job's requests to the model: one request of the conversation fitted
//! into the window (compacting and asking once more when the provider
//! reports an overflow), sent with retries and the fallback of
//! `[routing]`, and its tokens accounted.

use std::time::Duration;

use super::job::{Job, MAX_RETRY_DELAY, Outcome};
use crate::config::SETUP_HINT;
use crate::context::Conversation;
use crate::llm::{Delta, FinishReason, LlmError, Message, Request, RetryPolicy, ToolDef, Turn};
use crate::protocol::{CompactReason, EventBody};

impl Job<'_> {
    /// One request of the conversation, fitted into the window first; an
    /// overflow the provider reports is answered by compacting and asking
    /// once more.
    pub(super) async fn ask(&mut self, system: &str, tools: &[ToolDef]) -> Result<Turn, Outcome> {
        let with_tools = !tools.is_empty();
        self.fit(with_tools, CompactReason::Threshold).await?;
        let (e, counted) = match self.send_conversation(system, tools).await {
            Ok(turn) => return Ok(turn),
            Err(failed) => failed,
        };
        let Some(overflow) = e.overflow().cloned() else {
            return Err(e.into());
        };
        self.learn(&overflow, counted);
        self.compact(CompactReason::Overflow, with_tools).await?;
        self.fit(with_tools, CompactReason::Overflow).await?;
        match self.send_conversation(system, tools).await {
            Ok(turn) => Ok(turn),
            Err((e, counted)) => Err(match e.overflow().cloned() {
                Some(overflow) => {
                    self.learn(&overflow, counted);
                    self.overflow_failure(overflow.limit)
                }
                None => e.into(),
            }),
        }
    }

    /// The conversation as it stands, sent once (with retries); on success
    /// its usage is accounted. A failure comes with the request's count.
    pub(super) async fn send_conversation(
        &mut self,
        system: &str,
        tools: &[ToolDef],
    ) -> Result<Turn, (LlmError, u64)> {
        // `auto`: whether the chat template keeps native tools is found out
        // before the first request that carries them (a one-token probe),
        // so no answer is streamed only to be thrown away.
        if let Some(reason) = self.check_tools(system, tools).await {
            self.say_tools_in_prompt(reason);
        }
        let extra = self.extra.of(!tools.is_empty());
        let counted = self.conv.counted() + extra;
        let room = self.reply_room(self.conv.estimate(extra));
        // Lent out for the request, so it is not copied per request.
        let empty = Conversation::new(Vec::new(), *self.conv.counter(), self.conv.cap());
        let conv = std::mem::replace(&mut self.conv, empty);
        let mut result = self
            .request(system, conv.messages(), tools, true, room)
            .await;
        // `auto` and a server that refuses tools for this model (Ollama):
        // the same request with the tools in the prompt.
        if let Some(why) = result.as_ref().err().and_then(LlmError::tools_unsupported)
            && !tools.is_empty()
        {
            let why = format!("it refused them: \"{why}\"");
            let provider = self.route.provider(&self.ctx, self.spec);
            if provider.is_some_and(|p| p.tools_refused(why.clone())) {
                self.say_tools_in_prompt(why);
                result = self
                    .request(system, conv.messages(), tools, true, room)
                    .await;
            }
        }
        self.conv = conv;
        match result {
            Ok(turn) => {
                if let FinishReason::Repeated { period, copies } = turn.finish {
                    let provider = self.provider_name();
                    self.emit.emit(EventBody::RepeatStopped {
                        provider,
                        chars: period,
                        copies,
                    });
                }
                if turn.usage.is_none_or(|u| u.input_tokens == 0) {
                    self.count_on_server(system, tools).await;
                }
                self.account(&turn, counted, extra);
                Ok(turn)
            }
            Err(e) => Err((e, counted)),
        }
    }

    /// `provider.tools_in_prompt` for the provider the job is on.
    fn say_tools_in_prompt(&mut self, reason: String) {
        let provider = self.provider_name();
        self.emit
            .emit(EventBody::ToolsInPrompt { provider, reason });
    }

    /// The name of the provider the job is on.
    fn provider_name(&self) -> String {
        self.route
            .provider(&self.ctx, self.spec)
            .map_or_else(String::new, |p| p.name().to_string())
    }

    /// The reply's limit in a small window when none is configured: what a
    /// request of `estimate` tokens leaves of it (never below the reserve).
    /// A large window's server sizes replies by itself.
    fn reply_room(&self, estimate: u64) -> Option<u32> {
        let configured = self.provider().and_then(|p| p.max_output_tokens());
        if configured.is_some() || !super::lean::is_lean(self.window.tokens) {
            return None;
        }
        let room = u64::from(self.window.tokens)
            .saturating_sub(estimate)
            .max(self.reserve());
        Some(u32::try_from(room).unwrap_or(u32::MAX))
    }

    /// One model request, retried per policy. With `visible`, streamed
    /// text becomes `llm.delta`; compaction requests are not shown.
    /// `reply_limit`: see `reply_room`.
    pub(super) async fn request(
        &mut self,
        system: &str,
        messages: &[Message],
        tools: &[ToolDef],
        visible: bool,
        reply_limit: Option<u32>,
    ) -> Result<Turn, LlmError> {
        let agent = &self.ctx.config.agent;
        let policy = RetryPolicy {
            max_retries: self
                .local_attempts()
                .map_or(agent.max_retries, |n| n.saturating_sub(1)),
            base_delay: Duration::from_millis(agent.retry_base_delay_ms),
            max_delay: MAX_RETRY_DELAY,
        };
        let ctx = self.ctx.clone();
        let Some(provider) = self.route.provider(&ctx, self.spec) else {
            return Err(LlmError::Client(SETUP_HINT.to_string()));
        };
        let limit = self.local_deadline();
        let reserve = u32::try_from(self.reserve()).unwrap_or(u32::MAX);
        // A small window: tools in one line each, and a looping reply stopped.
        let lean = super::lean::is_lean(self.window.tokens);
        let mut attempt = 1;
        loop {
            // The first attempt's time is what the probes before it left.
            let deadline = self.local_budget();
            self.probed = Duration::ZERO;
            let emit = &mut *self.emit;
            let mut sink = |delta: Delta<'_>| {
                if visible {
                    emit.emit(match delta {
                        Delta::Text(text) => EventBody::LlmDelta {
                            text: text.to_string(),
                            attempt,
                        },
                        Delta::Reasoning(text) => EventBody::LlmReasoning {
                            text: text.to_string(),
                            attempt,
                        },
                    });
                }
            };
            let request = Request {
                system,
                messages,
                tools,
                max_output_tokens: Some(reserve),
                brief_tools: lean,
                reply_schema: None,
                reply_limit,
                stop_repeats: lean,
            };
            self.usage.requests += 1;
            let step = provider.step(request, &mut sink);
            // hybrid_auto: a local request that takes too long falls back.
            let result = within(step, deadline, limit, provider.name()).await;
            match result {
                Ok(turn) => return Ok(turn),
                Err(error) => match policy.delay(attempt, &error) {
                    Some(wait) => {
                        tokio::time::sleep(wait).await;
                        attempt += 1;
                    }
                    None => return Err(error),
                },
            }
        }
    }

    /// Adds a response's tokens to the job's usage, corrects the estimate
    /// by what the provider counted, and reports how full the window is.
    pub(super) fn account(&mut self, turn: &Turn, counted: u64, extra: u64) {
        let counter = *self.conv.counter();
        let reply = u64::from(counter.count(&turn.text))
            + turn
                .tool_calls
                .iter()
                .map(|c| u64::from(counter.count(&c.arguments.to_string())))
                .sum::<u64>();
        let (input, output, estimated) = match turn.usage {
            Some(u) if u.input_tokens > 0 => {
                self.conv.calibrate(counted, u.input_tokens);
                (u.input_tokens, u.output_tokens, false)
            }
            Some(_) | None => (self.conv.scaled(counted), self.conv.scaled(reply), true),
        };
        self.usage.input_tokens += input;
        self.usage.output_tokens += output;
        let context_tokens = self.conv.estimate(extra) + self.conv.scaled(reply);
        self.emit.emit(EventBody::UsageUpdated {
            input_tokens: self.usage.input_tokens,
            output_tokens: self.usage.output_tokens,
            context_tokens,
            context_window: self.window.tokens,
            estimated,
        });
    }
}

/// A request within what is left of its time (`deadline`), a timeout at
/// once when nothing is (the probes before it spent it); `limit` is the
/// configured `hybrid_remote_on_timeout_ms`. No deadline: unbounded.
async fn within(
    step: impl std::future::Future<Output = Result<Turn, LlmError>>,
    deadline: Option<Duration>,
    limit: Option<Duration>,
    provider: &str,
) -> Result<Turn, LlmError> {
    let timed_out = || LlmError::Timeout {
        url: provider.to_string(),
        secs: limit.unwrap_or_default().as_secs(),
    };
    match deadline {
        Some(left) if left.is_zero() => Err(timed_out()),
        Some(left) => tokio::time::timeout(left, step)
            .await
            .unwrap_or_else(|_| Err(timed_out())),
        None => step.await,
    }
}
