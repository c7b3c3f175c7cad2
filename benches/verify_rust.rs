//! A Rust workspace verified again and again (the usual loop: verify, look,
//! verify): two crates, `base` (1,000 functions and their tests, untouched)
//! and `app` (uses it; the one-hunk review changes it), checked with
//! `cargo test -q --offline`. The first verify builds everything into the
//! root's build cache; the ones after it should rebuild only what the hunk
//! touched; and once a hunk in `base` is applied, `base` is built once for
//! it and not again. Prints each verify's check time and the cache's size.
//! Run with `cargo bench --bench verify_rust`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use support::jobs::{KEY, one_turn_configured};

const FUNCTIONS: usize = 1000;
const RUNS: usize = 4;

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn project(root: &Path) {
    write(
        root,
        "Cargo.toml",
        "[workspace]\nmembers = [\"base\", \"app\"]\nresolver = \"2\"\n",
    );
    write(
        root,
        "base/Cargo.toml",
        "[package]\nname = \"base\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    let mut lib = String::new();
    for i in 0..FUNCTIONS {
        lib.push_str(&format!(
            "pub fn f_{i}(v: &[u64]) -> u64 {{\n    v.iter().map(|x| x * {i} + 1).filter(|x| x % 3 != 0).sum()\n}}\n\n#[test]\nfn test_f_{i}() {{\n    assert_eq!(f_{i}(&[1, 2]), {});\n}}\n\n",
            [1u64, 2].iter().map(|x| x * i as u64 + 1).filter(|x| x % 3 != 0).sum::<u64>()
        ));
    }
    write(root, "base/src/lib.rs", &lib);
    write(
        root,
        "app/Cargo.toml",
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nbase = { path = \"../base\" }\n",
    );
    write(
        root,
        "app/src/lib.rs",
        "pub fn total(v: &[u64]) -> u64 {\n    base::f_1(v) + base::f_2(v)\n}\n\n#[test]\nfn totals() {\n    assert_eq!(total(&[1]), 2);\n}\n",
    );
}

/// `review --accept-all --verify` (and `--apply` with `apply`) of the
/// pending hunk: the check's own time.
fn verify(env: &support::Env, cfg: &Path, root: &Path, apply: bool) -> Duration {
    let mut cmd = env.cmd();
    cmd.env("TEST_LLM_KEY", KEY)
        .arg("--config")
        .arg(cfg)
        .args(["review", "--accept-all", "--json", "--verify", "--root"])
        .arg(root);
    if apply {
        cmd.arg("--apply");
    }
    let out = cmd.output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(v["verify"]["passed"], true, "{v}");
    println!(
        "  verify: check {}ms (copy: {})",
        v["verify"]["duration_ms"], v["verify"]["copy"]
    );
    Duration::from_millis(v["verify"]["duration_ms"].as_u64().unwrap())
}

/// The pending hunk verified `RUNS + 1` times: the first check's time and
/// the median of the others.
fn verify_again(env: &support::Env, cfg: &Path, root: &Path, what: &str) {
    println!("{what} verified {} times:", RUNS + 1);
    let first = verify(env, cfg, root, false);
    let mut again: Vec<Duration> = (0..RUNS).map(|_| verify(env, cfg, root, false)).collect();
    again.sort();
    println!(
        "first {first:?}; after the first: median {:?}",
        again[again.len() / 2]
    );
}

fn main() {
    let env = support::Env::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    project(root);
    let app_edit = json!({"edits": [{"file_path": "app/src/lib.rs", "operation": "replace",
        "start_line": 2, "end_line": 2, "old_text": "    base::f_1(v) + base::f_2(v)",
        "new_text": "    base::f_2(v) + base::f_1(v)\n"}]});
    let verify_table = "[verify]\ncommand = \"cargo test -q --offline\"\ntimeout_secs = 600\n";
    let (_, _server, cfg) = one_turn_configured(
        &env,
        root,
        &[("propose_edits", app_edit.clone())],
        verify_table,
    );
    verify_again(&env, &cfg, root, "the `app` hunk");
    let du = std::process::Command::new("du")
        .args(["-sh"])
        .arg(env.home.path().join("state/verify/target"))
        .output()
        .unwrap();
    println!(
        "build cache: {}",
        String::from_utf8_lossy(&du.stdout).trim()
    );

    // A hunk in the large crate verified and applied; then the `app` hunk
    // verified again: `base` should be built once for its applied version,
    // not every time after.
    let base_edit = json!({"edits": [{"file_path": "base/src/lib.rs", "operation": "replace",
        "start_line": 1, "end_line": 1, "old_text": "pub fn f_0(v: &[u64]) -> u64 {",
        "new_text": "/// The first.\npub fn f_0(v: &[u64]) -> u64 {\n"}]});
    let (_, _server, cfg) =
        one_turn_configured(&env, root, &[("propose_edits", base_edit)], verify_table);
    println!("a `base` hunk verified and applied:");
    verify(&env, &cfg, root, true);
    let (_, _server, cfg) =
        one_turn_configured(&env, root, &[("propose_edits", app_edit)], verify_table);
    verify_again(&env, &cfg, root, "the `app` hunk, after it,");
}
