//! `GET …/jobs/{id}/stream`: a job's events as server-sent events, `id:`
//! the job's cursor, `event:` its type, `data:` the event. It starts after
//! `Last-Event-ID` (or `?cursor=`), reading what is stored first (also
//! after a restart) and then following the engine live, on a shared store
//! each stored event sent only once it is committed (so a client can always
//! resume it, on any host). A client that reads too slowly for its window of the live
//! stream is cut off, and resumes after its `Last-Event-ID` from the store,
//! never served a gap. It ends after the job's last event
//! (`job.completed`, `job.failed`, `job.cancelled`); a stream opened after
//! that sends what was stored after the cursor (an apply's events) and ends.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;

use super::query::Query;
use axum::Extension;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures_util::{Stream, StreamExt};
use serde::Deserialize;

use super::error::ApiError;
use super::notices::Routed;
use super::state::{AppState, User};
use crate::agent::{Filter, Subscription};
use crate::protocol::{Event, EventBody, JobStatus};

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct From {
    /// The events after this one (as `Last-Event-ID`, which wins).
    #[serde(default, deserialize_with = "super::query::count")]
    cursor: Option<u64>,
}

/// How often a stream whose job runs on another host (nothing comes live
/// here) reads the store for what it stored since, where the store sends
/// no notices (SQLite); with notices (PostgreSQL) it reads only when one
/// says so, or the host's look once a second finds it behind.
const POLL: Duration = Duration::from_millis(100);

enum Live {
    /// The job's run is over: what was stored after the cursor.
    Stored(std::vec::IntoIter<Event>),
    Following(Box<Follow>),
}

/// A running job: live from this host's engine, and from the store when
/// the job runs on another host sharing it (each event once, by cursor).
struct Follow {
    sub: Subscription,
    engine: crate::agent::Engine,
    job: String,
    /// The last stored event sent (its cursor).
    last: u64,
    /// The last streamed text sent (its cursor), which may run ahead of
    /// stored events not read yet.
    last_live: u64,
    queue: VecDeque<Event>,
    done: bool,
    /// The store's notices of this job (PostgreSQL): commits, and the
    /// text it streams on another host.
    committed: Option<tokio::sync::mpsc::Receiver<Routed>>,
}

impl Follow {
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(event) = self.queue.pop_front() {
                if event.body.live_only() {
                    if event.cursor <= self.last.max(self.last_live) {
                        continue;
                    }
                    self.last_live = event.cursor;
                    return Some(event);
                }
                if event.cursor <= self.last {
                    continue;
                }
                self.last = event.cursor;
                self.done = last(&event);
                return Some(event);
            }
            if self.done {
                return None;
            }
            let read = tokio::select! {
                event = self.sub.next() => {
                    if self.sub.lagged() > 0 {
                        // Too slow for its window of the live stream: cut
                        // off; the client resumes after its Last-Event-ID.
                        return None;
                    }
                    self.queue.push_back(event?.as_ref().clone());
                    false
                }
                () = polled(self.committed.is_none()) => true,
                routed = routed(&mut self.committed) => match routed {
                    Routed::Committed(Some(events)) => !self.took(events),
                    Routed::Committed(None) | Routed::Missed => true,
                    Routed::Stored(cursor) => cursor > self.sent_or_queued(),
                    Routed::Live(events) => {
                        self.queue.extend(events);
                        false
                    }
                },
            };
            if read && let Ok(page) = self.engine.events(&self.job, self.last).await {
                self.queue.extend(page.events);
            }
        }
    }
}

impl Follow {
    /// The last stored event sent or waiting to be.
    fn sent_or_queued(&self) -> u64 {
        let queued = self
            .queue
            .iter()
            .filter(|e| !e.body.live_only())
            .map(|e| e.cursor)
            .max()
            .unwrap_or(0);
        self.last.max(queued)
    }

    /// Takes the events a commit notice carried, when they follow on from
    /// the last one sent (else the store is read: `false`).
    fn took(&mut self, events: Vec<Event>) -> bool {
        let next = self.sent_or_queued() + 1;
        if events.first().is_none_or(|e| e.cursor > next) {
            return false;
        }
        self.queue.extend(events);
        true
    }
}

