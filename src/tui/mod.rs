//! The terminal front end: owns the terminal and the `App` state, feeds it
//! keys and engine events, and redraws on demand (coalesced to ~60 frames a
//! second, nothing while idle). The only module that uses ratatui/crossterm.

mod app;
mod clipboard;
mod highlight;
mod keymap;
mod markdown;
mod overrides;
mod render;
mod reopen;
mod start;
pub mod terminal;
mod theme;
mod tree;
mod wrap;

pub use app::{
    App, CheckpointRow, Details, Entry, Focus, LatestCheckpoint, Load, Overlay, Quit, SessionPick,
    View, WholeFileRow,
};
pub use highlight::{StyledLine, highlight, highlight_code};
pub use overrides::KeyMap;
pub use render::{draw, focused_message, max_scroll};
pub use reopen::{Reopened, RootOpener};
use start::show_session;
pub use start::{FirstLook, TuiStart, app_from, first_look, initial_app};
pub use tree::Tree;

use std::time::Duration;

use tokio::time::Instant;

use crossterm::event::{Event as TermEvent, EventStream, KeyEventKind, MouseEventKind};
use futures_util::StreamExt;

use crate::agent::{self, EngineContext};
use crate::checkpoint::CheckpointStore;
use crate::store::RootStore;
use crate::workspace::{ReadRange, Workspace, read_text_range};

/// Longest wait between a change and its frame (~60 frames a second).
const FRAME: Duration = Duration::from_millis(16);
/// Longest wait between streamed text and its frame: at most ~20 frames a
/// second while a model streams (text still flows; the CPU share drops from
/// ~10 % to ~2.5 %, bench/tui_pace.sh).
const STREAM_FRAME: Duration = Duration::from_millis(50);
/// Longest wait between a key and its frame (bursts such as a paste coalesce).
const KEY_FRAME: Duration = Duration::from_millis(4);

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

/// What a load that needs only the workspace gave.
pub enum Loaded {
    TreeDir {
        rel: String,
        nodes: Vec<tree::Node>,
    },
    HunkColours {
        job_id: String,
        colours: Vec<(String, Vec<StyledLine>)>,
    },
}

/// Does `load` if it needs only the workspace (the tree's folders, hunk
/// colours); blocking, so the event loop runs it on the blocking pool.
/// `None` for the loads that need more (the event loop's own).
pub fn load_plain(workspace: &Workspace, load: Load) -> Option<Loaded> {
    match load {
        Load::TreeDir { rel, depth } => {
            let nodes = tree::children(workspace, &rel, depth);
            Some(Loaded::TreeDir { rel, nodes })
        }
        Load::HunkColours { job_id, hunks } => Some(Loaded::HunkColours {
            job_id,
            colours: highlight::highlight_hunks(hunks),
        }),
        Load::Session(_)
        | Load::RecentRoots
        | Load::RootCompletion(_)
        | Load::OpenRoot(_)
        | Load::Checkpoints
        | Load::ThreeWay(_)
        | Load::WholeFile(_)
        | Load::Preview { .. } => None,
    }
}

/// Does the app's workspace-only loads here and now, blocking, and hands
/// them back (for tests and benches; the event loop does the same on the
/// blocking pool). Other loads stay queued.
pub fn do_plain_loads(app: &mut App, workspace: &Workspace) {
    for load in std::mem::take(&mut app.loads) {
        match load {
            load @ (Load::TreeDir { .. } | Load::HunkColours { .. }) => {
                if let Some(done) = load_plain(workspace, load) {
                    app.loaded(done);
                }
            }
            other => app.loads.push(other),
        }
    }
}

/// Runs the TUI until the user quits. The terminal is restored on every
/// exit path, panics included (`terminal::enter`).
pub fn run(ctx: EngineContext, start: TuiStart) -> Result<(), String> {
    // One thread: the UI, the engine and the model's stream hand each other
    // every event without waking another thread (blocking work still runs
    // on the blocking pool).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    runtime.block_on(async move {
        let pick = start.pick_session;
        let opener = start.opener.clone();
        let mut app = initial_app(&ctx, start);
        let workspace = ctx.workspace.clone();
        let state = ctx.state.clone();
        // With a picker the engine starts once the session is chosen.
        let (mut engine, mut waiting) = if pick {
            let mut rows = state
                .as_ref()
                .map(|s| s.sessions().unwrap_or_default())
                .unwrap_or_default();
            rows.reverse();
            app.overlay = Overlay::Sessions { rows, cursor: 0 };
            (None, Some(ctx))
        } else {
            (Some(agent::spawn(ctx).map_err(|e| e.to_string())?), None)
        };
        let mut terminal = terminal::enter();
        let result = event_loop(
            &mut terminal,
            &mut app,
            &mut engine,
            &mut waiting,
            reopen::Roots {
                workspace,
                state,
                opener,
            },
        )
        .await;
        terminal::leave();
        result
    })
}

