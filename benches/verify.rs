//! Verify's overhead beyond the check itself (SPEC 17; budget < 10 %): a
//! Python project of 1,000 files (500 modules, 500 test files, 1,000
//! tests) with a pending one-hunk review. Five times each, medians:
//! `agent-tui review` (start, the review read), `agent-tui review
//! --verify` (the same plus the verify), and the check alone (`pytest -q`
//! in a ready copy). Overhead = (verify − review) − check alone, against
//! the check alone. Run with `cargo bench --bench verify`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use support::jobs::{KEY, one_turn_configured};

const MODULES: usize = 500;
const RUNS: usize = 5;

fn project(root: &Path) {
    std::fs::write(root.join("pytest.ini"), "[pytest]\npythonpath = .\n").unwrap();
    std::fs::create_dir_all(root.join("pkg")).unwrap();
    std::fs::create_dir_all(root.join("tests")).unwrap();
    std::fs::write(root.join("pkg/__init__.py"), "").unwrap();
    for i in 0..MODULES {
        std::fs::write(
            root.join(format!("pkg/mod_{i:03}.py")),
            format!("def f_{i}(x):\n    return x + {i}\n\n\ndef g_{i}(x):\n    return x * {i}\n"),
        )
        .unwrap();
        std::fs::write(
            root.join(format!("tests/test_{i:03}.py")),
            format!(
                "from pkg.mod_{i:03} import f_{i}, g_{i}\n\n\ndef test_f():\n    assert f_{i}(1) == {}\n\n\ndef test_g():\n    assert g_{i}(2) == {}\n",
                1 + i,
                2 * i
            ),
        )
        .unwrap();
    }
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let env = support::Env::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    project(root);
    let edits = json!({"edits": [{"file_path": "pkg/mod_007.py", "operation": "replace",
        "start_line": 2, "end_line": 2, "old_text": "    return x + 7",
        "new_text": "    return 7 + x\n"}]});
    let (_, _server, cfg) = one_turn_configured(&env, root, &[("propose_edits", edits)], "");
    let review = |extra: &[&str]| {
        let started = Instant::now();
        let out = env
            .cmd()
            .env("TEST_LLM_KEY", KEY)
            .arg("--config")
            .arg(&cfg)
            .args(["review", "--accept-all", "--json"])
            .args(extra)
            .arg("--root")
            .arg(root)
            .output()
            .unwrap();
        let took = started.elapsed();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (took, String::from_utf8_lossy(&out.stdout).into_owned())
    };
    // The check alone, in a ready copy with the hunk in.
    let alone = tempfile::tempdir().unwrap();
    let copied = Command::new("cp")
        .args(["-a"])
        .arg(format!("{}/.", root.display()))
        .arg(alone.path())
        .status()
        .unwrap();
    assert!(copied.success());
    std::fs::write(
        alone.path().join("pkg/mod_007.py"),
        "def f_7(x):\n    return 7 + x\n\n\ndef g_7(x):\n    return x * 7\n",
    )
    .unwrap();
    let check = || {
        let started = Instant::now();
        let ok = Command::new("sh")
            .args([
                "-c",
                "pytest -q -p no:cacheprovider > /tmp/verify-bench-check.log 2>&1",
            ])
            .current_dir(alone.path())
            .status()
            .unwrap()
            .success();
        assert!(ok);
        started.elapsed()
    };
    // Warm every cache once (Python's bytecode of pytest, the page cache).
    check();
    review(&["--verify"]);
    let (mut plain, mut verified, mut checks) = (Vec::new(), Vec::new(), Vec::new());
    let (mut reported_check, mut reported_overhead) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        plain.push(review(&[]).0);
        let (took, out) = review(&["--verify"]);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["verify"]["passed"], true, "{v}");
        reported_check.push(Duration::from_millis(
            v["verify"]["duration_ms"].as_u64().unwrap(),
        ));
        reported_overhead.push(Duration::from_millis(
            v["verify"]["overhead_ms"].as_u64().unwrap(),
        ));
        verified.push(took);
        checks.push(check());
    }
    let (plain, verified, check) = (
        median(&mut plain),
        median(&mut verified),
        median(&mut checks),
    );
    let added = verified.saturating_sub(plain);
    let overhead = added.as_secs_f64() - check.as_secs_f64();
    println!(
        "verify of a {}-file Python project (pytest, {} tests): review {plain:?}, review --verify \
         {verified:?}, the check alone {check:?}; overhead {:.0} ms = {:.1} % of the check \
         (budget 10 %); the result's own split: check {:?}, copy + write + removal {:?}",
        2 * MODULES + 2,
        2 * MODULES,
        overhead * 1000.0,
        100.0 * overhead / check.as_secs_f64(),
        median(&mut reported_check),
        median(&mut reported_overhead),
    );
}
