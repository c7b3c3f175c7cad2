//! `agent-tui serve`'s answers where the API contract is exact (SPEC 13,
//! 16), over real HTTP against the real binary: a user's own writes and
//! commands are their checkpoints; a clarification answers only the
//! question asked; query strings are refused in the JSON error shape;
//! hunks applied already are a conflict and contradictory decisions
//! invalid; a rollback the sandbox refuses is a conflict; error bodies
//! carry hints; a SQLite store has one `serve`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::jobs::{config, project, sse};
use support::llm_server::{LlmServer, openai};
use support::serve::{
    Client, add_token, add_workspace, edit_then_answer, error_code, frames_all, rt, serve,
};
use support::{Env, stderr};

/// The id of the first hunk of `job`'s review.
async fn first_hunk(c: &Client, job: &str) -> String {
    let (_, snap) = c.get(&format!("/api/v1/agent/jobs/{job}")).await;
    assert_eq!(snap["status"], "awaiting_review", "{snap}");
    snap["diff_bundle"]["files"][0]["hunks"][0]["hunk_id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// A job of `edit_then_answer` run to its review: (session, job, hunk).
async fn proposed(c: &Client) -> (String, String, String) {
    let (session, job) = c.session_and_run("say hola", "agent").await;
    c.wait_event(&job, 20, |e| e["type"] == "job.completed")
        .await;
    let hunk = first_hunk(c, &job).await;
    (session, job, hunk)
}

/// `fs/write`, `fs/patch` and `exec` made by a user are checkpoints that
/// user sees (one by one and in the list) and rolls back; another user of
/// the same workspace does not see them.
#[test]
fn a_users_own_writes_and_commands_are_checkpoints_they_roll_back() {
    let env = Env::new();
    let dir = project();
    let root = dir.path();
    let bob = add_token(&env, "bob", "user");
    let carol = add_token(&env, "carol", "user");
    let server = LlmServer::start(vec![]);
    let cfg = config(&env, "openai", &server.url(), "");
    add_workspace(&cfg, root, &["bob", "carol"], &["touch made.txt"]);
    let srv = serve(&env, &cfg, root);
    rt().block_on(async {
        let b = Client::new(&srv.base, &bob);
        let c = Client::new(&srv.base, &carol);
        let (status, wrote) = b
            .post(
                "/api/v1/agent/fs/write",
                json!({"workspace_id": "app", "path": "own.txt", "content": "mine\n", "expected_hash": null}),
            )
            .await;
        assert_eq!(status, 200, "{wrote}");
        let write = wrote["checkpoint_id"].as_str().unwrap().to_string();
        let patch = "--- a/src/main.rs\n+++ b/src/main.rs\n@@ -1,3 +1,3 @@\n fn main() {\n-    greet();\n+    greet(); // patched\n }\n";
        let (status, patched) = b
            .post(
                "/api/v1/agent/fs/patch",
                json!({"workspace_id": "app", "patch": patch}),
            )
            .await;
        assert_eq!(status, 200, "{patched}");
        let patch_cp = patched["checkpoint_id"].as_str().unwrap().to_string();
        let text = b
            .http
            .post(format!("{}/api/v1/agent/exec", b.base))
            .bearer_auth(&b.token)
            .json(&json!({"workspace_id": "app", "command": "touch made.txt"}))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let exit = frames_all(&text).into_iter().find(|f| f.0 == "exit").unwrap().1;
        let exec_cp = exit["checkpoint_id"].as_str().expect("a checkpoint").to_string();
        assert!(root.join("made.txt").exists());
        for id in [&write, &patch_cp, &exec_cp] {
            let (status, body) = b.get(&format!("/api/v1/agent/checkpoints/{id}")).await;
            assert_eq!(status, 200, "bob sees his own {id}: {body}");
            assert_eq!(body["workspace_id"], "app", "{body}");
            let (status, body) = c.get(&format!("/api/v1/agent/checkpoints/{id}")).await;
            assert_eq!(status, 404, "carol does not see bob's {id}: {body}");
        }
        let ids = |list: &Value| -> Vec<String> {
            list["checkpoints"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["checkpoint_id"].as_str().unwrap().to_string())
                .collect()
        };
        let (_, list) = b.get("/api/v1/agent/checkpoints").await;
        for id in [&write, &patch_cp, &exec_cp] {
            assert!(ids(&list).contains(id), "{id} in bob's list: {list}");
        }
        let (_, list) = c.get("/api/v1/agent/checkpoints").await;
        assert!(ids(&list).is_empty(), "carol's list: {list}");
        let (status, body) = c.rollback_all(&write).await;
        assert_eq!(status, 404, "carol cannot roll back bob's write: {body}");
        assert!(root.join("own.txt").exists());
        for id in [&exec_cp, &patch_cp, &write] {
            let (status, body) = b.rollback_all(id).await;
            assert_eq!(status, 200, "bob rolls back {id}: {body}");
            // Undoing it is his too: he can see that checkpoint.
            let undo = body["rollback_checkpoint_id"].as_str().unwrap();
            let (status, _) = b.get(&format!("/api/v1/agent/checkpoints/{undo}")).await;
            assert_eq!(status, 200, "bob sees {undo}");
        }
        assert!(!root.join("own.txt").exists());
        assert!(!root.join("made.txt").exists());
        let main = std::fs::read_to_string(root.join("src/main.rs")).unwrap();
        assert!(!main.contains("patched"), "{main}");
    });
}

/// A clarification names the question it answers: another id is refused
/// (409 naming the pending one) and answers nothing; the right id answers.
#[test]
fn a_clarification_answers_only_the_pending_question() {
    let env = Env::new();
    let dir = project();
    let question = json!({"question": "Which greeting?"}).to_string();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "clarify_user", &question)])),
        sse(openai::text(&["thanks"])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let srv = serve(&env, &cfg, dir.path());
    let c = Client::new(&srv.base, srv.token.as_deref().unwrap());
    rt().block_on(async {
        let (_, job) = c.session_and_run("ask me", "agent").await;
        let asked = c
            .wait_event(&job, 20, |e| e["type"] == "clarification.requested")
            .await;
        assert_eq!(asked["data"]["tool_call_id"], "c1", "{asked}");
        let path = format!("/api/v1/agent/jobs/{job}/clarify");
        // Which question it answers is not optional.
        let (status, body) = c.post(&path, json!({"answer": "NAMELESS"})).await;
        assert_eq!(status, 400, "{body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("question_id"),
            "{body}"
        );
        let (status, body) = c
            .post(
                &path,
                json!({"question_id": "not-a-question", "answer": "WRONG"}),
            )
            .await;
        assert_eq!(status, 409, "{body}");
        assert_eq!(error_code(&body), "conflict", "{body}");
        assert!(
            body["error"]["hint"].as_str().unwrap().contains("c1"),
            "the hint names the pending question: {body}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
        let (_, snap) = c.get(&format!("/api/v1/agent/jobs/{job}")).await;
        assert_eq!(snap["status"], "waiting_for_user", "{snap}");
        let (_, page) = c
            .get(&format!("/api/v1/agent/jobs/{job}/events?cursor=0"))
            .await;
        assert!(
            !page.to_string().contains("WRONG") && !page.to_string().contains("NAMELESS"),
            "nothing was answered: {page}"
        );
        let (status, body) = c
            .post(&path, json!({"question_id": "c1", "answer": "hola"}))
            .await;
        assert_eq!(status, 200, "{body}");
        let got = c
            .wait_event(&job, 20, |e| e["type"] == "clarification.received")
            .await;
        assert_eq!(got["data"]["answer"], "hola", "{got}");
        c.wait_event(&job, 20, |e| e["type"] == "job.completed")
            .await;
    });
}

/// A query string that does not fit its endpoint is a 400 `invalid` in the
/// JSON error shape, never axum's plain text.
#[test]
fn bad_query_parameters_get_the_json_error_shape() {
    let env = Env::new();
    let dir = project();
    let server = LlmServer::start(vec![sse(openai::text(&["hi"]))]);
    let cfg = config(&env, "openai", &server.url(), "");
    let srv = serve(&env, &cfg, dir.path());
    let c = Client::new(&srv.base, srv.token.as_deref().unwrap());
    rt().block_on(async {
        let (session, job) = c.session_and_run("hello", "ask").await;
        for (path, names) in [
            (
                format!("/api/v1/agent/jobs/{job}/events?cursor=abc"),
                "cursor",
            ),
            (
                "/api/v1/agent/fs/read?path=src/main.rs".to_string(),
                "workspace_id",
            ),
            (
                format!("/api/v1/agent/audit?session_id={session}&limit=-3"),
                "limit",
            ),
            (
                format!("/api/v1/agent/jobs/{job}/stream?cursor=x"),
                "cursor",
            ),
            ("/api/v1/agent/sessions?bogus=1".to_string(), "bogus"),
            (
                "/api/v1/agent/checkpoints?session_id=a&x=1".to_string(),
                "x",
            ),
        ] {
            let r = c
                .http
                .get(format!("{}{path}", c.base))
                .bearer_auth(&c.token)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 400, "{path}");
            let kind = r.headers()["content-type"].to_str().unwrap().to_string();
            assert!(kind.starts_with("application/json"), "{path}: {kind}");
            let body: Value = r.json().await.unwrap();
            assert_eq!(error_code(&body), "invalid", "{path}: {body}");
            let message = body["error"]["message"].as_str().unwrap();
            assert!(message.contains(names), "{path}: {body}");
            assert!(body["error"]["hint"].is_string(), "{path}: {body}");
        }
    });
}