/// The engine's next event; never resolves while there is no engine yet.
async fn next_event(engine: &mut Option<agent::EngineHandle>) -> Option<crate::protocol::Event> {
    match engine {
        Some(e) => e.events.recv().await,
        None => std::future::pending().await,
    }
}

/// Checkpoint data loaded off the UI task.
enum History {
    List(Vec<app::CheckpointRow>),
    ThreeWay(String, Vec<crate::checkpoint::ThreeWay>),
    WholeFile(String, Vec<app::WholeFileRow>),
}

/// The file as it is now with every hunk of `file` shown inline.
pub fn whole_file_rows(
    workspace: &Workspace,
    file: &crate::review::FileDiff,
) -> Vec<app::WholeFileRow> {
    let bytes = workspace
        .resolve(&file.file_path)
        .ok()
        .and_then(|r| workspace.read_opt(&r).ok().flatten())
        .unwrap_or_default();
    let old = crate::review::Doc::parse(&bytes)
        .map(|d| d.lines)
        .unwrap_or_default();
    let mut changes: Vec<(&str, &crate::review::Change)> = file
        .hunks
        .iter()
        .flat_map(|h| h.changes.iter().map(move |c| (h.hunk_id.as_str(), c)))
        .collect();
    changes.sort_by_key(|(_, c)| c.old_start);
    let text = |l: &str| crate::review::text_of(l).to_string();
    let mut rows = Vec::new();
    let mut at = 0;
    for (hunk, c) in changes {
        while at < c.old_start.min(old.len()) {
            rows.push((' ', text(&old[at]), None));
            at += 1;
        }
        for l in old.iter().skip(c.old_start).take(c.old_len) {
            rows.push(('-', text(l), Some(hunk.to_string())));
        }
        for l in &c.new_lines {
            rows.push(('+', text(l), Some(hunk.to_string())));
        }
        at = at.max(c.old_start + c.old_len);
    }
    while at < old.len() {
        rows.push((' ', text(&old[at]), None));
        at += 1;
    }
    rows
}

fn checkpoint_rows(state: Option<&RootStore>) -> Vec<app::CheckpointRow> {
    let Some(state) = state else {
        return Vec::new();
    };
    let mut list = CheckpointStore::new(state).list().unwrap_or_default();
    list.reverse();
    list.into_iter()
        .map(|cp| app::CheckpointRow {
            id: cp.checkpoint_id,
            created_at: cp.created_at,
            kind: format!("{:?}", cp.kind).to_lowercase(),
            files: cp.affected_files.into_iter().map(|f| f.file_path).collect(),
        })
        .collect()
}

/// Most lines of a code block that get colours.
const CODE_LINES: usize = 2_000;

/// Most lines a preview shows.
const PREVIEW_LINES: usize = 5_000;

fn load_preview(workspace: &Workspace, path: &str) -> Result<Vec<highlight::StyledLine>, String> {
    let resolved = workspace.resolve(path).map_err(|e| e.to_string())?;
    let range = ReadRange {
        start_line: 1,
        end_line: Some(PREVIEW_LINES),
        max_lines: PREVIEW_LINES,
        max_bytes: 1 << 20,
    };
    let file = workspace
        .open_file(&resolved)
        .map_err(|e| format!("{path}: {e}"))?;
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err(format!("{path}: not a regular file"));
    }
    let slice = read_text_range(file, range).map_err(|e| format!("{path}: {e}"))?;
    Ok(highlight::highlight(path, &slice.content, PREVIEW_LINES))
}

