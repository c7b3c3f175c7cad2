//! How engine events change the app: streamed text, tool lines, dialogs,
//! the review bundle, apply and rollback outcomes. `on_event` routes each
//! event to a small handler.

use super::{
    App, Badge, Entry, LatestCheckpoint, Load, Overlay, ProviderState, Refusal, ReviewView,
    Streaming, VerifyState, View,
};
use crate::protocol::names::{GIT_ADD, GIT_COMMIT, GIT_PUSH, MCP_PREFIX, RUN_COMMAND};
use crate::protocol::words::counted;
use crate::protocol::{CheckpointKind, DiffBundle, Event, EventBody, JobStatus};
use crate::tui::markdown::code_key;

impl App {
    /// The current job's status as `event` moves it (a review rejected
    /// whole settles it).
    fn follow_status(&mut self, event: &Event) {
        let Some(job) = self.job.as_mut().filter(|j| j.id == event.job_id) else {
            return;
        };
        if let Some(status) = event.body.status() {
            job.status = status;
        }
        if let EventBody::ReviewUpdated { bundle, .. } = &event.body {
            job.status = bundle.settles(job.status);
        }
    }

    /// Applies an engine event.
    pub fn on_event(&mut self, event: &Event) {
        if self.queue_event(event) {
            return;
        }
        self.follow_status(event);
        let streamed = self.streaming;
        if !matches!(
            event.body,
            EventBody::LlmDelta { .. }
                | EventBody::LlmReasoning { .. }
                | EventBody::UsageUpdated { .. }
        ) {
            self.end_stream();
        }
        let (job, body) = (event.job_id.as_str(), &event.body);
        match body {
            EventBody::JobStarted { .. } => self.job_started(body),
            EventBody::ProviderFallback { .. } => self.fallen_back(body),
            EventBody::ToolsInPrompt { provider, reason } => self.moved_tools(provider, reason),
            EventBody::RepeatStopped { .. } => self.repeat_stopped(body),
            EventBody::LlmDelta { text, attempt } => self.answer_streamed(text, *attempt),
            EventBody::LlmReasoning { text, attempt } => self.thinking_streamed(text, *attempt),
            EventBody::ToolCallRequested { .. } => self.tool_requested(body),
            EventBody::ToolCallCompleted { .. } => self.tool_completed(body),
            EventBody::ApprovalRequested { .. } => self.approval_requested(job, body),
            EventBody::ApprovalResolved { approved, by, .. } => {
                self.approval_resolved(*approved, by)
            }
            EventBody::ClarificationRequested { question, .. } => self.asked(job, question),
            EventBody::ReviewUpdated { bundle, error, .. } => {
                self.set_bundle(job, bundle);
                if let Some(error) = error {
                    self.refused(Refusal::Edit(format!("The edit was not kept: {error}")));
                }
            }
            EventBody::DiffGenerated { bundle } => self.set_bundle(job, bundle),
            EventBody::ApplyCompleted { .. } => self.applied(job, body),
            EventBody::VerifyStarted { .. } | EventBody::VerifyCompleted(_) => {
                self.verify_event(job, body)
            }
            EventBody::ApplyFailed { error, .. } => self.refused(Refusal::Apply(format!(
                "Apply failed, nothing was written: {error}"
            ))),
            EventBody::RecoveryCompleted(r) => self
                .transcript
                .push(Entry::Notice(format!("Recovered: {}.", r.summary()))),
            EventBody::McpServers { .. } => self.mcp_servers(body),
            EventBody::CheckpointCreated { .. } => self.checkpoint_created(body),
            EventBody::RollbackCompleted { .. } => self.rolled_back(body),
            EventBody::RollbackFailed { error, .. } => self
                .transcript
                .push(Entry::Error(format!("Rollback failed: {error}"))),
            EventBody::JobCompleted { .. } => self.job_completed(job, body, streamed),
            EventBody::JobFailed { error, code } => self.job_failed(error, *code),
            EventBody::JobCancelled {} => self.transcript.push(Entry::Notice("Cancelled.".into())),
            EventBody::UsageUpdated { .. } => self.usage_updated(body),
            EventBody::ContextCompacted { .. } => self.compacted(job, body),
            EventBody::UserSteer { text } => self.transcript.push(Entry::Steer(text.clone())),
            EventBody::HookCompleted(run) => self.hook_completed(run, &event.ts),
            EventBody::ClarificationReceived { .. }
            | EventBody::JobQueued { .. }
            | EventBody::EditsProposed { .. }
            | EventBody::ApplyStarted { .. }
            | EventBody::HookStarted { .. }
            | EventBody::RollbackStarted { .. } => {}
        }
        // Notes said while the answer streamed follow it once it ended.
        if self.streaming == Streaming::Nothing && !self.deferred.is_empty() {
            self.say_held_notes();
        }
    }

