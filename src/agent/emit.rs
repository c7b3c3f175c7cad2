//! A job's handle for reporting to the engine: events (which the engine
//! numbers, timestamps, records and forwards) and changes to the session's
//! conversation (which it keeps and records).

use tokio::sync::mpsc::UnboundedSender;

use super::engine::Internal;

use crate::context::ContextWindow;
use crate::llm::Message;
use crate::protocol::EventBody;

/// What a job tells the engine.
#[derive(Debug)]
pub enum JobMsg {
    Event(EventBody),
    /// Messages added to the conversation, in order.
    Append(Vec<Message>),
    /// The job's final answer joins the conversation here; its text is
    /// the one `job.completed` carries, which follows (recorded once).
    Answer,
    /// The conversation as it is after a compaction.
    Reset(Vec<Message>),
    /// The provider's context window, as found or learned.
    Window(ContextWindow),
    /// Provider tokens per counted token, as learned from usage or errors.
    Calibrated(f64),
    /// Answered once everything reported before it is in the store: what
    /// must survive a crash (a pending review) is durable before the job
    /// goes on.
    Durable(tokio::sync::oneshot::Sender<()>),
}

pub struct Emitter {
    job_id: String,
    tx: UnboundedSender<Internal>,
}

impl Emitter {
    pub(super) fn new(job_id: String, tx: UnboundedSender<Internal>) -> Emitter {
        Emitter { job_id, tx }
    }

    pub fn job_id(&self) -> &str {
        &self.job_id
    }

    /// Another emitter of the same job (a hook that runs detached).
    pub fn fork(&self) -> Emitter {
        Emitter::new(self.job_id.clone(), self.tx.clone())
    }

    pub fn emit(&mut self, body: EventBody) {
        self.send(JobMsg::Event(body));
    }

    /// Waits until everything reported so far is stored (at once when the
    /// engine keeps no state).
    pub async fn durable(&mut self) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.send(JobMsg::Durable(tx));
        let _ = rx.await;
    }

    pub fn send(&mut self, msg: JobMsg) {
        // The engine outlives its jobs; a failed send means it is shutting down.
        let _ = self.tx.send(Internal::Job(self.job_id.clone(), msg));
    }
}