async fn event_loop(
    terminal: &mut ratatui::DefaultTerminal,
    app: &mut App,
    engine: &mut Option<agent::EngineHandle>,
    waiting: &mut Option<EngineContext>,
    mut roots: reopen::Roots,
) -> Result<(), String> {
    // Load the syntax definitions once, off the UI task, before they are needed.
    tokio::task::spawn_blocking(|| highlight::highlight("warm.rs", "", 1));
    let mut keys = EventStream::new();
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| format!("cannot watch SIGTERM: {e}"))?;
    let (preview_tx, mut previews) = tokio::sync::mpsc::unbounded_channel();
    let (colours_tx, mut colours) = tokio::sync::mpsc::unbounded_channel();
    let (plain_tx, mut plain) = tokio::sync::mpsc::unbounded_channel();
    let (session_tx, mut sessions) = tokio::sync::mpsc::unbounded_channel();
    let (history_tx, mut history) = tokio::sync::mpsc::unbounded_channel::<History>();
    let (roots_tx, mut root_msgs) = tokio::sync::mpsc::unbounded_channel();
    // The file list for @path completion is walked off the UI task.
    let (paths_tx, mut paths_rx) = tokio::sync::mpsc::unbounded_channel();
    reopen::list_paths(&roots.workspace, &paths_tx);
    // When the next frame is due: a key asks for one within KEY_FRAME of
    // the last, anything else (a streaming answer) within FRAME, so bursts
    // coalesce and nothing is drawn while idle.
    let mut frames = FrameClock::new();
    while app.quit != Quit::Now {
        let (workspace, state) = (roots.workspace.clone(), roots.state.clone());
        for load in std::mem::take(&mut app.loads) {
            match load {
                load @ (Load::RecentRoots | Load::RootCompletion(_) | Load::OpenRoot(_)) => {
                    reopen::start(load, roots.opener.clone(), roots_tx.clone());
                }
                Load::Session(pick) => {
                    let Some(mut ctx) = waiting.take() else {
                        continue;
                    };
                    // Reading the session and the engine's replay of it run
                    // on the blocking pool; the result comes back below.
                    let (tx, state) = (session_tx.clone(), state.clone());
                    tokio::task::spawn_blocking(move || {
                        let shown = match (&pick, &state) {
                            (SessionPick::Resume(id), Some(state)) => {
                                crate::agent::read_session(state, id).ok()
                            }
                            _ => None,
                        };
                        ctx.session = match pick {
                            SessionPick::New => agent::SessionChoice::New,
                            SessionPick::Resume(id) => agent::SessionChoice::Resume(id),
                        };
                        let _ = tx.send((shown, agent::spawn(ctx)));
                    });
                }
                Load::WholeFile(file) => {
                    let (tx, workspace) = (history_tx.clone(), workspace.clone());
                    tokio::task::spawn_blocking(move || {
                        let _ = tx.send(History::WholeFile(
                            file.file_path.clone(),
                            whole_file_rows(&workspace, &file),
                        ));
                    });
                }
                Load::Checkpoints => {
                    let (state, tx) = (state.clone(), history_tx.clone());
                    tokio::task::spawn_blocking(move || {
                        let _ = tx.send(History::List(checkpoint_rows(state.as_ref())));
                    });
                }
                Load::ThreeWay(id) => {
                    let (state, tx, workspace) =
                        (state.clone(), history_tx.clone(), workspace.clone());
                    tokio::task::spawn_blocking(move || {
                        let views = state
                            .as_ref()
                            .map(CheckpointStore::new)
                            .and_then(|store| {
                                let cp = store.get(&id).ok().flatten()?;
                                crate::checkpoint::three_way(&workspace, &store, &cp).ok()
                            })
                            .unwrap_or_default();
                        let _ = tx.send(History::ThreeWay(id, views));
                    });
                }
                load @ (Load::TreeDir { .. } | Load::HunkColours { .. }) => {
                    let (tx, workspace) = (plain_tx.clone(), workspace.clone());
                    tokio::task::spawn_blocking(move || {
                        if let Some(done) = load_plain(&workspace, load) {
                            let _ = tx.send(done);
                        }
                    });
                }
                Load::Preview { generation, path } => {
                    let workspace = workspace.clone();
                    let tx = preview_tx.clone();
                    // Reading and highlighting run off the UI task; the result
                    // comes back tagged with its generation so a stale one is dropped.
                    tokio::task::spawn_blocking(move || {
                        let _ = tx.send((generation, load_preview(&workspace, &path)));
                    });
                }
            }
        }
        for (key, lang, code) in app.highlight_requests.drain(..) {
            let tx = colours_tx.clone();
            // Highlighting runs off the UI task; the block shows uncoloured until then.
            tokio::task::spawn_blocking(move || {
                let _ = tx.send((key, highlight::highlight_code(&lang, &code, CODE_LINES)));
            });
        }
        if let Some(request) = app.copy_request.take() {
            let area = terminal
                .size()
                .map(|s| ratatui::layout::Rect::new(0, 0, s.width, s.height));
            let index = area.ok().and_then(|a| focused_message(app, a));
            app.status_note = Some(match app.copy_text(index, request) {
                Ok((text, what)) => match clipboard::copy(&text) {
                    Ok(()) => format!("copied {what}"),
                    Err(e) => format!("could not copy: {e}"),
                },
                Err(why) => format!("nothing copied: {why}"),
            });
            frames.want(KEY_FRAME);
        }
        tokio::select! {
            Some((shown, started)) = sessions.recv() => {
                if let Some(s) = shown {
                    show_session(app, &s);
                }
                *engine = Some(started.map_err(|e| e.to_string())?);
                frames.want(FRAME);
            }
            Some(done) = plain.recv() => {
                app.loaded(done);
                frames.want(FRAME);
            }
            Some((key, lines)) = colours.recv() => {
                app.code_highlighted(key, lines);
                frames.want(FRAME);
            }
            Some(Ok(event)) = keys.next() => {
                match event {
                    TermEvent::Key(key) if key.kind != KeyEventKind::Release => {
                        for op in app.on_key(key) {
                            if let Some(engine) = engine.as_ref() {
                                let _ = engine.ops.send(op);
                            }
                        }
                    }
                    TermEvent::Mouse(mouse) => match mouse.kind {
                        MouseEventKind::ScrollUp => { app.scroll_by(3); }
                        MouseEventKind::ScrollDown => { app.scroll_by(-3); }
                        _ => {}
                    },
                    TermEvent::Paste(text) => app.paste(&text),
                    TermEvent::Key(_) | TermEvent::Resize(..)
                    | TermEvent::FocusGained | TermEvent::FocusLost => {}
                }
                // Scrolling stops at the transcript's top.
                if app.scroll > 0
                    && let Ok(size) = terminal.size()
                    && let Some(limit) = max_scroll(app, ratatui::layout::Rect::new(0, 0, size.width, size.height))
                {
                    app.scroll = app.scroll.min(limit);
                }
                frames.want(KEY_FRAME);
            }
            Some(paths) = paths_rx.recv() => app.paths = paths,
            Some(msg) = root_msgs.recv() => {
                match msg {
                    reopen::RootMsg::Recent(recent) => app.recent_roots_loaded(recent),
                    reopen::RootMsg::Completions(typed, found) => {
                        app.root_completions_loaded(&typed, found);
                    }
                    reopen::RootMsg::Failed(why) => app.root_open_failed(why),
                    reopen::RootMsg::Opened(opened) => {
                        if app.job_running() {
                            app.root_open_failed("a job started meanwhile: let it finish or cancel it first".into());
                        } else {
                            reopen::switch_root(app, engine, waiting, &mut roots, *opened)?;
                            reopen::list_paths(&roots.workspace, &paths_tx);
                        }
                    }
                }
                frames.want(KEY_FRAME);
            }
            Some(loaded) = history.recv() => {
                match loaded {
                    History::List(rows) => app.checkpoints_loaded(rows),
                    History::ThreeWay(id, views) => app.three_way_loaded(&id, views),
                    History::WholeFile(path, rows) => app.whole_file_loaded(path, rows),
                }
                frames.want(FRAME);
            }
            Some((generation, result)) = previews.recv() => {
                app.preview_loaded(generation, result);
                frames.want(FRAME);
            }
            Some(event) = next_event(engine) => {
                let streamed = matches!(
                    event.body,
                    crate::protocol::EventBody::LlmDelta { .. }
                        | crate::protocol::EventBody::LlmReasoning { .. }
                );
                app.on_event(&event);
                frames.want(if streamed { STREAM_FRAME } else { FRAME });
            }
            _ = frames.due() => {
                terminal.draw(|f| render::draw(f, app)).map_err(|e| format!("cannot draw: {e}"))?;
                frames.drawn();
            }
            _ = terminate.recv() => break,
        }
    }
    Ok(())
}
