//! The app's loads done off the UI task: each asks the engine (folders,
//! previews, checkpoints, sessions, other roots) or colours text on the
//! blocking pool, and sends what came of it back as a `UiEvent`. Commands
//! the app sends go the same way, their replies back as `Loaded::Replied`.

use tokio::sync::mpsc::UnboundedSender;

use super::app::{Load, Loaded, Resumed};
use super::event_loop::{Opened, UiEvent};
use super::highlight;
use crate::agent::Engine;
use crate::protocol::{Command, SessionRef};

/// Most lines a preview shows.
const PREVIEW_LINES: usize = 5_000;
/// Most lines of a code block that get colours.
const CODE_LINES: usize = 2_000;

/// Starts `load` off the UI task; its outcome comes back on `tx`.
pub fn start(engine: &Engine, load: Load, tx: &UnboundedSender<UiEvent>) {
    let (engine, tx) = (engine.clone(), tx.clone());
    tokio::spawn(async move {
        let done = match load {
            Load::OpenRoot(path) => return open_root(engine, path, tx).await,
            Load::Index => return index(engine, tx).await,
            Load::HunkColours { job_id, hunks } => {
                let colours = blocking(move || highlight::highlight_hunks(hunks)).await;
                Loaded::HunkColours {
                    job_id,
                    colours: colours.unwrap_or_default(),
                }
            }
            Load::Preview { generation, path } => Loaded::Preview {
                generation,
                result: preview(&engine, path).await,
            },
            Load::RootCompletion(typed) => {
                let t = typed.clone();
                let found = blocking(move || crate::agent::complete_folder(&t)).await;
                Loaded::Completions {
                    typed,
                    found: found.unwrap_or_default(),
                }
            }
            Load::Image(from) => Loaded::Image {
                result: image(&engine, &from).await,
                from,
            },
            other => query(&engine, other).await,
        };
        let _ = tx.send(UiEvent::Loaded(done));
    });
}

/// An image for the message being typed: a root's (checked by the
/// engine), a pasted path's or the clipboard's (read here, checked as any).
async fn image(
    engine: &Engine,
    from: &crate::tui::app::attach::ImageFrom,
) -> Result<(crate::protocol::ImageInput, crate::protocol::ImageMeta), String> {
    use crate::protocol::{ImageInput, ImageMeta};
    use crate::tui::app::attach::ImageFrom;
    match from {
        ImageFrom::Root(path) => {
            let meta = engine.image_meta(path.clone()).await?;
            Ok((ImageInput::Path { path: path.clone() }, meta))
        }
        ImageFrom::File(path) => {
            let path = path.clone();
            blocking(move || crate::agent::image_from_file(&path).map_err(|e| e.to_string()))
                .await
                .ok_or("the image could not be read")?
        }
        ImageFrom::Clipboard => {
            let (bytes, _) = super::clipboard_image::read().await?;
            let meta = ImageMeta::read("clipboard", &bytes).map_err(|e| e.to_string())?;
            Ok((ImageInput::data("clipboard", &bytes), meta))
        }
    }
}

/// Builds the code index if it is missing or stale, in a process of its
/// own (this one's memory stays an idle TUI's), saying how far it got,
/// then what it holds.
async fn index(engine: Engine, tx: UnboundedSender<UiEvent>) {
    let progress = tx.clone();
    let built = engine
        .index_build_apart(false, move |done, total| {
            let _ = progress.send(UiEvent::Loaded(Loaded::IndexProgress { done, total }));
        })
        .await;
    let files = built.map(|b| b.files).map_err(|e| e.to_string());
    let _ = tx.send(UiEvent::Loaded(Loaded::Index(files)));
}

/// Does the app's loads here and now (tests and benches; the event loop
/// does the same off the UI task), until none is left. Opening another
/// root stays asked.
pub async fn settle(app: &mut super::App, engine: &Engine) {
    let mut kept = Vec::new();
    for _ in 0..16 {
        let loads = std::mem::take(&mut app.loads);
        if loads.is_empty() {
            break;
        }
        for load in loads {
            let done = match load {
                Load::OpenRoot(_) => {
                    kept.push(load);
                    continue;
                }
                Load::HunkColours { job_id, hunks } => Loaded::HunkColours {
                    job_id,
                    colours: highlight::highlight_hunks(hunks),
                },
                Load::Preview { generation, path } => Loaded::Preview {
                    generation,
                    result: preview(engine, path).await,
                },
                Load::RootCompletion(typed) => Loaded::Completions {
                    found: crate::agent::complete_folder(&typed),
                    typed,
                },
                other => query(engine, other).await,
            };
            app.loaded(done);
        }
    }
    app.loads.extend(kept);
}