/// A method no route declares is 405 with `Allow` naming the ones it
/// takes, in the JSON error shape, whatever its body or content type: the
/// route is found before the body is looked at (it used to be 415).
#[test]
fn an_undeclared_method_is_405_with_allow() {
    let env = Env::new();
    let dir = project();
    let server = LlmServer::start(vec![]);
    let cfg = config(&env, "openai", &server.url(), "");
    let srv = serve(&env, &cfg, dir.path());
    let c = Client::new(&srv.base, srv.token.as_deref().unwrap());
    rt().block_on(async {
        for (method, path, allow) in [
            (reqwest::Method::PUT, "/api/v1/agent/sessions", "GET,POST"),
            (reqwest::Method::PUT, "/api/v1/agent/workspaces", "GET"),
            (
                reqwest::Method::PATCH,
                "/api/v1/agent/jobs/job_1_a/events",
                "GET",
            ),
            (
                reqwest::Method::DELETE,
                "/api/v1/agent/checkpoints/c_1",
                "GET",
            ),
            (reqwest::Method::GET, "/api/v1/agent/run", "POST"),
            (reqwest::Method::POST, "/api/v1/health", "GET"),
        ] {
            let r = c
                .http
                .request(method.clone(), format!("{}{path}", c.base))
                .bearer_auth(&c.token)
                .header("content-type", "text/plain")
                .body("not json")
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 405, "{method} {path}");
            let got = r.headers()["allow"].to_str().unwrap().replace(' ', "");
            let mut got: Vec<&str> = got.split(',').collect();
            got.sort_unstable();
            let mut want: Vec<&str> = allow.split(',').collect();
            want.sort_unstable();
            assert!(
                want.iter().all(|m| got.contains(m)),
                "{method} {path}: Allow {got:?}"
            );
            let body: Value = r.json().await.unwrap();
            assert_eq!(error_code(&body), "invalid", "{body}");
        }
        // A declared method still refuses a body that is not JSON.
        let r = c
            .http
            .post(format!("{}/api/v1/agent/sessions", c.base))
            .bearer_auth(&c.token)
            .header("content-type", "text/plain")
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 415);
        // And a token still comes before the method.
        let r = c
            .http
            .put(format!("{}/api/v1/agent/sessions", c.base))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 401);
    });
}

