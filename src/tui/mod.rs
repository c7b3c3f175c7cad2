//! The terminal front end: owns the terminal and the `App` state, feeds it
//! keys, engine events and finished loads (event_loop.rs), and redraws on
//! demand. It talks to the engine only through its door (`agent::Engine`)
//! and `protocol`'s types. The only module that uses ratatui/crossterm.

mod app;
mod clipboard;
mod clipboard_image;
mod event_loop;
#[doc(hidden)]
pub mod fuzzing; // fuzz doors: any bytes in, a panic only when a property fails
mod highlight;
mod keymap;
mod loads;
mod markdown;
mod notify;
mod overrides;
mod render;
mod reopen;
mod start;
pub mod terminal;
mod theme;
mod tree;
mod wrap;

pub use app::{
    App, Badge, CheckpointRow, Details, Entry, Focus, LatestCheckpoint, Load, Loaded, Overlay,
    Quit, Refusal, Resumed, ReviewScroll, View, WholeFileRow, latest_of,
};
pub use highlight::{StyledLine, highlight, highlight_code};
pub use loads::settle as settle_loads;
pub use overrides::{KeyError, KeyMap};
pub use render::{chat_rows, draw, focused_message, max_scroll, review_window};
pub use start::{Resume, TuiStart, app_from};
pub use tree::Tree;

use crate::agent::Engine;

/// Runs the TUI on `engine` until the user quits, then shuts the engine
/// down (jobs still running end; everything is in the store). The terminal
/// is restored on every exit path, panics included (`terminal::enter`).
pub fn run(rt: tokio::runtime::Runtime, engine: Engine, start: TuiStart) -> Result<(), String> {
    let (result, last) = rt.block_on(crate::agent::no_blocking(async move {
        let app = app_from(&engine, start);
        let result = match terminal::enter() {
            Ok(mut terminal) => event_loop::run(&mut terminal, app, engine.clone()).await,
            Err(e) => Err(e),
        };
        terminal::leave();
        let last = match &result {
            Ok(last) => last.clone(),
            Err(_) => engine,
        };
        let shut = last.shutdown().await.map_err(|e| e.to_string());
        (result.and(shut), last)
    }));
    // The last handle goes here, off the async task (closing the store).
    drop(last);
    drop(rt);
    result
}