    /// A job failed: said, and an unreachable or degraded provider shown.
    fn job_failed(&mut self, error: &str, code: crate::protocol::JobFailure) {
        if code.unreachable() {
            self.provider_state = ProviderState::Offline;
        } else if code.degraded() {
            self.provider_state = ProviderState::Degraded;
        }
        self.transcript.push(Entry::Error(error.to_string()))
    }

    /// A verify of `job`'s review began or ended: shown beside its hunks.
    fn verify_event(&mut self, job: &str, body: &EventBody) {
        let Some(r) = self.review.as_mut().filter(|r| r.job_id == job) else {
            return;
        };
        match body {
            EventBody::VerifyStarted { command, hunk_ids } => {
                r.verify = VerifyState::Running {
                    command: command.clone(),
                    hunk_ids: hunk_ids.clone(),
                };
            }
            EventBody::VerifyCompleted(result) => r.verified(result),
            _ => {}
        }
    }

    /// The review refused something: said in the review and the chat.
    fn refused(&mut self, refusal: Refusal) {
        self.transcript
            .push(Entry::Error(refusal.text().to_string()));
        self.review_error = Some(refusal);
    }

    /// The model's question, in a dialog.
    fn asked(&mut self, job: &str, question: &str) {
        self.overlay = Overlay::Clarify {
            job_id: job.to_string(),
            question: question.to_string(),
            answer: String::new(),
        };
    }

    fn answer_streamed(&mut self, text: &str, attempt: u32) {
        self.delta(attempt);
        match (self.streaming, self.transcript.last_mut()) {
            (Streaming::Answer, Some(Entry::Assistant(answer))) => answer.push_str(text),
            _ => {
                let mut answer = Box::<super::Answer>::default();
                answer.push_str(text);
                self.transcript.push(Entry::Assistant(answer));
                self.streaming = Streaming::Answer;
            }
        }
        self.request_highlights();
    }

    fn thinking_streamed(&mut self, text: &str, attempt: u32) {
        self.delta(attempt);
        match (self.streaming, self.transcript.last_mut()) {
            (Streaming::Thinking, Some(Entry::Thinking(t))) => t.push_str(text),
            _ => {
                self.end_stream();
                self.transcript.push(Entry::Thinking(text.to_string()));
                self.streaming = Streaming::Thinking;
            }
        }
    }

    pub(super) fn tool_requested(&mut self, body: &EventBody) {
        let EventBody::ToolCallRequested {
            name,
            arguments,
            attached,
            ..
        } = body
        else {
            return;
        };
        // The model's calls count against its budget; agent-tui's reads do not.
        if let Some(job) = self.job.as_mut().filter(|_| !*attached) {
            job.steps += 1;
        }
        // A command reads best as itself.
        let mut summary: String = match arguments["command"].as_str() {
            Some(command) => format!("$ {command}"),
            None => arguments.to_string(),
        }
        .chars()
        .take(120)
        .collect();
        if *attached {
            summary.push_str(" (read for the model: the instruction names it)");
        }
        let detail = serde_json::to_string_pretty(arguments).unwrap_or_default();
        self.transcript.push(Entry::Tool {
            name: name.clone(),
            summary,
            ok: None,
            detail,
        });
    }

