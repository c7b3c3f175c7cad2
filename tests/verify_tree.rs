//! Verify before apply (SPEC 17) on roots that are not plain files: the
//! scratch copy is the tree an apply would leave (links kept, leading
//! where the root's do, hunks written through them), a FIFO is left out
//! instead of hanging the copy, a check whose child leaves its process
//! group still ends at the timeout, a program that is not installed is
//! "could not run" (not "already failing") and does not block an apply,
//! and `[verify] auto` starts no verify a command line would cancel.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::jobs::{KEY, config, exec, sse};
use support::llm_server::{LlmServer, Reply, openai};
use support::{Env, code, stderr, stdout, write_files};

/// A model turn proposing `edits`, then one that answers.
fn proposal(edits: Value) -> Vec<Reply> {
    let args = json!({ "edits": edits }).to_string();
    vec![
        sse(openai::tool_calls(&[("c1", "propose_edits", &args)])),
        sse(openai::text(&["I proposed the changes."])),
    ]
}

struct Project {
    env: Env,
    /// Holds the root (`proj/`) and what lies beside it.
    base: tempfile::TempDir,
    root: PathBuf,
    cfg: PathBuf,
    _server: LlmServer,
}

/// A root made by `make`, a config whose `[verify]` is `verify`, and a
/// session whose pending review is the proposal of `edits`.
fn proposed(make: impl FnOnce(&Path, &Path), verify: &str, edits: Value) -> Project {
    let env = Env::new();
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join("proj");
    std::fs::create_dir(&root).unwrap();
    let root = root.canonicalize().unwrap();
    make(&root, base.path());
    let server = LlmServer::start(proposal(edits));
    let cfg = config(&env, "openai", &server.url(), "");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str(&format!("\n[verify]\n{verify}\n"));
    std::fs::write(&cfg, text).unwrap();
    let run = exec(&env, &cfg, &root, &["--json", "make the changes"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    Project {
        env,
        base,
        root,
        cfg,
        _server: server,
    }
}

impl Project {
    fn cmd(&self, args: &[&str]) -> std::process::Command {
        let mut cmd = self.env.cmd();
        cmd.env("TEST_LLM_KEY", KEY)
            .arg("--config")
            .arg(&self.cfg)
            .args(args)
            .arg("--root")
            .arg(&self.root);
        cmd
    }

    /// `agent-tui review ARGS`, given at most `secs` (then killed: a
    /// failure): exit code, stdout, stderr.
    fn review_within(&self, args: &[&str], secs: u64) -> (i32, String, String) {
        let mut all = vec!["review"];
        all.extend(args);
        let mut child = self
            .cmd(&all)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(secs);
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("`review {}` did not end within {secs} s", args.join(" "));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        (code(&out), stdout(&out), stderr(&out))
    }

    fn review(&self, args: &[&str]) -> (i32, String, String) {
        self.review_within(args, 120)
    }

    /// `review --accept-all --verify --json`: exit code, the result, stderr.
    fn verify_all(&self, secs: u64) -> (i32, Value, String) {
        let (c, out, err) = self.review_within(&["--accept-all", "--verify", "--json"], secs);
        let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
        (c, v["last_verify"].clone(), err)
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).unwrap()
    }
}

fn replace_line_1(file: &str, text: &str) -> Value {
    json!({"file_path": file, "operation": "replace", "start_line": 1, "end_line": 1,
           "new_text": text})
}

#[test]
fn the_copy_keeps_links_leading_into_the_copy_and_hunks_go_through_them() {
    // The check passes only on the tree an apply would leave: the targets
    // changed, the links still links, the absolute one leading to the
    // copy's own file, the one out of the root still readable.
    let check = r#"command = '''test "$(cat a.txt)" = NEW && test "$(cat b.txt)" = NEWB && test -L rel && test -L abs && test "$(readlink -f abs)" = "$(pwd -P)/b.txt" && test "$(cat out)" = outside'''"#;
    let p = proposed(
        |root, base| {
            write_files(root, &[("a.txt", "old\n"), ("b.txt", "oldb\n")]);
            std::fs::write(base.join("outside.txt"), "outside\n").unwrap();
            std::os::unix::fs::symlink("a.txt", root.join("rel")).unwrap();
            std::os::unix::fs::symlink(root.join("b.txt"), root.join("abs")).unwrap();
            std::os::unix::fs::symlink(base.join("outside.txt"), root.join("out")).unwrap();
        },
        check,
        json!([
            replace_line_1("rel", "NEW\n"),
            replace_line_1("abs", "NEWB\n")
        ]),
    );
    let (c, v, err) = p.verify_all(60);
    assert_eq!(v["outcome"], "passed", "{v:#}\n{err}");
    assert_eq!(c, 0);
    // The root untouched, its links as they were.
    assert_eq!(p.read("a.txt"), "old\n");
    assert_eq!(p.read("b.txt"), "oldb\n");
    assert_eq!(
        std::fs::read_link(p.root.join("abs")).unwrap(),
        p.root.join("b.txt")
    );
    // And the apply leaves what was verified.
    let (c, _, err) = p.review(&["--apply"]);
    assert_eq!(c, 0, "{err}");
    assert_eq!(p.read("a.txt"), "NEW\n");
    assert_eq!(p.read("b.txt"), "NEWB\n");
    assert!(p.root.join("rel").is_symlink() && p.root.join("abs").is_symlink());
    assert!(p.base.path().join("outside.txt").exists());
}

#[test]
fn a_fifo_in_the_root_is_left_out_of_the_copy_and_listed_as_other() {
    let p = proposed(
        |root, _| {
            write_files(root, &[("a.txt", "a\n")]);
            let made = std::process::Command::new("mkfifo")
                .arg(root.join("pipe"))
                .status()
                .unwrap();
            assert!(made.success());
        },
        "command = \"test ! -e pipe && grep -q b a.txt\"\ntimeout_secs = 30",
        json!([replace_line_1("a.txt", "b\n")]),
    );
    let (c, v, err) = p.verify_all(20);
    assert_eq!(v["outcome"], "passed", "{v:#}\n{err}");
    assert_eq!(c, 0);
    let (c, listed) = p.env.tool(&p.root, "list_files", "{}");
    assert_eq!(c, 0, "{listed}");
    let kinds: Vec<(String, String)> = listed["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        kinds.contains(&("pipe".into(), "other".into())),
        "{kinds:?}"
    );
}

#[test]
fn a_check_whose_child_left_its_group_still_ends_at_the_timeout() {
    let p = proposed(
        |root, _| write_files(root, &[("a.txt", "a\n")]),
        "command = \"setsid sleep 12 & sleep 30\"\ntimeout_secs = 1",
        json!([replace_line_1("a.txt", "b\n")]),
    );
    let started = Instant::now();
    let (c, v, err) = p.verify_all(60);
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "took {:?}: {v:#}",
        started.elapsed()
    );
    assert_eq!(v["outcome"], "timed_out", "{v:#}\n{err}");
    assert_eq!(c, 1);
}

