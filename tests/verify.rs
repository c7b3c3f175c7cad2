//! Verify before apply (SPEC 17) through the binary: a Rust project and a
//! Python project whose accepted hunks break the build (the check fails
//! and names the failing test), where only a rejected hunk would have (it
//! passes on the accepted subset), a check that tries to write the root
//! or reach the network (refused, the root untouched), a hung check
//! (timed out, the copy removed), a tree that already fails (the
//! baseline, cached), feedback producing a second proposal, and `exec
//! --apply all --verify`. The root is compared byte for byte after each.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use support::jobs::{KEY, config, exec, sse};
use support::llm_server::{LlmServer, Reply, openai};
use support::{Env, code, stderr, stdout, write_files};

const LIB: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n/// Twice `x`.\npub fn double(x: i32) -> i32 {\n    x * 2\n}\n\n/// `x` squared.\npub fn square(x: i32) -> i32 {\n    x * x\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds_two_numbers() {\n        assert_eq!(super::add(2, 3), 5);\n    }\n}\n";
const CARGO: &str =
    "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n";

/// Every file under `root` with its bytes.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(dir: &Path, base: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, base, out);
            } else {
                out.insert(
                    p.strip_prefix(base).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// A model turn proposing `edits`, then one that answers.
fn proposal(edits: Value) -> Vec<Reply> {
    let args = json!({ "edits": edits }).to_string();
    vec![
        sse(openai::tool_calls(&[("c1", "propose_edits", &args)])),
        sse(openai::text(&["I proposed the changes."])),
    ]
}

/// Two hunks for the Rust project: a change that breaks
/// `adds_two_numbers`, and a harmless new function at the end.
fn rust_edits() -> Value {
    json!([
        {"file_path": "src/lib.rs", "operation": "replace", "start_line": 2, "end_line": 2,
         "old_text": "    a + b", "new_text": "    a - b\n"},
        {"file_path": "src/lib.rs", "operation": "insert", "start_line": 21,
         "new_text": "\n/// Says hello.\npub fn hello() -> &'static str {\n    \"hello\"\n}\n"}
    ])
}

struct Project {
    env: Env,
    root: tempfile::TempDir,
    cfg: PathBuf,
    server: LlmServer,
}

/// A project with `files`, a config whose `[verify]` is `verify`, and a
/// session whose pending review is the model's `replies`' proposal.
fn proposed(files: &[(&str, &str)], verify: &str, replies: Vec<Reply>) -> Project {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    write_files(root.path(), files);
    let server = LlmServer::start(replies);
    let cfg = config(&env, "openai", &server.url(), "");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str(&format!("\n[verify]\n{verify}\n"));
    std::fs::write(&cfg, text).unwrap();
    let run = exec(&env, &cfg, root.path(), &["--json", "make the changes"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    Project {
        env,
        root,
        cfg,
        server,
    }
}

impl Project {
    /// `agent-tui review ARGS --root ROOT` (the toolchain reachable: the
    /// test's HOME is a temp dir).
    fn review(&self, args: &[&str]) -> (i32, String, String) {
        let out = self
            .cmd()
            .arg("review")
            .args(args)
            .arg("--root")
            .arg(self.root.path())
            .output()
            .unwrap();
        (code(&out), stdout(&out), stderr(&out))
    }

    fn cmd(&self) -> std::process::Command {
        let real_home = std::env::var("HOME").unwrap_or_default();
        let mut cmd = self.env.cmd();
        cmd.env("TEST_LLM_KEY", KEY)
            .env(
                "CARGO_HOME",
                std::env::var("CARGO_HOME").unwrap_or(format!("{real_home}/.cargo")),
            )
            .env(
                "RUSTUP_HOME",
                std::env::var("RUSTUP_HOME").unwrap_or(format!("{real_home}/.rustup")),
            )
            .arg("--config")
            .arg(&self.cfg);
        cmd
    }

    /// `review --verify --json` with `decide`: exit code, the verify's
    /// result, stderr.
    fn verify(&self, decide: &[&str]) -> (i32, Value, String) {
        let mut args = decide.to_vec();
        args.extend(["--verify", "--json"]);
        let (c, out, err) = self.review(&args);
        let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
        // The shape of `review --json`: the bundle, the verify just run
        // beside its files, not stale.
        assert!(v["files"].is_array(), "{v:#}");
        assert_eq!(v["last_verify"]["stale"], false, "{v:#}");
        (c, v["last_verify"].clone(), err)
    }

    fn hunks(&self) -> Vec<String> {
        let (c, out, err) = self.review(&["--json"]);
        assert_eq!(c, 0, "{err}");
        let bundle: Value = serde_json::from_str(&out).unwrap();
        bundle["files"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|f| f["hunks"].as_array().unwrap().iter())
            .map(|h| h["hunk_id"].as_str().unwrap().to_string())
            .collect()
    }

    /// The verify folder's copies left behind (none after any verify).
    fn copies_left(&self) -> usize {
        let dir = self.env.home.path().join("state/verify/scratch");
        std::fs::read_dir(dir).map_or(0, |d| {
            d.filter(|e| e.as_ref().is_ok_and(|e| e.path().is_dir()))
                .count()
        })
    }
}

#[test]
fn rust_project_a_breaking_hunk_fails_and_passes_once_rejected() {
    let p = proposed(
        &[("Cargo.toml", CARGO), ("src/lib.rs", LIB)],
        "command = \"cargo test -q\"",
        proposal(rust_edits()),
    );
    let before = snapshot(p.root.path());
    let hunks = p.hunks();
    assert_eq!(hunks.len(), 2, "{hunks:?}");

    // Both accepted: the check fails, names the failing test, and the
    // unmodified tree passes (so these hunks broke it).
    let (c, v, err) = p.verify(&["--accept-all"]);
    assert_eq!(c, 1, "{err}");
    assert_eq!(v["passed"], false, "{v:#}");
    assert_eq!(v["outcome"], "failed", "{v:#}");
    assert!(
        v["output_tail"]
            .as_str()
            .unwrap()
            .contains("adds_two_numbers"),
        "{v:#}"
    );
    assert_eq!(v["baseline"]["passed"], true, "{v:#}");
    assert_eq!(v["confined"], true, "{v:#}");
    assert_eq!(v["hunk_ids"], json!(hunks), "{v:#}");
    assert!(err.contains("verify failed"), "{err}");
    assert_eq!(snapshot(p.root.path()), before, "the root is untouched");

    // The breaking hunk rejected: the accepted subset passes.
    let (c, v, err) = p.verify(&["--reject", &hunks[0]]);
    assert_eq!(c, 0, "{err}");
    assert_eq!(v["outcome"], "passed", "{v:#}");
    assert_eq!(v["hunk_ids"], json!([hunks[1]]), "{v:#}");
    assert_eq!(snapshot(p.root.path()), before, "the root is untouched");
    assert_eq!(p.copies_left(), 0);

    // The session keeps the result: a later `review` shows it, stale
    // once a decision changes.
    let (c, _, err) = p.review(&[]);
    assert_eq!(c, 0);
    assert!(
        err.contains("last verify passed") && !err.contains("stale"),
        "{err}"
    );
    let (_, _, err) = p.review(&["--accept", &hunks[0]]);
    assert!(err.contains("stale"), "{err}");
    // --json says so too, beside the bundle's files.
    let (c, out, err) = p.review(&["--json"]);
    assert_eq!(c, 0, "{err}");
    let shown: Value = serde_json::from_str(&out).unwrap();
    assert!(shown["files"].is_array(), "{shown}");
    assert_eq!(shown["last_verify"]["outcome"], "passed", "{shown}");
    assert_eq!(shown["last_verify"]["stale"], true, "{shown}");
}

const CALC_PY: &str = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\ndef neg(a):\n    return -a\n\n\ndef mul(a, b):\n    return a * b\n";
const TEST_PY: &str = "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n";

#[test]
fn python_project_the_failing_test_is_named_and_the_subset_passes() {
    let edits = json!([
        {"file_path": "calc.py", "operation": "replace", "start_line": 2, "end_line": 2,
         "old_text": "    return a + b", "new_text": "    return a + b + 0\n"},
        {"file_path": "calc.py", "operation": "replace", "start_line": 14, "end_line": 14,
         "old_text": "    return a * b", "new_text": "    return a ** b\n"}
    ]);
    // The command is detected from pytest's config.
    let p = proposed(
        &[
            ("calc.py", CALC_PY),
            ("test_calc.py", TEST_PY),
            ("pytest.ini", "[pytest]\n"),
        ],
        "timeout_secs = 120",
        proposal(edits),
    );
    let before = snapshot(p.root.path());
    let hunks = p.hunks();
    assert_eq!(hunks.len(), 2, "{hunks:?}");
    let (c, v, err) = p.verify(&["--accept-all"]);
    assert_eq!(c, 1, "{err}");
    assert_eq!(v["command"], "pytest -q", "{v:#}");
    assert_eq!(v["outcome"], "failed", "{v:#}");
    let tail = v["output_tail"].as_str().unwrap();
    assert!(
        tail.contains("test_mul") && !tail.contains("FAILED test_calc.py::test_add"),
        "{tail}"
    );
    // An apply of the decisions that failed is refused unless forced.
    let (c, _, err) = p.review(&["--apply"]);
    assert_eq!(c, 1, "{err}");
    assert!(
        err.contains("nothing applied") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(snapshot(p.root.path()), before);
    // A change to another file makes the result stale, not a pass: still
    // refused (touching a file is no way past a failure).
    std::fs::write(p.root.path().join("NOTES"), "x\n").unwrap();
    let (c, _, err) = p.review(&["--apply"]);
    assert_eq!(c, 1, "{err}");
    std::fs::remove_file(p.root.path().join("NOTES")).unwrap();
    let (c, v, err) = p.verify(&["--reject", &hunks[1]]);
    assert_eq!(c, 0, "{err}\n{v:#}");
    assert_eq!(v["passed"], true);
    // pytest's caches went to the copy, not the root.
    assert_eq!(snapshot(p.root.path()), before);
    assert!(!p.root.path().join(".pytest_cache").exists());
    assert_eq!(p.copies_left(), 0);
    // Once the failing decisions are back, --force is what applies them.
    let (c, _, err) = p.review(&["--accept", &hunks[1], "--verify"]);
    assert_eq!(c, 1, "{err}");
    let (c, _, err) = p.review(&["--apply", "--force"]);
    assert_eq!(c, 0, "{err}");
    let calc = std::fs::read_to_string(p.root.path().join("calc.py")).unwrap();
    assert!(calc.contains("a ** b"), "{calc}");
}

#[test]
fn a_check_that_writes_the_root_or_reaches_the_network_is_refused() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let root_dir = tempfile::tempdir().unwrap();
    let root = root_dir.path().to_path_buf();
    let command = format!(
        "echo pwned > {root}/calc.py; touch {root}/planted; \
         python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3)\"",
        root = root.display()
    );
    let env = Env::new();
    write_files(&root, &[("calc.py", CALC_PY)]);
    let edits = json!([{"file_path": "calc.py", "operation": "replace", "start_line": 2,
        "end_line": 2, "old_text": "    return a + b", "new_text": "    return b + a\n"}]);
    let server = LlmServer::start(proposal(edits));
    let cfg = config(&env, "openai", &server.url(), "");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str(&format!(
        "\n[verify]\ncommand = {}\n",
        toml_string(&command)
    ));
    std::fs::write(&cfg, text).unwrap();
    let run = exec(&env, &cfg, &root, &["--json", "swap them"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let p = Project {
        env,
        root: root_dir,
        cfg,
        server,
    };
    let before = snapshot(&root);
    let (c, v, err) = p.verify(&["--accept-all"]);
    assert_eq!(c, 1, "{err}\n{v:#}");
    let tail = v["output_tail"].as_str().unwrap();
    assert!(tail.contains("Permission denied"), "{tail}");
    assert!(
        tail.contains("PermissionError"),
        "the connect is refused: {tail}"
    );
    assert!(listener.accept().is_err(), "nothing reached the listener");
    assert_eq!(snapshot(&root), before, "the root is byte-identical");
    assert!(!root.join("planted").exists());
    assert_eq!(p.copies_left(), 0);
    drop(p.server);
}

/// `s` as a TOML basic string.
fn toml_string(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

#[test]
fn a_hung_check_times_out_and_its_copy_is_removed() {
    let edits = json!([{"file_path": "calc.py", "operation": "replace", "start_line": 2,
        "end_line": 2, "old_text": "    return a + b", "new_text": "    return b + a\n"}]);
    let p = proposed(
        &[("calc.py", CALC_PY)],
        "command = \"sleep 600\"\ntimeout_secs = 2",
        proposal(edits),
    );
    let before = snapshot(p.root.path());
    let started = std::time::Instant::now();
    let (c, v, err) = p.verify(&["--accept-all"]);
    assert_eq!(c, 1, "{err}");
    assert_eq!(v["outcome"], "timed_out", "{v:#}");
    assert_eq!(v["exit_code"], Value::Null);
    assert!(
        started.elapsed().as_secs() < 30,
        "stopped at its timeout, not the command's end"
    );
    assert!(err.contains("timed out"), "{err}");
    assert_eq!(p.copies_left(), 0);
    assert_eq!(snapshot(p.root.path()), before);
}

#[test]
fn a_tree_that_already_fails_is_told_apart_and_its_baseline_cached() {
    let broken = TEST_PY.replace("== 6", "== 7");
    let edits = json!([{"file_path": "calc.py", "operation": "replace", "start_line": 2,
        "end_line": 2, "old_text": "    return a + b", "new_text": "    return b + a\n"}]);
    let p = proposed(
        &[
            ("calc.py", CALC_PY),
            ("test_calc.py", &broken),
            ("pytest.ini", "[pytest]\n"),
        ],
        "",
        proposal(edits),
    );
    let (c, v, _) = p.verify(&["--accept-all"]);
    assert_eq!(c, 1);
    assert_eq!(v["outcome"], "already_failing", "{v:#}");
    assert_eq!(v["baseline"]["passed"], false);
    assert_eq!(v["baseline"]["cached"], false);
    // The tree has not changed: the baseline comes from the cache.
    let (c, v, err) = p.verify(&[]);
    assert_eq!(c, 1);
    assert_eq!(v["outcome"], "already_failing", "{v:#}");
    assert_eq!(v["baseline"]["cached"], true, "{v:#}");
    assert!(err.contains("already failing"), "{err}");
    // A change to the tree is a new baseline.
    std::fs::write(p.root.path().join("README"), "hi\n").unwrap();
    let (_, v, _) = p.verify(&[]);
    assert_eq!(v["baseline"]["cached"], false, "{v:#}");
}

#[test]
fn feedback_sends_the_failure_and_shows_the_second_proposal() {
    let broken = json!([{"file_path": "calc.py", "operation": "replace", "start_line": 14,
        "end_line": 14, "old_text": "    return a * b", "new_text": "    return a ** b\n"}]);
    let fixed = json!([{"file_path": "calc.py", "operation": "replace", "start_line": 14,
        "end_line": 14, "old_text": "    return a * b", "new_text": "    return b * a\n"}]);
    let mut replies = proposal(broken);
    replies.extend(proposal(fixed));
    let p = proposed(
        &[
            ("calc.py", CALC_PY),
            ("test_calc.py", TEST_PY),
            ("pytest.ini", "[pytest]\n"),
        ],
        "",
        replies,
    );
    let (c, out, err) = p.review(&["--accept-all", "--verify", "--feedback", "--json"]);
    assert_eq!(c, 1, "the verify failed: {err}");
    let shown: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    // The same shape as `review --json`: the bundle, the verify beside
    // its files (stale: it checked the first proposal, not this one).
    assert_eq!(shown["last_verify"]["outcome"], "failed");
    assert_eq!(shown["last_verify"]["stale"], true);
    let patch = shown["files"][0]["hunks"][0]["patch"].as_str().unwrap();
    assert!(
        patch.contains("+    return b * a"),
        "the second proposal: {patch}\n{err}"
    );
    // The model was told what failed, with the test's name.
    let requests = p.server.requests();
    assert_eq!(requests.len(), 4, "two turns per proposal");
    let told = requests[2].body["messages"].to_string();
    assert!(
        told.contains("[agent-tui: verify]") && told.contains("test_mul"),
        "{told}"
    );
    // The new review verifies clean.
    let (c, v, err) = p.verify(&["--accept-all"]);
    assert_eq!(c, 0, "{err}\n{v:#}");
}

#[test]
fn exec_applies_only_when_the_verify_passes() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    write_files(
        root.path(),
        &[
            ("calc.py", CALC_PY),
            ("test_calc.py", TEST_PY),
            ("pytest.ini", "[pytest]\n"),
        ],
    );
    let broken = json!([{"file_path": "calc.py", "operation": "replace", "start_line": 14,
        "end_line": 14, "old_text": "    return a * b", "new_text": "    return a ** b\n"}]);
    let fine = json!([{"file_path": "calc.py", "operation": "replace", "start_line": 14,
        "end_line": 14, "old_text": "    return a * b", "new_text": "    return b * a\n"}]);
    let mut replies = proposal(broken);
    replies.extend(proposal(fine));
    let server = LlmServer::start(replies);
    let cfg = config(&env, "openai", &server.url(), "");
    let before = snapshot(root.path());
    let run = exec(
        &env,
        &cfg,
        root.path(),
        &["--apply", "all", "--verify", "break it"],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("nothing was applied"), "{}", run.stderr);
    assert_eq!(snapshot(root.path()), before);
    let run = exec(
        &env,
        &cfg,
        root.path(),
        &["--apply", "all", "--verify", "--json", "fix it"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let kinds: Vec<String> = run
        .events()
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect();
    let at = |k: &str| kinds.iter().position(|x| x == k).unwrap_or(usize::MAX);
    assert!(
        at("verify.started") < at("verify.completed")
            && at("verify.completed") < at("apply.completed"),
        "{kinds:?}"
    );
    let calc = std::fs::read_to_string(root.path().join("calc.py")).unwrap();
    assert!(calc.contains("return b * a"), "{calc}");
    // --verify without --apply all is a usage error.
    let run = exec(&env, &cfg, root.path(), &["--verify", "x"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
}

/// Whether a process whose command line holds `marker` is alive.
fn running(marker: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read(e.path().join("cmdline"))
            .map(|c| {
                String::from_utf8_lossy(&c)
                    .replace('\0', " ")
                    .contains(marker)
            })
            .unwrap_or(false)
    })
}

/// Ctrl+C while a check runs: `review --verify` stops the check (its whole
/// process group) before it exits 130, and `exec --apply all --verify`
/// applies nothing (it applied once the check passed, exit 0).
#[test]
fn ctrl_c_stops_the_check_and_nothing_is_applied() {
    use std::process::Stdio;
    let marker = format!("sleep 30.{}", fastrand::u32(100..999));
    let edits = json!([{"file_path": "calc.py", "operation": "replace", "start_line": 2,
        "end_line": 2, "old_text": "    return a + b", "new_text": "    return b + a\n"}]);
    let mut replies = proposal(edits.clone());
    replies.extend(proposal(edits));
    let p = proposed(
        &[("calc.py", CALC_PY)],
        &format!("command = \"{marker}; true\"\ntimeout_secs = 120"),
        replies,
    );
    let before = snapshot(p.root.path());
    let interrupt = |child: std::process::Child| {
        std::thread::sleep(std::time::Duration::from_millis(1500));
        assert!(running(&marker), "the check runs");
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
        let started = std::time::Instant::now();
        let out = child.wait_with_output().unwrap();
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
        out
    };
    let review = p
        .cmd()
        .args(["review", "--accept-all", "--verify", "--root"])
        .arg(p.root.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = interrupt(review);
    assert_eq!(code(&out), 130, "{}", stderr(&out));
    assert!(!running(&marker), "the check was left running");
    let exec = p
        .cmd()
        .args(["exec", "--apply", "all", "--verify", "again", "--root"])
        .arg(p.root.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = interrupt(exec);
    assert_eq!(code(&out), 130, "{}", stderr(&out));
    assert!(!running(&marker), "the check was left running");
    assert_eq!(snapshot(p.root.path()), before, "nothing applied");
}

/// `exec --verify` with no check to run is a usage error before the job
/// (it used to run the whole job, then say it could not verify).
#[test]
fn exec_verify_without_a_check_says_so_before_the_job() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    write_files(root.path(), &[("notes.txt", "a\n")]);
    let server = LlmServer::start(vec![sse(openai::text(&["never asked"]))]);
    let cfg = config(&env, "openai", &server.url(), "");
    let run = exec(
        &env,
        &cfg,
        root.path(),
        &["--apply", "all", "--verify", "x"],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("[verify] command"), "{}", run.stderr);
    assert!(
        server.requests().iter().all(|r| !r.is_model_call()),
        "no token spent"
    );
    // Turned off in the config (a project with a test script): said so,
    // here and in doctor, not "nothing was detected".
    write_files(
        root.path(),
        &[("package.json", r#"{"scripts": {"test": "node t.js"}}"#)],
    );
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str("\n[verify]\ncommand = \"\"\n");
    std::fs::write(&cfg, text).unwrap();
    let run = exec(
        &env,
        &cfg,
        root.path(),
        &["--apply", "all", "--verify", "x"],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("turns it off"), "{}", run.stderr);
    let out = env
        .cmd()
        .arg("--config")
        .arg(&cfg)
        .args(["doctor", "--root"])
        .arg(root.path())
        .output()
        .unwrap();
    assert!(
        stdout(&out).contains("off: [verify] command = \"\" in the config"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_check_reads_the_projects_ignored_dependencies_and_git() {
    // `node_modules/` is ignored, yet `npm test` needs it; `git ls-files`
    // needs `.git`. Both are the root's, read in place: the check passes
    // on a harmless hunk and fails on a breaking one, and cannot write
    // them (nor does a hunk of a file in them reach the root).
    let edits = json!([
        {"file_path": "index.js", "operation": "replace", "start_line": 2, "end_line": 2,
         "new_text": "module.exports = (x) => left(String(x), 4);\n"},
        {"file_path": "index.js", "operation": "insert", "start_line": 3,
         "new_text": "// harmless\n"}
    ]);
    let p = proposed(
        &[
            (
                "index.js",
                "const left = require('leftpad');\nmodule.exports = (x) => left(String(x), 3);\n",
            ),
            (
                "test.js",
                "const pad = require('./index');\nif (pad(7) !== '007') { console.error('pad broken'); process.exit(1); }\nconsole.log('TEST OK');\n",
            ),
            (
                "node_modules/leftpad/index.js",
                "module.exports = (s, n) => s.padStart(n, '0');\n",
            ),
            (".gitignore", "node_modules/\n"),
        ],
        "command = \"git ls-files --error-unmatch index.js >/dev/null && node test.js && ! touch node_modules/x\"",
        proposal(edits),
    );
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(p.root.path())
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-qm", "start"]);
    let hunks = p.hunks();
    let (c, v, err) = p.verify(&["--accept", &hunks[1], "--reject", &hunks[0]]);
    assert_eq!(c, 0, "{v:#}\n{err}");
    assert_eq!(v["outcome"], "passed", "{v:#}");
    let (c, v, _) = p.verify(&["--accept", &hunks[0]]);
    assert_eq!(c, 1);
    assert_eq!(v["outcome"], "failed", "{v:#}");
    assert_eq!(
        v["baseline"]["passed"], true,
        "the tree without them passes: {v:#}"
    );
    assert!(!p.root.path().join("node_modules/x").exists());
    assert_eq!(p.copies_left(), 0);
}

#[test]
fn a_verify_goes_stale_when_the_projects_files_change() {
    // It proved the check passes on the files as they were; once another
    // file changes (the check itself here), it says so, and a failure no
    // longer blocks the apply.
    let edits = json!([{"file_path": "calc.py", "operation": "replace", "start_line": 2,
        "end_line": 2, "old_text": "    return a + b", "new_text": "    return b + a\n"}]);
    let p = proposed(
        &[
            ("calc.py", CALC_PY),
            ("test_calc.py", TEST_PY),
            ("pytest.ini", "[pytest]\n"),
        ],
        "",
        proposal(edits),
    );
    let (c, v, _) = p.verify(&["--accept-all"]);
    assert_eq!(c, 0, "{v:#}");
    let last = |p: &Project| {
        let (c, out, err) = p.review(&["--json"]);
        assert_eq!(c, 0, "{err}");
        serde_json::from_str::<Value>(&out).unwrap()["last_verify"].clone()
    };
    assert_eq!(last(&p)["stale"], false);
    std::fs::write(
        p.root.path().join("test_calc.py"),
        format!("{TEST_PY}\n# changed\n"),
    )
    .unwrap();
    assert_eq!(last(&p)["stale"], true);
    let (_, _, err) = p.review(&[]);
    assert!(
        err.contains("stale: the project's files changed since"),
        "{err}"
    );
}