    pub(super) fn tool_completed(&mut self, body: &EventBody) {
        let EventBody::ToolCallCompleted {
            name,
            ok,
            result,
            error,
            duration_ms,
            ..
        } = body
        else {
            return;
        };
        let outcome = match (result, error) {
            (_, Some(e)) => format!("error: {}", e["message"].as_str().unwrap_or_default()),
            (Some(r), None) => format!(
                "ok: {}",
                r.to_string().chars().take(300).collect::<String>()
            ),
            (None, None) => "ok".to_string(),
        };
        if let Some(Entry::Tool {
            ok: slot, detail, ..
        }) = self
            .transcript
            .iter_mut()
            .rev()
            .find(|e| matches!(e, Entry::Tool { name: n, ok: None, .. } if n == name))
        {
            *slot = Some(*ok);
            detail.push_str(&format!("\n→ {outcome} ({duration_ms} ms)"));
        }
    }

    fn approval_requested(&mut self, job: &str, body: &EventBody) {
        let EventBody::ApprovalRequested {
            tool_call_id,
            name,
            arguments,
            root,
            cwd,
            sandbox,
            batch,
        } = body
        else {
            return;
        };
        self.overlay = Overlay::Approval {
            job_id: job.to_string(),
            tool_call_id: tool_call_id.clone(),
            name: name.clone(),
            command: call_line(name, arguments),
            cwd: cwd.clone(),
            root: root.clone(),
            sandbox: sandbox.clone(),
            also: batch
                .iter()
                .map(|c| call_line(&c.name, &c.arguments))
                .collect(),
        };
    }

    pub(super) fn approval_resolved(&mut self, approved: bool, by: &str) {
        // Whoever decided, the question is settled.
        if matches!(self.overlay, Overlay::Approval { .. }) {
            self.overlay = Overlay::None;
        }
        let text = match (approved, by) {
            (true, "allowlist") => {
                "Ran without asking: it is on the [exec] allow list.".to_string()
            }
            (true, _) => "You allowed the command once.".to_string(),
            (false, "user") => "You denied the command; the model was told.".to_string(),
            (false, other) => format!("The command was denied ({other})."),
        };
        self.transcript.push(Entry::Notice(text));
    }

    fn applied(&mut self, job: &str, body: &EventBody) {
        let EventBody::ApplyCompleted {
            checkpoint_id,
            files,
            hunk_ids,
            bundle,
            ..
        } = body
        else {
            return;
        };
        self.set_bundle(job, bundle);
        self.review_error = None;
        // An apply may have made files: the tree shows them.
        self.refresh_tree();
        if let Some(cp) = self
            .latest_checkpoint
            .as_mut()
            .filter(|cp| &cp.id == checkpoint_id)
        {
            cp.hunks = bundle
                .files
                .iter()
                .flat_map(|f| f.hunks.iter().map(move |h| (h, &f.file_path)))
                .filter(|(h, _)| hunk_ids.contains(&h.hunk_id))
                .map(|(h, f)| (h.hunk_id.clone(), f.clone()))
                .collect();
        }
        self.transcript
            .push(Entry::Notice(applied_note(checkpoint_id, files, hunk_ids)));
        if !bundle.is_pending() {
            self.view = View::Chat;
            self.review = None;
            self.look_for_other_review();
        }
    }

    /// A rollback ended: its files' badges go, the tree is listed again.
    fn rolled_back(&mut self, body: &EventBody) {
        let EventBody::RollbackCompleted {
            checkpoint_id,
            files,
            ..
        } = body
        else {
            return;
        };
        for file in files {
            self.badges.remove(file);
        }
        self.refresh_tree();
        self.transcript
            .push(Entry::Notice(rolled_back_note(checkpoint_id, files)));
    }