/// Hunks applied already are a 409 `conflict` saying so (the losers of
/// concurrent applies included), never "accept hunks first"; a hunk both
/// accepted and rejected is a 422 naming it (the request fits its schema;
/// what it says cannot be done), and nothing is recorded.
#[test]
fn applied_hunks_are_a_conflict_and_contradictions_are_invalid() {
    let env = Env::new();
    let dir = project();
    let root = dir.path();
    let server = LlmServer::start(edit_then_answer());
    let cfg = config(&env, "openai", &server.url(), "");
    let srv = serve(&env, &cfg, root);
    let c = Client::new(&srv.base, srv.token.as_deref().unwrap());
    rt().block_on(async {
        let (session, job, hunk) = proposed(&c).await;
        let (_, before) = c
            .get(&format!("/api/v1/agent/jobs/{job}/events?cursor=0"))
            .await;
        let (status, body) = c
            .post(
                "/api/v1/agent/apply",
                json!({"session_id": session, "job_id": job,
                       "accepted_hunk_ids": [hunk], "rejected_hunk_ids": [hunk]}),
            )
            .await;
        assert_eq!(status, 422, "{body}");
        assert_eq!(error_code(&body), "invalid", "{body}");
        assert!(
            body["error"]["message"].as_str().unwrap().contains(&hunk),
            "{body}"
        );
        let (_, after) = c
            .get(&format!("/api/v1/agent/jobs/{job}/events?cursor=0"))
            .await;
        assert_eq!(
            before["events"].as_array().unwrap().len(),
            after["events"].as_array().unwrap().len(),
            "nothing recorded: {after}"
        );
        let (_, snap) = c.get(&format!("/api/v1/agent/jobs/{job}")).await;
        let h = &snap["diff_bundle"]["files"][0]["hunks"][0];
        assert!(h["accepted"].is_null(), "still undecided: {snap}");
        // Four at once: one writes, the others are told it is applied.
        let ask = json!({"session_id": session, "job_id": job, "accepted_hunk_ids": [hunk]});
        let (a, b, d, e) = tokio::join!(
            c.post("/api/v1/agent/apply", ask.clone()),
            c.post("/api/v1/agent/apply", ask.clone()),
            c.post("/api/v1/agent/apply", ask.clone()),
            c.post("/api/v1/agent/apply", ask.clone()),
        );
        let answers = [a, b, d, e];
        let won: Vec<&(reqwest::StatusCode, Value)> =
            answers.iter().filter(|a| a.0 == 200).collect();
        assert_eq!(won.len(), 1, "{answers:?}");
        let checkpoint = won[0].1["checkpoint_id"].as_str().unwrap();
        for (status, body) in answers.iter().filter(|a| a.0 != 200) {
            assert_eq!(*status, 409, "{body}");
            assert_eq!(error_code(body), "conflict", "{body}");
            let message = body["error"]["message"].as_str().unwrap();
            assert!(message.contains("applied already"), "{body}");
            assert!(message.contains(checkpoint), "{body}");
        }
        let (status, body) = c.post("/api/v1/agent/apply", ask.clone()).await;
        assert_eq!(status, 409, "a later apply too: {body}");
        assert_eq!(body["error"]["checkpoint_id"], checkpoint, "{body}");
        let greet = std::fs::read_to_string(root.join("src/greet.rs")).unwrap();
        assert_eq!(greet.matches("hola").count(), 1, "written once: {greet}");
    });
}

