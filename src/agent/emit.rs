//! A job's handle for reporting events; the engine numbers, timestamps,
//! records and forwards them.

use tokio::sync::mpsc::UnboundedSender;

use crate::protocol::EventBody;

pub struct Emitter {
    job_id: String,
    tx: UnboundedSender<(String, EventBody)>,
}

impl Emitter {
    pub fn new(job_id: String, tx: UnboundedSender<(String, EventBody)>) -> Emitter {
        Emitter { job_id, tx }
    }

    pub fn job_id(&self) -> &str {
        &self.job_id
    }

    pub fn emit(&mut self, body: EventBody) {
        // The engine outlives its jobs; a failed send means it is shutting down.
        let _ = self.tx.send((self.job_id.clone(), body));
    }
}
