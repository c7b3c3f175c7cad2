//! `agent-tui eval SUITE`: loads the suite (exit 2 naming the file, field
//! and why), runs every task once per routing mode, `--jobs` at a time,
//! with a progress bar, and writes `report.json` and `report.md`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;

use super::args::{EvalArgs, GlobalArgs};
use super::context::{failed, providers_for, usage};
use super::{Exit, load_config};
use crate::config::{Config, RoutingMode};
use crate::eval::{self, Report, RoutingRun};

pub fn run(global: &GlobalArgs, args: &EvalArgs) -> Exit {
    let config = match load_config(global) {
        Ok(loaded) => loaded.config,
        Err(exit) => return exit,
    };
    let suite = match eval::load(&args.suite) {
        Ok(s) => s,
        Err(e) => return usage(e),
    };
    let modes: Vec<RoutingMode> = match &global.routing {
        Some(list) => match list
            .split(',')
            .map(|m| RoutingMode::parse(m.trim()))
            .collect()
        {
            Ok(m) => m,
            Err(e) => return usage(e),
        },
        None => vec![config.routing.mode],
    };
    // Every mode's providers must be buildable before anything runs.
    let configs: Vec<Config> = modes
        .iter()
        .map(|mode| {
            let mut c = config.clone();
            c.routing.mode = *mode;
            c
        })
        .collect();
    for c in &configs {
        if let Err(e) = providers_for(global, c, &c.routing) {
            return usage(format!("routing {}: {e}", c.routing.mode.as_str()));
        }
    }
    let out = args.out.clone().unwrap_or_else(|| {
        let stamp = humantime::format_rfc3339_seconds(std::time::SystemTime::now())
            .to_string()
            .replace(':', "-");
        PathBuf::from("eval-out").join(stamp)
    });
    if let Err(e) = std::fs::create_dir_all(&out) {
        return failed(format!("cannot create {}: {e}", out.display()));
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return failed(format!("cannot start the async runtime: {e}")),
    };
    let total = (suite.tasks.len() * configs.len()) as u64;
    let bar = indicatif::ProgressBar::new(total).with_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} tasks {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let timeout = Duration::from_secs(args.task_timeout);
    let mut runs = Vec::new();
    for config in configs {
        let mode = config.routing.mode.as_str();
        bar.set_message(format!("({mode})"));
        let config = Arc::new(config);
        let tasks = runtime.block_on(
            futures_util::stream::iter(suite.tasks.iter().cloned())
                .map(|task| {
                    let (config, bar) = (config.clone(), bar.clone());
                    async move {
                        let providers = providers_for(global, &config, &config.routing)
                            .map(|r| (r.primary, r.fallback));
                        let result = eval::run_task(&task, &config, providers, timeout).await;
                        bar.inc(1);
                        result
                    }
                })
                .buffered(args.jobs as usize)
                .collect::<Vec<_>>(),
        );
        let metrics = eval::metrics(&tasks);
        runs.push(RoutingRun {
            routing: mode.to_string(),
            tasks,
            metrics,
        });
    }
    bar.finish_and_clear();
    let report = Report {
        suite: suite.name.clone(),
        runs,
    };
    let json = match serde_json::to_string_pretty(&report) {
        Ok(j) => j,
        Err(e) => return failed(format!("cannot write the report: {e}")),
    };
    let written = std::fs::write(out.join("report.json"), &json)
        .and_then(|()| std::fs::write(out.join("report.md"), eval::markdown(&report)));
    if let Err(e) = written {
        return failed(format!("cannot write the report to {}: {e}", out.display()));
    }
    if args.json {
        println!("{json}");
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
