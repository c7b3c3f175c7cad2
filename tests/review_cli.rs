//! Edits end to end through the binary: propose (nothing written), review,
//! decide per hunk or file, hash-checked apply (conflicts write nothing, exit
//! 3), checkpoints, hard and scoped rollback, sessions, the audit chain.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;

use serde_json::{Value, json};
use support::jobs::{Run, config, exec, sse};
use support::llm_server::{LlmServer, Reply, openai};
use support::{Env, code, stderr, stdout, write_files};

const MAIN: &str = "fn main() {\n    println!(\"one\");\n    println!(\"two\");\n}\n";

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut long = String::new();
    for i in 1..=40 {
        long.push_str(&format!("line {i}\n"));
    }
    write_files(dir.path(), &[("src/main.rs", MAIN), ("notes.txt", &long)]);
    dir
}

/// A model turn that proposes `edits`, then one that answers.
fn propose_then_answer(edits: Value) -> Vec<Reply> {
    let args = json!({ "edits": edits }).to_string();
    vec![
        sse(openai::tool_calls(&[("c1", "propose_edits", &args)])),
        sse(openai::text(&["I proposed the changes."])),
    ]
}

fn standard_edits() -> Value {
    json!([
        {"file_path": "src/main.rs", "operation": "replace", "start_line": 2, "end_line": 2,
         "old_text": "    println!(\"one\");", "new_text": "    println!(\"uno\");\n", "rationale": "Spanish"},
        {"file_path": "notes.txt", "operation": "replace", "start_line": 30, "end_line": 30, "new_text": "line thirty\n"},
        {"file_path": "docs/new.md", "operation": "create", "new_text": "# New\n"}
    ])
}

struct Cli<'a> {
    env: &'a Env,
    root: &'a Path,
}

impl Cli<'_> {
    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let out = self
            .env
            .cmd()
            .args(args)
            .arg("--root")
            .arg(self.root)
            .output()
            .unwrap();
        (code(&out), stdout(&out), stderr(&out))
    }

    fn json(&self, args: &[&str]) -> Value {
        let (c, out, err) = self.run(args);
        assert_eq!(c, 0, "{args:?}: {err}");
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out}"))
    }

    /// The id of the newest session.
    fn latest_session(&self) -> String {
        self.json(&["sessions", "--json"])[0]["session_id"]
            .as_str()
            .unwrap()
            .to_string()
    }
}

fn propose(env: &Env, root: &Path, edits: Value, extra: &[&str]) -> (Run, LlmServer) {
    let server = LlmServer::start(propose_then_answer(edits));
    let cfg = config(env, "openai", &server.url(), "");
    let mut args = vec!["--json"];
    args.extend_from_slice(extra);
    args.push("make the changes");
    let run = exec(env, &cfg, root, &args);
    (run, server)
}

fn read(root: &Path, p: &str) -> String {
    std::fs::read_to_string(root.join(p)).unwrap()
}