/// A rollback the sandbox refuses (the file became a link out of the
/// root) is a 409 `conflict`, as the same state is for an apply, and
/// nothing outside the root is written.
#[test]
fn a_rollback_refused_by_the_sandbox_is_a_conflict() {
    let env = Env::new();
    let dir = project();
    let root = dir.path();
    let outside = tempfile::tempdir().unwrap();
    let server = LlmServer::start(edit_then_answer());
    let cfg = config(&env, "openai", &server.url(), "");
    let srv = serve(&env, &cfg, root);
    let c = Client::new(&srv.base, srv.token.as_deref().unwrap());
    rt().block_on(async {
        let (session, job, hunk) = proposed(&c).await;
        let (status, applied) = c
            .post(
                "/api/v1/agent/apply",
                json!({"session_id": session, "job_id": job, "accepted_hunk_ids": [hunk]}),
            )
            .await;
        assert_eq!(status, 200, "{applied}");
        let checkpoint = applied["checkpoint_id"].as_str().unwrap().to_string();
        // Its folder now leads out of the root (a file replaced by a
        // link is replaced back by the rollback; a folder that leaves the
        // root is not gone through).
        let src = root.join("src");
        let moved = outside.path().join("src");
        std::fs::rename(&src, &moved).unwrap();
        std::os::unix::fs::symlink(&moved, &src).unwrap();
        let elsewhere = moved.join("greet.rs");
        let kept = std::fs::read(&elsewhere).unwrap();
        let (status, body) = c
            .get(&format!("/api/v1/agent/checkpoints/{checkpoint}"))
            .await;
        assert_eq!(status, 200, "the checkpoint is still shown: {body}");
        for ask in [
            json!({"mode": "hard_all"}),
            json!({"mode": "scoped_selected", "hunk_ids": [hunk]}),
        ] {
            let (status, body) = c
                .post(
                    &format!("/api/v1/agent/checkpoints/{checkpoint}/rollback"),
                    ask,
                )
                .await;
            assert_eq!(status, 409, "{body}");
            assert_eq!(error_code(&body), "conflict", "{body}");
            let conflict = body["error"]["conflicts"][0].as_str().unwrap_or_default();
            assert!(
                conflict.contains("`src`") && conflict.contains("outside"),
                "{body}"
            );
            assert!(body["error"]["hint"].is_string(), "{body}");
        }
        assert_eq!(
            std::fs::read(&elsewhere).unwrap(),
            kept,
            "outside untouched"
        );
    });
}

