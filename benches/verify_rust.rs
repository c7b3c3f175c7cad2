//! A Rust workspace verified again and again (the usual loop: verify, look,
//! verify): two crates, `base` (1,000 functions and their tests, untouched)
//! and `app` (uses it; the one-hunk review changes it), checked with
//! `cargo test -q --offline`. The first verify builds everything into the
//! root's build cache; the ones after it should rebuild only what the hunk
//! touched. Prints each verify's check time and the cache's size after.
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

fn main() {
    let env = support::Env::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    project(root);
    let edits = json!({"edits": [{"file_path": "app/src/lib.rs", "operation": "replace",
        "start_line": 2, "end_line": 2, "old_text": "    base::f_1(v) + base::f_2(v)",
        "new_text": "    base::f_2(v) + base::f_1(v)\n"}]});
    let verify = "[verify]\ncommand = \"cargo test -q --offline\"\ntimeout_secs = 600\n";
    let (_, _server, cfg) = one_turn_configured(&env, root, &[("propose_edits", edits)], verify);
    let mut checks = Vec::new();
    for i in 0..=RUNS {
        let out = env
            .cmd()
            .env("TEST_LLM_KEY", KEY)
            .arg("--config")
            .arg(&cfg)
            .args(["review", "--accept-all", "--json", "--verify", "--root"])
            .arg(root)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        assert_eq!(v["verify"]["passed"], true, "{v}");
        let took = Duration::from_millis(v["verify"]["duration_ms"].as_u64().unwrap());
        println!("verify {i}: check {took:?} (copy: {})", v["verify"]["copy"]);
        if i > 0 {
            checks.push(took);
        }
    }
    checks.sort();
    println!("after the first: median {:?}", checks[checks.len() / 2]);
    let du = std::process::Command::new("du")
        .args(["-sh"])
        .arg(env.home.path().join("state/verify/target"))
        .output()
        .unwrap();
    println!(
        "build cache: {}",
        String::from_utf8_lossy(&du.stdout).trim()
    );
}
