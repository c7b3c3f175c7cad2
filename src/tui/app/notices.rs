//! What the engine says about the provider and the context, as notes in
//! the chat and in the status bar: tools moved into the prompt, a
//! fallback, a reply stopped in a loop, MCP servers that failed, the
//! window's use and compaction.

use super::{App, ContextGauge, Entry, JobPurpose};
use crate::protocol::EventBody;

impl App {
    /// A job began: its provider in the status bar, its images counted.
    pub(super) fn job_started(&mut self, body: &EventBody) {
        let EventBody::JobStarted {
            provider,
            model,
            images,
            ..
        } = body
        else {
            return;
        };
        self.images_counted(images);
        self.attempt = 1;
        self.provider_label = format!("{provider} {model}");
        if self.tools_in_prompt {
            self.provider_label.push_str(" (tools in prompt)");
        }
    }

    /// `auto` found the server's template drops tools: said in the chat
    /// and, from now on, in the status bar.
    pub(super) fn moved_tools(&mut self, provider: &str, reason: &str) {
        self.tools_in_prompt = true;
        self.provider_label.push_str(" (tools in prompt)");
        self.transcript.push(Entry::Notice(format!(
            "{provider}'s chat template drops the tools ({reason}): they are described in \
             the prompt from now on."
        )));
    }

    pub(super) fn fallen_back(&mut self, body: &EventBody) {
        let EventBody::ProviderFallback {
            from, to, reason, ..
        } = body
        else {
            return;
        };
        self.provider_label = to.clone();
        self.transcript.push(Entry::Notice(format!(
            "{from} gave up ({}): the job goes on with {to}, from the same conversation.",
            reason.as_str().replace('_', " ")
        )));
    }

    pub(super) fn repeat_stopped(&mut self, body: &EventBody) {
        let EventBody::RepeatStopped {
            provider,
            chars,
            copies,
        } = body
        else {
            return;
        };
        self.transcript.push(Entry::Notice(format!(
            "{provider}'s reply went round in a loop (the same {chars} characters {copies} \
             times in a row); it was stopped there and kept once."
        )));
    }

    pub(super) fn mcp_servers(&mut self, body: &EventBody) {
        let EventBody::McpServers { servers } = body else {
            return;
        };
        for s in servers
            .iter()
            .filter(|s| s.state == crate::protocol::McpState::Failed)
        {
            self.transcript.push(Entry::Error(format!(
                "MCP server {} failed: {}",
                s.name,
                s.error.as_deref().unwrap_or_default()
            )));
        }
        self.mcp = servers.clone();
    }

    /// Whether `job` is the app's `/compact`.
    pub(super) fn compacting(&self, job: &str) -> bool {
        self.job
            .as_ref()
            .is_some_and(|j| j.id == job && j.purpose == JobPurpose::Compact)
    }

    /// The notes held while an answer streamed go into the chat; the
    /// status bar stops showing the one it showed meanwhile (the chat
    /// has it now, and the job's state is what the bar should say).
    pub(super) fn say_held_notes(&mut self) {
        let shown = self.status_note.as_deref();
        if self
            .deferred
            .iter()
            .any(|e| matches!(e, Entry::Notice(t) | Entry::Error(t) if Some(t.as_str()) == shown))
        {
            self.status_note = None;
        }
        self.transcript.append(&mut self.deferred);
    }

    pub(super) fn usage_updated(&mut self, body: &EventBody) {
        let EventBody::UsageUpdated {
            context_tokens,
            context_window,
            estimated,
            ..
        } = body
        else {
            return;
        };
        self.tokens_estimated |= *estimated;
        self.context = Some(ContextGauge {
            tokens: *context_tokens,
            window: *context_window,
        });
    }

    pub(super) fn compacted(&mut self, job: &str, body: &EventBody) {
        let EventBody::ContextCompacted {
            reason,
            tokens_before,
            tokens_after,
            ..
        } = body
        else {
            return;
        };
        if let Some(gauge) = &mut self.context {
            gauge.tokens = *tokens_after;
        }
        if !self.compacting(job) {
            self.transcript.push(Entry::Notice(format!(
                "Context compacted ({}): {tokens_before} → {tokens_after} tokens; older \
                 turns are now a summary.",
                reason.as_str()
            )));
        }
    }
}
