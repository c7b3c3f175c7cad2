//! `agent-tui eval SUITE`: loads the suite (exit 2 naming the file, field
//! and why), runs every task once per routing mode, `--jobs` at a time,
//! with a progress bar, and writes `report.json` and `report.md`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;

use super::Exit;
use super::args::{EvalArgs, GlobalArgs};
use super::context::{failed, usage};
use crate::agent::{check_providers, process_env};
use crate::config::{Config, RoutingMode};
use crate::eval::{self, Choice, Report, RoutingRun};

pub fn run(global: &GlobalArgs, args: &EvalArgs) -> Exit {
    let choice = Choice {
        provider: global.provider.clone(),
        model: global.model.clone(),
    };
    let config = match crate::config::load(global.config.as_deref(), &process_env) {
        Ok(loaded) => loaded.config,
        Err(e) => return usage(e),
    };
    let suite = match eval::load(&args.suite) {
        Ok(s) => s,
        Err(e) => return usage(e),
    };
    let configs = match configs(global, config, &choice) {
        Ok(c) => c,
        Err(exit) => return exit,
    };
    let out = args.out.clone().unwrap_or_else(|| {
        let stamp = humantime::format_rfc3339_seconds(std::time::SystemTime::now())
            .to_string()
            .replace(':', "-");
        PathBuf::from("eval-out").join(stamp)
    });
    if let Err(e) = std::fs::create_dir_all(&out) {
        return failed(format!("cannot create {}: {e}", out.display()));
    }
    let runs = match run_modes(&suite, configs, &choice, args) {
        Ok(runs) => runs,
        Err(exit) => return exit,
    };
    let report = Report {
        suite: suite.name.clone(),
        runs,
    };
    write_report(&report, &out, args.json)
}

/// The config once per routing mode (`--routing a,b`), each mode's
/// providers checked before anything runs.
fn configs(global: &GlobalArgs, config: Config, choice: &Choice) -> Result<Vec<Config>, Exit> {
    let modes: Vec<RoutingMode> = match &global.routing {
        Some(list) => list
            .split(',')
            .map(|m| RoutingMode::parse(m.trim()))
            .collect::<Result<_, _>>()
            .map_err(usage)?,
        None => vec![config.routing.mode],
    };
    let configs: Vec<Config> = modes
        .iter()
        .map(|mode| {
            let mut c = config.clone();
            c.routing.mode = *mode;
            c
        })
        .collect();
    for c in &configs {
        if let Err(e) = check_providers(c, choice.provider.as_deref(), choice.model.as_deref()) {
            return Err(usage(format!("routing {}: {e}", c.routing.mode.as_str())));
        }
    }
    Ok(configs)
}

/// Every task once per mode, `--jobs` at a time, with a progress bar.
fn run_modes(
    suite: &eval::Suite,
    configs: Vec<Config>,
    choice: &Choice,
    args: &EvalArgs,
) -> Result<Vec<RoutingRun>, Exit> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| failed(format!("cannot start the async runtime: {e}")))?;
    // With --verify, each mode runs twice: as before, and verify-and-repair.
    let reviewers: &[eval::Reviewer] = if args.verify {
        &[eval::Reviewer::Plain, eval::Reviewer::VerifyAndRepair]
    } else {
        &[eval::Reviewer::Plain]
    };
    let total = (suite.tasks.len() * configs.len() * reviewers.len()) as u64;
    let bar = indicatif::ProgressBar::new(total).with_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} tasks {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let timeout = Duration::from_secs(args.task_timeout);
    let mut runs = Vec::new();
    for (config, &reviewer) in configs
        .iter()
        .flat_map(|c| reviewers.iter().map(move |r| (c, r)))
    {
        let routing = match reviewer {
            eval::Reviewer::Plain => config.routing.mode.as_str().to_string(),
            eval::Reviewer::VerifyAndRepair => {
                format!("{} + verify", config.routing.mode.as_str())
            }
        };
        bar.set_message(format!("({routing})"));
        let config = Arc::new(config.clone());
        let tasks = runtime.block_on(
            futures_util::stream::iter(suite.tasks.iter().cloned())
                .map(|task| {
                    let (config, bar, choice) = (config.clone(), bar.clone(), choice.clone());
                    async move {
                        let result =
                            eval::run_task(&task, &config, &choice, timeout, reviewer).await;
                        bar.inc(1);
                        result
                    }
                })
                .buffered(args.jobs as usize)
                .collect::<Vec<_>>(),
        );
        let metrics = eval::metrics(&tasks);
        runs.push(RoutingRun {
            routing,
            reviewer,
            tasks,
            metrics,
        });
    }
    bar.finish_and_clear();
    Ok(runs)
}

/// `report.json` and `report.md` in `out`, a line per mode on stderr.
fn write_report(report: &Report, out: &std::path::Path, json: bool) -> Exit {
    let text = match serde_json::to_string_pretty(report) {
        Ok(j) => j,
        Err(e) => return failed(format!("cannot write the report: {e}")),
    };
    let written = std::fs::write(out.join("report.json"), &text)
        .and_then(|()| std::fs::write(out.join("report.md"), eval::markdown(report)));
    if let Err(e) = written {
        return failed(format!("cannot write the report to {}: {e}", out.display()));
    }
    if json {
        println!("{text}");
    }
    for run in &report.runs {
        eprintln!(
            "{}: {} of {} tasks succeeded ({:.0} %)",
            run.routing,
            run.tasks.iter().filter(|t| t.success).count(),
            run.metrics.tasks,
            run.metrics.success_rate * 100.0
        );
    }
    eprintln!("report: {}", out.join("report.md").display());
    Exit::Ok
}
