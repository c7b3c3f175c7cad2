//! Keeping a job's requests inside the context window: finding the window,
//! compacting older turns into a summary the model writes (in requests that
//! offer no tools), learning the real limit from an overflow error, and the
//! clear failure when even a compacted request cannot fit.

use super::emit::JobMsg;
use super::feedback::review_state;
use super::job::{Job, Outcome};
use super::prompt::system_prompt;
use crate::context::compact::{self, Split};
use crate::context::{ContextWindow, WindowSource, cap, message_tokens};
use crate::llm::{Message, Overflow};
use crate::protocol::{CompactReason, EventBody, JobFailure, JobStatus};

/// Summary requests one compaction may make; older parts beyond them are
/// kept as a plain list instead.
const MAX_SUMMARY_REQUESTS: usize = 6;
/// Largest summary asked for, in tokens.
const MAX_SUMMARY_TOKENS: u32 = 4000;
/// After a compaction the conversation should use at most this share of
/// the compaction point, leaving room to work before the next one.
const TARGET_SHARE: f64 = 0.6;

impl Job<'_> {
    /// Finds the provider's window (config, the server, the table) unless
    /// the session knows it, and loads the conversation.
    pub(super) async fn open_context(&mut self) {
        let ctx = self.ctx.clone();
        let Some(provider) = self.route.provider(&ctx, self.spec) else {
            return;
        };
        self.window = match &self.spec.window {
            Some(window) => window.clone(),
            None => {
                let configured = provider.context_window();
                // hybrid_auto: asked within the local request's time; one
                // that ran out is not kept (the next job asks again).
                let (server, asked) = match configured {
                    Some(_) => (None, true),
                    None => match self.probe(provider.discover_window()).await {
                        Some(found) => (found, true),
                        None => (None, false),
                    },
                };
                let window = ContextWindow::resolve(configured, server, provider.model());
                if asked && self.spec.chosen.is_none() {
                    self.emit.send(JobMsg::Window(window.clone()));
                }
                window
            }
        };
        let mut history = self.spec.history.clone();
        super::images::fill(&ctx, &mut history).await;
        crate::context::Conversation::answer_dangling_calls(&mut history);
        let counter = *self.conv.counter();
        self.conv = crate::context::Conversation::new(history, counter, self.tool_cap());
        if let Some(factor) = self.spec.factor {
            self.conv.set_factor(factor);
        }
    }

    pub(super) fn tool_cap(&self) -> u32 {
        self.window
            .tool_output_cap(self.ctx.config.context.max_tool_output_tokens)
    }

    pub(super) fn reserve(&self) -> u64 {
        let configured = self.provider().and_then(|p| p.max_output_tokens());
        u64::from(self.window.output_reserve(configured))
    }

    /// The most a request may carry: the window less the reply's share.
    fn limit(&self) -> u64 {
        u64::from(self.window.tokens).saturating_sub(self.reserve())
    }

    /// Where compaction starts: `compact_at_percent`, or the limit if lower.
    fn trigger(&self) -> u64 {
        let at = u64::from(self.window.tokens)
            * u64::from(self.ctx.config.context.compact_at_percent)
            / 100;
        at.min(self.limit())
    }

    /// Makes the next request fit: compacts past the trigger, and fails
    /// with `context_overflow` when even that cannot bring it under the limit.
    pub(super) async fn fit(
        &mut self,
        with_tools: bool,
        reason: CompactReason,
    ) -> Result<(), Outcome> {
        if self.window_untried() {
            return Ok(());
        }
        self.exact_when_close(with_tools).await;
        let extra = self.extra.of(with_tools);
        if self.conv.estimate(extra) <= self.trigger() {
            return Ok(());
        }
        self.compact(reason, with_tools).await?;
        if self.conv.estimate(extra) > self.limit() {
            return Err(self.overflow_failure(None));
        }
        Ok(())
    }

    /// A remote reached by a fallback whose window nothing states (not
    /// configured, not said by its server, a model the table does not
    /// know): the default is a guess, so the conversation is sent as it is,
    /// neither compacted nor refused for it; a refusal teaches the real
    /// window (`learn`), and from then on it is fitted like any.
    fn window_untried(&self) -> bool {
        self.route.reason().is_some() && self.window.source == WindowSource::Default
    }

    /// Counts with the model's own tokenizer once the conversation passes
    /// half the window (the estimate is good enough below that).
    async fn exact_when_close(&mut self, with_tools: bool) {
        let mut counter = *self.conv.counter();
        let extra = self.extra.of(with_tools);
        if !counter.can_be_exact() || self.conv.estimate(extra) <= u64::from(self.window.tokens) / 2
        {
            return;
        }
        let (system, tools) = (self.texts.0.clone(), self.texts.1.clone());
        let loaded = tokio::task::spawn_blocking(move || {
            counter.load_exact();
            let extra = (
                u64::from(counter.count(&system)),
                u64::from(counter.count(&tools)),
            );
            (counter, extra)
        })
        .await;
        if let Ok((counter, (system, tools))) = loaded {
            self.conv.set_counter(counter);
            self.extra.system = system;
            self.extra.tools = tools;
        }
    }

    /// Replaces older turns by a summary. False when there was nothing to
    /// summarize or it would not have made the conversation smaller.
    pub(super) async fn compact(
        &mut self,
        reason: CompactReason,
        with_tools: bool,
    ) -> Result<bool, Outcome> {
        let extra = self.extra.of(with_tools);
        let before = self.conv.estimate(extra);
        let target = (self.trigger() as f64 * TARGET_SHARE) as u64;
        let Some(split) = self.choose_split(extra, target) else {
            return Ok(false);
        };
        let data = serde_json::json!({"reason": reason, "tokens": before});
        self.observe(crate::config::HookEvent::CompactBefore, None, data);
        let summarized = split.older.len();
        let counter = *self.conv.counter();
        let older: u64 = split
            .older
            .iter()
            .map(|m| u64::from(message_tokens(&counter, m)))
            .sum();
        if reason != CompactReason::Manual && older <= u64::from(self.summary_tokens()) {
            // A summary would be as long as what it replaces.
            return Ok(false);
        }
        let summary = self.summarize(&split.older).await?;
        let review = self
            .bundle
            .as_ref()
            .map(|b| review_state(b, self.conv.counter()));
        let instruction = self.instruction_at.map(|i| self.conv.messages()[i].clone());
        let rebuilt = compact::rebuild(&summary, split, review);
        let mut after = self.conv.clone();
        after.replace(rebuilt);
        if after.estimate(extra) >= before {
            return Ok(false);
        }
        self.conv = after;
        self.instruction_at =
            instruction.and_then(|m| self.conv.messages().iter().position(|x| *x == m));
        self.emit.emit(EventBody::ContextCompacted {
            reason,
            tokens_before: before,
            tokens_after: self.conv.estimate(extra),
            messages_summarized: summarized,
        });
        self.emit.send(JobMsg::Reset(self.conv.messages().to_vec()));
        Ok(true)
    }

    /// The split that keeps the most recent turns while landing under
    /// `target` (the fewest turns if none does).
    fn choose_split(&self, extra: u64, target: u64) -> Option<Split> {
        let counter = *self.conv.counter();
        let summary = u64::from(self.summary_tokens());
        let review = self
            .bundle
            .as_ref()
            .map_or(0, |b| u64::from(counter.count(&review_state(b, &counter))));
        let mut fewest = None;
        for keep in (0..=self.ctx.config.context.keep_recent_turns as usize).rev() {
            let Some(split) = compact::split(self.conv.messages(), self.instruction_at, keep)
            else {
                continue;
            };
            let kept: u64 = split
                .kept
                .iter()
                .chain(&split.instruction)
                .map(|m| u64::from(message_tokens(&counter, m)))
                .sum();
            if self.conv.scaled(extra + summary + review + kept) <= target {
                return Some(split);
            }
            fewest = Some(split);
        }
        fewest
    }

    /// Counted tokens the summary may take.
    fn summary_tokens(&self) -> u32 {
        let tokens = (self.window.tokens / 8).min(MAX_SUMMARY_TOKENS);
        (f64::from(tokens) / self.conv.factor()) as u32
    }

    /// The model's summary of `older`, in as many requests as its window
    /// needs; a plain list where the model gives none.
    async fn summarize(&mut self, older: &[Message]) -> Result<String, Outcome> {
        let counter = *self.conv.counter();
        let budget = self.summary_tokens();
        let words = (f64::from(budget) * self.conv.factor() * 0.7) as u32;
        let prompt = compact::PROMPT.replace("about 600 words", &format!("about {words} words"));
        let fixed = u64::from(counter.count(&prompt)) + u64::from(budget) + 64;
        let room = self.limit().saturating_sub(self.conv.scaled(fixed));
        let chunk_budget = (room as f64 / self.conv.factor()) as u32;
        if chunk_budget < 200 {
            return Ok(compact::mechanical_summary(older, budget, &counter));
        }
        let blocks = compact::transcript(older, self.tool_cap().min(chunk_budget / 3), &counter);
        let chunks = compact::chunks(&blocks, chunk_budget, &counter);
        let skip = chunks.len().saturating_sub(MAX_SUMMARY_REQUESTS);
        let mut summary = (skip > 0).then(|| {
            let dropped = older.len() * skip / chunks.len().max(1);
            compact::mechanical_summary(&older[..dropped], budget, &counter)
        });
        for chunk in &chunks[skip..] {
            let text = compact::summary_request(summary.as_deref(), chunk);
            let messages = [Message::User(text)];
            let counted = fixed + u64::from(message_tokens(&counter, &messages[0]));
            match self.request(&prompt, &messages, &[], false, None).await {
                Ok(turn) => {
                    self.count_usage(&turn, counted);
                    if !turn.text.trim().is_empty() {
                        summary = Some(cap::fit_text(turn.text.trim(), budget, &counter, ""));
                    }
                }
                // The chunk did not fit after all: keep what is known.
                Err(e) if e.overflow().is_some() => {
                    if let Some(o) = e.overflow() {
                        self.learn(o, counted);
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(summary.unwrap_or_else(|| compact::mechanical_summary(older, budget, &counter)))
    }

    /// Usage of a request that is not part of the conversation.
    fn count_usage(&mut self, turn: &crate::llm::Turn, counted: u64) {
        if let Some(u) = turn.usage {
            self.usage.input_tokens += u.input_tokens;
            self.usage.output_tokens += u.output_tokens;
            self.conv.calibrate(counted, u.input_tokens);
        }
    }

    /// What an overflow error teaches: the real window (kept for the rest
    /// of the session) and how the server counts.
    pub(super) fn learn(&mut self, overflow: &Overflow, counted: u64) {
        if let Some(prompt) = overflow.prompt_tokens {
            self.conv.calibrate(counted, u64::from(prompt));
        }
        let provider = self.provider().map_or("the server", |p| p.name());
        let (tokens, detail) = match overflow.limit {
            Some(limit) => (
                limit,
                format!("{provider} said its window is {limit} tokens"),
            ),
            None => {
                // No number given: the refused request was too big, so the
                // window is at most its size.
                let sent = self.conv.scaled(counted).min(u64::from(self.window.tokens));
                let sent = u32::try_from(sent).unwrap_or(u32::MAX);
                (
                    sent,
                    format!("{provider} refused a request of about {sent} tokens"),
                )
            }
        };
        self.window_stated |= overflow.limit.is_some();
        let tokens = tokens.max(crate::config::MIN_CONTEXT_WINDOW / 2);
        self.window = ContextWindow {
            tokens,
            source: WindowSource::Learned(detail),
        };
        self.conv.set_cap(self.tool_cap());
        self.overflowed = Some(overflow.setting);
        // The session keeps its own (local) provider's window, not the
        // remote's a hybrid job fell back to.
        if self.route.reason().is_none() {
            self.emit.send(JobMsg::Window(self.window.clone()));
        }
    }

    /// `job.failed` with `context_overflow`, naming the window, where it
    /// came from and the settings that decide it.
    pub(super) fn overflow_failure(&self, stated_limit: Option<u32>) -> Outcome {
        let provider = self.provider().map_or("", |p| p.name());
        let setting = self.overflowed.unwrap_or(
            "the server's own context setting (llama.cpp: n_ctx; Ollama: num_ctx; vLLM: --max-model-len)",
        );
        let window = stated_limit.unwrap_or(self.window.tokens);
        let (needs, reserve) = (self.conv.estimate(self.extra.of(true)), self.reserve());
        // Most of it the tools' definitions: say so, and whose they are.
        let servers: Vec<&str> = self
            .ctx
            .config
            .mcp_servers
            .keys()
            .map(String::as_str)
            .collect();
        let tools = self.extra.tools;
        let blame = match (tools * 2 > needs, servers.is_empty()) {
            (true, false) => format!(
                " Most of it is the tools' definitions (about {tools} tokens), MCP servers' \
                 tools among them ({}): set enabled = false on a server this root does not \
                 need.",
                servers.join(", ")
            ),
            (true, true) => {
                format!(" Most of it is the tools' definitions (about {tools} tokens).")
            }
            (false, _) => String::new(),
        };
        Outcome::failed(
            format!(
                "the conversation does not fit the model's context window: the next request \
                 needs about {needs} tokens plus {reserve} for the reply, and the window is \
                 {window} tokens ({}); the smallest window that works for it is about {} \
                 tokens.{blame} If the server can take more, raise {setting} and set \
                 context_window under [providers.{provider}]; otherwise use a model with a \
                 larger window or a shorter instruction (AGENTS.md counts too).",
                self.window.source,
                needs + reserve,
            ),
            JobFailure::ContextOverflow,
        )
    }

    /// `/compact`: summarize the session's conversation, nothing else.
    pub(super) async fn compact_on_request(&mut self) -> Outcome {
        let system = system_prompt(&self.ctx.workspace, self.spec.mode);
        self.texts = (system, String::new());
        self.extra.system = u64::from(self.conv.counter().count(&self.texts.0));
        let before = self.conv.estimate(self.extra.of(false));
        let answer = match self.compact(CompactReason::Manual, false).await {
            Err(outcome) => return outcome,
            Ok(true) => format!(
                "Compacted the conversation: {before} → {} tokens.",
                self.conv.estimate(self.extra.of(false))
            ),
            Ok(false) => format!(
                "Nothing to compact: the conversation is {before} tokens, all of it recent."
            ),
        };
        Outcome::Completed {
            answer,
            status: JobStatus::Completed,
            budget_exhausted: false,
        }
    }
}
