//! Messages queued while a job runs (SPEC 19): sent to the engine at once
//! (it keeps them, in the store too, and starts each when the session's
//! running job ends), shown above the input, and taken back to be edited
//! until they start.

use super::{App, Entry, JobPurpose, JobView};
use crate::protocol::{Command, Event, EventBody, JobStatus};

/// A message the engine holds until the running job ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedMessage {
    pub job_id: String,
    pub text: String,
}

impl App {
    /// `Ctrl+Q`: the input waits for the running job to end (sent at once
    /// when nothing runs).
    pub(super) fn queue(&mut self) -> Vec<Command> {
        if !self.job_running() {
            return self.send();
        }
        let text = self.input.lines().join("\n");
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Vec::new();
        }
        let prompt = super::pinned::with_pinned(trimmed, &self.pinned);
        let images = self.attached.take(&text, &self.paths);
        self.history.push(text.clone());
        self.set_input("");
        let job_id = self.fresh_job_id();
        self.queued.push(QueuedMessage {
            job_id: job_id.clone(),
            text: prompt.clone(),
        });
        self.status_note = Some(format!(
            "Queued: it runs when this job ends ({} waiting; Alt+↑ takes the last back).",
            self.queued.len()
        ));
        vec![Command::StartJob {
            session: self.session_ref(),
            job_id,
            prompt,
            mode: self.mode,
            max_tool_calls: None,
            choice: self.choice.clone(),
            images,
            workspace: None,
        }]
    }

    /// `Alt+↑`: the last queued message comes back into the input to be
    /// edited (the engine drops it; Ctrl+Q queues it again).
    pub(super) fn unqueue(&mut self) -> Vec<Command> {
        let Some(last) = self.queued.pop() else {
            self.status_note = Some("Nothing is queued.".into());
            return Vec::new();
        };
        let (text, _) = super::pinned::split_pinned(&last.text);
        let mut back = text.to_string();
        let typed = self.input.lines().join("\n");
        if !typed.trim().is_empty() {
            back = format!("{back}\n{typed}");
        }
        self.set_input(&back);
        self.status_note = Some("Taken back from the queue: edit it, then Ctrl+Q or Enter.".into());
        vec![Command::Cancel {
            job_id: last.job_id,
        }]
    }

    /// The chat's last `you ›` entry for `prompt` (and its pins) goes: the
    /// engine queued that message instead of starting it.
    fn take_back_shown(&mut self, prompt: &str) {
        let (text, _) = super::pinned::split_pinned(prompt);
        if let Some(at) = self
            .transcript
            .iter()
            .rposition(|e| matches!(e, Entry::User(t) if t == text))
        {
            self.transcript.remove(at);
            if matches!(self.transcript.get(at), Some(Entry::Pinned(_))) {
                self.transcript.remove(at);
            }
        }
        if self
            .job
            .as_ref()
            .is_some_and(|j| j.status == JobStatus::Queued)
        {
            self.job = None;
        }
    }

    /// How a queued job's events change the queue; true if `event` was one.
    pub(super) fn queue_event(&mut self, event: &Event) -> bool {
        let at = self.queued.iter().position(|q| q.job_id == event.job_id);
        match (&event.body, at) {
            (EventBody::JobQueued { prompt, .. }, Some(i)) => {
                self.queued[i].text.clone_from(prompt);
                true
            }
            (EventBody::JobQueued { prompt, .. }, None) => {
                if self.job.as_ref().is_some_and(|j| j.id == event.job_id)
                    || self.sent_last.as_deref() == Some(event.job_id.as_str())
                {
                    // Sent as the next job, but the session had one running
                    // (another terminal's, or one queued before a restart):
                    // it waits, and the chat shows it when it starts.
                    self.take_back_shown(prompt);
                }
                self.queued.push(QueuedMessage {
                    job_id: event.job_id.clone(),
                    text: prompt.clone(),
                });
                true
            }
            (EventBody::JobStarted { .. }, Some(i)) => {
                // Its turn: the chat follows it as it followed the one before.
                let started = self.queued.remove(i);
                let (text, pinned) = super::pinned::split_pinned(&started.text);
                self.transcript.push(Entry::User(text.to_string()));
                if !pinned.is_empty() {
                    self.transcript.push(Entry::Pinned(pinned));
                }
                self.scroll = 0;
                self.job = Some(JobView {
                    id: started.job_id,
                    purpose: JobPurpose::Instruction,
                    status: JobStatus::Running,
                    steps: 0,
                    max_steps: self.max_tool_calls,
                });
                false
            }
            (EventBody::JobCancelled {} | EventBody::JobFailed { .. }, Some(i)) => {
                self.queued.remove(i);
                !matches!(event.body, EventBody::JobFailed { .. })
            }
            _ => false,
        }
    }
}