/// `exec` with `timeout_secs: 0` is refused before its stream starts; the
/// errors a client acts on say how (a hint): unknown jobs, sessions and
/// checkpoints, a Last-Event-ID that is not a cursor.
#[test]
fn exec_timeout_zero_is_invalid_and_errors_carry_hints() {
    let env = Env::new();
    let dir = project();
    let server = LlmServer::start(vec![sse(openai::text(&["hi"]))]);
    let cfg = config(&env, "openai", &server.url(), "");
    add_workspace(&cfg, dir.path(), &["*"], &["ls"]);
    let srv = serve(&env, &cfg, dir.path());
    let c = Client::new(&srv.base, srv.token.as_deref().unwrap());
    rt().block_on(async {
        let r = c
            .http
            .post(format!("{}/api/v1/agent/exec", c.base))
            .bearer_auth(&c.token)
            .json(&json!({"workspace_id": "app", "command": "ls", "timeout_secs": 0}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400);
        let body: Value = r.json().await.unwrap();
        assert_eq!(error_code(&body), "invalid", "{body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("timeout_secs"),
            "{body}"
        );
        for (path, lists) in [
            ("/api/v1/agent/jobs/job_nope", "GET /api/v1/agent/sessions"),
            (
                "/api/v1/agent/sessions/s_nope",
                "GET /api/v1/agent/sessions",
            ),
            (
                "/api/v1/agent/checkpoints/cp_nope",
                "GET /api/v1/agent/checkpoints",
            ),
        ] {
            let (status, body) = c.get(path).await;
            assert_eq!(status, 404, "{path}");
            let hint = body["error"]["hint"].as_str().unwrap_or_default();
            assert!(hint.contains(lists), "{path}: {body}");
        }
        let (_, s) = c
            .post("/api/v1/agent/sessions", json!({"workspace_id": "app"}))
            .await;
        let (status, run) = c
            .post(
                "/api/v1/agent/run",
                json!({"session_id": s["session_id"], "instruction": "hello", "mode": "ask"}),
            )
            .await;
        assert_eq!(status, 202, "{run}");
        let job = run["job_id"].as_str().unwrap();
        let r = c
            .http
            .get(format!("{}/api/v1/agent/jobs/{job}/stream", c.base))
            .bearer_auth(&c.token)
            .header("Last-Event-ID", "abc")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400);
        let body: Value = r.json().await.unwrap();
        assert_eq!(error_code(&body), "invalid", "{body}");
        assert!(body["error"]["hint"].is_string(), "{body}");
    });
}

