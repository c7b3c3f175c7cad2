//! A stream subscriber's bounded queue: a task follows the job and queues
//! its frames for the client; when the client reads too slowly for the
//! queue (more than `FRAMES` frames or `BYTES` bytes waiting, the one frame
//! at its head excepted), the task stops and the stream ends once what is
//! queued is sent. The client resumes after its `Last-Event-ID` from the
//! store, so a slow client costs a reconnect, never memory or a gap.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::response::sse::Event as SseEvent;
use futures_util::Stream;
use tokio::sync::mpsc;

use crate::protocol::{Event, EventBody};

/// Frames a subscriber may have waiting.
pub const FRAMES: usize = 1024;
/// Bytes of frames a subscriber may have waiting.
pub const BYTES: usize = 1 << 20;

/// Follows `next` in a task of its own, handing its events to the
/// returned stream through the bounded queue, each made a frame by
/// `frame` (with its JSON). Streamed text already waiting in the queue
/// when the client is ready for more goes out as one frame (a burst of
/// words costs the client one event, not one per word; a word that comes
/// alone is sent alone, at once).
pub fn queued<S, F>(
    mut source: S,
    mut next: F,
    frame: fn(&Event, String) -> SseEvent,
) -> impl Stream<Item = Result<SseEvent, Infallible>>
where
    S: Send + 'static,
    F: for<'a> FnMut(&'a mut S) -> futures_util::future::BoxFuture<'a, Option<Event>>
        + Send
        + 'static,
{
    let (tx, rx) = mpsc::channel::<(Event, String)>(FRAMES);
    let waiting = Arc::new(AtomicUsize::new(0));
    let counted = waiting.clone();
    tokio::spawn(async move {
        loop {
            let event = tokio::select! {
                event = next(&mut source) => event,
                // The client went away.
                () = tx.closed() => None,
            };
            let Some(event) = event else { break };
            let data = serde_json::to_string(&event).unwrap_or_default();
            let size = data.len();
            let before = counted.fetch_add(size, Ordering::AcqRel);
            if before > 0 && before + size > BYTES {
                tracing::info!(job = %event.job_id, "a slow stream subscriber was cut off");
                break;
            }
            if let Err(e) = tx.try_send((event, data)) {
                let job = match e {
                    mpsc::error::TrySendError::Full((e, _))
                    | mpsc::error::TrySendError::Closed((e, _)) => e.job_id,
                };
                tracing::info!(job = %job, "a slow stream subscriber was cut off");
                break;
            }
        }
    });
    let state = Outbox {
        rx,
        waiting,
        held: None,
    };
    futures_util::stream::unfold(state, move |mut out| async move {
        let (event, data) = out.next().await?;
        Some((Ok(frame(&event, data)), out))
    })
}

/// The receiving end of a subscriber's queue.
struct Outbox {
    rx: mpsc::Receiver<(Event, String)>,
    waiting: Arc<AtomicUsize>,
    /// An event taken while joining text, to send next.
    held: Option<(Event, String)>,
}

/// The most streamed text one frame carries.
const JOINED_TEXT: usize = 64 * 1024;

impl Outbox {
    fn took(&self, item: (Event, String)) -> (Event, String) {
        self.waiting.fetch_sub(item.1.len(), Ordering::AcqRel);
        item
    }

    /// The next frame's event and JSON: streamed text joined with the
    /// text of the same job and attempt that waits right behind it.
    async fn next(&mut self) -> Option<(Event, String)> {
        let (mut event, mut data) = match self.held.take() {
            Some(held) => held,
            None => {
                let item = self.rx.recv().await?;
                self.took(item)
            }
        };
        let mut joined = false;
        while text_of(&event).is_some_and(|t| t.len() < JOINED_TEXT) {
            let Ok(item) = self.rx.try_recv() else { break };
            let item = self.took(item);
            match join(&event, &item.0) {
                Some(both) => {
                    event = both;
                    joined = true;
                }
                None => {
                    self.held = Some(item);
                    break;
                }
            }
        }
        if joined {
            data = serde_json::to_string(&event).unwrap_or_default();
        }
        Some((event, data))
    }
}

/// An event's streamed text, if it is some.
fn text_of(event: &Event) -> Option<&str> {
    match &event.body {
        EventBody::LlmDelta { text, .. } | EventBody::LlmReasoning { text, .. } => Some(text),
        _ => None,
    }
}

/// `a` and `b` as one event, when both are streamed text of one kind, job
/// and attempt (`b`'s cursor and time).
fn join(a: &Event, b: &Event) -> Option<Event> {
    let body = match (&a.body, &b.body) {
        (
            EventBody::LlmDelta { text, attempt },
            EventBody::LlmDelta {
                text: more,
                attempt: same,
            },
        ) if attempt == same => EventBody::LlmDelta {
            text: format!("{text}{more}"),
            attempt: *attempt,
        },
        (
            EventBody::LlmReasoning { text, attempt },
            EventBody::LlmReasoning {
                text: more,
                attempt: same,
            },
        ) if attempt == same => EventBody::LlmReasoning {
            text: format!("{text}{more}"),
            attempt: *attempt,
        },
        _ => return None,
    };
    (a.job_id == b.job_id).then(|| Event {
        cursor: b.cursor,
        body,
        ts: b.ts.clone(),
        job_id: b.job_id.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    fn event(cursor: u64, body: EventBody) -> Event {
        Event {
            cursor,
            body,
            ts: "2026-01-01T00:00:00.000Z".into(),
            job_id: "j".into(),
        }
    }

    fn delta(cursor: u64, text: &str, attempt: u32) -> Event {
        event(
            cursor,
            EventBody::LlmDelta {
                text: text.into(),
                attempt,
            },
        )
    }

    /// What waits is joined: words of one attempt in a row become one
    /// frame; another attempt, thinking or a stored event starts a new one,
    /// and the order stays.
    #[tokio::test]
    async fn waiting_words_go_as_one_frame_in_order() {
        let events = vec![
            delta(1, "Hel", 1),
            delta(2, "lo ", 1),
            delta(3, "world", 1),
            delta(4, "Again", 2),
            event(5, EventBody::JobCancelled {}),
            delta(6, "late", 2),
        ];
        let source = events.into_iter();
        fn next(
            s: &mut std::vec::IntoIter<Event>,
        ) -> futures_util::future::BoxFuture<'_, Option<Event>> {
            let item = s.next();
            Box::pin(async move { item })
        }
        static SEEN: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
        fn frame(_: &Event, data: String) -> SseEvent {
            SEEN.lock().unwrap().push(data);
            SseEvent::default()
        }
        let stream = queued(source, next, frame);
        // Everything is queued before the client reads.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let frames: Vec<_> = stream.collect().await;
        let seen = SEEN.lock().unwrap();
        assert_eq!(frames.len(), 4, "{seen:?}");
        let parsed: Vec<Event> = seen
            .iter()
            .map(|d| serde_json::from_str(d).unwrap())
            .collect();
        assert_eq!(parsed[0].body, delta(3, "Hello world", 1).body);
        assert_eq!(parsed[0].cursor, 3);
        assert_eq!(parsed[1].body, delta(4, "Again", 2).body);
        assert_eq!(parsed[2].body, EventBody::JobCancelled {});
        assert_eq!(parsed[3].body, delta(6, "late", 2).body);
    }
}
