//! Numbering and timestamping a job's events before they go to the front end.

use std::time::SystemTime;

use tokio::sync::mpsc::UnboundedSender;

use crate::protocol::{Event, EventBody};

/// Emits the events of one job with strictly increasing cursors.
pub struct Emitter {
    job_id: String,
    cursor: u64,
    tx: UnboundedSender<Event>,
}

impl Emitter {
    pub fn new(job_id: String, tx: UnboundedSender<Event>) -> Emitter {
        Emitter {
            job_id,
            cursor: 0,
            tx,
        }
    }

    pub fn emit(&mut self, body: EventBody) {
        self.cursor += 1;
        let event = Event {
            cursor: self.cursor,
            body,
            ts: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            job_id: self.job_id.clone(),
        };
        // A front end that went away no longer wants events; the job still
        // runs to its end so nothing half-done is left behind.
        let _ = self.tx.send(event);
    }
}
