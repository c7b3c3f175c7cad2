//! The engine's event outlet: the broadcast every subscriber reads, and,
//! for each running job, the text its answer has streamed so far. Streamed
//! text is never stored, so without it a client that starts following a job
//! midway (a page opened or reloaded while the model writes, a stream
//! connected just after the job began) would see the answer only from the
//! next word on; it gets the text so far as one `llm.delta` first. Sending
//! and subscribing take one lock, so that text and the live stream meet
//! with no word missing or repeated.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::broadcast;

use super::engine::Published;
use crate::protocol::{Event, EventBody};

/// An event with the session it belongs to, as a subscription's backlog
/// holds it.
pub type InSession = (Option<String>, Arc<Event>);

/// The answer a job streamed so far, as a client that read every
/// `llm.delta` holds it: the latest attempt's text.
struct Streamed {
    session_id: Option<String>,
    attempt: u32,
    text: String,
    /// The last delta's cursor and time.
    cursor: u64,
    ts: String,
}

/// Events on their way to subscribers, and each running job's text so far.
pub struct Outlet {
    tx: broadcast::Sender<Arc<Published>>,
    jobs: Mutex<HashMap<String, Streamed>>,
}

impl Outlet {
    pub fn new(capacity: usize) -> Outlet {
        let (tx, _) = broadcast::channel(capacity);
        Outlet {
            tx,
            jobs: Mutex::new(HashMap::new()),
        }
    }

    /// Sends `published` to every subscriber, noting streamed text (and
    /// forgetting it when the job ends).
    pub fn send(&self, published: Arc<Published>) {
        let mut jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        let event = &published.event;
        match &event.body {
            EventBody::LlmDelta { text, attempt } => {
                let streamed = jobs.entry(event.job_id.clone()).or_insert(Streamed {
                    session_id: published.session_id.clone(),
                    attempt: *attempt,
                    text: String::new(),
                    cursor: 0,
                    ts: String::new(),
                });
                if *attempt > streamed.attempt {
                    streamed.attempt = *attempt;
                    streamed.text.clear();
                }
                streamed.text.push_str(text);
                streamed.cursor = event.cursor;
                streamed.ts.clone_from(&event.ts);
            }
            body if body.is_terminal() => {
                jobs.remove(&event.job_id);
            }
            _ => {}
        }
        let _ = self.tx.send(published);
    }

    /// A receiver of every event from now on, and, when `job_id` is named,
    /// the text that job streamed so far as one event (none if it has not
    /// streamed or has ended).
    pub fn subscribe(
        &self,
        job_id: Option<&str>,
    ) -> (broadcast::Receiver<Arc<Published>>, Option<InSession>) {
        let jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        let rx = self.tx.subscribe();
        let so_far = job_id
            .and_then(|id| jobs.get(id).map(|s| (id, s)))
            .map(|(id, s)| {
                let event = Event {
                    cursor: s.cursor,
                    body: EventBody::LlmDelta {
                        text: s.text.clone(),
                        attempt: s.attempt,
                    },
                    ts: s.ts.clone(),
                    job_id: id.to_string(),
                };
                (s.session_id.clone(), Arc::new(event))
            });
        (rx, so_far)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn event(job: &str, cursor: u64, body: EventBody) -> Arc<Published> {
        Arc::new(Published {
            session_id: Some("s".into()),
            event: Arc::new(Event {
                cursor,
                body,
                ts: "t".into(),
                job_id: job.into(),
            }),
        })
    }

    fn delta(text: &str, attempt: u32) -> EventBody {
        EventBody::LlmDelta {
            text: text.into(),
            attempt,
        }
    }

    fn text_of(outlet: &Outlet, job: &str) -> Option<(String, u32)> {
        let (_, so_far) = outlet.subscribe(Some(job));
        so_far.map(|(_, e)| match &e.body {
            EventBody::LlmDelta { text, attempt } => (text.clone(), *attempt),
            other => panic!("{other:?}"),
        })
    }

    #[test]
    fn a_late_subscriber_gets_the_latest_attempts_text_then_the_rest_live() {
        let outlet = Outlet::new(16);
        assert_eq!(text_of(&outlet, "j"), None);
        outlet.send(event("j", 2, delta("Hel", 1)));
        outlet.send(event("j", 2, delta("lo", 1)));
        outlet.send(event("k", 2, delta("other", 1)));
        assert_eq!(text_of(&outlet, "j"), Some(("Hello".into(), 1)));
        // Another attempt starts over.
        outlet.send(event("j", 3, delta("Bon", 2)));
        let (mut rx, so_far) = outlet.subscribe(Some("j"));
        assert_eq!(so_far.unwrap().1.cursor, 3);
        outlet.send(event("j", 3, delta("jour", 2)));
        assert_eq!(text_of(&outlet, "j"), Some(("Bonjour".into(), 2)));
        // What came after the subscription is on the live stream.
        match &rx.try_recv().unwrap().event.body {
            EventBody::LlmDelta { text, .. } => assert_eq!(text, "jour"),
            other => panic!("{other:?}"),
        }
        // The job's end forgets it.
        outlet.send(event("j", 4, EventBody::JobCancelled {}));
        assert_eq!(text_of(&outlet, "j"), None);
        assert_eq!(text_of(&outlet, "k"), Some(("other".into(), 1)));
    }
}