/// The next poll of the store: every `POLL` where the store sends no
/// notices (`polls`), else never.
async fn polled(polls: bool) {
    if polls {
        tokio::time::sleep(POLL).await;
    } else {
        std::future::pending::<()>().await;
    }
}

/// This job's next notice; never, without notices.
async fn routed(rx: &mut Option<tokio::sync::mpsc::Receiver<Routed>>) -> Routed {
    let Some(r) = rx else {
        return std::future::pending().await;
    };
    match r.recv().await {
        Some(routed) => routed,
        None => std::future::pending().await,
    }
}

/// Whether `event` ends the job's run (what follows, an apply's events,
/// is read by resuming after it).
fn last(event: &Event) -> bool {
    matches!(
        event.body,
        EventBody::JobCompleted { .. } | EventBody::JobFailed { .. } | EventBody::JobCancelled {}
    )
}

/// One SSE frame of `event` (its JSON `data`); stored events carry their
/// cursor as `id:`, streamed text none (a client resumes from what is
/// stored, so `Last-Event-ID` always names a stored event).
fn frame(event: &Event, data: String) -> SseEvent {
    let frame = SseEvent::default().event(event.body.kind()).data(data);
    if event.body.live_only() {
        frame
    } else {
        frame.id(event.cursor.to_string())
    }
}

#[utoipa::path(get, path = "/api/v1/agent/jobs/{id}/stream", tag = "jobs", params(("id" = String, Path, description = "job id", pattern = "^[A-Za-z0-9_]+$", max_length = 200), From, ("Last-Event-ID" = Option<u64>, Header, description = "resume after this cursor")), responses((status = 200, description = "text/event-stream: id = cursor, event = type, data = the event"), (status = 404, description = "not found, or not this user's", body = super::error::ErrorBody)), security(("bearer" = [])))]
pub async fn stream(
    State(app): State<AppState>,
    Extension(user): Extension<User>,
    Path(id): Path<String>,
    Query(q): Query<From>,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    let (ws, _) = super::jobs::job(&app, &user, &id).await?;
    let resume = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.trim().parse::<u64>().map_err(|_| {
                ApiError::invalid("Last-Event-ID must be a cursor (a number)").hint(
                    "send the id: of the last event received, or no Last-Event-ID to start \
                         from the first event",
                )
            })
        })
        .transpose()?;
    let after = resume.or(q.cursor).unwrap_or(0);
    // A job whose run has ended: what is stored after the cursor, then the end.
    let stored = match ws.engine.events(&id, after).await {
        Ok(page) if ended(page.status) => Some(page.events),
        _ => None,
    };
    let live = match stored {
        Some(events) => Live::Stored(events.into_iter()),
        None => Live::Following(Box::new(Follow {
            committed: app.notices.as_ref().map(|n| n.follow(&id)),
            sub: follow(&app, &ws.engine, &id, after),
            engine: ws.engine.clone(),
            job: id,
            last: after,
            last_live: 0,
            queue: VecDeque::new(),
            done: false,
        })),
    };
    let events = match live {
        Live::Stored(events) => futures_util::stream::iter(
            events.map(|e| Ok(frame(&e, serde_json::to_string(&e).unwrap_or_default()))),
        )
        .left_stream(),
        Live::Following(follow) => {
            super::outbox::queued(follow, |f| Box::pin(f.next()), frame).right_stream()
        }
    };
    // A token revoked while the stream is open ends it.
    let events = events.take_until(Box::pin(super::guard::revoked(app.clone(), headers)));
    Ok(Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}

/// The engine's events of job `id` after `after`. With a shared store
/// (PostgreSQL, several hosts: SPEC 16) each stored event waits until it is
/// committed, so a client that moves to another host finds there whatever
/// it saw; on SQLite (one host) they go at once: the commit's sync would
/// double the stream's latency, and a client can only come back here.
fn follow(app: &AppState, engine: &crate::agent::Engine, id: &str, after: u64) -> Subscription {
    let sub = engine.subscribe(Filter::Job {
        job_id: id.to_string(),
        after,
    });
    if app.accounts.shared() {
        sub.committed()
    } else {
        sub
    }
}

/// Whether the job's run is over (awaiting review included).
fn ended(status: Option<JobStatus>) -> bool {
    matches!(
        status,
        Some(
            JobStatus::AwaitingReview
                | JobStatus::Completed
                | JobStatus::Failed
                | JobStatus::Cancelled
        )
    )
}
