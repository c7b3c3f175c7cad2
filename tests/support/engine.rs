//! Driving an engine in-process through its door: commands sent in order,
//! events followed from a subscription made before the first command.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use agent_tui::agent::{Engine, Filter, Subscription};
use agent_tui::protocol::{Command, Event, EventBody};

/// An engine with a subscription to all its events.
pub struct Driven {
    pub engine: Engine,
    pub events: Subscription,
}

impl Driven {
    pub fn new(engine: Engine) -> Driven {
        let events = engine.subscribe(Filter::All);
        Driven { engine, events }
    }

    /// Sends `command` (in order with the others); its reply is not waited for.
    pub fn send(&self, command: Command) {
        self.engine.submit(command).unwrap();
    }
}

/// The next event, failing the test after 10 s.
pub async fn next(d: &mut Driven) -> Event {
    next_of(&mut d.events).await
}

/// The next event of `events`, failing the test after 10 s.
pub async fn next_of(events: &mut Subscription) -> Event {
    let event = tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .expect("no event within 10 s")
        .expect("the engine stopped");
    (*event).clone()
}

/// Reads events until one matches; returns everything read.
pub async fn until(d: &mut Driven, pred: impl Fn(&EventBody) -> bool) -> Vec<Event> {
    let mut seen = Vec::new();
    loop {
        let e = next(d).await;
        let hit = pred(&e.body);
        seen.push(e);
        if hit {
            return seen;
        }
    }
}
