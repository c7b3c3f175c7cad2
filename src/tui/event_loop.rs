//! The TUI's event loop: one thing at a time (a terminal event, an engine
//! event, work done off the UI task, a frame due, SIGTERM), each to a small
//! handler; the app's loads and commands go out after each. Frames are
//! coalesced: a key's within 4 ms, others within 16 ms, streamed text
//! within 100 ms, none while idle. The terminal is read by a task of its
//! own, so only its input wakes that reading.

use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{Event as TermEvent, EventStream, KeyEventKind, MouseEventKind};
use futures_util::StreamExt;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio::time::Instant;

use super::app::{App, Loaded, Quit};
use super::{clipboard, loads, render};
use crate::agent::{Engine, Filter, Subscription};
use crate::protocol::{Event, EventBody, SessionSummary};

/// Longest wait between a change and its frame (~60 frames a second).
const FRAME: Duration = Duration::from_millis(16);
/// Longest wait between streamed text and its frame: at most ~10 frames a
/// second while a model streams (text still flows a line at a time; every
/// token now reaches the app as it comes, and the frames are most of what
/// a stream costs: 1.8 % of a CPU at 200 tokens/s, bench/tui_pace.sh).
const STREAM_FRAME: Duration = Duration::from_millis(100);
/// Longest wait between a key and its frame (bursts such as a paste coalesce).
const KEY_FRAME: Duration = Duration::from_millis(4);

/// What work done off the UI task sends back.
pub enum UiEvent {
    Loaded(Loaded),
    /// Another root, opened (`Ctrl+O`).
    Opened(Box<Opened>),
}

/// Another root opened, with what the app shows of it first.
pub struct Opened {
    pub engine: Engine,
    /// Its sessions, oldest first.
    pub sessions: Vec<SessionSummary>,
    /// Its tree's top and latest checkpoint.
    pub first: Vec<Loaded>,
    /// The newest session of the root left (what `--continue` opens there).
    pub left_latest: Option<String>,
}

/// The next thing to handle.
enum Next {
    Term(TermEvent),
    Engine(Arc<Event>),
    /// The engine stopped sending (it shut down).
    EngineGone,
    Ui(UiEvent),
    Frame,
    Stop,
}

/// When the next frame is due, if one is wanted at all.
struct FrameClock {
    last: Instant,
    due: Option<Instant>,
}

impl FrameClock {
    fn new() -> FrameClock {
        let now = Instant::now();
        FrameClock {
            last: now.checked_sub(FRAME).unwrap_or(now),
            due: Some(now),
        }
    }

    /// A change wants a frame no later than `gap` after the last one.
    fn want(&mut self, gap: Duration) {
        let at = self.last + gap;
        self.due = Some(self.due.map_or(at, |d| d.min(at)));
    }

    /// Resolves when the wanted frame is due; never while none is wanted.
    async fn due(&self) {
        match self.due {
            Some(at) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    }

    fn drawn(&mut self) {
        self.last = Instant::now();
        self.due = None;
    }
}

/// What the loop owns: the terminal, the app, the engine and its events.
pub struct Loop<'a> {
    terminal: &'a mut super::terminal::Term,
    pub app: App,
    pub engine: Engine,
    events: Option<Subscription>,
    tx: UnboundedSender<UiEvent>,
    frames: FrameClock,
    /// As the terminal last reported (focus reporting); true until it says.
    focused: bool,
}

/// Runs until the user quits (or SIGTERM); returns the engine in use.
pub async fn run(
    terminal: &mut super::terminal::Term,
    app: App,
    engine: Engine,
) -> Result<Engine, String> {
    let (keys, mut term) = unbounded_channel();
    // The terminal is read by a task of its own, woken only by input: a
    // select polling crossterm's stream each time an engine event came
    // fought its reader thread for a lock (~15 % of a streaming TUI's CPU).
    let reader = tokio::spawn(async move {
        let mut stream = EventStream::new();
        while let Some(Ok(event)) = stream.next().await {
            if keys.send(event).is_err() {
                break;
            }
        }
    });
    let terminate = crate::platform::signal::terminate();
    tokio::pin!(terminate);
    let (tx, mut rx) = unbounded_channel();
    let events = Some(engine.subscribe(Filter::All));
    let mut lp = Loop {
        terminal,
        app,
        engine,
        events,
        tx,
        frames: FrameClock::new(),
        focused: true,
    };
    while lp.app.quit != Quit::Now {
        lp.send_work();
        let next = tokio::select! {
            Some(event) = term.recv() => Next::Term(event),
            event = next_event(&mut lp.events) => match event {
                Some(event) => Next::Engine(event),
                None => Next::EngineGone,
            },
            Some(done) = rx.recv() => Next::Ui(done),
            _ = lp.frames.due() => Next::Frame,
            _ = &mut terminate => Next::Stop,
        };
        match next {
            Next::Term(event) => lp.on_term(event),
            Next::Engine(event) => lp.on_engine(&event),
            Next::EngineGone => lp.events = None,
            Next::Ui(done) => lp.on_ui(done),
            Next::Frame => lp.draw()?,
            Next::Stop => break,
        }
    }
    reader.abort();
    Ok(lp.engine)
}

