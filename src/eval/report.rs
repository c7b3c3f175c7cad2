//! The eval report: per-task results, the metrics of each routing mode
//! exactly as SPEC section 12 defines them, `report.json` and `report.md`
//! (a table per mode, then the modes side by side).

use crate::protocol::words::counted;
use serde::Serialize;

use super::run::TaskResult;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metrics {
    pub tasks: usize,
    pub success_rate: f64,
    /// Accepted / proposed hunks over the run; `null` when none were proposed.
    pub accepted_hunk_ratio: Option<f64>,
    /// Share of tasks with at least one conflict.
    pub conflict_rate: f64,
    /// Tool calls of the successful tasks / successful tasks.
    pub tool_calls_per_success: Option<f64>,
    pub p50_latency_ms: u64,
    pub p95_latency_ms: u64,
    /// `null` when a task's cost is unknown (no price for its provider).
    pub cost_per_task_usd: Option<f64>,
    pub clarification_rate: f64,
    pub fallback_rate: f64,
    /// Tasks whose last verify passed / tasks a verify ran on; `null`
    /// when none ran (a plain run, or no project had a check).
    pub verify_pass_rate: Option<f64>,
    /// Proposals remade after a failed verify, per task.
    pub repairs_per_task: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoutingRun {
    /// The routing mode, with ` + verify` for the verify-and-repair run.
    pub routing: String,
    pub reviewer: super::run::Reviewer,
    pub tasks: Vec<TaskResult>,
    pub metrics: Metrics,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub suite: String,
    pub runs: Vec<RoutingRun>,
}

/// The nearest-rank percentile `p` (0-100) of `values`; 0 for none.
pub fn percentile(values: &[u64], p: f64) -> u64 {
    if values.is_empty() {
        return 0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn share(tasks: &[TaskResult], has: impl Fn(&TaskResult) -> bool) -> f64 {
    if tasks.is_empty() {
        return 0.0;
    }
    tasks.iter().filter(|t| has(t)).count() as f64 / tasks.len() as f64
}

pub fn metrics(tasks: &[TaskResult]) -> Metrics {
    let n = tasks.len();
    let successes: Vec<&TaskResult> = tasks.iter().filter(|t| t.success).collect();
    let proposed: u64 = tasks.iter().map(|t| t.hunks_proposed).sum();
    let accepted: u64 = tasks.iter().map(|t| t.hunks_accepted).sum();
    let latencies: Vec<u64> = tasks.iter().map(|t| t.latency_ms).collect();
    let costs: Option<Vec<f64>> = tasks.iter().map(|t| t.cost_usd).collect();
    Metrics {
        tasks: n,
        success_rate: share(tasks, |t| t.success),
        accepted_hunk_ratio: (proposed > 0).then(|| accepted as f64 / proposed as f64),
        conflict_rate: share(tasks, |t| t.conflicts > 0),
        tool_calls_per_success: (!successes.is_empty()).then(|| {
            successes.iter().map(|t| t.tool_calls).sum::<u64>() as f64 / successes.len() as f64
        }),
        p50_latency_ms: percentile(&latencies, 50.0),
        p95_latency_ms: percentile(&latencies, 95.0),
        cost_per_task_usd: costs
            .filter(|_| n > 0)
            .map(|c| c.iter().sum::<f64>() / n as f64),
        clarification_rate: share(tasks, |t| t.clarifications > 0),
        fallback_rate: share(tasks, |t| t.fallback_reason.is_some()),
        verify_pass_rate: {
            let verified: Vec<bool> = tasks.iter().filter_map(|t| t.verify_passed).collect();
            (!verified.is_empty())
                .then(|| verified.iter().filter(|p| **p).count() as f64 / verified.len() as f64)
        },
        repairs_per_task: if n == 0 {
            0.0
        } else {
            tasks.iter().map(|t| t.repairs).sum::<u64>() as f64 / n as f64
        },
    }
}

fn ratio(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{:.0} %", v * 100.0))
}

fn number(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{v:.2}"))
}

fn dollars(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("${v:.4}"))
}

/// A task's verify: its last result and the repairs (`–`: none ran).
fn verify_cell(t: &TaskResult) -> String {
    match t.verify_passed {
        None => "–".into(),
        Some(passed) => format!(
            "{} ({}, {})",
            if passed { "passed" } else { "failed" },
            counted(t.verifies, "run"),
            counted(t.repairs, "repair")
        ),
    }
}

/// A metric's name and how it is written.
type MetricRow = (&'static str, fn(&Metrics) -> String);

/// `report.md`: a table per routing mode, then the side-by-side matrix.
pub fn markdown(report: &Report) -> String {
    let mut out = format!("# Eval: {}\n", report.suite);
    for run in &report.runs {
        out.push_str(&format!(
            "\n## Routing: {}\n\n| task | ok | checks failed | hunks (accepted/proposed) | conflicts | tool calls | clarifications | latency | tokens in/out | cost | provider | fallback | verify | error |\n|---|---|---|---|---:|---:|---:|---:|---|---:|---|---|---|---|\n",
            run.routing
        ));
        for t in &run.tasks {
            out.push_str(&format!(
                "| {} | {} | {} | {}/{} | {} | {} | {} | {} ms | {}/{} | {} | {} | {} | {} | {} |\n",
                t.name,
                if t.success { "✓" } else { "✗" },
                t.checks_failed.join("; ").replace('|', "\\|"),
                t.hunks_accepted,
                t.hunks_proposed,
                t.conflicts,
                t.tool_calls,
                t.clarifications,
                t.latency_ms,
                t.input_tokens,
                t.output_tokens,
                dollars(t.cost_usd),
                t.provider,
                t.fallback_reason.map_or("", |r| r.as_str()),
                verify_cell(t),
                t.error
                    .as_deref()
                    .unwrap_or("")
                    .replace('|', "\\|")
                    .replace('\n', " "),
            ));
        }
    }
    out.push_str("\n## Side by side\n\n| metric |");
    for run in &report.runs {
        out.push_str(&format!(" {} |", run.routing));
    }
    out.push_str("\n|---|");
    out.push_str(&"---:|".repeat(report.runs.len()));
    out.push('\n');
    let rows: [MetricRow; 12] = [
        ("tasks", |m| m.tasks.to_string()),
        ("success rate", |m| ratio(Some(m.success_rate))),
        ("accepted hunk ratio", |m| ratio(m.accepted_hunk_ratio)),
        ("conflict rate", |m| ratio(Some(m.conflict_rate))),
        ("tool calls per success", |m| {
            number(m.tool_calls_per_success)
        }),
        ("p50 latency", |m| format!("{} ms", m.p50_latency_ms)),
        ("p95 latency", |m| format!("{} ms", m.p95_latency_ms)),
        ("cost per task", |m| dollars(m.cost_per_task_usd)),
        ("clarification rate", |m| ratio(Some(m.clarification_rate))),
        ("fallback rate", |m| ratio(Some(m.fallback_rate))),
        ("verify pass rate", |m| ratio(m.verify_pass_rate)),
        ("repairs per task", |m| format!("{:.2}", m.repairs_per_task)),
    ];
    for (name, value) in rows {
        out.push_str(&format!("| {name} |"));
        for run in &report.runs {
            out.push_str(&format!(" {} |", value(&run.metrics)));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::FallbackReason;

    fn task(success: bool, f: impl FnOnce(&mut TaskResult)) -> TaskResult {
        let mut t = TaskResult {
            success,
            ..TaskResult::default()
        };
        f(&mut t);
        t
    }

    #[test]
    fn each_formula() {
        let tasks = vec![
            task(true, |t| {
                t.hunks_proposed = 3;
                t.hunks_accepted = 2;
                t.tool_calls = 4;
                t.latency_ms = 100;
                t.cost_usd = Some(0.01);
            }),
            task(true, |t| {
                t.tool_calls = 2;
                t.latency_ms = 300;
                t.clarifications = 2;
                t.cost_usd = Some(0.03);
            }),
            task(false, |t| {
                t.hunks_proposed = 1;
                t.conflicts = 2;
                t.tool_calls = 9;
                t.latency_ms = 200;
                t.fallback_reason = Some(FallbackReason::Timeout);
                t.cost_usd = Some(0.02);
            }),
            task(false, |t| {
                t.latency_ms = 1000;
                t.cost_usd = Some(0.0);
            }),
        ];
        let m = metrics(&tasks);
        assert_eq!(m.tasks, 4);
        assert_eq!(m.success_rate, 0.5);
        assert_eq!(m.accepted_hunk_ratio, Some(0.5)); // 2 of 4 proposed
        assert_eq!(m.conflict_rate, 0.25); // tasks with a conflict, not conflicts
        assert_eq!(m.tool_calls_per_success, Some(3.0)); // (4 + 2) / 2
        assert_eq!(m.p50_latency_ms, 200); // nearest rank: 2nd of 4
        assert_eq!(m.p95_latency_ms, 1000);
        assert_eq!(m.cost_per_task_usd, Some(0.015));
        assert_eq!(m.clarification_rate, 0.25);
        assert_eq!(m.fallback_rate, 0.25);
        // No hunks, no successes, an unknown price.
        let m = metrics(&[task(false, |t| t.cost_usd = None)]);
        assert_eq!(m.accepted_hunk_ratio, None);
        assert_eq!(m.tool_calls_per_success, None);
        assert_eq!(m.cost_per_task_usd, None);
        assert_eq!(percentile(&[], 50.0), 0);
        assert_eq!(percentile(&[5], 95.0), 5);
    }
}
