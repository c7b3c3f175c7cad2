//! A session read back from the store (`--continue`, `--resume`, the
//! picker), shown as it looked live: each instruction in the user's own
//! words with the files it pinned, tool-call lines, answers, apply,
//! rollback and command notices, in the order they happened; the pins of
//! the last instruction come back, and its pending review.

use std::collections::HashMap;

use super::events::{BUDGET_SPENT, applied_note, command_changed_note, rolled_back_note};
use super::pinned::split_pinned;
use super::{App, Entry, Load, ReviewView};
use crate::protocol::{CheckpointKind, Event, EventBody, JobSummary, Transcript};

/// A session as the engine gave it: its jobs and their stored events.
#[derive(Debug, Clone, PartialEq)]
pub struct Resumed {
    pub transcript: Transcript,
    /// Every job's stored events (each names its job), in any order.
    pub events: Vec<Event>,
}

/// One thing of the session's timeline.
enum Step<'a> {
    /// The instruction of a job.
    Prompt(&'a JobSummary),
    Event(&'a JobSummary, &'a Event),
    /// A job's answer when no stored `job.completed` carries it.
    Answer(&'a JobSummary),
}

/// The compaction job's prompt (not an instruction of the user's).
const COMPACT: &str = "/compact";

impl App {
    /// Shows a session read from the store: its conversation, the pins of
    /// its last instruction and its newest pending review.
    pub fn show_session(&mut self, s: &Resumed) {
        let t = &s.transcript;
        self.session = Some(t.session_id.clone());
        // A replayed tool call counts against no running job.
        let job = self.job.take();
        for step in timeline(t, &s.events) {
            self.replay(step);
        }
        self.job = job;
        self.queued = t
            .jobs
            .iter()
            .filter(|j| j.status == Some(crate::protocol::JobStatus::Queued))
            .map(|j| super::queue::QueuedMessage {
                job_id: j.job_id.clone(),
                text: j.prompt.clone(),
            })
            .collect();
        if let Some(last) = t.jobs.iter().rev().find(|j| j.prompt != COMPACT) {
            self.pinned = split_pinned(&last.prompt).1;
            if !self.pinned.is_empty() {
                // A pinned file deleted since is not sent again unsaid.
                let files = self
                    .pinned
                    .iter()
                    .filter(|p| !crate::protocol::pins::is_page(p));
                self.loads.push(Load::GonePins(files.cloned().collect()));
            }
        }
        let pending: Vec<&JobSummary> = t
            .jobs
            .iter()
            .rev()
            .filter(|j| j.bundle.as_ref().is_some_and(|b| b.is_pending()))
            .collect();
        if let Some(job) = pending.first()
            && let Some(bundle) = &job.bundle
        {
            self.badge_files(bundle);
            self.show_review(ReviewView::new(job.job_id.clone(), bundle.clone(), 0, None));
            self.transcript.push(Entry::Notice(match pending.len() {
                1 => "A review is pending: Ctrl+R opens it.".into(),
                n => format!(
                    "{n} reviews are pending: Ctrl+R opens the newest, and the next once it is done."
                ),
            }));
        }
    }

    /// Pins of a resumed session whose files are gone: dropped, and said.
    pub(super) fn unpin_gone(&mut self, gone: &[String]) {
        for pin in gone {
            if let Some(at) = self.pinned.iter().position(|p| p == pin) {
                self.pinned.remove(at);
                self.transcript.push(Entry::Notice(format!(
                    "{pin} is pinned no more: it is gone."
                )));
            }
        }
    }

    /// One step of a resumed session, as the chat showed it live.
    fn replay(&mut self, step: Step<'_>) {
        match step {
            Step::Prompt(job) => {
                let (text, pinned) = split_pinned(&job.prompt);
                self.transcript.push(Entry::User(text.to_string()));
                if !pinned.is_empty() {
                    self.transcript.push(Entry::Pinned(pinned));
                }
                self.show_images(&job.images);
            }
            Step::Answer(job) => {
                if let Some(answer) = job.answer.as_deref().filter(|a| !a.is_empty()) {
                    self.push_answer(answer);
                }
            }
            Step::Event(job, event) => {
                self.replay_badges(&event.body);
                self.replay_event(job, &event.body);
            }
        }
    }

    /// The tree's badges as a stored event set them live: a review's
    /// state marks its files (applied ✓, rejected ✗, pending ●), a
    /// rollback takes its files' marks away.
    fn replay_badges(&mut self, body: &EventBody) {
        match body {
            EventBody::DiffGenerated { bundle }
            | EventBody::ReviewUpdated { bundle, .. }
            | EventBody::ApplyCompleted { bundle, .. } => self.badge_files(bundle),
            EventBody::RollbackCompleted { files, .. } => {
                for file in files {
                    self.badges.remove(file);
                }
            }
            _ => {}
        }
    }

    /// What a stored event put in the chat (nothing else of the app changes).
    fn replay_event(&mut self, job: &JobSummary, body: &EventBody) {
        let note = |text: String| Entry::Notice(text);
        match body {
            EventBody::ToolCallRequested { .. } => self.tool_requested(body),
            EventBody::ToolCallCompleted { .. } => self.tool_completed(body),
            EventBody::ApprovalResolved { approved, by, .. } => {
                self.approval_resolved(*approved, by)
            }
            EventBody::ApplyCompleted {
                checkpoint_id,
                files,
                hunk_ids,
                ..
            } => self
                .transcript
                .push(note(applied_note(checkpoint_id, files, hunk_ids))),
            EventBody::RollbackCompleted {
                checkpoint_id,
                files,
                ..
            } => self
                .transcript
                .push(note(rolled_back_note(checkpoint_id, files))),
            EventBody::CheckpointCreated {
                checkpoint_id,
                files,
                kind: CheckpointKind::Exec,
            } => self
                .transcript
                .push(note(command_changed_note(checkpoint_id, files))),
            EventBody::RollbackFailed { error, .. } => self
                .transcript
                .push(Entry::Error(format!("Rollback failed: {error}"))),
            EventBody::JobFailed { error, .. } => {
                self.transcript.push(Entry::Error(error.clone()));
            }
            EventBody::JobCancelled {} => self.transcript.push(note("Cancelled.".into())),
            EventBody::UserSteer { text } => self.transcript.push(Entry::Steer(text.clone())),
            EventBody::HookCompleted(run) => self.hook_replayed(run),
            EventBody::JobCompleted {
                answer,
                budget_exhausted,
                ..
            } => {
                let answer = job.answer.as_deref().unwrap_or(answer);
                if !answer.is_empty() {
                    self.push_answer(answer);
                }
                if *budget_exhausted {
                    self.transcript.push(note(BUDGET_SPENT.into()));
                }
            }
            // Live state (dialogs, the review, usage, the queue) or text not stored.
            EventBody::CheckpointCreated { .. }
            | EventBody::JobQueued { .. }
            | EventBody::JobStarted { .. }
            | EventBody::LlmDelta { .. }
            | EventBody::LlmReasoning { .. }
            | EventBody::ApprovalRequested { .. }
            | EventBody::ClarificationRequested { .. }
            | EventBody::ClarificationReceived { .. }
            | EventBody::EditsProposed { .. }
            | EventBody::DiffGenerated { .. }
            | EventBody::ReviewUpdated { .. }
            | EventBody::ApplyStarted { .. }
            | EventBody::VerifyStarted { .. }
            | EventBody::VerifyCompleted(_)
            | EventBody::ApplyFailed { .. }
            | EventBody::McpServers { .. }
            | EventBody::RecoveryCompleted(_)
            | EventBody::RollbackStarted { .. }
            | EventBody::ToolsInPrompt { .. }
            | EventBody::RepeatStopped { .. }
            | EventBody::ProviderFallback { .. }
            | EventBody::UsageUpdated { .. }
            | EventBody::HookStarted { .. }
            | EventBody::ContextCompacted { .. } => {}
        }
    }
}

/// The session's steps in the order they happened: each job's prompt at
/// its start, its events by time (an apply or a rollback recorded under an
/// earlier job falls where it happened), its answer where it completed.
fn timeline<'a>(t: &'a Transcript, events: &'a [Event]) -> Vec<Step<'a>> {
    let mut of_job: HashMap<&str, Vec<&Event>> = HashMap::new();
    for e in events {
        of_job.entry(e.job_id.as_str()).or_default().push(e);
    }
    let mut steps: Vec<(&str, Step<'a>)> = Vec::new();
    let mut at = "";
    for job in &t.jobs {
        let mut mine = of_job.remove(job.job_id.as_str()).unwrap_or_default();
        mine.sort_by_key(|e| e.cursor);
        let started = mine
            .iter()
            .any(|e| matches!(e.body, EventBody::JobStarted { .. }));
        if !started
            && mine
                .iter()
                .any(|e| matches!(e.body, EventBody::JobQueued { .. }))
        {
            // Queued and never started: in the queue, or taken back.
            continue;
        }
        if let Some(start) = mine
            .iter()
            .find(|e| matches!(e.body, EventBody::JobStarted { .. }))
        {
            at = start.ts.as_str();
        }
        steps.push((at, Step::Prompt(job)));
        let mut completed = false;
        for e in mine {
            completed |= matches!(e.body, EventBody::JobCompleted { .. });
            if !matches!(e.body, EventBody::JobStarted { .. }) {
                at = at.max(e.ts.as_str());
                steps.push((e.ts.as_str(), Step::Event(job, e)));
            }
        }
        if !completed {
            steps.push((at, Step::Answer(job)));
        }
    }
    // Stable: what happened at once keeps the jobs' order.
    steps.sort_by(|a, b| a.0.cmp(b.0));
    steps.into_iter().map(|(_, step)| step).collect()
}
