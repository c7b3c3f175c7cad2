//! The shipped suite `evals/core` is solvable: every task's reference
//! solution, replayed by a loopback model through `agent-tui eval --jobs 2
//! --verify`, passes every check, plain and with verify-and-repair, and
//! every task that names its project's check passes its verify.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;

use serde_json::Value;
use support::llm_server::LlmServer;
use support::reference::{reference_config, reference_model};
use support::{Env, code, stderr, stdout};

#[test]
fn every_shipped_task_passes_with_its_reference_solution() {
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("evals/core");
    let env = Env::new();
    let server = LlmServer::start_model(reference_model(&suite));
    let cfg = reference_config(&env, &server);
    let out_dir = env.home.path().join("out");
    let out = env
        .cmd()
        .arg("--config")
        .arg(&cfg)
        .args(["eval", "--jobs", "2", "--json", "--out"])
        .arg(&out_dir)
        .arg(&suite)
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let run = &report["runs"][0];
    let tasks = run["tasks"].as_array().unwrap();
    assert!(tasks.len() >= 30, "{} tasks", tasks.len());
    let failed: Vec<String> = tasks
        .iter()
        .filter(|t| t["success"] != true)
        .map(|t| format!("{}: {} {}", t["name"], t["checks_failed"], t["error"]))
        .collect();
    assert!(failed.is_empty(), "failed tasks:\n{}", failed.join("\n"));
    assert_eq!(run["metrics"]["success_rate"], 1.0);
    assert!(run["metrics"]["conflict_rate"].as_f64().unwrap() > 0.0);
    assert!(run["metrics"]["clarification_rate"].as_f64().unwrap() > 0.0);
    let ratio = run["metrics"]["accepted_hunk_ratio"].as_f64().unwrap();
    assert!(
        ratio > 0.0 && ratio < 1.0,
        "rejected vendor hunks count: {ratio}"
    );
}

#[test]
fn every_shipped_check_passes_its_reference_in_the_verify_run() {
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("evals/core");
    let env = Env::new();
    let server = LlmServer::start_model(reference_model(&suite));
    let cfg = reference_config(&env, &server);
    let out = env
        .cmd()
        .arg("--config")
        .arg(&cfg)
        .args(["eval", "--jobs", "2", "--verify", "--json", "--out"])
        .arg(env.home.path().join("out"))
        .arg(&suite)
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let verified = &report["runs"][1];
    assert_eq!(verified["reviewer"], "verify_and_repair");
    let failed: Vec<String> = verified["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["success"] != true)
        .map(|t| {
            format!(
                "{}: {} {} verify={}",
                t["name"], t["checks_failed"], t["error"], t["verify"]
            )
        })
        .collect();
    assert!(failed.is_empty(), "failed tasks:\n{}", failed.join("\n"));
    assert_eq!(verified["metrics"]["success_rate"], 1.0);
    assert_eq!(verified["metrics"]["verify_pass_rate"], 1.0);
    let checked: Vec<&str> = verified["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["verify_passed"] == true)
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(checked.len() >= 13, "tasks verified: {checked:?}");
    assert!(checked.contains(&"py_fix_failing_test") && checked.contains(&"rs_add_derive"));
}
