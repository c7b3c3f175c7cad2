//! `doctor`'s providers as jobs use them under `[routing]` (or
//! `--routing`): the mode, then each provider it uses (`hybrid_auto`: the
//! local one jobs start on, then the remote one they fall back to), each
//! checked like any provider (key, reachable, window, tools), side by
//! side so two slow servers cost the time of one.

use super::builder::{Leg, legs, process_env};
use super::doctor::{Report, provider_lines};
use crate::config::{Config, ProviderChoice, RoutingMode, SETUP_HINT, ollama_answers};

/// The `routing` line and each provider's lines. `flags`: `--routing`,
/// `--provider`, `--model`. `Err`: a mistake in the config or the flags.
pub(super) fn routing_lines(
    r: &mut Report,
    config: &Config,
    flags: (Option<&str>, Option<&str>, Option<&str>),
) -> Result<(), String> {
    let (routing_flag, provider, model) = flags;
    let (first, fallback) = legs(&config.routing, provider, model)?;
    let mut chosen = Vec::new();
    for (leg, role) in [(Some(first), Role::First), (fallback, Role::Fallback)] {
        let Some(leg) = leg else { continue };
        match choose(config, &leg)? {
            Some(choice) => chosen.push((choice, reason(&leg, role, config))),
            None => {
                r.problem("provider", SETUP_HINT.to_string());
                return Ok(());
            }
        }
    }
    r.ok("routing", routing_text(config, routing_flag, &chosen));
    let checked: Vec<Vec<_>> = std::thread::scope(|scope| {
        let running: Vec<_> = chosen
            .iter()
            .map(|(choice, reason)| {
                scope.spawn(move || {
                    let mut lines = Report(Vec::new());
                    let (name, p) = (&choice.name, &choice.provider);
                    let reason = reason.clone().unwrap_or_else(|| choice.reason.clone());
                    provider_lines(&mut lines, name, &reason, p, config);
                    lines.0
                })
            })
            .collect();
        running
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    let mut lines = Report(Vec::new());
                    lines.problem("provider", "the check of this provider crashed".into());
                    lines.0
                })
            })
            .collect()
    });
    for lines in checked {
        r.0.extend(lines);
    }
    Ok(())
}

/// Where a provider stands in the routing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Jobs start on it.
    First,
    /// `hybrid_auto`: jobs go on with it after a trigger.
    Fallback,
}

/// The provider a leg names, as a job would get it (`None`: none set up).
fn choose(config: &Config, leg: &Leg) -> Result<Option<ProviderChoice>, String> {
    config
        .choose_provider(
            leg.name.as_deref(),
            leg.model.as_deref(),
            &process_env,
            ollama_answers,
        )
        .map_err(|e| e.to_string())
}

/// Why this provider (`None`: the usual choice's own reason).
fn reason(leg: &Leg, role: Role, config: &Config) -> Option<String> {
    let from = leg.from?;
    Some(match (config.routing.mode, role) {
        (RoutingMode::HybridAuto, Role::First) => format!("{from}; every job starts here"),
        (RoutingMode::HybridAuto, Role::Fallback) => {
            format!("{from}; jobs fall back here on a trigger")
        }
        (RoutingMode::Remote | RoutingMode::Local, _) => from.to_string(),
    })
}

/// The mode, where it comes from, and the providers it uses.
fn routing_text(
    config: &Config,
    flag: Option<&str>,
    chosen: &[(ProviderChoice, Option<String>)],
) -> String {
    let mode = config.routing.mode;
    let from = match (flag, mode) {
        (Some(_), _) => "--routing",
        (None, RoutingMode::Remote) => "[routing] mode, or the default",
        (None, RoutingMode::Local | RoutingMode::HybridAuto) => "[routing] mode",
    };
    let name = |i: usize| chosen.get(i).map_or("?", |(c, _)| c.name.as_str());
    let uses = match mode {
        RoutingMode::Remote | RoutingMode::Local => format!("jobs run on {} only", name(0)),
        RoutingMode::HybridAuto => format!(
            "jobs start on {} and fall back to {} when a trigger fires",
            name(0),
            name(1)
        ),
    };
    format!("{} (from {from}): {uses}", mode.as_str())
}