    fn checkpoint_created(&mut self, body: &EventBody) {
        let EventBody::CheckpointCreated {
            checkpoint_id,
            files,
            kind,
        } = body
        else {
            return;
        };
        if *kind == CheckpointKind::Exec {
            // The command may have made files: the tree shows them.
            self.refresh_tree();
            self.transcript
                .push(Entry::Notice(command_changed_note(checkpoint_id, files)));
        }
        self.latest_checkpoint = Some(LatestCheckpoint {
            id: checkpoint_id.clone(),
            files: files.clone(),
            hunks: Vec::new(),
        });
    }

    fn job_completed(&mut self, job: &str, body: &EventBody, streamed: Streaming) {
        let EventBody::JobCompleted {
            answer,
            usage,
            status,
            budget_exhausted,
            provider,
            ..
        } = body
        else {
            return;
        };
        self.cost.add(provider, *usage);
        if self.compacting(job) {
            self.transcript.push(Entry::Notice(answer.clone()));
        } else if streamed == Streaming::Answer
            && let Some(Entry::Assistant(shown)) = self.transcript.last_mut()
        {
            // The stream's text, unless some of it was missed (a reader that
            // fell behind): the completed answer is whole.
            if shown.text() != answer.as_str() && !answer.is_empty() {
                **shown = answer.as_str().into();
                self.request_highlights();
            }
        } else if !answer.is_empty() {
            self.transcript
                .push(Entry::Assistant(answer.as_str().into()));
            self.request_highlights();
        }
        if *budget_exhausted {
            self.transcript.push(Entry::Notice(BUDGET_SPENT.into()));
        }
        self.tokens.add(*usage);
        if *status == JobStatus::AwaitingReview && self.review.is_some() {
            self.view = View::Review;
        }
    }

    /// A streamed piece of attempt `attempt` arrived.
    fn delta(&mut self, attempt: u32) {
        if self.provider_state != ProviderState::Missing {
            self.provider_state = if attempt > 1 {
                ProviderState::Degraded
            } else {
                ProviderState::Online
            };
        }
        if self.streaming != Streaming::Nothing && attempt != self.attempt {
            // A retried request: the failed attempt's text and thinking are void.
            while matches!(
                self.transcript.last(),
                Some(Entry::Assistant(_) | Entry::Thinking(_))
            ) {
                self.transcript.pop();
            }
            self.streaming = Streaming::Nothing;
        }
        self.attempt = attempt;
    }

    /// The stream into the last entry ended: its answer is complete.
    fn end_stream(&mut self) {
        if self.streaming == Streaming::Answer
            && let Some(Entry::Assistant(answer)) = self.transcript.last_mut()
        {
            answer.finish();
            self.request_highlights();
        }
        self.streaming = Streaming::Nothing;
    }

    /// Asks for the colours of the last answer's finished code blocks.
    fn request_highlights(&mut self) {
        let Some(Entry::Assistant(answer)) = self.transcript.last_mut() else {
            return;
        };
        for (lang, code) in answer.take_code() {
            let key = code_key(&lang, &code);
            // Asked once per distinct block, however many answers show it.
            if !self.code_colours.contains_key(&key) && self.highlighting.insert(key) {
                self.highlight_requests.push((key, lang, code));
            }
        }
    }

    /// Adds a whole answer (a resumed session's) to the transcript.
    pub fn push_answer(&mut self, text: &str) {
        self.end_stream();
        self.transcript.push(Entry::Assistant(text.into()));
        self.request_highlights();
    }

    /// A code block's colours arrived.
    pub fn code_highlighted(&mut self, key: u64, lines: Vec<crate::tui::highlight::StyledLine>) {
        self.highlighting.remove(&key);
        self.code_colours.insert(key, lines);
        self.colours_generation += 1;
    }