/// A second `serve` on the same SQLite store refuses to start (exit 2),
/// naming the one serving it and PostgreSQL as the way to several hosts;
/// once the first is gone (even killed), a new one starts at once.
#[test]
fn a_second_serve_on_one_sqlite_store_is_refused() {
    let env = Env::new();
    let dir = project();
    let server = LlmServer::start(vec![]);
    let cfg = config(&env, "openai", &server.url(), "");
    let mut first = serve(&env, &cfg, dir.path());
    let pid = first.child.id();
    let mut second = env
        .cmd()
        .env("TEST_LLM_KEY", support::jobs::KEY)
        .arg("--config")
        .arg(&cfg)
        .args(["serve", "--bind", "127.0.0.1:0", "--root"])
        .arg(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while second.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = second.kill();
            panic!("a second serve on the store kept running");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = second.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // The refused one neither printed a token nor replaced the first's.
    assert_eq!(
        support::stdout(&out).trim(),
        "",
        "a refused serve has no token"
    );
    let token_file =
        std::fs::read_to_string(env.home.path().join("state/server-token")).unwrap_or_default();
    assert_eq!(
        token_file.trim(),
        first.token.as_deref().unwrap_or_default(),
        "the first one's token file is still its own"
    );
    let err = stderr(&out);
    assert!(err.contains(&format!("pid {pid}")), "{err}");
    assert!(
        err.contains("PostgreSQL") && err.contains("one host"),
        "{err}"
    );
    rt().block_on(async {
        let health: Value = reqwest::get(format!("{}/api/v1/health", first.base))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(health["hosts"].as_array().unwrap().len(), 1, "{health}");
    });
    // The TUI's and exec's commands still share the home.
    let out = env
        .cmd()
        .args(["sessions", "list", "--root"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(support::code(&out), 0, "{}", stderr(&out));
    first.child.kill().unwrap();
    first.child.wait().unwrap();
    let again = serve(&env, &cfg, dir.path());
    rt().block_on(async {
        let r = reqwest::get(format!("{}/api/v1/health", again.base))
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    });
}

/// After a partial apply, an apply that names the hunks written before
/// with new ones (what the web page sends) writes the new ones.
#[test]
fn an_apply_may_name_hunks_applied_before_with_new_ones() {
    let env = Env::new();
    let dir = project();
    let root = dir.path();
    let edits = json!({"edits": [
        {"file_path": "src/greet.rs", "operation": "replace", "start_line": 2, "end_line": 2,
         "old_text": "    println!(\"hello\");", "new_text": "    println!(\"hola\");\n"},
        {"file_path": "src/main.rs", "operation": "replace", "start_line": 2, "end_line": 2,
         "old_text": "    greet();", "new_text": "    greet(); // twice\n"}
    ]})
    .to_string();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "propose_edits", &edits)])),
        sse(openai::text(&["two edits"])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let srv = serve(&env, &cfg, root);
    let c = Client::new(&srv.base, srv.token.as_deref().unwrap());
    rt().block_on(async {
        let (session, job) = c.session_and_run("two", "agent").await;
        c.wait_event(&job, 20, |e| e["type"] == "job.completed")
            .await;
        let (_, snap) = c.get(&format!("/api/v1/agent/jobs/{job}")).await;
        let hunks: Vec<String> = snap["diff_bundle"]["files"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|f| f["hunks"].as_array().unwrap().clone())
            .map(|h| h["hunk_id"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(hunks.len(), 2, "{snap}");
        let apply = |accepted: &[String]| {
            json!({"session_id": session, "job_id": job, "accepted_hunk_ids": accepted})
        };
        let (status, body) = c.post("/api/v1/agent/apply", apply(&hunks[..1])).await;
        assert_eq!(status, 200, "{body}");
        let (status, body) = c.post("/api/v1/agent/apply", apply(&hunks)).await;
        assert_eq!(status, 200, "{body}");
        let (status, body) = c.post("/api/v1/agent/apply", apply(&hunks)).await;
        assert_eq!(status, 409, "all of them applied now: {body}");
    });
    let greet = std::fs::read_to_string(root.join("src/greet.rs")).unwrap();
    let main = std::fs::read_to_string(root.join("src/main.rs")).unwrap();
    assert!(
        greet.contains("hola") && main.contains("twice"),
        "{greet}{main}"
    );
}

/// The code index over HTTP (SPEC 18): its status, a search as the tool's
/// shape, and each refusal with its status.
#[test]
fn the_index_status_and_code_search_over_http() {
    let env = Env::new();
    let dir = project();
    let server = LlmServer::start(vec![]);
    let cfg = config(&env, "openai", &server.url(), "");
    let srv = serve(&env, &cfg, dir.path());
    let c = Client::new(&srv.base, srv.token.as_deref().unwrap());
    rt().block_on(async {
        let (status, body) = c
            .post(
                "/api/v1/agent/code/search",
                json!({"workspace_id": "default", "query": "greet hello"}),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["results"][0]["path"], "src/greet.rs", "{body}");
        assert!(body["results"][0]["why"].is_array());
        assert!(body["results"][0]["snippets"][0]["start_line"].is_u64());
        assert_eq!(body["index"]["fresh"], true);
        let (status, body) = c
            .post(
                "/api/v1/agent/code/search",
                json!({"workspace_id": "default", "query": "greet", "mode": "symbol", "limit": 1}),
            )
            .await;
        assert_eq!(
            (status.as_u16(), body["results"][0]["path"].as_str()),
            (200, Some("src/greet.rs")),
            "{body}"
        );
        let (status, body) = c.get("/api/v1/agent/index?workspace_id=default").await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["state"], "ready");
        assert_eq!(body["files"], 3, "{body}");
        assert_eq!(body["fresh"], true);
        // A regex that does not compile: well-formed but unusable.
        let (status, body) = c
            .post(
                "/api/v1/agent/code/search",
                json!({"workspace_id": "default", "query": "(", "mode": "regex"}),
            )
            .await;
        assert_eq!(status, 422, "{body}");
        // A mode that is not one, an unknown field: the schema says no.
        for bad in [
            json!({"workspace_id": "default", "query": "x", "mode": "fuzzy"}),
            json!({"workspace_id": "default", "query": "x", "glob": "*.rs"}),
        ] {
            let (status, body) = c.post("/api/v1/agent/code/search", bad.clone()).await;
            assert_eq!(status, 400, "{bad}: {body}");
        }
        let (status, _) = c
            .post(
                "/api/v1/agent/code/search",
                json!({"workspace_id": "elsewhere", "query": "x"}),
            )
            .await;
        assert_eq!(status, 404);
        let (status, _) = c.get("/api/v1/agent/index?workspace_id=elsewhere").await;
        assert_eq!(status, 404);
    });
}
