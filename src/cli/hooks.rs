//! `agent-tui hooks list | trust | test` (SPEC 21): the hooks of an agent
//! root with their source and trust; trusting a project's hooks as they
//! are now; a dry run of one event's hooks that decides like a job would
//! and creates no session, job or checkpoint (exit 0 pass, 1 block, 2 a
//! config or usage error).

use serde_json::{Value, json};

use super::Exit;
use super::args::{GlobalArgs, HooksAction, HooksArgs};
use super::context::{builder, engine_error, run, start, usage};
use crate::config::HookEvent;
use crate::protocol::{HookDecision, HookTrust};

pub fn run_hooks(global: &GlobalArgs, args: HooksArgs) -> Exit {
    let root = match &args.action {
        HooksAction::List { root, .. }
        | HooksAction::Trust { root, .. }
        | HooksAction::Test { root, .. } => root.clone(),
    };
    // The store is read for what is trusted; nothing here makes a
    // session, job or checkpoint.
    let b = builder(global, &root);
    let (rt, engine) = match start(b) {
        Ok(started) => started,
        Err(exit) => return exit,
    };
    run(rt, engine, |engine| async move {
        match args.action {
            HooksAction::List { json, .. } => list(&engine, json),
            HooksAction::Trust { name, .. } => match engine.trust_hooks(name).await {
                Ok(names) if names.is_empty() => {
                    println!(
                        "no project hooks to trust ({})",
                        crate::config::PROJECT_FILE
                    );
                    Exit::Ok
                }
                Ok(names) => {
                    for n in names {
                        println!("trusted {n}");
                    }
                    Exit::Ok
                }
                Err(e) => engine_error(e),
            },
            HooksAction::Test {
                event,
                hook,
                input,
                json,
                ..
            } => test(&engine, &event, hook, input.as_deref(), json).await,
        }
    })
}

fn list(engine: &crate::agent::Engine, json: bool) -> Exit {
    let (hooks, problems) = engine.hooks();
    if json {
        println!("{}", json!({"hooks": hooks, "problems": problems}));
    } else {
        if hooks.is_empty() {
            println!(
                "no hooks ([[hooks.run]] in the config, or {})",
                crate::config::PROJECT_FILE
            );
        }
        for h in &hooks {
            let trust = match h.trust {
                HookTrust::Config => "config",
                HookTrust::Trusted => "trusted",
                HookTrust::Changed => "CHANGED since trusted: the trusted copy runs",
                HookTrust::Untrusted => "not trusted: runs nothing (agent-tui hooks trust)",
            };
            println!(
                "{}  on {}  {}  [{trust}]",
                h.name,
                h.event,
                h.command.join(" ")
            );
            for s in h.scripts.iter().filter(|s| s.changed) {
                println!("  changed: {}", s.path);
            }
        }
        for p in &problems {
            eprintln!("agent-tui: {p}");
        }
    }
    if problems.is_empty() {
        Exit::Ok
    } else {
        Exit::Usage
    }
}

async fn test(
    engine: &crate::agent::Engine,
    event: &str,
    hook: Option<String>,
    input: Option<&std::path::Path>,
    json: bool,
) -> Exit {
    let Some(event) = HookEvent::parse(event) else {
        let names: Vec<&str> = HookEvent::ALL.iter().map(|e| e.as_str()).collect();
        return usage(format!(
            "no hook event {event}; the events are {}",
            names.join(", ")
        ));
    };
    let data: Value = match input {
        None => json!({}),
        Some(path) => match std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
        {
            Ok(v) => v,
            Err(e) => return usage(format!("--input {}: {e}", path.display())),
        },
    };
    let tested = match engine
        .test_hooks(event, hook, data, Default::default())
        .await
    {
        Ok(o) => o,
        Err(e) => return engine_error(e),
    };
    let outcomes = &tested.runs;
    let blocked = outcomes.iter().any(|o| o.decision == HookDecision::Block);
    if json {
        let decision = outcomes.last().map_or("pass", |o| o.decision.as_str());
        println!(
            "{}",
            json!({"event": event.as_str(), "decision": decision, "runs": outcomes, "unmatched": tested.unmatched})
        );
    } else {
        for skip in &tested.unmatched {
            println!("{}: not run: {}", skip.name, skip.reason);
        }
        match (outcomes.is_empty(), tested.unmatched.is_empty()) {
            (true, true) => println!("no hook runs on {}", event.as_str()),
            (true, false) => println!(
                "no hook matched this input on {}: pass (nothing ran)",
                event.as_str()
            ),
            (false, _) => {}
        }
        for o in outcomes {
            let why = o.reason.as_deref().or(o.error.as_deref()).unwrap_or("");
            println!(
                "{}: {} ({} ms) {why}",
                o.name,
                o.decision.as_str(),
                o.duration_ms
            );
        }
    }
    if blocked { Exit::Failed } else { Exit::Ok }
}