    fn set_bundle(&mut self, job_id: &str, bundle: &DiffBundle) {
        let cursor = self
            .review
            .as_ref()
            .filter(|r| r.job_id == job_id)
            .map_or(0, |r| r.cursor);
        let before = self.review.as_ref().filter(|r| r.job_id == job_id);
        let review = ReviewView::new(job_id.to_string(), bundle.clone(), cursor, before);
        let n = review.positions().len();
        self.show_review(ReviewView {
            cursor: cursor.min(n.saturating_sub(1)),
            ..review
        });
        self.badge_files(bundle);
    }

    /// The tree's badges for `bundle`'s files. A file only an earlier
    /// review held keeps its mark: that review stays pending in the
    /// session (Ctrl+R reaches it once this one is done).
    pub(super) fn badge_files(&mut self, bundle: &DiffBundle) {
        for file in &bundle.files {
            if let Some(badge) = Badge::of(file) {
                self.badges.insert(file.file_path.clone(), badge);
            }
        }
    }

    /// Asks again for the root's entries and every open folder's (a file
    /// made by an apply, a command or by hand shows up; the tree is lazy,
    /// so this costs one listing per open folder).
    pub(super) fn refresh_tree(&mut self) {
        for (rel, depth) in self.tree.refreshes() {
            let load = Load::TreeDir { rel, depth };
            if !self.loads.contains(&load) {
                self.loads.push(load);
            }
        }
    }

    /// Puts `review` up and asks the event loop to colour its new hunks.
    pub fn show_review(&mut self, review: ReviewView) {
        let hunks = review.uncoloured();
        if !hunks.is_empty() {
            self.loads.push(Load::HunkColours {
                job_id: review.job_id.clone(),
                hunks,
            });
        }
        self.review = Some(review);
    }

    /// Colours of a review's hunks, computed off the UI task.
    pub(super) fn hunks_coloured(
        &mut self,
        job_id: &str,
        colours: Vec<(String, Vec<crate::tui::highlight::StyledLine>)>,
    ) {
        if let Some(review) = self.review.as_mut().filter(|r| r.job_id == job_id) {
            review.colours.extend(colours);
        }
    }
}

/// What the chat says after an answer the tool budget cut short.
pub(super) const BUDGET_SPENT: &str = "The tool budget was spent: this answer came from one last \
     request without tools. Send a follow-up to let the model go on.";

/// What the chat says of an apply (live and resumed).
pub(super) fn applied_note(checkpoint_id: &str, files: &[String], hunk_ids: &[String]) -> String {
    format!(
        "Applied {} to {}; checkpoint {checkpoint_id} (Ctrl+Z rolls back).",
        counted(hunk_ids.len(), "hunk"),
        files.join(", ")
    )
}

/// What the chat says of a rollback (live and resumed).
pub(super) fn rolled_back_note(checkpoint_id: &str, files: &[String]) -> String {
    format!("Rolled back {checkpoint_id}: {}.", files.join(", "))
}

/// What the chat says of a command's checkpoint (live and resumed).
pub(super) fn command_changed_note(checkpoint_id: &str, files: &[String]) -> String {
    format!(
        "The command changed {}; checkpoint {checkpoint_id} (Ctrl+Z rolls back).",
        files.join(", ")
    )
}

/// A call as the user reads it in an approval: the command line it amounts
/// to where there is one, else its name and arguments.
fn call_line(name: &str, arguments: &serde_json::Value) -> String {
    let list = |v: &serde_json::Value| {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|p| p.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default()
    };
    match name {
        RUN_COMMAND => arguments["command"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        GIT_ADD => format!("git add {}", list(&arguments["paths"])),
        GIT_COMMIT => format!(
            "git commit -m {:?}",
            arguments["message"].as_str().unwrap_or_default()
        ),
        GIT_PUSH => format!(
            "git push {}",
            arguments["remote"].as_str().unwrap_or("(upstream)")
        ),
        _ => match name
            .strip_prefix(MCP_PREFIX)
            .and_then(|rest| rest.split_once("__"))
        {
            Some((server, tool)) => format!("MCP server {server} · tool {tool} · {arguments}"),
            None => format!("{name} {arguments}"),
        },
    }
}
