//! Commands on their way to the engine. A job for a session that does not
//! exist yet waits for the reply that names it: a second message typed
//! before the first one's reply would otherwise start a session of its own.

use super::App;
use crate::protocol::{Command, SessionRef};

/// What waits for the first job's session.
#[derive(Debug, Default)]
pub struct Outbox {
    /// A job for a new session was sent; its reply has not come.
    awaiting: bool,
    /// Jobs held until then, in order.
    held: Vec<Command>,
    /// Held jobs released, for the event loop to send.
    pub ready: Vec<Command>,
}

impl App {
    /// `commands` as they may leave now (the rest held).
    pub fn outgoing(&mut self, commands: Vec<Command>) -> Vec<Command> {
        let mut out = Vec::new();
        for command in commands {
            if for_new_session(&command) {
                if self.outbox.awaiting {
                    self.outbox.held.push(command);
                    continue;
                }
                self.outbox.awaiting = true;
            }
            out.push(command);
        }
        out
    }

    /// The reply to a new session's first job came (`self.session` is set
    /// when it was started): the held jobs go to that session, or, if it
    /// was refused, on as they were.
    pub(super) fn session_answered(&mut self) {
        if !self.outbox.awaiting {
            return;
        }
        self.outbox.awaiting = false;
        let held = std::mem::take(&mut self.outbox.held);
        let session = self.session_ref();
        let held = held
            .into_iter()
            .map(|mut c| {
                if let Command::StartJob { session: s, .. } | Command::Compact { session: s, .. } =
                    &mut c
                {
                    *s = session.clone();
                }
                c
            })
            .collect();
        let released = self.outgoing(held);
        self.outbox.ready.extend(released);
    }
}

fn for_new_session(command: &Command) -> bool {
    matches!(
        command,
        Command::StartJob {
            session: SessionRef::New,
            ..
        } | Command::Compact {
            session: SessionRef::New,
            ..
        }
    )
}