/// The loads that are one engine query each.
async fn query(engine: &Engine, load: Load) -> Loaded {
    match load {
        Load::TreeDir { rel, depth } => Loaded::TreeDir {
            entries: engine.folder(&rel).await.unwrap_or_default(),
            rel,
            depth,
        },
        Load::Paths => Loaded::Paths(engine.files().await.unwrap_or_default()),
        Load::Checkpoints => Loaded::Checkpoints(engine.checkpoints().await.unwrap_or_default()),
        Load::LatestCheckpoint => {
            Loaded::LatestCheckpoint(engine.latest_checkpoint().await.ok().flatten())
        }
        Load::ThreeWay(id) => Loaded::ThreeWay {
            views: engine.three_way(&id).await.unwrap_or_default(),
            id,
        },
        Load::WholeFile(file) => Loaded::WholeFile {
            path: file.file_path.clone(),
            rows: engine.whole_file(file).await.unwrap_or_default(),
        },
        Load::Session(id) => Loaded::Session(session(engine, &id).await.map(Box::new)),
        Load::PendingReview { session, open } => Loaded::PendingReview {
            open,
            result: engine
                .pending_review(SessionRef::Id(session))
                .await
                .map(|p| p.map(Box::new))
                .map_err(|e| e.to_string()),
        },
        Load::RecentRoots => Loaded::RecentRoots(engine.recent_roots().await.unwrap_or_default()),
        Load::Commands => Loaded::Commands(engine.custom_commands()),
        Load::Memory => Loaded::Memory(engine.memory_files().await.map_err(|e| e.to_string())),
        Load::Hooks => {
            let (list, problems) = engine.hooks();
            Loaded::Hooks(list, problems)
        }
        Load::Models => Loaded::Models(engine.models(false).await),
        Load::GonePins(pins) => Loaded::GonePins(gone_pins(engine, pins).await),
        Load::Index => Loaded::Index(
            engine
                .index_build(false)
                .await
                .map(|b| b.files)
                .map_err(|e| e.to_string()),
        ),
        Load::Find { typed, purpose } => Loaded::Found {
            found: engine
                .find(typed.clone(), crate::tui::app::FIND_ROWS)
                .await
                .unwrap_or_default(),
            typed,
            purpose,
        },
        // Done by `start` itself.
        Load::Image(_)
        | Load::OpenRoot(_)
        | Load::HunkColours { .. }
        | Load::Preview { .. }
        | Load::RootCompletion(_) => Loaded::RootFailed(String::new()),
    }
}

/// A session with its jobs' stored events (a job whose events cannot be
/// read shows without them).
async fn session(engine: &Engine, id: &str) -> Result<Resumed, String> {
    let transcript = engine.transcript(id).await.map_err(|e| e.to_string())?;
    let mut events = Vec::new();
    for job in &transcript.jobs {
        if let Ok(page) = engine.events(&job.job_id, 0).await {
            events.extend(page.events);
        }
    }
    Ok(Resumed { transcript, events })
}

/// The pins of `pins` whose file the engine no longer finds (a range
/// pin, `a.rs:3-9`, names the file before the colon).
async fn gone_pins(engine: &Engine, pins: Vec<String>) -> Vec<String> {
    let mut gone = Vec::new();
    for pin in pins {
        let file = match pin.rsplit_once(':') {
            Some((file, range))
                if !range.is_empty() && range.chars().all(|c| c.is_ascii_digit() || c == '-') =>
            {
                file
            }
            _ => pin.as_str(),
        };
        if let Err(crate::protocol::EngineError::NotFound { .. }) = engine.file_text(file, 1).await
        {
            gone.push(pin);
        }
    }
    gone
}

/// A file's first lines, highlighted.
async fn preview(engine: &Engine, path: String) -> Result<Vec<highlight::StyledLine>, String> {
    let text = engine
        .file_text(&path, PREVIEW_LINES)
        .await
        .map_err(|e| e.to_string())?;
    blocking(move || highlight::highlight(&path, &text.content, PREVIEW_LINES))
        .await
        .ok_or_else(|| "the preview could not be drawn".to_string())
}

/// Another root opened like this one (off the UI task), with its first
/// look (sessions, the tree's top, the latest checkpoint), so the app
/// shows it whole.
async fn open_root(engine: Engine, path: String, tx: UnboundedSender<UiEvent>) {
    let root = crate::agent::expand_home(&path);
    let left_latest = engine.latest_session().await.ok().flatten();
    let opened = blocking(move || engine.open_root(&root)).await;
    let event = match opened {
        Some(Ok(engine)) => {
            let sessions = engine.sessions().await.unwrap_or_default();
            let (_, (rel, depth)) = super::Tree::new(&engine.scopes());
            let first = vec![
                query(&engine, Load::TreeDir { rel, depth }).await,
                query(&engine, Load::LatestCheckpoint).await,
            ];
            UiEvent::Opened(Box::new(Opened {
                engine,
                sessions,
                first,
                left_latest,
            }))
        }
        Some(Err(e)) => UiEvent::Loaded(Loaded::RootFailed(e.to_string())),
        None => UiEvent::Loaded(Loaded::RootFailed("opening it stopped".into())),
    };
    let _ = tx.send(event);
}

/// Colours of a finished code block of an answer.
pub fn highlight_code(key: u64, lang: String, code: String, tx: &UnboundedSender<UiEvent>) {
    let tx = tx.clone();
    tokio::task::spawn_blocking(move || {
        let lines = highlight::highlight_code(&lang, &code, CODE_LINES);
        let _ = tx.send(UiEvent::Loaded(Loaded::Highlighted { key, lines }));
    });
}

/// Sends `command` (commands reach the engine in the order sent); its
/// reply comes back on `tx`.
pub fn send(engine: &Engine, command: Command, tx: &UnboundedSender<UiEvent>) {
    let tx = tx.clone();
    let pending = engine.submit(command.clone());
    tokio::spawn(async move {
        let result = match pending {
            Ok(pending) => pending.reply().await,
            Err(e) => Err(e),
        };
        let _ = tx.send(UiEvent::Loaded(Loaded::Replied {
            command: Box::new(command),
            result,
        }));
    });
}

/// `work` on the blocking pool (`None` if it panicked).
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    tokio::task::spawn_blocking(work).await.ok()
}