#[test]
fn propose_review_decide_apply_rollback() {
    let env = Env::new();
    let dir = project();
    let root = dir.path();
    let (run, server) = propose(&env, root, standard_edits(), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let events = run.events();
    let types = run.types();
    assert!(types.contains(&"edits.proposed".to_string()), "{types:?}");
    assert!(types.contains(&"diff.generated".to_string()), "{types:?}");
    let done = events.last().unwrap();
    assert_eq!(done["type"], "job.completed");
    assert_eq!(done["data"]["status"], "awaiting_review");
    // The tool result told the model the hunk ids; nothing was written.
    let result = &events
        .iter()
        .find(|e| e["type"] == "tool.call.completed")
        .unwrap()["data"]["result"];
    assert_eq!(result["hunk_ids"], json!(["h_1", "h_2", "h_3"]));
    let sent = &server.requests()[1].body["messages"];
    assert!(sent.to_string().contains("h_1"));
    assert_eq!(read(root, "src/main.rs"), MAIN);
    assert!(!root.join("docs/new.md").exists());

    let cli = Cli { env: &env, root };
    let bundle = cli.json(&["review", "--json"]);
    assert_eq!(bundle["files"].as_array().unwrap().len(), 3);
    let files: Vec<&str> = bundle["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file_path"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["docs/new.md", "notes.txt", "src/main.rs"]);
    for f in bundle["files"].as_array().unwrap() {
        let mut keys: Vec<&str> = f.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["base_file_hash", "file_path", "hunks"]);
        for h in f["hunks"].as_array().unwrap() {
            assert_eq!(h["accepted"], Value::Null);
            assert!(h["patch"].as_str().unwrap().starts_with("@@ -"));
        }
    }
    assert_eq!(bundle["files"][0]["base_file_hash"], Value::Null);
    let main_patch = bundle["files"][2]["hunks"][0]["patch"].as_str().unwrap();
    assert!(
        main_patch.contains("-    println!(\"one\");\n+    println!(\"uno\");\n"),
        "{main_patch}"
    );

    // Human view.
    let (c, text, _) = cli.run(&["review"]);
    assert_eq!(c, 0);
    assert!(
        text.contains("h_3 [pending]") && text.contains("+    println!(\"uno\");"),
        "{text}"
    );

    // Unknown hunk ids are a usage error and change nothing.
    let (c, _, err) = cli.run(&["review", "--accept", "h_9"]);
    assert_eq!(c, 2, "{err}");
    // Accept one hunk by id and a whole file by path, reject the third.
    let b = cli.json(&[
        "review",
        "--json",
        "--accept",
        "h_3",
        "--accept",
        "docs/new.md",
        "--reject",
        "h_2",
    ]);
    let states: Vec<Value> = b["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["hunks"][0]["accepted"].clone())
        .collect();
    assert_eq!(states, [json!(true), json!(false), json!(true)]);
    let (c, _, err) = cli.run(&["review", "--apply"]);
    assert_eq!(c, 0, "{err}");
    assert!(err.contains("Applied 2 hunks to 2 files"), "{err}");
    assert_eq!(read(root, "src/main.rs"), MAIN.replace("one", "uno"));
    assert_eq!(read(root, "docs/new.md"), "# New\n");
    assert!(
        read(root, "notes.txt").contains("line 30\n"),
        "rejected hunk not written"
    );
    let (_, _, err) = cli.run(&["review"]);
    assert!(err.contains("nothing to review"), "{err}");

    // The checkpoint, its three-way data, and a hard rollback.
    let cps = cli.json(&["checkpoints", "list", "--json"]);
    assert_eq!(cps.as_array().unwrap().len(), 1);
    let cp = cps[0]["checkpoint_id"].as_str().unwrap().to_string();
    let shown = cli.json(&["checkpoints", "show", &cp, "--json"]);
    let tw = shown["three_way"].as_array().unwrap();
    let main_view = tw.iter().find(|v| v["file_path"] == "src/main.rs").unwrap();
    assert_eq!(main_view["base"], MAIN);
    assert_eq!(main_view["proposed"], MAIN.replace("one", "uno"));
    assert_eq!(main_view["current"], MAIN.replace("one", "uno"));
    assert!(
        shown["checkpoint"]["affected_files"][0]["hunks"][0]["reverse_patch"]
            .as_str()
            .unwrap()
            .starts_with("@@")
    );
    let (c, _, err) = cli.run(&["rollback", &cp]);
    assert_eq!(c, 0, "{err}");
    assert_eq!(read(root, "src/main.rs"), MAIN);
    assert!(!root.join("docs/new.md").exists(), "created file removed");
    // The rollback is a checkpoint too, and can itself be undone.
    let cps = cli.json(&["checkpoints", "--json"]);
    assert_eq!(cps.as_array().unwrap().len(), 2);
    assert_eq!(cps[1]["kind"], "rollback");
    let undo = cps[1]["checkpoint_id"].as_str().unwrap().to_string();
    assert_eq!(cli.run(&["rollback", &undo]).0, 0);
    assert_eq!(read(root, "src/main.rs"), MAIN.replace("one", "uno"));

    // Sessions and the audit chain.
    let sessions = cli.json(&["sessions", "--json"]);
    assert_eq!(sessions.as_array().unwrap().len(), 1);
    let sid = sessions[0]["session_id"].as_str().unwrap().to_string();
    let shown = cli.json(&["sessions", "show", &sid, "--json"]);
    assert_eq!(shown["jobs"][0]["prompt"], "make the changes");
    let (c, out, _) = cli.run(&["audit", "verify"]);
    assert_eq!(c, 0, "{out}");
    assert!(out.contains("intact"), "{out}");
}

#[test]
fn audit_verify_finds_tampering() {
    let env = Env::new();
    let dir = project();
    let root = dir.path();
    let (run, _) = propose(&env, root, standard_edits(), &["--apply", "all"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let cli = Cli { env: &env, root };
    assert_eq!(cli.run(&["audit", "verify"]).0, 0);
    let records = env.audit_records();
    assert!(records.len() >= 3, "{records:?}");
    let actions: Vec<&str> = records
        .iter()
        .map(|r| r["action"].as_str().unwrap())
        .collect();
    assert!(
        actions.contains(&"tool_call") && actions.contains(&"apply"),
        "{actions:?}"
    );
    // Someone edits the first record with an SQLite tool.
    support::db::exec(
        &env.state_db(),
        "UPDATE audit SET outcome = 'ko' WHERE seq = 1",
    );
    let (c, out, _) = cli.run(&["audit", "verify"]);
    assert_eq!(c, 1);
    assert!(out.contains("BROKEN at record 1 (seq 1)"), "{out}");
    assert!(out.contains("hash does not match its contents"), "{out}");
    let checked = env.cmd().args(["store", "check"]).output().unwrap();
    let (c, out) = (code(&checked), stdout(&checked));
    assert_eq!(c, 1, "{out}{}", stderr(&checked));
    assert!(
        out.contains("audit chain of root") && out.contains("record 1"),
        "{out}"
    );
}

#[test]
fn audit_verify_finds_its_newest_records_removed() {
    // Every record left links and hashes well: only the head the store
    // keeps beside the chain shows that its end is gone.
    let env = Env::new();
    let dir = project();
    let root = dir.path();
    let (run, _) = propose(&env, root, standard_edits(), &["--apply", "all"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let cli = Cli { env: &env, root };
    let n = env.audit_records().len();
    assert!(n >= 3);
    support::db::exec(
        &env.state_db(),
        &format!("DELETE FROM audit WHERE seq >= {}", n - 1),
    );
    let (c, out, _) = cli.run(&["audit", "verify"]);
    assert_eq!(c, 1, "{out}");
    assert!(
        out.contains(&format!(
            "the chain ends at seq {} but its head is seq {n}",
            n - 2
        )),
        "{out}"
    );
    let checked = env.cmd().args(["store", "check"]).output().unwrap();
    assert_eq!(code(&checked), 1, "{}", stdout(&checked));
    assert!(stdout(&checked).contains("newest records were removed"));
    // The head removed too: said, not taken as an empty history.
    support::db::exec(&env.state_db(), "DELETE FROM audit_heads");
    let (c, out, _) = cli.run(&["audit", "verify"]);
    assert_eq!(c, 1, "{out}");
    assert!(out.contains("keeps no head"), "{out}");
    // A store of schema 5 (no heads) gets each chain's head from its
    // newest record on open, and verifies.
    let env = Env::new();
    let dir = project();
    let (run, _) = propose(&env, dir.path(), standard_edits(), &["--apply", "all"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let db = env.state_db();
    support::db::exec(&db, "DROP TABLE web_cache");
    support::db::exec(&db, "DROP TABLE images");
    support::db::exec(&db, "DROP TABLE hook_trust");
    support::db::exec(&db, "DROP TABLE audit_heads");
    support::db::exec(&db, "DROP INDEX audit_by_user");
    support::db::exec(&db, "ALTER TABLE audit DROP COLUMN user_name");
    support::db::exec(
        &db,
        "UPDATE store_meta SET value = '5' WHERE key = 'schema_version'",
    );
    let cli = Cli {
        env: &env,
        root: dir.path(),
    };
    let (c, out, _) = cli.run(&["audit", "verify"]);
    assert_eq!(c, 0, "{out}");
    let n = env.audit_records().len();
    assert_eq!(
        support::db::column(&db, "SELECT seq FROM audit_heads"),
        [n.to_string()]
    );
}

#[test]
fn exec_apply_all_writes_and_checkpoints() {
    let env = Env::new();
    let dir = project();
    let root = dir.path();
    let (run, _) = propose(&env, root, standard_edits(), &["--apply", "all"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let types = run.types();
    for t in [
        "review.updated",
        "apply.started",
        "checkpoint.created",
        "apply.completed",
    ] {
        assert!(types.contains(&t.to_string()), "{t}: {types:?}");
    }
    assert!(read(root, "notes.txt").contains("line thirty\n"));
    assert_eq!(read(root, "docs/new.md"), "# New\n");
}

type Mutation = Box<dyn Fn(&Path)>;

#[test]
fn a_file_changed_after_the_proposal_is_a_conflict_and_nothing_is_written() {
    // Every kind of change, including one of the same size and mtime.
    let changes: Vec<(&str, Mutation)> = vec![
        (
            "same size, same mtime",
            Box::new(|root: &Path| {
                let p = root.join("src/main.rs");
                let mtime = std::fs::metadata(&p).unwrap().modified().unwrap();
                std::fs::write(&p, MAIN.replace("two", "TWO")).unwrap();
                std::fs::File::options()
                    .write(true)
                    .open(&p)
                    .unwrap()
                    .set_modified(mtime)
                    .unwrap();
            }),
        ),
        (
            "appended",
            Box::new(|root: &Path| {
                std::fs::write(root.join("src/main.rs"), format!("{MAIN}// more\n")).unwrap();
            }),
        ),
        (
            "deleted",
            Box::new(|root: &Path| std::fs::remove_file(root.join("src/main.rs")).unwrap()),
        ),
        (
            "new file appeared",
            Box::new(|root: &Path| {
                std::fs::create_dir_all(root.join("docs")).unwrap();
                std::fs::write(root.join("docs/new.md"), "someone else's\n").unwrap();
            }),
        ),
    ];
    for (what, change) in changes {
        let env = Env::new();
        let dir = project();
        let root = dir.path();
        let (run, _) = propose(&env, root, standard_edits(), &[]);
        assert_eq!(run.code, 0, "{what}: {}", run.stderr);
        change(root);
        let snapshot: Vec<Option<Vec<u8>>> = ["src/main.rs", "notes.txt", "docs/new.md"]
            .iter()
            .map(|p| std::fs::read(root.join(p)).ok())
            .collect();
        let cli = Cli { env: &env, root };
        let (c, _, err) = cli.run(&["review", "--accept-all", "--apply"]);
        assert_eq!(c, 3, "{what}: {err}");
        assert!(err.contains("conflict"), "{what}: {err}");
        let after: Vec<Option<Vec<u8>>> = ["src/main.rs", "notes.txt", "docs/new.md"]
            .iter()
            .map(|p| std::fs::read(root.join(p)).ok())
            .collect();
        assert_eq!(snapshot, after, "{what}: nothing may be written");
        assert!(
            cli.json(&["checkpoints", "--json"])
                .as_array()
                .unwrap()
                .is_empty(),
            "{what}"
        );
    }
}

#[test]
fn invalid_edits_go_back_to_the_model_with_nearby_lines() {
    let env = Env::new();
    let dir = project();
    let root = dir.path();
    let bad = json!({"edits": [{"file_path": "src/main.rs", "operation": "replace", "start_line": 2, "end_line": 2,
        "old_text": "    println!(\"zero\");", "new_text": "x\n"}]})
    .to_string();
    let good = json!({"edits": [{"file_path": "src/main.rs", "operation": "replace", "start_line": 3, "end_line": 3,
        "old_text": "    println!(\"two\");", "new_text": "    println!(\"dos\");\n"}]})
    .to_string();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "propose_edits", &bad)])),
        sse(openai::tool_calls(&[("c2", "propose_edits", &good)])),
        sse(openai::text(&["ok"])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let run = exec(&env, &cfg, root, &["--json", "fix it"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let errors: Vec<Value> = run
        .events()
        .into_iter()
        .filter(|e| e["type"] == "tool.call.completed")
        .collect();
    assert_eq!(errors[0]["data"]["ok"], false);
    let message = errors[0]["data"]["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("edit 1 (replace src/main.rs lines 2-2)"),
        "{message}"
    );
    assert!(message.contains("old_text does not match"), "{message}");
    assert!(
        message.contains("    2|     println!(\"one\");"),
        "nearby lines: {message}"
    );
    assert_eq!(errors[1]["data"]["ok"], true);
    assert_eq!(errors[1]["data"]["result"]["hunk_ids"], json!(["h_1"]));
}

#[test]
fn continue_sends_the_prior_conversation() {
    let env = Env::new();
    let dir = project();
    let root = dir.path();
    let server = LlmServer::start(vec![
        sse(openai::text(&["First answer."])),
        sse(openai::text(&["Second answer."])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    assert_eq!(exec(&env, &cfg, root, &["first question"]).code, 0);
    let run = exec(&env, &cfg, root, &["--continue", "second question"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let messages = server.requests()[1].body["messages"].clone();
    let texts: Vec<(String, String)> = messages
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(
        texts,
        [
            ("user".to_string(), "first question".to_string()),
            ("assistant".to_string(), "First answer.".to_string()),
            ("user".to_string(), "second question".to_string())
        ]
    );
    let cli = Cli { env: &env, root };
    let sessions = cli.json(&["sessions", "--json"]);
    assert_eq!(sessions.as_array().unwrap().len(), 1, "same session");
    assert_eq!(sessions[0]["jobs"], 2);
    let (c, _, err) = cli.run(&["sessions", "show", "s_nope"]);
    assert_eq!(c, 2, "an id that names nothing, as with exec: {err}");
    let out = env
        .cmd()
        .args(["exec", "--session", "s_nope", "x", "--root"])
        .arg(root)
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
}

/// The `edit` fuzz target's finding, through the binary: eighteen edits,
/// most inserting at one line of a CRLF file with a BOM, one removing that
/// line. The hunk inserting right after that removal, rolled back alone,
/// takes out exactly its own lines: its region was once placed a line
/// early, so its rollback took another hunk's line and left one of its own.
/// Then every other hunk, one at a time, gives the original bytes back.
#[test]
fn an_insertion_after_a_removal_is_rolled_back_alone() {
    let env = Env::new();
    let dir = project();
    let root = dir.path();
    let case: Value =
        serde_json::from_str(include_str!("fixtures/review/edits_at_one_line.json")).unwrap();
    let original = case["original"].as_str().unwrap();
    std::fs::write(root.join("f.txt"), original).unwrap();
    let (run, _) = propose(&env, root, case["edits"].clone(), &["--apply", "all"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let applied = read(root, "f.txt");
    let cli = Cli { env: &env, root };
    let sid = cli.latest_session();
    let shown = cli.json(&["sessions", "show", &sid, "--json"]);
    let hunks = shown["jobs"][0]["bundle"]["files"][0]["hunks"]
        .as_array()
        .unwrap()
        .clone();
    let change = |k: usize| hunks[k]["changes"][0].clone();
    let k = (1..hunks.len())
        .find(|&k| {
            change(k - 1)["old_len"] != 0
                && change(k)["old_len"] == 0
                && change(k)["old_start"] == change(k - 1)["old_start"]
        })
        .expect("an insertion right after a removal");
    let own: String = change(k)["new_lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(applied.matches(&own).count(), 1, "{applied:?}");
    let cp = cli.json(&["checkpoints", "--json"])[0]["checkpoint_id"]
        .as_str()
        .unwrap()
        .to_string();
    let id = hunks[k]["hunk_id"].as_str().unwrap();
    let (c, _, err) = cli.run(&["rollback", &cp, "--hunks", id]);
    assert_eq!(c, 0, "{id}: {err}");
    assert_eq!(read(root, "f.txt"), applied.replacen(&own, "", 1));
    // Again: its lines are gone and its context meets, which is said.
    let (c, _, err) = cli.run(&["rollback", &cp, "--hunks", id]);
    assert_eq!(c, 3, "{err}");
    assert!(
        err.contains(&format!("{id}: it is rolled back already")),
        "{err}"
    );
    // Then every other hunk on its own, last first: the hunks share their
    // context, so each is found by its recorded place, a hunk that only
    // removed lines by the context on its one unchanged side.
    for h in hunks.iter().rev().filter(|h| h["hunk_id"] != id) {
        let other = h["hunk_id"].as_str().unwrap();
        let (c, _, err) = cli.run(&["rollback", &cp, "--hunks", other]);
        assert_eq!(c, 0, "{other}: {err}");
    }
    assert_eq!(read(root, "f.txt"), original);
    let (c, _, err) = cli.run(&["rollback", &cp, "--hunks", id]);
    assert_eq!(c, 3, "nothing of {id} is left to undo: {err}");
    assert_eq!(read(root, "f.txt"), original);
}

#[test]
fn scoped_rollback_keeps_later_edits_and_refuses_changed_regions() {
    let env = Env::new();
    let dir = project();
    let root = dir.path();
    let edits = json!([
        {"file_path": "notes.txt", "operation": "replace", "start_line": 5, "end_line": 5, "new_text": "line five\n"},
        {"file_path": "notes.txt", "operation": "replace", "start_line": 30, "end_line": 30, "new_text": "line thirty\n"}
    ]);
    let (run, _) = propose(&env, root, edits, &["--apply", "all"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let cli = Cli { env: &env, root };
    let cp = cli.json(&["checkpoints", "--json"])[0]["checkpoint_id"]
        .as_str()
        .unwrap()
        .to_string();
    // A later edit by the user elsewhere in the file.
    let text = read(root, "notes.txt").replace("line 20\n", "line twenty (mine)\n");
    std::fs::write(root.join("notes.txt"), &text).unwrap();
    let (c, _, err) = cli.run(&["rollback", &cp, "--hunks", "h_2"]);
    assert_eq!(c, 0, "{err}");
    let now = read(root, "notes.txt");
    assert!(
        now.contains("line 30\n")
            && now.contains("line five\n")
            && now.contains("line twenty (mine)\n"),
        "{now}"
    );
    // The region of h_1 changed since: conflict, nothing written.
    std::fs::write(
        root.join("notes.txt"),
        now.replace("line five\n", "line 5 (edited)\n"),
    )
    .unwrap();
    let before = read(root, "notes.txt");
    let (c, _, err) = cli.run(&["rollback", &cp, "--hunks", "h_1"]);
    assert_eq!(c, 3, "{err}");
    assert!(
        err.contains("its lines changed since the checkpoint"),
        "{err}"
    );
    assert_eq!(read(root, "notes.txt"), before);
    // h_2 again: rolled back already, and said so.
    let (c, _, err) = cli.run(&["rollback", &cp, "--hunks", "h_2"]);
    assert_eq!(c, 3, "{err}");
    assert!(err.contains("h_2: it is rolled back already"), "{err}");
    // An edit next to h_1's line (its context) is no conflict: kept, and
    // h_1 rolled back.
    std::fs::write(
        root.join("notes.txt"),
        before
            .replace("line 5 (edited)\n", "line five\n")
            .replace("line 3\n", "line 3 (mine)\n"),
    )
    .unwrap();
    let (c, _, err) = cli.run(&["rollback", &cp, "--hunks", "h_1"]);
    assert_eq!(c, 0, "{err}");
    let now = read(root, "notes.txt");
    assert!(
        now.contains("line 5\n") && now.contains("line 3 (mine)\n"),
        "{now}"
    );
    let (c, _, _) = cli.run(&["rollback", &cp, "--hunks", "h_7"]);
    assert_eq!(c, 2);
    let (c, _, _) = cli.run(&["rollback", "cp_missing"]);
    assert_eq!(c, 2);
}

#[test]
fn a_crash_mid_job_keeps_the_pending_review() {
    use std::io::{BufRead, BufReader};
    let env = Env::new();
    let dir = project();
    let root = dir.path();
    let args = json!({ "edits": standard_edits() }).to_string();
    let words: Vec<String> = (0..400).map(|i| format!("w{i} ")).collect();
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "propose_edits", &args)])),
        Reply::Slow {
            events: openai::text(&refs),
            delay_ms: 20,
        },
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let mut child = env
        .cmd()
        .env("TEST_LLM_KEY", support::jobs::KEY)
        .arg("--config")
        .arg(&cfg)
        .args(["exec", "--json", "edit and explain", "--root"])
        .arg(root)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // Killed at the first word after the proposal: the proposal must be
    // stored before the model is asked anything more.
    let mut proposed = false;
    for line in lines {
        let line = line.unwrap();
        proposed |= line.contains("\"diff.generated\"");
        if proposed && line.contains("\"llm.delta\"") {
            break;
        }
    }
    child.kill().unwrap(); // SIGKILL: no chance to clean up
    child.wait().unwrap();
    let cli = Cli { env: &env, root };
    let bundle = cli.json(&["review", "--json"]);
    assert_eq!(bundle["files"].as_array().unwrap().len(), 3, "{bundle}");
    let (c, _, err) = cli.run(&["review", "--accept-all", "--apply"]);
    assert_eq!(c, 0, "{err}");
    assert_eq!(read(root, "src/main.rs"), MAIN.replace("one", "uno"));
    let sid = cli.latest_session();
    let shown = cli.json(&["sessions", "show", &sid, "--json"]);
    assert_eq!(
        shown["jobs"][0]["status"], "completed",
        "the apply completed the job"
    );
}

#[test]
fn a_full_session_refuses_more_jobs() {
    let env = Env::new();
    let dir = project();
    let root = dir.path();
    let server = LlmServer::start(vec![
        sse(openai::text(&["one"])),
        sse(openai::text(&["two"])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let text = std::fs::read_to_string(&cfg).unwrap() + "[sessions]\nmax_jobs_per_session = 1\n";
    std::fs::write(&cfg, text).unwrap();
    assert_eq!(exec(&env, &cfg, root, &["first"]).code, 0);
    let run = exec(&env, &cfg, root, &["--json", "--continue", "second"]);
    assert_eq!(run.code, 1);
    let last = run.events().last().cloned().unwrap();
    assert_eq!(last["data"]["code"], "session_full", "{last}");
    // A new session is fine.
    assert_eq!(exec(&env, &cfg, root, &["third"]).code, 0);
}

#[test]
fn hunks_of_a_file_are_decided_in_any_order_across_applies() {
    let env = Env::new();
    let dir = project();
    let root = dir.path();
    // Three far-apart edits of notes.txt: three hunks. The middle one adds lines.
    let edits = json!([
        {"file_path": "notes.txt", "operation": "replace", "start_line": 2, "end_line": 2, "new_text": "line two\n"},
        {"file_path": "notes.txt", "operation": "replace", "start_line": 20, "end_line": 20, "new_text": "line 20a\nline 20b\nline 20c\n"},
        {"file_path": "notes.txt", "operation": "replace", "start_line": 35, "end_line": 35, "new_text": "line thirty-five\n"}
    ]);
    let (run, _server) = propose(&env, root, edits, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let cli = Cli { env: &env, root };
    let review = cli.json(&["review", "--json"]);
    let hunks = review["files"][0]["hunks"].as_array().unwrap().clone();
    assert_eq!(hunks.len(), 3, "{review}");
    let id = |i: usize| hunks[i]["hunk_id"].as_str().unwrap().to_string();
    assert!(
        hunks[2]["patch"]
            .as_str()
            .unwrap()
            .starts_with("@@ -32,7 +32,7 @@")
    );

    // The middle hunk first.
    let (c, _, err) = cli.run(&["review", "--accept", &id(1), "--apply"]);
    assert_eq!(c, 0, "{err}");
    assert!(read(root, "notes.txt").contains("line 20a\nline 20b\nline 20c\nline 21\n"));
    let review = cli.json(&["review", "--json"]);
    let after = review["files"][0]["hunks"].as_array().unwrap().clone();
    let ids: Vec<String> = after
        .iter()
        .map(|h| h["hunk_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, [id(0), id(1), id(2)], "ids stable");
    assert_eq!(after[1]["applied"], true);
    for i in [0, 2] {
        assert_eq!(
            after[i]["accepted"],
            Value::Null,
            "still pending: {}",
            after[i]
        );
        assert_eq!(after[i]["applied"], false);
        assert!(after[i].get("conflict").is_none(), "{}", after[i]);
    }
    // The last hunk moved down two lines, the first did not move.
    assert_eq!(after[0]["patch"], hunks[0]["patch"]);
    let patch = after[2]["patch"].as_str().unwrap();
    assert!(patch.starts_with("@@ -34,7 +34,7 @@"), "{patch}");
    assert!(patch.contains("-line 35\n+line thirty-five\n"), "{patch}");

    // Then the other two, in the other order, in two more applies.
    let (c, _, err) = cli.run(&["review", "--accept", &id(2), "--apply"]);
    assert_eq!(c, 0, "{err}");
    let (c, _, err) = cli.run(&["review", "--accept", &id(0), "--apply"]);
    assert_eq!(c, 0, "{err}");
    let mut want: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    want = want
        .replace("line 2\n", "line two\n")
        .replace("line 20\n", "line 20a\nline 20b\nline 20c\n")
        .replace("line 35\n", "line thirty-five\n");
    assert_eq!(read(root, "notes.txt"), want);
    // Three checkpoints, each undoable on its own.
    let list = cli.json(&["checkpoints", "--json"]);
    assert_eq!(list.as_array().unwrap().len(), 3);
}

#[test]
fn close_edits_are_separate_hunks_and_one_edit_stays_whole() {
    let env = Env::new();
    let dir = project();
    let root = dir.path();
    // Two edits two lines apart (their context overlaps), and one edit over
    // lines 30-33 that changes only its first and last line.
    let edits = json!([
        {"file_path": "notes.txt", "operation": "replace", "start_line": 10, "end_line": 10, "new_text": "line ten\n"},
        {"file_path": "notes.txt", "operation": "insert", "start_line": 13, "new_text": "between 12 and 13\n"},
        {"file_path": "notes.txt", "operation": "replace", "start_line": 30, "end_line": 33,
         "new_text": "line thirty\nline 31\nline 32\nline thirty-three\n"}
    ]);
    let (run, _server) = propose(&env, root, edits, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let cli = Cli { env: &env, root };
    let review = cli.json(&["review", "--json"]);
    let hunks = review["files"][0]["hunks"].as_array().unwrap().clone();
    assert_eq!(hunks.len(), 3, "{review}");
    let patch = |i: usize| hunks[i]["patch"].as_str().unwrap().to_string();
    assert!(patch(0).contains("-line 10\n+line ten\n"), "{}", patch(0));
    assert!(!patch(0).contains("+between"), "{}", patch(0));
    assert!(patch(1).contains("+between 12 and 13\n"), "{}", patch(1));
    assert!(!patch(1).contains("+line ten"), "{}", patch(1));
    assert!(
        patch(2).contains("+line thirty\n") && patch(2).contains("+line thirty-three\n"),
        "{}",
        patch(2)
    );
    let edit_ids = |i: usize| hunks[i]["edit_ids"].as_array().unwrap().len();
    assert_eq!((edit_ids(0), edit_ids(1), edit_ids(2)), (1, 1, 1));

    // The insert alone, then the rest.
    let id = hunks[1]["hunk_id"].as_str().unwrap().to_string();
    let (c, _, err) = cli.run(&["review", "--accept", &id, "--apply"]);
    assert_eq!(c, 0, "{err}");
    let text = read(root, "notes.txt");
    assert!(text.contains("line 10\nline 11\nline 12\nbetween 12 and 13\nline 13\n"));
    let (c, _, err) = cli.run(&["review", "--accept-all", "--apply"]);
    assert_eq!(c, 0, "{err}");
    let text = read(root, "notes.txt");
    assert!(text.contains("line ten\nline 11\nline 12\nbetween 12 and 13\nline 13\n"));
    assert!(text.contains("line thirty\nline 31\nline 32\nline thirty-three\n"));
}

#[test]
fn edits_side_by_side_are_separate_hunks_that_apply_alone() {
    let env = Env::new();
    let dir = project();
    let root = dir.path();
    // Lines 2 and 3 replaced by two edits, and a line inserted right after
    // them by a third: no unchanged line between any of them.
    let edits = json!([
        {"file_path": "notes.txt", "operation": "replace", "start_line": 2, "end_line": 2, "new_text": "line two\n"},
        {"file_path": "notes.txt", "operation": "replace", "start_line": 3, "end_line": 3, "new_text": "line three\n"},
        {"file_path": "notes.txt", "operation": "insert", "start_line": 4, "new_text": "after three\n"}
    ]);
    let (run, _server) = propose(&env, root, edits, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let cli = Cli { env: &env, root };
    let review = cli.json(&["review", "--json"]);
    let hunks = review["files"][0]["hunks"].as_array().unwrap().clone();
    assert_eq!(hunks.len(), 3, "{review}");
    let ids: Vec<Value> = hunks.iter().map(|h| h["edit_ids"].clone()).collect();
    assert_eq!(ids, [json!(["e_1"]), json!(["e_2"]), json!(["e_3"])]);
    // Nothing between them, so no context either: any subset applies.
    assert_eq!(
        hunks[1]["patch"].as_str().unwrap(),
        "@@ -3,1 +3,1 @@\n-line 3\n+line three\n"
    );
    let id = |i: usize| hunks[i]["hunk_id"].as_str().unwrap().to_string();
    let (c, _, err) = cli.run(&["review", "--accept", &id(1), "--reject", &id(0), "--apply"]);
    assert_eq!(c, 0, "{err}");
    assert!(read(root, "notes.txt").starts_with("line 1\nline 2\nline three\nline 4\n"));
    let (c, _, err) = cli.run(&["review", "--accept", &id(2), "--apply"]);
    assert_eq!(c, 0, "{err}");
    assert!(
        read(root, "notes.txt").starts_with("line 1\nline 2\nline three\nafter three\nline 4\n")
    );
}

#[test]
fn the_split_hunks_of_one_edit_apply_one_at_a_time() {
    let env = Env::new();
    let dir = project();
    let root = dir.path();
    // One edit over lines 5-25, split into hunks: the old lines' removal,
    // and the new lines in two pieces at the blank line, all at one spot.
    let mut text = String::new();
    for i in 5..=14 {
        text.push_str(&format!("new {i}\n"));
    }
    text.push('\n');
    for i in 16..=25 {
        text.push_str(&format!("new {i}\n"));
    }
    let edits = json!([
        {"file_path": "notes.txt", "operation": "replace", "start_line": 5, "end_line": 25, "new_text": text}
    ]);
    let server = LlmServer::start(propose_then_answer(edits));
    let cfg = config(&env, "openai", &server.url(), "");
    std::fs::write(
        &cfg,
        std::fs::read_to_string(&cfg).unwrap() + "[limits]\nmax_hunk_lines = 12\n",
    )
    .unwrap();
    let run = exec(&env, &cfg, root, &["--json", "edit"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let cli = Cli { env: &env, root };
    let review = cli.json(&["review", "--json"]);
    let hunks = review["files"][0]["hunks"].as_array().unwrap().clone();
    assert_eq!(hunks.len(), 3, "{review}");
    let last = hunks[2]["hunk_id"].as_str().unwrap().to_string();
    let (c, _, err) = cli.run(&["review", "--accept", &last, "--apply"]);
    assert_eq!(c, 0, "{err}");
    let review = cli.json(&["review", "--json"]);
    for i in [0, 1] {
        assert_eq!(review["files"][0]["hunks"][i]["accepted"], Value::Null);
    }
    let (c, _, err) = cli.run(&["review", "--accept-all", "--apply"]);
    assert_eq!(c, 0, "{err}");
    let mut want: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    let old_span: String = (5..=25).map(|i| format!("line {i}\n")).collect();
    want = want.replace(&old_span, &text);
    assert_eq!(read(root, "notes.txt"), want);
}

/// The tool results of a run's `propose_edits` calls, in order.
fn proposals(run: &Run) -> Vec<Value> {
    run.events()
        .into_iter()
        .filter(|e| e["type"] == "tool.call.completed" && e["data"]["name"] == "propose_edits")
        .map(|e| e["data"].clone())
        .collect()
}

/// A lazy edit (a placeholder for code it leaves out) is refused with a
/// request for the full text, and the model's full second try is taken.
#[test]
fn a_lazy_edit_is_refused_and_the_full_text_taken() {
    let env = Env::new();
    let dir = project();
    let root = dir.path();
    let lazy = json!({"edits": [{"file_path": "src/main.rs", "operation": "replace", "start_line": 1, "end_line": 4,
        "old_text": MAIN, "new_text": "fn main() {\n    // ... existing code ...\n    println!(\"three\");\n}\n"}]})
    .to_string();
    let full = json!({"edits": [{"file_path": "src/main.rs", "operation": "replace", "start_line": 1, "end_line": 4,
        "old_text": MAIN, "new_text": "fn main() {\n    println!(\"one\");\n    println!(\"two\");\n    println!(\"three\");\n}\n"}]})
    .to_string();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "propose_edits", &lazy)])),
        sse(openai::tool_calls(&[("c2", "propose_edits", &full)])),
        sse(openai::text(&["done"])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let run = exec(&env, &cfg, root, &["--json", "add three"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let p = proposals(&run);
    assert_eq!(p[0]["ok"], false, "{}", p[0]);
    let message = p[0]["error"]["message"].as_str().unwrap();
    assert!(
        message
            .contains("new_text line 2 (`// ... existing code ...`) stands for code it leaves out"),
        "{message}"
    );
    assert!(message.contains("send the full new text"), "{message}");
    // The model was told, and its full text is what the review holds.
    assert!(
        server.requests()[1].body["messages"]
            .to_string()
            .contains("stands for code it leaves out")
    );
    assert_eq!(p[1]["ok"], true, "{}", p[1]);
    let cli = Cli { env: &env, root };
    let bundle = cli.json(&["review", "--json"]);
    let patch = bundle["files"][0]["hunks"][0]["patch"].as_str().unwrap();
    assert!(
        patch.contains("+    println!(\"three\");") && !patch.contains("-    println!(\"one\");"),
        "{patch}"
    );
    assert_eq!(
        read(root, "src/main.rs"),
        MAIN,
        "nothing written before the review"
    );
}

/// The same edit twice in one call is one edit; impossible line numbers
/// with an exact, unique old_text land where the old_text is (and where
/// old_text is found nowhere, the numbers' error stands).
#[test]
fn a_repeated_edit_lands_once_and_old_text_places_impossible_lines() {
    let env = Env::new();
    let dir = project();
    let root = dir.path();
    let insert = json!({"file_path": "src/main.rs", "operation": "insert", "start_line": 2,
        "new_text": "    println!(\"zero\");\n"});
    let misplaced = json!({"file_path": "src/main.rs", "operation": "replace", "start_line": 0, "end_line": 0,
        "old_text": "    println!(\"two\");", "new_text": "    println!(\"dos\");\n"});
    let ambiguous = json!({"edits": [{"file_path": "notes.txt", "operation": "replace", "start_line": 90, "end_line": 80,
        "old_text": "line 99", "new_text": "x\n"}]})
    .to_string();
    let edits = json!({"edits": [insert, insert, misplaced]}).to_string();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "propose_edits", &ambiguous)])),
        sse(openai::tool_calls(&[("c2", "propose_edits", &edits)])),
        sse(openai::text(&["done"])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let run = exec(&env, &cfg, root, &["--json", "count"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let p = proposals(&run);
    // "line 99" is nowhere in the file: the impossible numbers are refused.
    assert_eq!(p[0]["ok"], false, "{}", p[0]);
    assert!(
        p[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("lines 90-80 are not a range"),
        "{}",
        p[0]
    );
    assert_eq!(p[1]["ok"], true, "{}", p[1]);
    let cli = Cli { env: &env, root };
    let (c, _, err) = cli.run(&["review", "--accept", "src/main.rs"]);
    assert_eq!(c, 0, "{err}");
    let (c, _, err) = cli.run(&["review", "--apply"]);
    assert_eq!(c, 0, "{err}");
    assert_eq!(
        read(root, "src/main.rs"),
        "fn main() {\n    println!(\"zero\");\n    println!(\"one\");\n    println!(\"dos\");\n}\n"
    );
}

#[test]
fn exec_says_how_much_there_is_to_review() {
    let close = json!([
        {"file_path": "notes.txt", "operation": "replace", "start_line": 10, "end_line": 10, "new_text": "line ten\n"},
        {"file_path": "notes.txt", "operation": "insert", "start_line": 13, "new_text": "between 12 and 13\n"}
    ]);
    for (edits, said) in [
        (close, "To review: 2 hunks in notes.txt (`agent-tui review`"),
        (
            standard_edits(),
            "To review: 3 hunks in 3 files (`agent-tui review`",
        ),
    ] {
        let env = Env::new();
        let dir = project();
        let server = LlmServer::start(propose_then_answer(edits));
        let cfg = config(&env, "openai", &server.url(), "");
        let run = exec(&env, &cfg, dir.path(), &["make the changes"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(run.stderr.contains(said), "{}", run.stderr);
    }
}

#[test]
fn a_review_rejected_whole_completes_its_job() {
    // Nothing to write is no failure: the job is over, in `sessions show`
    // and in the store's rows, not left awaiting a review nobody can open.
    let env = Env::new();
    let dir = project();
    let root = dir.path();
    let (run, _server) = propose(&env, root, standard_edits(), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let cli = Cli { env: &env, root };
    let sid = cli.latest_session();
    let status =
        |cli: &Cli| cli.json(&["sessions", "show", &sid, "--json"])["jobs"][0]["status"].clone();
    assert_eq!(status(&cli), "awaiting_review");
    let (c, _, err) = cli.run(&["review", "--reject", "h_1,h_2"]);
    assert_eq!(c, 0, "{err}");
    assert_eq!(status(&cli), "awaiting_review", "one hunk still waits");
    let (c, _, err) = cli.run(&["review", "--reject", "h_3"]);
    assert_eq!(c, 0, "{err}");
    assert_eq!(status(&cli), "completed");
    let listed = cli.json(&["sessions", "--json"]);
    assert_eq!(listed[0]["pending_review"], false, "{listed}");
    assert_eq!(read(root, "src/main.rs"), MAIN);
}

#[test]
fn a_rollback_from_the_command_line_is_told_to_the_model_on_continue() {
    // The rollback is recorded in the checkpoint's session, and the next
    // request says which hunks are out of the files again.
    let env = Env::new();
    let dir = project();
    let root = dir.path();
    let args = json!({ "edits": standard_edits() }).to_string();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "propose_edits", &args)])),
        sse(openai::text(&["I proposed the changes."])),
        sse(openai::text(&["Noted."])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    assert_eq!(exec(&env, &cfg, root, &["make the changes"]).code, 0);
    let cli = Cli { env: &env, root };
    let (c, _, err) = cli.run(&["review", "--accept-all", "--apply"]);
    assert_eq!(c, 0, "{err}");
    let cp = cli.json(&["checkpoints", "--json"])[0]["checkpoint_id"]
        .as_str()
        .unwrap()
        .to_string();
    let sid = cli.latest_session();
    let bundle = cli.json(&["sessions", "show", &sid, "--json"]);
    let main_hunk = bundle["jobs"][0]["bundle"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["file_path"] == "src/main.rs")
        .map(|f| f["hunks"][0]["hunk_id"].as_str().unwrap().to_string())
        .unwrap();
    let (c, _, err) = cli.run(&["rollback", &cp, "--hunks", &main_hunk]);
    assert_eq!(c, 0, "{err}");
    assert_eq!(read(root, "src/main.rs"), MAIN);
    let run = exec(&env, &cfg, root, &["--continue", "what now"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let sent = server.requests()[2].body["messages"].to_string();
    assert!(
        sent.contains(&format!(
            "{main_hunk} (src/main.rs): applied, then rolled back by the user"
        )),
        "{sent}"
    );
    assert!(sent.contains("the user rolled back hunks"), "{sent}");
    assert!(
        sent.contains("(notes.txt): applied: the file now contains it"),
        "{sent}"
    );
}

#[test]
fn deleting_a_session_says_what_review_goes_with_it() {
    let env = Env::new();
    let dir = project();
    let root = dir.path();
    let (run, _server) = propose(&env, root, standard_edits(), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let cli = Cli { env: &env, root };
    let sid = cli.latest_session();
    let (c, _, err) = cli.run(&["sessions", "delete", "%"]);
    assert_eq!(c, 2, "{err}");
    let (c, _, err) = cli.run(&["sessions", "delete", &sid]);
    assert_eq!(c, 0, "{err}");
    assert!(
        err.contains("its pending review (3 hunks not applied)"),
        "{err}"
    );
}
