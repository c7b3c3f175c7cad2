//! The git tools through the real binary, on real repositories made with
//! the git CLI: what reading shows (status letters, ahead/behind, diffs,
//! log, branches, a root below the work tree's top), what changing does
//! (add, commit, push to a local remote, confined), the errors a user or a
//! model can cause (nothing staged, a detached HEAD, an unknown remote,
//! hostile paths), and the `batch` approval of one turn's git calls.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use support::jobs::one_turn;
use support::llm_server::LlmServer;
use support::{Env, write_files};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A repository with two commits on `main`, identity set locally.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["config", "user.name", "Tess Ter"]);
    git(root, &["config", "user.email", "tess@example.test"]);
    write_files(
        root,
        &[
            ("a.txt", "one\n"),
            ("sub/b.txt", "bee\n"),
            ("gone.txt", "x\n"),
        ],
    );
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "first commit"]);
    write_files(root, &[("a.txt", "one\ntwo\n")]);
    git(
        root,
        &["commit", "-q", "-am", "second: a grows\n\nwith a body"],
    );
    dir
}

fn files(status: &Value) -> Vec<(String, String, String)> {
    status["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["index"].as_str().unwrap().to_string(),
                f["worktree"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn row(path: &str, index: &str, worktree: &str) -> (String, String, String) {
    (path.into(), index.into(), worktree.into())
}

#[test]
fn status_diff_log_and_branch_read_the_repository() {
    let env = Env::new();
    let dir = repo();
    let root = dir.path();
    write_files(
        root,
        &[
            ("a.txt", "one\ntwo\nthree\n"),
            ("new.txt", "n\n"),
            ("staged.txt", "s\n"),
        ],
    );
    git(root, &["add", "staged.txt"]);
    git(root, &["rm", "-q", "gone.txt"]);
    git(root, &["branch", "feature/x"]);

    let (c, status) = env.tool(root, "git_status", "{}");
    assert_eq!(c, 0, "{status}");
    assert_eq!(status["branch"], "main");
    assert_eq!(status["detached"], false);
    assert_eq!(status["upstream"], Value::Null);
    assert_eq!(
        files(&status),
        [
            row("a.txt", " ", "M"),
            row("gone.txt", "D", " "),
            row("new.txt", "?", "?"),
            row("staged.txt", "A", " "),
        ]
    );

    let (_, diff) = env.tool(root, "git_diff", "{}");
    let patch = diff["patch"].as_str().unwrap();
    assert!(
        patch.contains("--- a/a.txt") && patch.contains("+three"),
        "{patch}"
    );
    assert!(!patch.contains("staged.txt"), "unstaged only: {patch}");
    let (_, staged) = env.tool(root, "git_diff", r#"{"staged": true}"#);
    let patch = staged["patch"].as_str().unwrap();
    assert!(
        patch.contains("+++ b/staged.txt") && patch.contains("deleted file mode"),
        "{patch}"
    );
    assert!(!patch.contains("+three"), "{patch}");
    let (_, one) = env.tool(root, "git_diff", r#"{"staged": true, "path": "gone.txt"}"#);
    assert!(!one["patch"].as_str().unwrap().contains("staged.txt"));
    assert_eq!(one["truncated"], false);

    let (_, log) = env.tool(root, "git_log", "{}");
    let commits = log["commits"].as_array().unwrap();
    assert_eq!(commits.len(), 2);
    assert_eq!(commits[0]["subject"], "second: a grows");
    assert_eq!(commits[0]["author"], "Tess Ter <tess@example.test>");
    assert_eq!(commits[0]["id"], git(root, &["rev-parse", "HEAD"]).as_str());
    assert!(commits[0]["date"].as_str().unwrap().contains('T'));
    let (_, limited) = env.tool(root, "git_log", r#"{"limit": 1}"#);
    assert_eq!(limited["commits"].as_array().unwrap().len(), 1);
    // Only commits that changed the path.
    let (_, by_path) = env.tool(root, "git_log", r#"{"path": "sub/b.txt"}"#);
    let subjects: Vec<&str> = by_path["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["subject"].as_str().unwrap())
        .collect();
    assert_eq!(subjects, ["first commit"]);

    let (_, branches) = env.tool(root, "git_branch", "{}");
    assert_eq!(
        branches,
        json!({"current": "main", "branches": ["feature/x", "main"]})
    );
}

#[test]
fn a_root_below_the_top_sees_its_own_files_with_its_own_paths() {
    let env = Env::new();
    let dir = repo();
    write_files(
        dir.path(),
        &[
            ("sub/b.txt", "bee\nsting\n"),
            ("a.txt", "changed outside\n"),
        ],
    );
    let sub = dir.path().join("sub");
    let (_, status) = env.tool(&sub, "git_status", "{}");
    assert_eq!(files(&status), [row("b.txt", " ", "M")], "{status}");
    let (_, diff) = env.tool(&sub, "git_diff", "{}");
    let patch = diff["patch"].as_str().unwrap();
    assert!(
        patch.contains("+sting") && !patch.contains("outside"),
        "{patch}"
    );
    let (_, log) = env.tool(&sub, "git_log", r#"{"path": "b.txt"}"#);
    assert_eq!(log["commits"].as_array().unwrap().len(), 1);
    let (c, added) = env.tool(&sub, "git_add", r#"{"paths": ["b.txt"]}"#);
    assert_eq!(c, 0, "{added}");
    assert_eq!(added["staged"], json!(["b.txt"]));
}

#[test]
fn add_and_commit_change_the_repository_and_say_what_they_did() {
    let env = Env::new();
    let dir = repo();
    let root = dir.path();
    write_files(
        root,
        &[("a.txt", "edited\n"), ("odd*name.txt", "literal\n")],
    );
    let (c, added) = env.tool(root, "git_add", r#"{"paths": ["a.txt", "odd*name.txt"]}"#);
    assert_eq!(c, 0, "{added}");
    assert_eq!(added["staged"], json!(["a.txt", "odd*name.txt"]));
    assert!(added["confined"].is_boolean());
    let (c, commit) = env.tool(root, "git_commit", r#"{"message": "third\n\nbecause"}"#);
    assert_eq!(c, 0, "{commit}");
    assert_eq!(commit["branch"], "main");
    assert_eq!(commit["subject"], "third");
    assert_eq!(commit["commit"], git(root, &["rev-parse", "HEAD"]).as_str());
    assert_eq!(git(root, &["log", "-1", "--format=%B"]), "third\n\nbecause");
    assert_eq!(git(root, &["status", "--porcelain"]), "");

    // Nothing staged: a clear error, no empty commit.
    let (c, nothing) = env.tool(root, "git_commit", r#"{"message": "empty"}"#);
    assert_eq!(c, 1);
    assert_eq!(nothing["error"]["code"], "nothing_staged", "{nothing}");
    assert!(
        nothing["error"]["message"]
            .as_str()
            .unwrap()
            .contains("git_add")
    );
    assert_eq!(git(root, &["rev-list", "--count", "HEAD"]), "3");

    // Hostile paths never reach git.
    for bad in ["../outside", ".git/config", "/etc/passwd"] {
        let args = json!({ "paths": [bad] }).to_string();
        let (c, refused) = env.tool(root, "git_add", &args);
        assert_eq!(c, 1, "{bad}: {refused}");
        assert_ne!(refused["error"]["code"], "git_failed", "{bad}: {refused}");
    }
    // A path git does not know: git's own words come back.
    let (c, missing) = env.tool(root, "git_add", r#"{"paths": ["nope.txt"]}"#);
    assert_eq!(c, 1);
    assert_eq!(missing["error"]["code"], "git_failed");
    assert!(
        missing["error"]["message"]
            .as_str()
            .unwrap()
            .contains("nope.txt"),
        "{missing}"
    );
}

#[test]
fn a_commit_from_a_root_below_the_top_never_records_what_is_staged_outside_it() {
    let env = Env::new();
    let dir = repo();
    let top = dir.path();
    // The user's own change outside the agent root (`sub/`), staged.
    write_files(
        top,
        &[("a.txt", "the user's\n"), ("sub/b.txt", "bee\nsea\n")],
    );
    git(top, &["add", "a.txt"]);
    let root = top.join("sub");
    let (c, added) = env.tool(&root, "git_add", r#"{"paths": ["b.txt"]}"#);
    assert_eq!(c, 0, "{added}");
    let (c, refused) = env.tool(&root, "git_commit", r#"{"message": "b grows"}"#);
    assert_eq!(c, 1, "{refused}");
    assert_eq!(refused["error"]["code"], "staged_outside_root", "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("a.txt"),
        "{refused}"
    );
    assert_eq!(git(top, &["rev-list", "--count", "HEAD"]), "2", "no commit");
    // Once the user has dealt with it, the root's own change commits alone.
    git(top, &["restore", "--staged", "a.txt"]);
    let (c, commit) = env.tool(&root, "git_commit", r#"{"message": "b grows"}"#);
    assert_eq!(c, 0, "{commit}");
    assert_eq!(
        git(top, &["show", "--name-only", "--format=", "HEAD"]),
        "sub/b.txt"
    );
    // A file moved into the root from outside it: its old path is outside.
    git(top, &["mv", "a.txt", "sub/a.txt"]);
    let (c, refused) = env.tool(&root, "git_commit", r#"{"message": "move a"}"#);
    assert_eq!(c, 1, "{refused}");
    assert_eq!(refused["error"]["code"], "staged_outside_root", "{refused}");
    assert_eq!(git(top, &["rev-list", "--count", "HEAD"]), "3", "no commit");
}

#[test]
fn a_detached_head_is_shown_and_refuses_commits() {
    let env = Env::new();
    let dir = repo();
    let root = dir.path();
    git(root, &["checkout", "-q", "--detach", "HEAD~1"]);
    let (_, status) = env.tool(root, "git_status", "{}");
    assert_eq!(status["branch"], Value::Null);
    assert_eq!(status["detached"], true);
    assert_eq!(
        status["head"],
        git(root, &["rev-parse", "--short", "HEAD"]).as_str()
    );
    let (_, branches) = env.tool(root, "git_branch", "{}");
    assert_eq!(branches["current"], Value::Null);
    write_files(root, &[("a.txt", "x\n")]);
    git(root, &["add", "a.txt"]);
    let (c, refused) = env.tool(root, "git_commit", r#"{"message": "lost"}"#);
    assert_eq!(c, 1);
    assert_eq!(refused["error"]["code"], "detached_head", "{refused}");
    assert_eq!(
        git(root, &["rev-list", "--count", "HEAD"]),
        "1",
        "no commit made"
    );
}

#[test]
fn push_is_offered_only_when_allowed_and_reaches_a_local_remote() {
    let env = Env::new();
    let dir = repo();
    let root = dir.path();
    let remote = tempfile::tempdir().unwrap();
    git(remote.path(), &["init", "-q", "--bare"]);
    git(
        root,
        &["remote", "add", "origin", remote.path().to_str().unwrap()],
    );

    let (c, hidden) = env.tool(root, "git_push", "{}");
    assert_eq!(c, 1);
    assert_eq!(hidden["error"]["code"], "unknown_tool");

    std::fs::create_dir_all(env.default_config_path().parent().unwrap()).unwrap();
    std::fs::write(env.default_config_path(), "[git]\nallow_push = true\n").unwrap();
    let (c, unknown) = env.tool(root, "git_push", r#"{"remote": "upstream"}"#);
    assert_eq!(c, 1);
    assert_eq!(unknown["error"]["code"], "unknown_remote");
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("origin")
    );
    let (c, pushed) = env.tool(root, "git_push", "{}");
    assert_eq!(c, 0, "{pushed}");
    assert_eq!(pushed["remote"], "origin");
    assert_eq!(
        git(remote.path(), &["rev-parse", "refs/heads/main"]),
        git(root, &["rev-parse", "HEAD"])
    );
    // With an upstream, status counts what is not pushed yet.
    git(root, &["fetch", "-q", "origin"]);
    git(root, &["branch", "-q", "-u", "origin/main"]);
    write_files(root, &[("a.txt", "ahead\n")]);
    git(root, &["commit", "-q", "-am", "ahead"]);
    let (_, status) = env.tool(root, "git_status", "{}");
    assert_eq!(
        (
            status["upstream"].as_str(),
            status["ahead"].as_u64(),
            status["behind"].as_u64()
        ),
        (Some("origin/main"), Some(1), Some(0))
    );
}

#[test]
fn outside_a_work_tree_there_are_no_git_tools() {
    let env = Env::new();
    let plain = tempfile::tempdir().unwrap();
    let names: Vec<String> = env
        .tool_list(plain.path())
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert!(!names.iter().any(|n| n.starts_with("git_")), "{names:?}");
    let (c, out) = env.tool(plain.path(), "git_status", "{}");
    assert_eq!(c, 1, "{out}");
    assert!(
        out["error"]["message"]
            .as_str()
            .unwrap()
            .contains("only in a git work tree"),
        "{out}"
    );
    let dir = repo();
    let tools = env.tool_list(dir.path());
    let tier = |n: &str| {
        tools
            .iter()
            .find(|t| t["name"] == n)
            .map(|t| t["tier"].clone())
    };
    assert_eq!(tier("git_status"), Some(json!("read")));
    assert_eq!(tier("git_commit"), Some(json!("exec")));
    assert_eq!(tier("git_push"), None, "not without [git] allow_push");
}

/// One model turn that stages and commits, then an answer.
fn add_and_commit_turn(env: &Env, root: &Path, tables: &str) -> (Vec<Value>, LlmServer) {
    let calls = [
        ("git_add", json!({"paths": ["a.txt"]})),
        ("git_commit", json!({"message": "from the model"})),
    ];
    one_turn(env, root, &calls, tables)
}

#[test]
fn one_turns_git_changes_are_asked_together() {
    let env = Env::new();
    let dir = repo();
    let root = dir.path();
    write_files(root, &[("a.txt", "model edit\n")]);
    // Batch (the default): one question covers both calls; headless, it is
    // denied, and nothing is staged or committed.
    let (events, _server) = add_and_commit_turn(&env, root, "");
    let asked: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "approval.requested")
        .collect();
    assert_eq!(asked.len(), 1, "one question for the turn");
    assert_eq!(asked[0]["data"]["name"], "git_add");
    assert_eq!(asked[0]["data"]["batch"][0]["name"], "git_commit");
    assert_eq!(asked[0]["data"]["batch"][0]["tool_call_id"], "c2");
    let resolved: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "approval.resolved")
        .collect();
    assert_eq!(resolved.len(), 2);
    assert!(resolved.iter().all(|r| r["data"]["approved"] == false));
    assert_eq!(git(root, &["rev-list", "--count", "HEAD"]), "2");
    assert_eq!(git(root, &["diff", "--cached", "--name-only"]), "");

    // `auto`: both run unasked and the commit is made.
    let (events, server) = add_and_commit_turn(&env, root, "[approvals]\ngit = \"auto\"");
    assert!(events.iter().all(|e| e["type"] != "approval.requested"));
    assert_eq!(git(root, &["log", "-1", "--format=%s"]), "from the model");
    let second = &server.requests()[1].body["messages"];
    let results: Vec<&Value> = second
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    assert!(
        results[1]["content"]
            .as_str()
            .unwrap()
            .contains("\"branch\":\"main\""),
        "{results:?}"
    );

    // `never`: not offered to the model at all.
    let (_, server) = add_and_commit_turn(&env, root, "[approvals]\ngit = \"never\"");
    let offered: Vec<String> = server.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(offered.contains(&"git_status".to_string()));
    assert!(!offered.contains(&"git_commit".to_string()), "{offered:?}");
}

#[test]
fn a_submodule_with_changes_is_in_the_status() {
    let env = Env::new();
    let dir = repo();
    let root = dir.path();
    let other = tempfile::tempdir().unwrap();
    let sub = other.path();
    git(sub, &["init", "-q", "-b", "main"]);
    git(sub, &["config", "user.name", "Tess Ter"]);
    git(sub, &["config", "user.email", "tess@example.test"]);
    write_files(sub, &[("s.txt", "s\n")]);
    git(sub, &["add", "."]);
    git(sub, &["commit", "-q", "-m", "s"]);
    let url = sub.display().to_string();
    git(
        root,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            &url,
            "vendor/sub",
        ],
    );
    git(root, &["commit", "-q", "-m", "a submodule"]);
    write_files(root, &[("vendor/sub/s.txt", "s\nchanged\n")]);
    assert_eq!(git(root, &["status", "--porcelain"]), "M vendor/sub");
    let (c, status) = env.tool(root, "git_status", "{}");
    assert_eq!(c, 0, "{status}");
    assert_eq!(files(&status), [row("vendor/sub", " ", "M")]);
}

#[test]
fn a_commit_during_an_unresolved_merge_names_the_conflicts() {
    let env = Env::new();
    let dir = repo();
    let root = dir.path();
    git(root, &["checkout", "-q", "-b", "other"]);
    write_files(root, &[("a.txt", "theirs\n")]);
    git(root, &["commit", "-q", "-am", "theirs"]);
    git(root, &["checkout", "-q", "main"]);
    write_files(root, &[("a.txt", "ours\n")]);
    git(root, &["commit", "-q", "-am", "ours"]);
    let merged = Command::new("git")
        .args(["merge", "-q", "other"])
        .current_dir(root)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(!merged.status.success(), "the merge conflicts");
    let (c, out) = env.tool(root, "git_commit", r#"{"message": "merge"}"#);
    assert_eq!(c, 1, "{out}");
    assert_eq!(out["error"]["code"], "unresolved_conflict", "{out}");
    assert!(
        out["error"]["message"].as_str().unwrap().contains("a.txt"),
        "{out}"
    );
}