#[test]
fn a_program_that_is_not_installed_could_not_run_and_does_not_block_apply() {
    let p = proposed(
        |root, _| write_files(root, &[("a.txt", "a\n")]),
        "command = \"no-such-checker-3141 --all\"",
        json!([replace_line_1("a.txt", "b\n")]),
    );
    let (c, v, err) = p.verify_all(60);
    assert_eq!(v["outcome"], "error", "{v:#}\n{err}");
    assert_eq!(v["exit_code"], 127);
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("`no-such-checker-3141` was not found"),
        "{v:#}"
    );
    assert!(err.contains("could not run"), "{err}");
    assert_eq!(c, 1);
    let (c, _, err) = p.review(&["--apply"]);
    assert_eq!(c, 0, "{err}");
    assert_eq!(p.read("a.txt"), "b\n");
    // `doctor` says so before any verify.
    let out = p.cmd(&["doctor"]).output().unwrap();
    let text = format!("{}{}", stdout(&out), stderr(&out));
    let line = text.lines().find(|l| l.starts_with("verify")).unwrap();
    assert!(
        line.contains("warning: `no-such-checker-3141` is not on PATH"),
        "{line}"
    );
}

#[test]
fn auto_verify_starts_none_a_command_line_would_cancel() {
    let p = proposed(
        |root, _| write_files(root, &[("a.txt", "a\n")]),
        "command = \"grep -qx a a.txt\"\nauto = true",
        json!([replace_line_1("a.txt", "b\n")]),
    );
    let (c, _, err) = p.review(&["--accept-all"]);
    assert_eq!(c, 0, "{err}");
    // No result recorded: before, a verify started and was cancelled at
    // once with the engine ("last verify cancelled").
    let (c, _, err) = p.review(&[]);
    assert_eq!(c, 0, "{err}");
    assert!(!err.contains("last verify"), "{err}");
    // `--verify` runs it to its end, and its failure blocks the apply.
    let (c, v, _) = p.verify_all(60);
    assert_eq!((c, v["outcome"].as_str()), (1, Some("failed")), "{v:#}");
    let (c, _, err) = p.review(&["--apply"]);
    assert_eq!(c, 1, "{err}");
    assert_eq!(p.read("a.txt"), "a\n");
}
