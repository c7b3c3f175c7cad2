//! `agent-tui doctor`: which config, state dir and provider are in force, and
//! whether the provider's server answers. Exit 1 if something needs fixing.

use std::time::Duration;

use super::args::{DoctorArgs, GlobalArgs};
use super::{Exit, load_config, process_env};
use crate::config::{Config, ProviderConfig, SETUP_HINT, ollama_answers};
use crate::context::ContextWindow;
use crate::llm::build_provider;
use crate::store::{StateDirs, Store, Target};
use crate::workspace::Workspace;

const PROBE_BUDGET: Duration = Duration::from_millis(4500);

pub fn run(global: &GlobalArgs, args: &DoctorArgs) -> Exit {
    let loaded = match load_config(global) {
        Ok(c) => c,
        Err(exit) => return exit,
    };
    println!("agent-tui {}", env!("CARGO_PKG_VERSION"));
    let mut healthy = true;
    match &loaded.path {
        Some(path) => line(
            "config",
            format!("{} (from {})", path.display(), loaded.origin),
        ),
        None => line("config", "no file found; built-in defaults in use".into()),
    }
    let state = StateDirs::locate(&process_env);
    match &state {
        Some(s) => line(
            "state home",
            format!("{} (from {})", s.home.display(), s.origin),
        ),
        None => {
            healthy = false;
            line(
                "state home",
                "cannot be determined: set AGENT_TUI_HOME".into(),
            );
        }
    }
    let store_exists = match &state {
        Some(dirs) => {
            healthy &= store_line(&dirs.home, &loaded.config.storage);
            !matches!(
                Target::resolve(&dirs.home, &loaded.config.storage, &process_env),
                Ok(Target::Sqlite(path)) if !path.exists()
            )
        }
        None => false,
    };
    line(
        "commands",
        crate::tools::confine::probe().describe(loaded.config.exec.network),
    );
    match super::context::workspace(global, &loaded.config, &args.root) {
        Ok(ws) => {
            line("agent root", ws.root().display().to_string());
            for scope in &ws.scopes()[1..] {
                line(
                    "scope",
                    format!(
                        "{scope} {} ({})",
                        scope.root.display(),
                        scope.access.as_str()
                    ),
                );
            }
            // Doctor creates no state: with no store yet, nothing was interrupted.
            if store_exists {
                healthy &= recovery_line(&loaded.config, &ws);
            }
        }
        Err(e) => {
            healthy = false;
            line("agent root", format!("PROBLEM: {e}"));
        }
    }
    let choice = loaded.config.choose_provider(
        global.provider.as_deref(),
        global.model.as_deref(),
        &process_env,
        ollama_answers,
    );
    match choice {
        Err(e) => {
            eprintln!("agent-tui: {e}");
            return Exit::Usage;
        }
        Ok(None) => {
            line("provider", format!("PROBLEM: {SETUP_HINT}"));
            return Exit::Failed;
        }
        Ok(Some(choice)) => {
            let p = &choice.provider;
            line(
                "provider",
                format!(
                    "{} ({}): model {} at {}",
                    choice.name, choice.reason, p.model, p.base_url
                ),
            );
            if let Some(var) = &p.api_key_env {
                if process_env(var).is_some_and(|v| !v.trim().is_empty()) {
                    line("api key", format!("${var} is set"));
                } else {
                    healthy = false;
                    line(
                        "api key",
                        format!("PROBLEM: ${var} is not set; export it with your key"),
                    );
                }
            }
            let reachable = match probe(&choice.name, p, loaded.config.agent.request_timeout_secs) {
                Ok(report) => {
                    line("reachable", report);
                    true
                }
                Err(problem) => {
                    healthy = false;
                    line("reachable", format!("PROBLEM: {problem}"));
                    false
                }
            };
            line(
                "context",
                context_line(&choice.name, p, &loaded.config, reachable),
            );
        }
    }
    if healthy { Exit::Ok } else { Exit::Failed }
}

/// Opening the root's state settles an apply or rollback an earlier
/// process left half-written; this says what was found.
fn recovery_line(config: &crate::config::Config, ws: &Workspace) -> bool {
    match super::context::open_root(config, ws) {
        Ok((_, recovered)) if recovered.is_empty() => {
            line("recovery", "no interrupted apply or rollback".into());
            true
        }
        Ok((_, recovered)) => {
            for r in &recovered {
                line("recovery", r.summary());
            }
            true
        }
        // open_root has said why.
        Err(_) => false,
    }
}

/// The window in force, where it came from, and what is reserved of it.
fn context_line(name: &str, config: &ProviderConfig, all: &Config, reachable: bool) -> String {
    let server = match (config.context_window, reachable) {
        (None, true) => build_provider(name, config, Duration::from_secs(5), &process_env)
            .ok()
            .and_then(|provider| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .ok()?;
                runtime.block_on(async {
                    tokio::time::timeout(PROBE_BUDGET, provider.discover_window())
                        .await
                        .ok()
                        .flatten()
                })
            }),
        _ => None,
    };
    let window = ContextWindow::resolve(config.context_window, server, &config.model);
    format!(
        "{} tokens ({}); {} kept for the reply; tool results cut at {} tokens; compaction at {}%",
        window.tokens,
        window.source,
        window.output_reserve(config.max_output_tokens),
        window.tool_output_cap(all.context.max_tool_output_tokens),
        all.context.compact_at_percent
    )
}

fn line(label: &str, text: String) {
    println!("{label:<11} {text}");
}

/// Lists the provider's models (a cheap authenticated request), in under 5 s.
fn probe(name: &str, config: &ProviderConfig, timeout_secs: u64) -> Result<String, String> {
    let provider = build_provider(
        name,
        config,
        Duration::from_secs(timeout_secs),
        &process_env,
    )
    .map_err(|e| format!("skipped: {e}"))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    runtime.block_on(async {
        match tokio::time::timeout(PROBE_BUDGET, provider.probe()).await {
            Ok(Ok(report)) => Ok(report),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!(
                "{} did not answer within {} s",
                config.base_url,
                PROBE_BUDGET.as_secs()
            )),
        }
    })
}

/// Bytes as people read them.
fn human_size(bytes: u64) -> String {
    match bytes {
        b if b < 1 << 10 => format!("{b} B"),
        b if b < 1 << 20 => format!("{:.1} KiB", b as f64 / 1024.0),
        b if b < 1 << 30 => format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64),
        b => format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64),
    }
}

/// The store's line: kind, location (never a password), schema, size. A
/// SQLite store not created yet is not created by looking.
fn store_line(home: &std::path::Path, config: &crate::config::StorageConfig) -> bool {
    let target = match Target::resolve(home, config, &process_env) {
        Ok(t) => t,
        Err(e) => {
            line("store", format!("PROBLEM: {e}"));
            return false;
        }
    };
    if let Target::Sqlite(path) = &target
        && !path.exists()
    {
        line(
            "store",
            format!("sqlite at {} (created on first use)", path.display()),
        );
        return true;
    }
    match Store::open(home, config, &process_env, &crate::agent::LegacySessions) {
        Ok(store) => {
            let info = store.info();
            let size = info.size.map_or("size unknown".into(), human_size);
            line(
                "store",
                format!(
                    "{} at {} (schema version {}, {size})",
                    info.kind.as_str(),
                    info.location,
                    info.schema_version
                ),
            );
            true
        }
        Err(e) => {
            line("store", format!("PROBLEM: {e}"));
            false
        }
    }
}
