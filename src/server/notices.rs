//! The store's notices (PostgreSQL's `NOTIFY`) routed to the streams that
//! follow each job. One task reads them all and hands a job's to that
//! job's followers only, parsing each notice once (a notice of streamed
//! text carries several jobs' events), so a host with many open streams
//! does not wake every one of them for every notice. The same task's
//! partner looks, once a second, at what the store holds for every job
//! followed here (one query for all of them) and tells each job's
//! followers its last stored cursor: a stream that missed a notice catches
//! up within a second, and no stream asks the store on its own.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{broadcast, mpsc};

use crate::agent::{Accounts, Notice};
use crate::protocol::Event;

/// What a follower of a job hears.
pub enum Routed {
    /// The job's events were committed: these (when the notice carried
    /// them), else read the store.
    Committed(Option<Vec<Event>>),
    /// Streamed text of the job from the host that runs it.
    Live(Vec<Event>),
    /// Notices were missed: read the store.
    Missed,
    /// The job's last stored event (the host's look once a second): read
    /// the store if it is past what was sent.
    Stored(u64),
}

/// Notices a follower may have waiting before more are dropped (the look
/// once a second still finds what it missed).
const WAITING: usize = 256;

/// How often the host looks at what the store holds for followed jobs.
const LOOK_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

#[derive(Default)]
pub struct Notices {
    followers: Mutex<HashMap<String, Vec<mpsc::Sender<Routed>>>>,
}

impl Notices {
    /// Routes the notices `rx` receives until the store stops sending, and
    /// looks at the stored cursors of followed jobs through `accounts`.
    pub fn start(mut rx: broadcast::Receiver<Notice>, accounts: Accounts) -> Arc<Notices> {
        let notices = Arc::new(Notices::default());
        let looker = Arc::downgrade(&notices);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(LOOK_EVERY).await;
                let Some(notices) = looker.upgrade() else {
                    return;
                };
                notices.look(&accounts).await;
            }
        });
        let router = notices.clone();
        tokio::spawn(async move {
            loop {
                match rx.recv().await {
                    Ok(notice) => router.route(notice),
                    Err(broadcast::error::RecvError::Lagged(_)) => router.everyone(),
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        });
        notices
    }

    /// Job `job`'s notices from now on.
    pub fn follow(&self, job: &str) -> mpsc::Receiver<Routed> {
        let (tx, rx) = mpsc::channel(WAITING);
        let mut followers = self.lock();
        // Streams that ended since are forgotten here too (a job that
        // ended sends no more notices to forget them by).
        followers.retain(|_, list| {
            list.retain(|tx| !tx.is_closed());
            !list.is_empty()
        });
        followers.entry(job.to_string()).or_default().push(tx);
        rx
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<mpsc::Sender<Routed>>>> {
        self.followers.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn route(&self, notice: Notice) {
        match notice {
            Notice::Committed { job, events } => {
                if !self.lock().contains_key(&job) {
                    return;
                }
                let events = events.and_then(|e| serde_json::from_str::<Vec<Event>>(&e).ok());
                self.send(&job, || Routed::Committed(events.clone()));
            }
            Notice::Live(json) => {
                let Ok(events) = serde_json::from_str::<Vec<Event>>(&json) else {
                    return;
                };
                let mut by_job: HashMap<String, Vec<Event>> = HashMap::new();
                for e in events {
                    by_job.entry(e.job_id.clone()).or_default().push(e);
                }
                for (job, events) in by_job {
                    self.send(&job, || Routed::Live(events.clone()));
                }
            }
        }
    }

    /// Sends `what` to `job`'s followers, forgetting those that are gone.
    fn send(&self, job: &str, what: impl Fn() -> Routed) {
        let mut followers = self.lock();
        let Some(list) = followers.get_mut(job) else {
            return;
        };
        list.retain(|tx| {
            !matches!(
                tx.try_send(what()),
                Err(mpsc::error::TrySendError::Closed(_))
            )
        });
        if list.is_empty() {
            followers.remove(job);
        }
    }

    /// Tells each followed job's followers its last stored cursor.
    async fn look(&self, accounts: &Accounts) {
        let jobs: Vec<String> = {
            let mut followers = self.lock();
            followers.retain(|_, list| {
                list.retain(|tx| !tx.is_closed());
                !list.is_empty()
            });
            followers.keys().cloned().collect()
        };
        if jobs.is_empty() {
            return;
        }
        let Ok(cursors) = accounts.last_cursors(jobs).await else {
            return;
        };
        for (job, cursor) in cursors {
            self.send(&job, || Routed::Stored(cursor));
        }
    }

    /// Every follower reads the store (notices were missed).
    fn everyone(&self) {
        let jobs: Vec<String> = self.lock().keys().cloned().collect();
        for job in jobs {
            self.send(&job, || Routed::Missed);
        }
    }
}
