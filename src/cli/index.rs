//! `agent-tui index [status|build|rebuild|clear] [--root PATH] [--json]`:
//! the code index of a root (SPEC 18).

use super::Exit;
use super::args::{GlobalArgs, IndexAction, IndexArgs};
use super::context::{builder, engine_error, run, start};
use crate::agent::Recording;
use crate::protocol::{IndexBuilt, IndexState, IndexStatus};

pub fn run_index(global: &GlobalArgs, args: &IndexArgs) -> Exit {
    let (rt, engine) = match start(builder(global, &args.root).recording(Recording::Off)) {
        Ok(started) => started,
        Err(exit) => return exit,
    };
    let action = args.action.unwrap_or(IndexAction::Status);
    let json = args.json;
    let progress = args.progress;
    run(rt, engine, |engine| async move {
        match action {
            IndexAction::Status => match engine.index_status().await {
                Ok(status) => print(json, &status, &status_line(&status)),
                Err(e) => engine_error(e),
            },
            IndexAction::Build | IndexAction::Rebuild => {
                let force = matches!(action, IndexAction::Rebuild);
                let build = engine.index_build(force);
                let built = if progress {
                    with_progress(&engine, build).await
                } else {
                    build.await
                };
                match built {
                    Ok(built) => print(json, &built, &built_line(&built)),
                    Err(e) => engine_error(e),
                }
            }
            IndexAction::Clear => match engine.index_clear().await {
                Ok(removed) => print(
                    json,
                    &serde_json::json!({ "cleared": removed }),
                    if removed {
                        "index cleared"
                    } else {
                        "there was no index to clear"
                    },
                ),
                Err(e) => engine_error(e),
            },
        }
    })
}

/// Waits for `build`, printing how far it got on stderr meanwhile.
async fn with_progress<T>(
    engine: &crate::agent::Engine,
    build: impl std::future::Future<Output = T>,
) -> T {
    tokio::pin!(build);
    let mut tick = tokio::time::interval(std::time::Duration::from_millis(250));
    loop {
        tokio::select! {
            done = &mut build => return done,
            _ = tick.tick() => {
                if let Some((done, total)) = engine.index_progress() {
                    let line = crate::agent::BuildProgress { done, total };
                    if let Ok(text) = serde_json::to_string(&line) {
                        eprintln!("{text}");
                    }
                }
            }
        }
    }
}

fn print(json: bool, value: &impl serde::Serialize, text: &str) -> Exit {
    if json {
        match serde_json::to_string(value) {
            Ok(line) => println!("{line}"),
            Err(e) => {
                eprintln!("agent-tui: {e}");
                return Exit::Failed;
            }
        }
    } else {
        println!("{text}");
    }
    Exit::Ok
}

fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn status_line(s: &IndexStatus) -> String {
    let mut line = match s.state {
        IndexState::None => {
            "index: none yet (built at the first search, or by `agent-tui index build`)".to_string()
        }
        IndexState::Building if s.generation == 0 => "index: building".to_string(),
        IndexState::Ready | IndexState::Building => format!(
            "index: {}{} files, {} symbols, {} (generation {}, built {}, {} at {})",
            if s.state == IndexState::Building {
                "building; stored: "
            } else {
                ""
            },
            s.files,
            s.symbols,
            if s.fresh {
                "fresh".to_string()
            } else {
                format!(
                    "{} files changed since (read again at the next search)",
                    s.changed
                )
            },
            s.generation,
            s.built_at.as_deref().unwrap_or("?"),
            megabytes(s.bytes_on_disk),
            s.path
        ),
    };
    if let Some(problem) = &s.problem {
        line.push_str(&format!("\nindex: {problem}"));
    }
    line
}

fn built_line(b: &IndexBuilt) -> String {
    let verb = if b.built { "indexed" } else { "up to date:" };
    format!(
        "{verb} {} of {} files, {} symbols, {} terms in {:.1} s; {} on disk ({:.2}x the source's {})",
        b.indexed,
        b.files,
        b.symbols,
        b.terms,
        b.duration_ms as f64 / 1000.0,
        megabytes(b.bytes_on_disk),
        b.bytes_on_disk as f64 / b.source_bytes.max(1) as f64,
        megabytes(b.source_bytes)
    )
}
