//! `-v`: detail into `<state home>/logs/agent-tui.log` (-v what the engine
//! does: jobs, requests, tool calls, applies; -vv every event; -vvv the
//! providers' stream too). Without it nothing is logged but what must be
//! kept (recoveries, always). Never on the screen; never a secret: lines
//! carry names, sizes, codes and timings, not keys, headers or file text.

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::fmt::format::FmtSpan;

/// Keeps the log writer's thread alive; dropping it flushes the file.
pub struct Logging {
    _guard: Option<WorkerGuard>,
}

/// Starts logging at the level `verbose` asks for (none for 0).
pub fn start(verbose: u8) -> Logging {
    let off = Logging { _guard: None };
    if verbose == 0 {
        return off;
    }
    let Some(dir) = crate::agent::log_dir() else {
        eprintln!("agent-tui: -v: no state home to log into (set AGENT_TUI_HOME)");
        return off;
    };
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("agent-tui: -v: cannot create {}: {e}", dir.display());
        return off;
    }
    let appender = tracing_appender::rolling::never(&dir, "agent-tui.log");
    let (writer, guard) = tracing_appender::non_blocking(appender);
    let level = match verbose {
        1 => tracing::Level::INFO,
        2 => tracing::Level::DEBUG,
        _ => tracing::Level::TRACE,
    };
    let installed = tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_max_level(level)
        .with_span_events(FmtSpan::NONE)
        .with_target(true)
        .try_init();
    if installed.is_err() {
        return off;
    }
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        verbose,
        "agent-tui started"
    );
    Logging {
        _guard: Some(guard),
    }
}
