//! `agent-tui eval evals/core --jobs 2` (33 tasks) against the reference
//! model on loopback: wall time of the whole run, median of 3. Budget: 15 s
//! on 2 cores. Run with `cargo bench --bench eval`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use support::llm_server::LlmServer;
use support::reference::{reference_config, reference_model};

const RUNS: usize = 3;
const BUDGET: Duration = Duration::from_secs(15);

fn main() {
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("evals/core");
    let mut walls = Vec::new();
    for _ in 0..RUNS {
        let env = support::Env::new();
        let server = LlmServer::start_model(reference_model(&suite));
        let cfg = reference_config(&env, &server);
        let start = Instant::now();
        let out = env
            .cmd()
            .arg("--config")
            .arg(&cfg)
            .args(["eval", "--jobs", "2", "--out"])
            .arg(env.home.path().join("out"))
            .arg(&suite)
            .output()
            .unwrap();
        walls.push(start.elapsed());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("(100 %)"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    walls.sort();
    println!(
        "eval evals/core --jobs 2: median {:.2} s wall (min {:.2}, max {:.2}; budget {} s)",
        walls[RUNS / 2].as_secs_f64(),
        walls[0].as_secs_f64(),
        walls[RUNS - 1].as_secs_f64(),
        BUDGET.as_secs()
    );
    assert!(walls[RUNS / 2] <= BUDGET, "over budget");
}
