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

use crate::protocol::Event;

/// Frames a subscriber may have waiting.
pub const FRAMES: usize = 1024;
/// Bytes of frames a subscriber may have waiting.
pub const BYTES: usize = 1 << 20;

/// Follows `next` in a task of its own, handing the frames `frame` makes
/// to the returned stream through the bounded queue.
pub fn queued<S, F>(
    mut source: S,
    mut next: F,
    frame: fn(&Event) -> (SseEvent, usize),
) -> impl Stream<Item = Result<SseEvent, Infallible>>
where
    S: Send + 'static,
    F: for<'a> FnMut(&'a mut S) -> futures_util::future::BoxFuture<'a, Option<Event>>
        + Send
        + 'static,
{
    let (tx, rx) = mpsc::channel::<(SseEvent, usize)>(FRAMES);
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
            let (sse, size) = frame(&event);
            let before = counted.fetch_add(size, Ordering::AcqRel);
            if before > 0 && before + size > BYTES {
                tracing::info!(job = %event.job_id, "a slow stream subscriber was cut off");
                break;
            }
            if tx.try_send((sse, size)).is_err() {
                tracing::info!(job = %event.job_id, "a slow stream subscriber was cut off");
                break;
            }
        }
    });
    futures_util::stream::unfold((rx, waiting), |(mut rx, waiting)| async move {
        let (sse, size) = rx.recv().await?;
        waiting.fetch_sub(size, Ordering::AcqRel);
        Some((Ok(sse), (rx, waiting)))
    })
}