/// The engine's next event; never resolves once it stopped sending.
async fn next_event(events: &mut Option<Subscription>) -> Option<Arc<Event>> {
    match events {
        Some(events) => events.next().await,
        None => std::future::pending().await,
    }
}

impl Loop<'_> {
    /// Sends what the app asks for: commands, loads, highlights, a copy.
    fn send_work(&mut self) {
        for load in std::mem::take(&mut self.app.loads) {
            loads::start(&self.engine, load, &self.tx);
        }
        for command in std::mem::take(&mut self.app.outbox.ready) {
            loads::send(&self.engine, command, &self.tx);
        }
        for (key, lang, code) in self.app.highlight_requests.drain(..) {
            // The block shows uncoloured until its colours come back.
            loads::highlight_code(key, lang, code, &self.tx);
        }
        if let Some(request) = self.app.copy_request.take() {
            let index = self
                .area()
                .and_then(|a| render::focused_message(&self.app, a));
            self.app.status_note = Some(match self.app.copy_text(index, request) {
                Ok((text, what)) => match clipboard::copy(&text) {
                    Ok(()) => format!("copied {what}"),
                    Err(e) => format!("could not copy: {e}"),
                },
                Err(why) => format!("nothing copied: {why}"),
            });
            self.frames.want(KEY_FRAME);
        }
    }

    /// A key, the mouse wheel, a paste.
    fn on_term(&mut self, event: TermEvent) {
        match event {
            TermEvent::Key(key) if key.kind != KeyEventKind::Release => {
                let commands = self.app.on_key(key);
                for command in self.app.outgoing(commands) {
                    loads::send(&self.engine, command, &self.tx);
                }
            }
            TermEvent::Mouse(mouse) => match mouse.kind {
                MouseEventKind::ScrollUp => {
                    self.app.scroll_by(3);
                }
                MouseEventKind::ScrollDown => {
                    self.app.scroll_by(-3);
                }
                _ => {}
            },
            TermEvent::Paste(text) => self.app.paste(&text),
            TermEvent::Resize(width, height) => {
                self.terminal.backend_mut().resized(width, height);
                self.app.screen = Some(ratatui::layout::Rect::new(0, 0, width, height));
            }
            TermEvent::FocusGained => self.focused = true,
            TermEvent::FocusLost => self.focused = false,
            TermEvent::Key(_) => {}
        }
        // Scrolling stops at the transcript's top.
        if self.app.scroll > 0
            && let Some(area) = self.area()
            && let Some(limit) = render::max_scroll(&self.app, area)
        {
            self.app.scroll = self.app.scroll.min(limit);
        }
        self.frames.want(KEY_FRAME);
    }

    fn on_engine(&mut self, event: &Event) {
        let streamed = matches!(
            event.body,
            EventBody::LlmDelta { .. } | EventBody::LlmReasoning { .. }
        );
        if let EventBody::JobStarted { .. } = event.body {
            super::highlight::warm();
        }
        self.app.on_event(event);
        super::notify::tell(
            self.engine.config(),
            event,
            self.focused,
            self.app.session.as_deref(),
            &self.app.root,
        );
        self.frames
            .want(if streamed { STREAM_FRAME } else { FRAME });
    }

    fn on_ui(&mut self, done: UiEvent) {
        match done {
            UiEvent::Loaded(loaded) => {
                let key = matches!(
                    loaded,
                    Loaded::RecentRoots(_) | Loaded::Completions { .. } | Loaded::RootFailed(_)
                );
                self.app.loaded(loaded);
                self.frames.want(if key { KEY_FRAME } else { FRAME });
            }
            UiEvent::Opened(opened) => {
                super::reopen::switch_root(self, *opened);
                self.frames.want(KEY_FRAME);
            }
        }
    }

    /// Follows `engine` from now on (another root): the old one is shut
    /// down in the background (its jobs end, its sessions are let go).
    pub fn follow(&mut self, engine: Engine) {
        let old = std::mem::replace(&mut self.engine, engine);
        self.events = Some(self.engine.subscribe(Filter::All));
        tokio::spawn(async move {
            let _ = old.shutdown().await;
        });
    }

    fn draw(&mut self) -> Result<(), String> {
        // Pages of scrolling follow the size drawn.
        self.app.screen = self.area();
        let app = &self.app;
        self.terminal
            .draw(|f| render::draw(f, app))
            .map_err(|e| format!("cannot draw: {e}"))?;
        self.frames.drawn();
        Ok(())
    }

    fn area(&self) -> Option<ratatui::layout::Rect> {
        let size = self.terminal.size().ok()?;
        Some(ratatui::layout::Rect::new(0, 0, size.width, size.height))
    }
}
