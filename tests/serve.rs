//! `agent-tui serve` over real HTTP (SPEC section 13): the installed binary
//! listening on loopback, a loopback model behind it, a reqwest client in
//! front. Who may come in, the error shapes, a job from run to rollback
//! with its SSE stream resumed by `Last-Event-ID`, tokens and users that
//! cannot see each other's sessions, and `Idempotency-Key`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::jobs::{config, project, sse};
use support::llm_server::{LlmServer, Reply, openai};
use support::serve::{Client, add_config, edit_then_answer, error_code, rt, serve};
use support::{Env, code, stderr, stdout};

#[test]
fn a_public_bind_without_users_is_refused() {
    let env = Env::new();
    let dir = project();
    let out = env
        .cmd()
        .args(["serve", "--bind", "0.0.0.0:0", "--root"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("without users"), "{}", stderr(&out));
    assert!(stdout(&out).is_empty(), "no token is printed");
}

#[test]
fn who_may_come_in_and_the_errors_they_get() {
    let env = Env::new();
    let dir = project();
    let server = LlmServer::start(vec![]);
    let cfg = config(&env, "openai", &server.url(), "");
    // A small limit, so the refused body fits the socket's buffers.
    add_config(
        &cfg,
        "[server]\nmax_body_bytes = 4096\nallowed_origins = [\"https://app.example\"]\n",
    );
    let srv = serve(&env, &cfg, dir.path());
    let token = srv
        .token
        .clone()
        .expect("a one-run token on loopback without users");
    let file = env.home.path().join("state/server-token");
    let meta = std::fs::metadata(&file).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(std::fs::read_to_string(&file).unwrap().trim(), token);
    rt().block_on(async {
        let http = reqwest::Client::new();
        let base = &srv.base;
        // Health needs no token and tells nothing of users.
        let r = http
            .get(format!("{base}/api/v1/health"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let health: Value = r.json().await.unwrap();
        assert_eq!(health["status"], "online", "{health}");
        assert!(health["host"].as_str().unwrap().contains(':'));
        // No token, a wrong one, one in the URL: 401 with the error shape.
        for (url, auth) in [
            (format!("{base}/api/v1/agent/workspaces"), None),
            (format!("{base}/api/v1/agent/workspaces"), Some("att_wrong")),
            (
                format!("{base}/api/v1/agent/workspaces?token={token}"),
                None,
            ),
        ] {
            let mut req = http.get(&url);
            if let Some(a) = auth {
                req = req.bearer_auth(a);
            }
            let r = req.send().await.unwrap();
            assert_eq!(r.status(), 401, "{url}");
            assert_eq!(r.headers()["www-authenticate"], "Bearer");
            let body: Value = r.json().await.unwrap();
            assert_eq!(error_code(&body), "unauthorized");
            assert!(body["error"]["hint"].is_string());
            assert!(
                !body.to_string().contains(&token),
                "a token never comes back"
            );
        }
        // DNS rebinding and cross-site requests: 403.
        let r = http
            .get(format!("{base}/api/v1/agent/workspaces"))
            .bearer_auth(&token)
            .header("Host", "attacker.example:80")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 403);
        let r = http
            .get(format!("{base}/api/v1/agent/workspaces"))
            .bearer_auth(&token)
            .header("Origin", "https://attacker.example")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 403);
        let body: Value = r.json().await.unwrap();
        assert_eq!(error_code(&body), "forbidden");
        // An allowed origin: its preflight (no token) and its requests are
        // answered with CORS headers naming it.
        let r = http
            .request(
                reqwest::Method::OPTIONS,
                format!("{base}/api/v1/agent/sessions"),
            )
            .header("Origin", "https://app.example")
            .header("Access-Control-Request-Method", "POST")
            .header(
                "Access-Control-Request-Headers",
                "authorization, content-type",
            )
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 204);
        assert_eq!(
            r.headers()["access-control-allow-origin"],
            "https://app.example"
        );
        let allowed = r.headers()["access-control-allow-headers"]
            .to_str()
            .unwrap();
        assert!(allowed.contains("authorization") && allowed.contains("last-event-id"));
        let r = http
            .get(format!("{base}/api/v1/agent/workspaces"))
            .bearer_auth(&token)
            .header("Origin", "https://app.example")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(
            r.headers()["access-control-allow-origin"],
            "https://app.example"
        );
        let c = Client::new(base, &token);
        let (status, ws) = c.get("/api/v1/agent/workspaces").await;
        assert_eq!(status, 200);
        assert_eq!(ws["workspaces"][0]["id"], "default", "{ws}");
        // A mutation that is not JSON: 415; too large: 413; unknown field: 400.
        let r = http
            .post(format!("{base}/api/v1/agent/sessions"))
            .bearer_auth(&token)
            .header("Content-Type", "text/plain")
            .body(r#"{"workspace_id":"default"}"#)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 415);
        let body: Value = r.json().await.unwrap();
        assert!(
            body["error"]["hint"].as_str().unwrap().contains("JSON"),
            "{body}"
        );
        let big = json!({ "workspace_id": "default", "title": "x".repeat(8192) });
        let (status, body) = c.post("/api/v1/agent/sessions", big).await;
        assert_eq!(status, 413, "{body}");
        assert_eq!(error_code(&body), "too_large");
        assert!(body["error"]["hint"].as_str().is_some(), "{body}");
        let (status, body) = c
            .post(
                "/api/v1/agent/sessions",
                json!({"workspace_id": "default", "owner": "me"}),
            )
            .await;
        assert_eq!(status, 400);
        assert!(
            body["error"]["message"].as_str().unwrap().contains("owner"),
            "{body}"
        );
        let r = http
            .post(format!("{base}/api/v1/agent/sessions"))
            .bearer_auth(&token)
            .header("Content-Type", "application/json")
            .body("{not json")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400);
        let body: Value = r.json().await.unwrap();
        assert!(
            body["error"]["hint"].as_str().unwrap().contains("openapi"),
            "{body}"
        );
        // An array where the body is one object: refused by name, never
        // read into the fields by position.
        let (status, body) = c
            .post("/api/v1/agent/sessions", json!(["default", "by position"]))
            .await;
        assert_eq!(status, 400, "{body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains("found an array"), "{body}");
        // A method an endpoint does not take: 405 in the same shape, with
        // or without a body.
        for content_type in [None, Some("application/json")] {
            let mut r = http
                .delete(format!("{base}/api/v1/agent/sessions"))
                .bearer_auth(&token);
            if let Some(t) = content_type {
                r = r.header("Content-Type", t).body("{}");
            }
            let r = r.send().await.unwrap();
            assert_eq!(r.status(), 405);
            let body: Value = r.json().await.unwrap();
            assert_eq!(error_code(&body), "invalid", "{body}");
            assert!(body["error"]["hint"].as_str().is_some(), "{body}");
        }
        // Unknown things: 404 in the same shape.
        for path in [
            "/api/v1/agent/jobs/job_nope",
            "/api/v1/agent/sessions/s_nope",
            "/api/v1/agent/checkpoints/cp_nope",
            "/api/v1/nothing",
        ] {
            let (status, body) = c.get(path).await;
            assert_eq!(status, 404, "{path}");
            assert_eq!(error_code(&body), "not_found", "{path}");
        }
        let (status, _) = c
            .post(
                "/api/v1/agent/sessions",
                json!({"workspace_id": "elsewhere"}),
            )
            .await;
        assert_eq!(status, 404);
        // Hostile paths through fs endpoints stay in the root.
        for path in ["../../etc/passwd", "/etc/passwd", "src/../../x"] {
            let (status, body) = c
                .get(&format!(
                    "/api/v1/agent/fs/read?workspace_id=default&path={}",
                    urlencode(path)
                ))
                .await;
            assert_eq!(status, 403, "the sandbox forbids it: {path}: {body}");
            assert!(!body.to_string().contains("root:x:0:0"), "{path}");
        }
        let (status, body) = c
            .get("/api/v1/agent/fs/read?workspace_id=default&path=src/main.rs")
            .await;
        assert_eq!(status, 200, "{body}");
        assert!(body.to_string().contains("greet()"), "{body}");
        let (status, body) = c
            .post(
                "/api/v1/agent/fs/search",
                json!({"workspace_id": "default", "query": "println"}),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["results"][0]["file_path"], "src/greet.rs", "{body}");
    });
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'-' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[test]
fn a_job_over_http_streams_resumes_applies_and_rolls_back() {
    let env = Env::new();
    let dir = project();
    let root = dir.path();
    let server = LlmServer::start(edit_then_answer());
    let cfg = config(&env, "openai", &server.url(), "");
    let srv = serve(&env, &cfg, root);
    let c = Client::new(&srv.base, srv.token.as_deref().unwrap());
    rt().block_on(async {
        let (status, s) = c
            .post("/api/v1/agent/sessions", json!({"workspace_id": "default"}))
            .await;
        assert_eq!(status, 201, "{s}");
        let session = s["session_id"].as_str().unwrap().to_string();
        let (status, run) = c
            .post(
                "/api/v1/agent/run",
                json!({"session_id": session, "instruction": "say hola", "mode": "agent"}),
            )
            .await;
        assert_eq!(status, 202, "{run}");
        assert_eq!(run["status"], "queued");
        let job = run["job_id"].as_str().unwrap().to_string();
        let all = c.stream(&job, None).await;
        let ids: Vec<u64> = all.iter().map(|f| f.0).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids rise: {ids:?}");
        let kinds: Vec<&str> = all.iter().map(|f| f.1.as_str()).collect();
        assert_eq!(kinds.first(), Some(&"job.started"), "{kinds:?}");
        assert!(kinds.contains(&"diff.generated"), "{kinds:?}");
        assert_eq!(all.last().unwrap().1, "job.completed", "{kinds:?}");
        assert_eq!(all.last().unwrap().2["data"]["status"], "awaiting_review");
        // Resumed after a cursor: exactly the stored events after it, once.
        let (_, stored) = c
            .get(&format!("/api/v1/agent/jobs/{job}/events?cursor=0"))
            .await;
        let stored: Vec<u64> = stored["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["cursor"].as_u64().unwrap())
            .collect();
        let mid = stored[stored.len() / 2];
        let rest = c.stream(&job, Some(mid)).await;
        let rest_ids: Vec<u64> = rest.iter().map(|f| f.0).collect();
        let want: Vec<u64> = stored.iter().copied().filter(|c| *c > mid).collect();
        assert_eq!(rest_ids, want, "after Last-Event-ID {mid}");
        // The job's snapshot carries its bundle; apply writes the hunk.
        let (_, snap) = c.get(&format!("/api/v1/agent/jobs/{job}")).await;
        assert_eq!(snap["status"], "awaiting_review", "{snap}");
        let hunk = snap["diff_bundle"]["files"][0]["hunks"][0]["hunk_id"]
            .as_str()
            .unwrap()
            .to_string();
        let (status, applied) = c
            .post(
                "/api/v1/agent/apply",
                json!({"session_id": session, "job_id": job, "accepted_hunk_ids": [hunk]}),
            )
            .await;
        assert_eq!(status, 200, "{applied}");
        assert_eq!(applied["applied_files"][0]["file_path"], "src/greet.rs");
        let checkpoint = applied["checkpoint_id"].as_str().unwrap().to_string();
        let greet = std::fs::read_to_string(root.join("src/greet.rs")).unwrap();
        assert!(greet.contains("hola"), "{greet}");
        let (_, list) = c
            .get(&format!("/api/v1/agent/checkpoints?session_id={session}"))
            .await;
        assert_eq!(
            list["checkpoints"][0]["checkpoint_id"], checkpoint,
            "{list}"
        );
        let (status, three) = c
            .get(&format!(
                "/api/v1/agent/checkpoints/{checkpoint}/diff3?file_path=src/greet.rs"
            ))
            .await;
        assert_eq!(status, 200, "{three}");
        assert!(three["base"].as_str().unwrap().contains("hello"));
        assert!(three["current"].as_str().unwrap().contains("hola"));
        let (status, back) = c.rollback_all(&checkpoint).await;
        assert_eq!(status, 200, "{back}");
        let greet = std::fs::read_to_string(root.join("src/greet.rs")).unwrap();
        assert!(greet.contains("hello"), "{greet}");
        // The session lists its job; the audit names the user.
        let (_, s) = c.get(&format!("/api/v1/agent/sessions/{session}")).await;
        assert_eq!(s["jobs"][0]["job_id"], job, "{s}");
        // And its chat: the instruction, then the answer.
        assert_eq!(s["chat"][0]["role"], "user", "{s}");
        assert_eq!(s["chat"][0]["job_id"], job, "{s}");
        assert_eq!(s["chat"][1]["role"], "assistant", "{s}");
        let (status, audit) = c
            .get(&format!("/api/v1/agent/audit?session_id={session}"))
            .await;
        assert_eq!(status, 200, "{audit}");
        let text = audit.to_string();
        for action in [
            "session.create",
            "job.run",
            "apply.request",
            "rollback.request",
        ] {
            assert!(text.contains(action), "{action}: {audit}");
        }
        let records = audit["records"].as_array().unwrap();
        assert!(
            records.iter().all(|r| r["user"] == "local"),
            "every record these requests caused names their user: {audit}"
        );
    });
    // The session is an ordinary session of the root.
    let out = env
        .cmd()
        .args(["sessions", "list", "--root"])
        .arg(root)
        .output()
        .unwrap();
    assert!(stdout(&out).contains("say hola"), "{}", stdout(&out));
}

#[test]
fn users_see_only_their_own_and_revoked_tokens_are_refused() {
    let env = Env::new();
    let dir = project();
    let add = |name: &str, role: &str| {
        let out = env
            .cmd()
            .args(["serve", "token", "add", name, "--role", role])
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        stdout(&out).trim().to_string()
    };
    let alice = add("alice", "user");
    let bob = add("bob", "user");
    let admin = add("root", "admin");
    let out = env
        .cmd()
        .args(["serve", "token", "add", "alice"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2, "a live name is not given twice");
    let out = env
        .cmd()
        .args(["serve", "token", "list", "--json"])
        .output()
        .unwrap();
    let list = stdout(&out);
    assert!(
        list.contains("\"alice\"") && list.contains("\"admin\""),
        "{list}"
    );
    for t in [&alice, &bob, &admin] {
        assert!(!list.contains(t.as_str()), "list never shows a token");
    }
    let db = std::fs::read(env.state_db()).unwrap();
    assert!(
        !db.windows(alice.len()).any(|w| w == alice.as_bytes()),
        "only the sha256 is stored"
    );
    let server = LlmServer::start(vec![]);
    let cfg = config(&env, "openai", &server.url(), "");
    let srv = serve(&env, &cfg, dir.path());
    assert!(srv.token.is_none(), "users exist: no one-run token");
    rt().block_on(async {
        let a = Client::new(&srv.base, &alice);
        let b = Client::new(&srv.base, &bob);
        let r = Client::new(&srv.base, &admin);
        let (_, s) = a
            .post("/api/v1/agent/sessions", json!({"workspace_id": "default"}))
            .await;
        let session = s["session_id"].as_str().unwrap().to_string();
        let (status, _) = b.get(&format!("/api/v1/agent/sessions/{session}")).await;
        assert_eq!(status, 404, "bob does not see alice's session");
        let (_, list) = b.get("/api/v1/agent/sessions").await;
        assert_eq!(list["sessions"].as_array().unwrap().len(), 0, "{list}");
        let (status, _) = b
            .post(
                "/api/v1/agent/run",
                json!({"session_id": session, "instruction": "hi"}),
            )
            .await;
        assert_eq!(status, 404, "nor runs in it");
        let (_, list) = a.get("/api/v1/agent/sessions").await;
        assert_eq!(list["sessions"][0]["session_id"], session, "{list}");
        let (status, _) = r.get(&format!("/api/v1/agent/sessions/{session}")).await;
        assert_eq!(status, 200, "an admin sees every session");
        let out = env
            .cmd()
            .args(["serve", "token", "revoke", "bob"])
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let (status, body) = b.get("/api/v1/agent/workspaces").await;
        assert_eq!(status, 401, "revoked at once: {body}");
    });
}

#[test]
fn an_idempotency_key_runs_once() {
    let env = Env::new();
    let dir = project();
    let server = LlmServer::start(vec![sse(openai::text(&["once"]))]);
    let cfg = config(&env, "openai", &server.url(), "");
    let srv = serve(&env, &cfg, dir.path());
    let c = Client::new(&srv.base, srv.token.as_deref().unwrap());
    rt().block_on(async {
        let (_, s) = c
            .post("/api/v1/agent/sessions", json!({"workspace_id": "default"}))
            .await;
        let body = json!({"session_id": s["session_id"], "instruction": "hello", "mode": "ask"});
        let (s1, first) = c
            .post_with("/api/v1/agent/run", body.clone(), Some("k-1"))
            .await;
        assert_eq!(s1, 202, "{first}");
        let (s2, again) = c
            .post_with("/api/v1/agent/run", body.clone(), Some("k-1"))
            .await;
        assert_eq!(s2, 202, "{again}");
        assert_eq!(
            first["job_id"], again["job_id"],
            "the same job, not a second"
        );
        let mut other = body.clone();
        other["instruction"] = json!("something else");
        let (s3, e) = c.post_with("/api/v1/agent/run", other, Some("k-1")).await;
        assert_eq!(s3, 422, "{e}");
        let job = first["job_id"].as_str().unwrap();
        let frames = c.stream(job, None).await;
        assert_eq!(frames.last().unwrap().1, "job.completed");
    });
    let model_calls = server
        .requests()
        .iter()
        .filter(|r| r.is_model_call())
        .count();
    assert_eq!(model_calls, 1, "one job reached the model");
}

/// Every audit record an HTTP request caused names its user in the
/// `user` field (the approver for an approval, the one who applied for
/// the apply, the one who started the job for its tool calls); records of
/// what was done on the host itself have none; `?user=` and `audit list
/// --user` filter on it, and the chain still verifies.
#[test]
fn audit_records_name_the_http_user_as_a_field() {
    let env = Env::new();
    let dir = project();
    let root = dir.path();
    let call = json!({"command": "echo audited"}).to_string();
    let mut replies = vec![sse(openai::tool_calls(&[("c1", "run_command", &call)]))];
    replies.extend(edit_then_answer());
    replies.push(sse(openai::text(&["done here"])));
    let server = LlmServer::start(replies);
    let alice = support::serve::add_token(&env, "alice", "admin");
    let bob = support::serve::add_token(&env, "bob", "user");
    let cfg = config(&env, "openai", &server.url(), "");
    let srv = serve(&env, &cfg, root);
    let (a, b) = (Client::new(&srv.base, &alice), Client::new(&srv.base, &bob));
    let session = rt().block_on(async {
        let (session, job) = b.session_and_run("greet in spanish", "agent").await;
        let asked = b
            .wait_event(&job, 20, |e| e["type"] == "approval.requested")
            .await;
        let id = asked["data"]["tool_call_id"].as_str().unwrap();
        // Alice, an admin, approves bob's command.
        let (status, body) = a.decide(&job, id, "allow").await;
        assert_eq!(status, 200, "{body}");
        let resolved = b
            .wait_event(&job, 20, |e| e["type"] == "approval.resolved")
            .await;
        assert_eq!(resolved["data"]["user"], "alice", "{resolved}");
        b.wait_event(&job, 20, |e| e["type"] == "job.completed")
            .await;
        let (_, snap) = b.get(&format!("/api/v1/agent/jobs/{job}")).await;
        let hunk = snap["diff_bundle"]["files"][0]["hunks"][0]["hunk_id"]
            .as_str()
            .unwrap()
            .to_string();
        let (status, applied) = b
            .post(
                "/api/v1/agent/apply",
                json!({"session_id": session, "job_id": job, "accepted_hunk_ids": [hunk]}),
            )
            .await;
        assert_eq!(status, 200, "{applied}");
        let (status, audit) = a
            .get(&format!("/api/v1/agent/audit?session_id={session}"))
            .await;
        assert_eq!(status, 200, "{audit}");
        let records = audit["records"].as_array().unwrap().clone();
        let user_of = |action: &str| -> Vec<Value> {
            records
                .iter()
                .filter(|r| r["action"] == action)
                .map(|r| r["user"].clone())
                .collect()
        };
        assert_eq!(user_of("approval"), vec![json!("alice")], "{audit}");
        assert_eq!(user_of("apply"), vec![json!("bob")], "{audit}");
        assert_eq!(user_of("job.run"), vec![json!("bob")], "{audit}");
        assert_eq!(user_of("session.create"), vec![json!("bob")], "{audit}");
        assert_eq!(user_of("job.completed"), vec![json!("bob")], "{audit}");
        assert!(!user_of("tool_call").is_empty(), "{audit}");
        assert!(
            user_of("tool_call").iter().all(|u| u == "bob"),
            "the job's own calls are its starter's: {audit}"
        );
        assert!(
            records.iter().all(|r| r["user"].is_string()),
            "every record here came from a request: {audit}"
        );
        // `?user=` filters; a user reads their own without a session.
        let (_, mine) = a.get("/api/v1/agent/audit?user=alice").await;
        let mine = mine["records"].as_array().unwrap();
        assert!(mine.iter().any(|r| r["action"] == "approval"), "{mine:?}");
        assert!(mine.iter().all(|r| r["user"] == "alice"), "{mine:?}");
        let (status, own) = b.get("/api/v1/agent/audit?user=bob").await;
        assert_eq!(status, 200, "{own}");
        assert!(
            own["records"]
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r["user"] == "bob"),
            "{own}"
        );
        let (status, body) = b.get("/api/v1/agent/audit?user=alice").await;
        assert_eq!(status, 403, "only an admin reads another's: {body}");
        session
    });
    // What is done on the host itself has no user.
    let run = support::jobs::exec(&env, &cfg, root, &["--mode", "ask", "say done"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out = env
        .cmd()
        .arg("--config")
        .arg(&cfg)
        .args(["audit", "list", "--json", "--root"])
        .arg(root)
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let all: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let all = all["records"].as_array().unwrap();
    let local: Vec<&Value> = all
        .iter()
        .filter(|r| r["action"] == "job.completed" && r["session"] != json!(session))
        .collect();
    assert_eq!(local.len(), 1, "{all:?}");
    assert_eq!(local[0]["user"], Value::Null, "{all:?}");
    let out = env
        .cmd()
        .arg("--config")
        .arg(&cfg)
        .args(["audit", "list", "--user", "alice", "--root"])
        .arg(root)
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(
        text.contains("alice") && text.contains("approval"),
        "{text}"
    );
    assert!(!text.contains(" bob "), "{text}");
    let out = env
        .cmd()
        .args(["audit", "verify", "--root"])
        .arg(root)
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stdout(&out));
}

#[test]
fn the_first_answer_to_an_approval_wins() {
    let env = Env::new();
    let dir = project();
    let call = json!({"command": "echo approved"}).to_string();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "run_command", &call)])),
        sse(openai::text(&["ran it"])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let srv = serve(&env, &cfg, dir.path());
    let c = Client::new(&srv.base, srv.token.as_deref().unwrap());
    rt().block_on(async {
        let (_, job) = c.session_and_run("run it", "agent").await;
        // The question, stored as it is asked.
        let asked = c
            .wait_event(&job, 20, |e| e["type"] == "approval.requested")
            .await;
        assert_eq!(
            asked["data"]["arguments"]["command"], "echo approved",
            "{asked}"
        );
        let id = asked["data"]["tool_call_id"].as_str().unwrap();
        let (first, second) =
            tokio::join!(c.decide(&job, id, "allow"), c.decide(&job, id, "deny"),);
        let mut statuses = [first.0.as_u16(), second.0.as_u16()];
        statuses.sort_unstable();
        assert_eq!(statuses, [200, 409], "{first:?} {second:?}");
        let (status, bad) = c.decide(&job, id, "maybe").await;
        assert_eq!(status, 400, "{bad}");
        let frames = c.stream(&job, None).await;
        let resolved: Vec<_> = frames
            .iter()
            .filter(|f| f.1 == "approval.resolved")
            .collect();
        assert_eq!(resolved.len(), 1, "every client sees one approval.resolved");
        assert_eq!(frames.last().unwrap().1, "job.completed");
    });
}

#[test]
fn a_token_past_its_rate_gets_429_with_retry_after() {
    let env = Env::new();
    let dir = project();
    let server = LlmServer::start(vec![]);
    let cfg = config(&env, "openai", &server.url(), "");
    add_config(&cfg, "[server]\nrate_limit_per_minute = 5\n");
    let srv = serve(&env, &cfg, dir.path());
    let token = srv.token.clone().unwrap();
    rt().block_on(async {
        let http = reqwest::Client::new();
        let mut statuses = Vec::new();
        for _ in 0..7 {
            let r = http
                .get(format!("{}/api/v1/agent/workspaces", srv.base))
                .bearer_auth(&token)
                .send()
                .await
                .unwrap();
            statuses.push(r.status().as_u16());
            if r.status() == 429 {
                let wait: u64 = r.headers()["retry-after"]
                    .to_str()
                    .unwrap()
                    .parse()
                    .unwrap();
                assert!((1..=60).contains(&wait), "{wait}");
                let body: Value = r.json().await.unwrap();
                assert_eq!(error_code(&body), "rate_limited");
            }
        }
        assert_eq!(statuses, [200, 200, 200, 200, 200, 429, 429]);
        // Health is not counted (load balancers poll it).
        let r = http
            .get(format!("{}/api/v1/health", srv.base))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    });
}

/// A stream opened from the start while the model is writing (a page
/// opened or reloaded mid-answer) begins with the text streamed so far, so
/// its deltas add up to the whole answer; one resuming from a cursor holds
/// that text already and gets only what follows.
#[test]
fn a_stream_joined_midway_starts_with_the_answer_so_far() {
    let env = Env::new();
    let dir = project();
    let words: Vec<String> = (0..150).map(|i| format!("w{i} ")).collect();
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    let server = LlmServer::start(vec![Reply::Slow {
        events: openai::text(&refs),
        delay_ms: 20,
    }]);
    let cfg = config(&env, "openai", &server.url(), "");
    let srv = serve(&env, &cfg, dir.path());
    let c = Client::new(&srv.base, srv.token.as_deref().unwrap());
    rt().block_on(async {
        let (_, job) = c.session_and_run("talk", "ask").await;
        c.wait_event(&job, 10, |e| e["type"] == "job.started").await;
        // About 40 words are written before either stream is opened.
        tokio::time::sleep(Duration::from_millis(800)).await;
        let (whole, resumed) =
            tokio::join!(c.stream_text(&job, None), c.stream_text(&job, Some(1)));
        let deltas = |text: &str| -> Vec<String> {
            support::serve::frames_all(text)
                .into_iter()
                .filter(|(kind, _)| kind == "llm.delta")
                .map(|(_, d)| d["data"]["text"].as_str().unwrap().to_string())
                .collect()
        };
        let from_start = deltas(&whole);
        assert!(from_start[0].starts_with("w0 w1 w2 "), "{from_start:?}");
        assert_eq!(from_start.concat(), words.concat());
        let later = deltas(&resumed);
        assert!(
            !later.is_empty() && !later[0].starts_with("w0 "),
            "{later:?}"
        );
        assert!(words.concat().ends_with(&later.concat()), "{later:?}");
    });
}

/// SIGTERM while a job streams: the server stops taking requests, the job
/// ends as cancelled and is stored, the process exits 0; a new server on
/// the same home serves the job's stored stream from any cursor.
#[test]
fn sigterm_past_the_grace_cancels_and_a_restart_serves_the_stored_stream() {
    let env = Env::new();
    let dir = project();
    let words: Vec<String> = (0..400).map(|i| format!("w{i} ")).collect();
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    let server = LlmServer::start(vec![Reply::Slow {
        events: openai::text(&refs),
        delay_ms: 20,
    }]);
    let cfg = config(&env, "openai", &server.url(), "");
    // A job longer than the grace is cancelled when it runs out.
    add_config(&cfg, "[server]\nshutdown_grace_secs = 1\n");
    let mut srv = serve(&env, &cfg, dir.path());
    let token = srv.token.clone().unwrap();
    let c = Client::new(&srv.base, &token);
    let job = rt().block_on(async {
        let (_, job) = c.session_and_run("talk", "ask").await;
        // Streaming has begun.
        c.wait_event(&job, 10, |_| true).await;
        job
    });
    let pid = nix::unistd::Pid::from_raw(srv.child.id() as i32);
    let asked = Instant::now();
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = loop {
        if let Some(status) = srv.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            asked.elapsed() < Duration::from_secs(10),
            "serve did not stop"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0), "a clean stop exits 0");
    let srv = serve(&env, &cfg, dir.path());
    let c = Client::new(&srv.base, srv.token.as_deref().unwrap());
    rt().block_on(async {
        // The restarted server made a new one-run token; the job is still
        // the session's (made by the one-run user "local").
        let (status, snap) = c.get(&format!("/api/v1/agent/jobs/{job}")).await;
        assert_eq!(status, 200, "{snap}");
        assert_eq!(snap["status"], "cancelled", "{snap}");
        let all = c.stream(&job, None).await;
        assert_eq!(all.first().unwrap().1, "job.started");
        assert_eq!(all.last().unwrap().1, "job.cancelled");
        let from = all[0].0;
        let rest = c.stream(&job, Some(from)).await;
        assert_eq!(rest.len(), all.len() - 1, "after Last-Event-ID {from}");
    });
}

/// Each job's tokens and cost are kept with its user; a user past their
/// monthly budget is refused a run (429 budget_exceeded); a user reads
/// their own usage only.
#[test]
fn spend_is_attributed_and_a_budget_stops_runs() {
    let env = Env::new();
    let dir = project();
    let server = LlmServer::start(vec![sse(openai::text(&["priced"]))]);
    // $1 per input and output token: the job's 11 + 7 tokens cost $18.
    let cfg = config(
        &env,
        "openai",
        &server.url(),
        "price_input_per_mtok = 1000000.0\nprice_output_per_mtok = 1000000.0",
    );
    let (carol, dave) = ("att_carol_token_for_tests", "att_dave_token_for_tests");
    let sha = |t: &str| agent_tui::agent::token_sha256(t);
    add_config(
        &cfg,
        &format!(
            "[[server.users]]\nname = \"carol\"\ntoken_sha256 = \"{}\"\nmonthly_budget_usd = 10\n\
             [[server.users]]\nname = \"dave\"\ntoken_sha256 = \"{}\"\n",
            sha(carol),
            sha(dave)
        ),
    );
    let srv = serve(&env, &cfg, dir.path());
    let c = Client::new(&srv.base, carol);
    let d = Client::new(&srv.base, dave);
    rt().block_on(async {
        let (_, s) = c
            .post("/api/v1/agent/sessions", json!({"workspace_id": "default"}))
            .await;
        let body = json!({"session_id": s["session_id"], "instruction": "hi", "mode": "ask"});
        let (status, run) = c.post("/api/v1/agent/run", body.clone()).await;
        assert_eq!(status, 202, "{run}");
        let job = run["job_id"].as_str().unwrap();
        c.stream(job, None).await;
        // The watcher keeps the usage just after the job's last event.
        let deadline = Instant::now() + Duration::from_secs(10);
        let usage = loop {
            let (_, u) = c.get("/api/v1/agent/usage").await;
            if u["usage"][0]["cost_usd"].as_f64().unwrap_or(0.0) > 0.0 {
                break u;
            }
            assert!(Instant::now() < deadline, "no usage kept: {u}");
            tokio::time::sleep(Duration::from_millis(30)).await;
        };
        let row = &usage["usage"][0];
        assert_eq!(row["user"], "carol");
        assert_eq!(row["workspace_id"], "default");
        assert_eq!(row["jobs"], 1);
        assert_eq!(row["input_tokens"], openai::PROMPT_TOKENS);
        assert_eq!(row["output_tokens"], openai::COMPLETION_TOKENS);
        assert!(
            (row["cost_usd"].as_f64().unwrap() - 18.0).abs() < 1e-6,
            "{row}"
        );
        let (status, refused) = c.post("/api/v1/agent/run", body).await;
        assert_eq!(status, 429, "{refused}");
        assert_eq!(refused["error"]["code"], "rate_limited");
        assert_eq!(refused["error"]["reason"], "budget_exceeded");
        // Dave sees none of it and may not ask for carol's.
        let (_, mine) = d.get("/api/v1/agent/usage").await;
        assert_eq!(mine["usage"].as_array().unwrap().len(), 0, "{mine}");
        let (status, _) = d.get("/api/v1/agent/usage?user=carol").await;
        assert_eq!(status, 403);
        let (status, _) = d.get("/api/v1/agent/usage?since=yesterday").await;
        assert_eq!(status, 400);
    });
}

/// The user's own write: hash-checked (409, nothing written), atomic,
/// checkpointed (rollback undoes it), refused outside the root and in a
/// read-only workspace.
#[test]
fn fs_write_is_hash_checked_checkpointed_and_confined() {
    let env = Env::new();
    let dir = project();
    let docs = tempfile::tempdir().unwrap();
    std::fs::write(docs.path().join("guide.md"), "# Guide\n").unwrap();
    let server = LlmServer::start(vec![]);
    let cfg = config(&env, "openai", &server.url(), "");
    add_config(
        &cfg,
        &format!(
            "[[server.workspaces]]\nid = \"app\"\nroot = \"{}\"\nusers = [\"*\"]\n\
             [[server.workspaces]]\nid = \"docs\"\nroot = \"{}\"\nusers = [\"*\"]\nread_only = true\n",
            dir.path().display(),
            docs.path().display()
        ),
    );
    let srv = serve(&env, &cfg, dir.path());
    let c = Client::new(&srv.base, srv.token.as_deref().unwrap());
    let root = dir.path();
    rt().block_on(async {
        let (_, ws) = c.get("/api/v1/agent/workspaces").await;
        let ids: Vec<&str> = ws["workspaces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["app", "docs"], "{ws}");
        let (_, read) = c
            .get("/api/v1/agent/fs/read?workspace_id=app&path=src/greet.rs")
            .await;
        let hash = read["file_hash"].as_str().unwrap_or_default().to_string();
        assert!(hash.starts_with("sha256:"), "{read}");
        let new = "pub fn greet() {\n    println!(\"hi\");\n}\n";
        let write = |content: &str, expected: Value| {
            json!({"workspace_id": "app", "path": "src/greet.rs", "content": content, "expected_hash": expected})
        };
        let (status, done) = c.post("/api/v1/agent/fs/write", write(new, json!(hash))).await;
        assert_eq!(status, 200, "{done}");
        assert_eq!(std::fs::read_to_string(root.join("src/greet.rs")).unwrap(), new);
        let checkpoint = done["checkpoint_id"].as_str().unwrap().to_string();
        // The old hash again: the file moved on, nothing is written.
        let (status, refused) = c
            .post("/api/v1/agent/fs/write", write("clobber\n", json!(hash)))
            .await;
        assert_eq!(status, 409, "{refused}");
        assert_eq!(refused["error"]["conflicts"][0]["file_path"], "src/greet.rs");
        assert_eq!(std::fs::read_to_string(root.join("src/greet.rs")).unwrap(), new);
        // null creates, and only creates.
        let create = json!({"workspace_id": "app", "path": "src/new.rs", "content": "// new\n", "expected_hash": null});
        let (status, _) = c.post("/api/v1/agent/fs/write", create.clone()).await;
        assert_eq!(status, 200);
        let (status, _) = c.post("/api/v1/agent/fs/write", create).await;
        assert_eq!(status, 409, "an existing file is not created again");
        let (status, body) = c
            .post(
                "/api/v1/agent/fs/write",
                json!({"workspace_id": "app", "path": "src/x.rs", "content": "x"}),
            )
            .await;
        assert_eq!(status, 400, "expected_hash is required: {body}");
        for hostile in ["../escape.txt", "/tmp/escape.txt", "src/../../escape.txt"] {
            let (status, body) = c
                .post(
                    "/api/v1/agent/fs/write",
                    json!({"workspace_id": "app", "path": hostile, "content": "x", "expected_hash": null}),
                )
                .await;
            assert_eq!(status, 403, "{hostile}: {body}");
        }
        assert!(!root.parent().unwrap().join("escape.txt").exists());
        let (status, body) = c
            .post(
                "/api/v1/agent/fs/write",
                json!({"workspace_id": "docs", "path": "guide.md", "content": "x", "expected_hash": null}),
            )
            .await;
        assert_eq!(status, 403, "{body}");
        // Nothing else that could write happens there either.
        for (path, body) in [
            ("/api/v1/agent/fs/patch", json!({"workspace_id": "docs", "patch": "--- /dev/null\n+++ b/n.md\n@@ -0,0 +1 @@\n+x\n"})),
            ("/api/v1/agent/exec", json!({"workspace_id": "docs", "command": "ls"})),
            ("/api/v1/agent/mcp/call", json!({"workspace_id": "docs", "server": "s", "tool": "t"})),
        ] {
            let (status, answer) = c.post(path, body).await;
            assert_eq!(status, 403, "{path}: {answer}");
            assert!(answer["error"]["message"].as_str().unwrap().contains("read-only"));
            assert!(answer["error"]["hint"].as_str().unwrap().contains("read_only"), "{answer}");
        }
        assert!(!docs.path().join("n.md").exists());
        // The write is a checkpoint: rolled back, the file is as it was.
        let (status, back) = c.rollback_all(&checkpoint).await;
        assert_eq!(status, 200, "{back}");
        let greet = std::fs::read_to_string(root.join("src/greet.rs")).unwrap();
        assert!(greet.contains("hello"), "{greet}");
        let (_, audit) = c.get("/api/v1/agent/audit").await;
        let text = audit.to_string();
        assert!(text.contains("fs.write") && text.contains("written by local"), "{audit}");
    });
}

/// `fs/patch`: a unified diff written as the user's own change, 409 and
/// nothing written when it no longer fits, malformed ones a 400.
#[test]
fn fs_patch_applies_a_unified_diff_or_nothing() {
    let env = Env::new();
    let dir = project();
    let root = dir.path();
    let server = LlmServer::start(vec![]);
    let cfg = config(&env, "openai", &server.url(), "");
    let srv = serve(&env, &cfg, root);
    let c = Client::new(&srv.base, srv.token.as_deref().unwrap());
    let patch = "--- a/src/greet.rs\n+++ b/src/greet.rs\n@@ -1,3 +1,3 @@\n pub fn greet() {\n-    println!(\"hello\");\n+    println!(\"salut\");\n }\n--- /dev/null\n+++ b/CHANGES.md\n@@ -0,0 +1 @@\n+- greet in French\n";
    rt().block_on(async {
        let body = json!({"workspace_id": "default", "patch": patch});
        let (status, done) = c.post("/api/v1/agent/fs/patch", body.clone()).await;
        assert_eq!(status, 200, "{done}");
        assert!(
            std::fs::read_to_string(root.join("src/greet.rs"))
                .unwrap()
                .contains("salut")
        );
        assert_eq!(
            std::fs::read_to_string(root.join("CHANGES.md")).unwrap(),
            "- greet in French\n"
        );
        // Again: the old lines are gone and CHANGES.md exists: 409, both named.
        let before = std::fs::read_to_string(root.join("src/greet.rs")).unwrap();
        let (status, refused) = c.post("/api/v1/agent/fs/patch", body).await;
        assert_eq!(status, 409, "{refused}");
        assert_eq!(
            refused["error"]["conflicts"].as_array().unwrap().len(),
            2,
            "{refused}"
        );
        assert_eq!(
            std::fs::read_to_string(root.join("src/greet.rs")).unwrap(),
            before
        );
        let (status, bad) = c
            .post(
                "/api/v1/agent/fs/patch",
                json!({"workspace_id": "default", "patch": "not a diff"}),
            )
            .await;
        assert_eq!(status, 422, "well-formed JSON, but not a diff: {bad}");
        let escape = "--- /dev/null\n+++ b/../outside.txt\n@@ -0,0 +1 @@\n+x\n";
        let (status, bad) = c
            .post(
                "/api/v1/agent/fs/patch",
                json!({"workspace_id": "default", "patch": escape}),
            )
            .await;
        assert_eq!(status, 403, "{bad}");
        assert!(!root.parent().unwrap().join("outside.txt").exists());
        let checkpoint = done["checkpoint_id"].as_str().unwrap();
        let (status, _) = c.rollback_all(checkpoint).await;
        assert_eq!(status, 200);
        assert!(
            !root.join("CHANGES.md").exists(),
            "the rollback removes what the patch made"
        );
    });
}

/// `exec`: only the workspace's allowed commands, output streamed as SSE
/// then the exit; a client that hangs up stops the command.
#[test]
fn exec_streams_allowed_commands_and_stops_when_the_client_leaves() {
    let env = Env::new();
    let dir = project();
    let root = dir.path();
    let server = LlmServer::start(vec![]);
    let cfg = config(&env, "openai", &server.url(), "");
    add_config(
        &cfg,
        &format!(
            "[[server.workspaces]]\nid = \"app\"\nroot = \"{}\"\nusers = [\"*\"]\n\
             allowed_commands = [\"ls src\", \"cat no-such-file\", \"sleep 31.25\", \"rm src/greet.rs\"]\n",
            root.display()
        ),
    );
    let srv = serve(&env, &cfg, root);
    let c = Client::new(&srv.base, srv.token.as_deref().unwrap());
    rt().block_on(async {
        let run = |command: &str| {
            c.http
                .post(format!("{}/api/v1/agent/exec", c.base))
                .bearer_auth(&c.token)
                .json(&json!({"workspace_id": "app", "command": command}))
                .send()
        };
        let (status, body) = c
            .post(
                "/api/v1/agent/exec",
                json!({"workspace_id": "app", "command": "rm -rf src"}),
            )
            .await;
        assert_eq!(status, 403, "{body}");
        assert!(root.join("src/main.rs").exists());
        let r = run("ls   src").await.unwrap();
        assert_eq!(r.status(), 200);
        let text = r.text().await.unwrap();
        assert!(
            text.contains("event: stdout") && text.contains("greet.rs"),
            "{text}"
        );
        assert!(
            text.contains("event: exit") && text.contains("\"exit_code\":0"),
            "{text}"
        );
        let text = run("cat no-such-file").await.unwrap().text().await.unwrap();
        assert!(text.contains("event: stderr"), "{text}");
        assert!(!text.contains("\"exit_code\":0"), "{text}");
        // Hang up while it runs: the command is stopped.
        let pending = |_: ()| {
            std::process::Command::new("pgrep")
                .args(["-f", "sleep 31.25"])
                .output()
                .map(|o| o.status.success())
                .unwrap_or(false)
        };
        let r = run("sleep 31.25").await.unwrap();
        assert_eq!(r.status(), 200);
        let deadline = Instant::now() + Duration::from_secs(5);
        while !pending(()) {
            assert!(Instant::now() < deadline, "the command did not start");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        drop(r);
        let deadline = Instant::now() + Duration::from_secs(5);
        while pending(()) {
            assert!(Instant::now() < deadline, "the command outlived its client");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // What a command changes is a checkpoint that rolls it back.
        let text = run("rm src/greet.rs").await.unwrap().text().await.unwrap();
        assert!(!root.join("src/greet.rs").exists());
        let exit = support::serve::frames_all(&text)
            .into_iter()
            .find(|f| f.0 == "exit")
            .unwrap()
            .1;
        assert_eq!(exit["changed_files_total"], 1, "{exit}");
        assert_eq!(exit["changed_files"][0]["path"], "src/greet.rs", "{exit}");
        let id = exit["checkpoint_id"].as_str().expect("a checkpoint");
        let (status, body) = c.rollback_all(id).await;
        assert_eq!(status, 200, "{body}");
        assert!(
            std::fs::read_to_string(root.join("src/greet.rs"))
                .unwrap()
                .contains("hello")
        );
        // Every command run is in the audit log with who ran it.
        let (_, audit) = c.get("/api/v1/agent/audit").await;
        let runs: Vec<&serde_json::Value> = audit["records"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["action"] == "exec")
            .collect();
        assert_eq!(runs.len(), 4, "{audit}");
        assert!(runs.iter().all(|r| r["user"] == "local"), "{audit}");
    });
}

/// MCP through the engine's hub: the reference `everything` server listed
/// and called; a server that cannot start is named with its error.
#[test]
fn mcp_tools_are_listed_and_called_and_a_dead_server_is_named() {
    let npm = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp-servers/node_modules/@modelcontextprotocol");
    let every = npm.join("server-everything/dist/index.js");
    if !every.exists() {
        let why = "the reference MCP servers are not installed (npm ci --prefix tests/mcp-servers)";
        assert!(
            std::env::var("AGENT_TUI_REQUIRE_MCP").as_deref() != Ok("1"),
            "{why}"
        );
        eprintln!("skipped: {why}");
        return;
    }
    let env = Env::new();
    let dir = project();
    let server = LlmServer::start(vec![]);
    let cfg = config(&env, "openai", &server.url(), "");
    add_config(
        &cfg,
        &format!(
            "[mcp_servers.every]\ncommand = \"node\"\nargs = [{}, \"stdio\"]\n\
             [mcp_servers.broken]\ncommand = \"sh\"\nargs = [\"-c\", \"echo 'cannot open the widget db' >&2; exit 7\"]\n",
            json!(every.display().to_string())
        ),
    );
    let srv = serve(&env, &cfg, dir.path());
    let c = Client::new(&srv.base, srv.token.as_deref().unwrap());
    rt().block_on(async {
        let (status, list) = c.get("/api/v1/agent/mcp/tools?workspace_id=default").await;
        assert_eq!(status, 200, "{list}");
        let servers = list["servers"].as_array().unwrap();
        let every = servers.iter().find(|s| s["name"] == "every").unwrap();
        assert!(
            every["tools"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["tool"] == "echo"),
            "{every}"
        );
        let broken = servers.iter().find(|s| s["name"] == "broken").unwrap();
        assert_eq!(broken["state"]["state"], "failed", "{broken}");
        let (status, done) = c
            .post(
                "/api/v1/agent/mcp/call",
                json!({"workspace_id": "default", "server": "every", "tool": "echo",
                       "arguments": {"message": "over http"}}),
            )
            .await;
        assert_eq!(status, 200, "{done}");
        assert!(done.to_string().contains("over http"), "{done}");
        let (status, failed) = c
            .post(
                "/api/v1/agent/mcp/call",
                json!({"workspace_id": "default", "server": "broken", "tool": "anything"}),
            )
            .await;
        assert_eq!(status, 503, "{failed}");
        let message = failed["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("broken") && message.contains("cannot open the widget db"),
            "the server and its stderr are named: {message}"
        );
        let (status, _) = c
            .post(
                "/api/v1/agent/mcp/call",
                json!({"workspace_id": "default", "server": "nosuch", "tool": "x"}),
            )
            .await;
        assert_eq!(status, 404);
    });
}

/// `/openapi.json` is made from the handlers: every path of SPEC 13 is in
/// it with its method, request bodies carry their fields, bearer auth.
#[test]
fn openapi_describes_every_endpoint() {
    let env = Env::new();
    let dir = project();
    let server = LlmServer::start(vec![]);
    let cfg = config(&env, "openai", &server.url(), "");
    let srv = serve(&env, &cfg, dir.path());
    let c = Client::new(&srv.base, srv.token.as_deref().unwrap());
    rt().block_on(async {
        let r = reqwest::get(format!("{}/openapi.json", srv.base))
            .await
            .unwrap();
        assert_eq!(r.status(), 401, "the document needs a token too");
        let (status, doc) = c.get("/openapi.json").await;
        assert_eq!(status, 200);
        assert!(
            doc["openapi"].as_str().unwrap().starts_with("3.1"),
            "{}",
            doc["openapi"]
        );
        let want = [
            ("get", "/api/v1/health"),
            ("get", "/api/v1/agent/workspaces"),
            ("post", "/api/v1/agent/sessions"),
            ("get", "/api/v1/agent/sessions"),
            ("get", "/api/v1/agent/sessions/{id}"),
            ("post", "/api/v1/agent/run"),
            ("get", "/api/v1/agent/jobs/{id}"),
            ("get", "/api/v1/agent/jobs/{id}/events"),
            ("get", "/api/v1/agent/jobs/{id}/stream"),
            ("post", "/api/v1/agent/jobs/{id}/clarify"),
            ("post", "/api/v1/agent/jobs/{id}/steer"),
            ("post", "/api/v1/agent/jobs/{id}/approvals/{approval_id}"),
            ("post", "/api/v1/agent/jobs/{id}/cancel"),
            ("post", "/api/v1/agent/apply"),
            ("post", "/api/v1/agent/jobs/{id}/verify"),
            ("get", "/api/v1/agent/checkpoints"),
            ("get", "/api/v1/agent/checkpoints/{id}"),
            ("get", "/api/v1/agent/checkpoints/{id}/diff3"),
            ("post", "/api/v1/agent/checkpoints/{id}/rollback"),
            ("get", "/api/v1/agent/fs/list"),
            ("get", "/api/v1/agent/fs/read"),
            ("post", "/api/v1/agent/fs/search"),
            ("post", "/api/v1/agent/fs/write"),
            ("post", "/api/v1/agent/fs/patch"),
            ("post", "/api/v1/agent/exec"),
            ("get", "/api/v1/agent/mcp/tools"),
            ("post", "/api/v1/agent/mcp/call"),
            ("get", "/api/v1/agent/audit"),
            ("get", "/api/v1/agent/usage"),
            ("get", "/api/v1/agent/index"),
            ("post", "/api/v1/agent/code/search"),
            ("get", "/api/v1/agent/models"),
            ("get", "/api/v1/agent/hooks"),
            ("post", "/api/v1/agent/hooks/trust"),
            ("post", "/api/v1/agent/hooks/test"),
        ];
        let paths = doc["paths"].as_object().unwrap();
        for (method, path) in want {
            assert!(
                paths.get(path).and_then(|p| p.get(method)).is_some(),
                "{method} {path}"
            );
        }
        let count: usize = paths.values().map(|p| p.as_object().unwrap().len()).sum();
        assert_eq!(count, want.len(), "nothing undocumented, nothing extra");
        let run = &paths["/api/v1/agent/run"]["post"];
        let schema = run["requestBody"]["content"]["application/json"]["schema"]["$ref"]
            .as_str()
            .unwrap();
        let name = schema.rsplit('/').next().unwrap();
        let props = &doc["components"]["schemas"][name]["properties"];
        assert!(
            props["session_id"].is_object() && props["instruction"].is_object(),
            "{props}"
        );
        assert_eq!(
            doc["components"]["securitySchemes"]["bearer"]["scheme"],
            "bearer"
        );
    });
}

/// A workspace that names its users is invisible to the others: not
/// listed, and every endpoint that names it answers 404.
#[test]
fn a_workspace_is_only_its_users() {
    let env = Env::new();
    let dir = project();
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("plan.md"), "secret plan\n").unwrap();
    let server = LlmServer::start(vec![]);
    let cfg = config(&env, "openai", &server.url(), "");
    let (kim, lee) = ("att_kim_token_for_tests", "att_lee_token_for_tests");
    let sha = |t: &str| agent_tui::agent::token_sha256(t);
    add_config(
        &cfg,
        &format!(
            "[[server.users]]\nname = \"kim\"\ntoken_sha256 = \"{}\"\n\
             [[server.users]]\nname = \"lee\"\ntoken_sha256 = \"{}\"\n\
             [[server.workspaces]]\nid = \"shared\"\nroot = \"{}\"\nusers = [\"*\"]\n\
             [[server.workspaces]]\nid = \"kims\"\nroot = \"{}\"\nusers = [\"kim\"]\n",
            sha(kim),
            sha(lee),
            dir.path().display(),
            other.path().display()
        ),
    );
    let srv = serve(&env, &cfg, dir.path());
    let (k, l) = (Client::new(&srv.base, kim), Client::new(&srv.base, lee));
    rt().block_on(async {
        let ids = |v: &Value| -> Vec<String> {
            v["workspaces"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w["id"].as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(
            ids(&k.get("/api/v1/agent/workspaces").await.1),
            ["shared", "kims"]
        );
        assert_eq!(ids(&l.get("/api/v1/agent/workspaces").await.1), ["shared"]);
        let (status, _) = k
            .get("/api/v1/agent/fs/read?workspace_id=kims&path=plan.md")
            .await;
        assert_eq!(status, 200);
        for path in [
            "/api/v1/agent/fs/read?workspace_id=kims&path=plan.md",
            "/api/v1/agent/fs/list?workspace_id=kims",
            "/api/v1/agent/sessions?workspace_id=kims",
            "/api/v1/agent/mcp/tools?workspace_id=kims",
        ] {
            let (status, body) = l.get(path).await;
            assert!(
                status == 404 || (status == 200 && body["sessions"] == json!([])),
                "{path}: {status} {body}"
            );
            assert!(!body.to_string().contains("secret plan"), "{path}");
        }
        for (path, body) in [
            ("/api/v1/agent/sessions", json!({"workspace_id": "kims"})),
            (
                "/api/v1/agent/fs/search",
                json!({"workspace_id": "kims", "query": "secret"}),
            ),
            (
                "/api/v1/agent/fs/write",
                json!({"workspace_id": "kims", "path": "x", "content": "x", "expected_hash": null}),
            ),
        ] {
            let (status, answer) = l.post(path, body).await;
            assert_eq!(status, 404, "{path}: {answer}");
        }
        assert!(!other.path().join("x").exists());
    });
}

/// A client that stops reading falls out of its window of the live stream:
/// the server cuts it off rather than holding events for it, and it resumes
/// after its `Last-Event-ID` from the store with nothing missing or twice.
#[test]
fn a_slow_subscriber_is_cut_off_and_resumes() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let env = Env::new();
    let dir = project();
    let call = json!({"command": "echo go"}).to_string();
    // More streamed text than the sockets buffer, after the approval.
    let chunk = "x".repeat(25_000);
    let chunks: Vec<&str> = (0..400).map(|_| chunk.as_str()).collect();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "run_command", &call)])),
        Reply::Slow {
            events: openai::text(&chunks),
            delay_ms: 1,
        },
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let srv = serve(&env, &cfg, dir.path());
    let token = srv.token.clone().unwrap();
    let c = Client::new(&srv.base, &token);
    rt().block_on(async {
        let (_, job) = c.session_and_run("run it", "agent").await;
        let asked = c
            .wait_event(&job, 20, |e| e["type"] == "approval.requested")
            .await;
        // A reader with a small window that reads the head, then nothing.
        let addr: std::net::SocketAddr = srv.base.trim_start_matches("http://").parse().unwrap();
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(4096).unwrap();
        let mut conn = socket.connect(addr).await.unwrap();
        let request = format!(
            "GET /api/v1/agent/jobs/{job}/stream HTTP/1.0\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\r\n"
        );
        conn.write_all(request.as_bytes()).await.unwrap();
        let mut head = vec![0u8; 1024];
        let n = conn.read(&mut head).await.unwrap();
        assert!(String::from_utf8_lossy(&head[..n]).starts_with("HTTP/1.0 200"));
        let id = asked["data"]["tool_call_id"].as_str().unwrap();
        let (status, _) = c.decide(&job, id, "allow").await;
        assert_eq!(status, 200);
        c.wait_event(&job, 60, |e| e["type"] == "job.completed").await;
        // Now it reads again: what was buffered, then the end, early.
        let mut rest = head[..n].to_vec();
        tokio::time::timeout(Duration::from_secs(30), conn.read_to_end(&mut rest))
            .await
            .expect("the slow subscriber's stream is closed")
            .unwrap();
        let text = String::from_utf8_lossy(&rest);
        let body = text.split_once("\r\n\r\n").unwrap().1;
        let first = support::serve::frames(body);
        assert!(
            first.iter().all(|f| f.1 != "job.completed"),
            "cut off before the job's end"
        );
        let last = first.last().unwrap().0;
        let resumed = c.stream(&job, Some(last)).await;
        assert_eq!(resumed.last().unwrap().1, "job.completed");
        let ids: Vec<u64> = first.iter().chain(&resumed).map(|f| f.0).collect();
        let (_, all) = c.get(&format!("/api/v1/agent/jobs/{job}/events?cursor=0")).await;
        let stored: Vec<u64> = all["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["cursor"].as_u64().unwrap())
            .collect();
        assert_eq!(ids, stored, "every stored event once, in order");
    });
}

/// Every file in `dir` with its bytes (links as their targets).
fn snapshot(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in walkdir(dir) {
        let meta = std::fs::symlink_metadata(&entry).unwrap();
        let body = if meta.file_type().is_symlink() {
            std::fs::read_link(&entry)
                .unwrap()
                .into_os_string()
                .into_encoded_bytes()
        } else if meta.is_file() {
            std::fs::read(&entry).unwrap()
        } else {
            Vec::new()
        };
        out.push((entry.display().to_string(), body));
    }
    out.sort();
    out
}

fn walkdir(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    let mut i = 0;
    while i < out.len() {
        let here = out[i].clone();
        i += 1;
        let is_dir = std::fs::symlink_metadata(&here).is_ok_and(|m| m.is_dir());
        if is_dir {
            for e in std::fs::read_dir(&here).unwrap() {
                out.push(e.unwrap().path());
            }
        }
    }
    out
}

/// The sandbox's hostile path corpus through every file endpoint: each
/// refused spelling gets a 4xx with the sandbox's own code (read, list),
/// writes and patches naming it write nothing, searches never reach past
/// the root, and nothing outside it is read or touched.
#[test]
fn the_hostile_path_corpus_through_every_fs_endpoint() {
    use support::hostile::{Fixture, Want, hostile_cases};
    let env = Env::new();
    let fx = Fixture::new();
    let server = LlmServer::start(vec![]);
    let cfg = config(&env, "openai", &server.url(), "");
    add_config(&cfg, "[server]\nrate_limit_per_minute = 100000\n");
    let before = snapshot(fx.base.path());
    let srv = serve(&env, &cfg, &fx.root());
    let c = Client::new(&srv.base, srv.token.as_deref().unwrap());
    let secret = |v: &Value| {
        let t = v.to_string();
        t.contains("top secret") || t.contains("deeper") || t.contains("sibling with")
    };
    rt().block_on(async {
        let mut wrong = Vec::new();
        for (path, want) in hostile_cases() {
            let q = urlencode(&path);
            let read = c
                .get(&format!("/api/v1/agent/fs/read?workspace_id=default&path={q}"))
                .await;
            let list = c
                .get(&format!("/api/v1/agent/fs/list?workspace_id=default&path={q}"))
                .await;
            let write = c
                .post(
                    "/api/v1/agent/fs/write",
                    json!({"workspace_id": "default", "path": path, "content": "owned\n", "expected_hash": null}),
                )
                .await;
            let search = c
                .post(
                    "/api/v1/agent/fs/search",
                    json!({"workspace_id": "default", "query": "secret|deeper|sibling", "regex": true, "glob": path}),
                )
                .await;
            for (what, (status, body)) in [("read", &read), ("list", &list), ("write", &write), ("search", &search)] {
                if status.is_server_error() || secret(body) {
                    wrong.push(format!("{what} {path:?}: {status} {body}"));
                }
            }
            if let Want::Err(code) = want {
                for (what, (status, body)) in [("read", &read), ("list", &list)] {
                    if !status.is_client_error() || body["error"]["tool_error"]["code"] != code {
                        wrong.push(format!("{what} {path:?}: want {code}, got {status} {body}"));
                    }
                }
                if !write.0.is_client_error() {
                    wrong.push(format!("write {path:?}: {} {}", write.0, write.1));
                }
                if !path.contains(['\n', '\r', '\0']) {
                    let patch = format!("--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+owned\n");
                    let (status, body) = c
                        .post("/api/v1/agent/fs/patch", json!({"workspace_id": "default", "patch": patch}))
                        .await;
                    if !status.is_client_error() {
                        wrong.push(format!("patch {path:?}: {status} {body}"));
                    }
                }
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    });
    // Writes to safe new paths inside (e.g. `new_dir/new_file.rs`) are
    // the only changes: nothing outside the root, nothing in `.git`.
    let after = snapshot(fx.base.path());
    let root = fx.root().display().to_string();
    let changed: Vec<_> = after
        .iter()
        .filter(|f| !before.contains(f))
        .filter(|(p, _)| !p.starts_with(&root) || p.contains("/.git/") || p.ends_with("/.git"))
        .collect();
    assert!(changed.is_empty(), "{changed:?}");
    let gone: Vec<_> = before.iter().filter(|f| !after.contains(f)).collect();
    assert!(gone.is_empty(), "{gone:?}");
}

/// Budgets reach the users of stored tokens too: a default for everyone,
/// overridden per user by name.
#[test]
fn budgets_hold_for_stored_token_users() {
    let env = Env::new();
    let dir = project();
    let add = |name: &str| {
        let out = env
            .cmd()
            .args(["serve", "token", "add", name])
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        stdout(&out).trim().to_string()
    };
    let (carol, dave) = (add("carol"), add("dave"));
    let server = LlmServer::start(vec![sse(openai::text(&["fine"]))]);
    let cfg = config(&env, "openai", &server.url(), "");
    add_config(
        &cfg,
        "[server]\ndefault_monthly_budget_usd = 0.0\nmonthly_budgets_usd = { dave = 5.0 }\n",
    );
    let srv = serve(&env, &cfg, dir.path());
    rt().block_on(async {
        let c = Client::new(&srv.base, &carol);
        let (status, s) = c
            .post("/api/v1/agent/sessions", json!({"workspace_id": "default"}))
            .await;
        assert_eq!(status, 201, "{s}");
        let (status, body) = c
            .post(
                "/api/v1/agent/run",
                json!({"session_id": s["session_id"], "instruction": "hi", "mode": "ask"}),
            )
            .await;
        assert_eq!(status, 429, "{body}");
        assert_eq!(body["error"]["reason"], "budget_exceeded", "{body}");
        assert!(
            body["error"]["message"].as_str().unwrap().contains("carol"),
            "{body}"
        );
        let d = Client::new(&srv.base, &dave);
        let (_, job) = d.session_and_run("hi", "ask").await;
        d.wait_event(&job, 20, |e| e["type"] == "job.completed")
            .await;
    });
    let bad = env.home.path().join("bad.toml");
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(&bad, text.replace("dave = 5.0", "erin = -1.0")).unwrap();
    let out = env
        .cmd()
        .arg("--config")
        .arg(&bad)
        .args(["serve", "--root"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("monthly_budgets_usd.erin"),
        "{}",
        stderr(&out)
    );
}

/// `POST …/jobs/{id}/verify` runs `[verify]` on the accepted hunks in a
/// scratch copy: refused with nothing accepted (before any decision and
/// after the hunk is rejected), passed with the hunk in (the check greps
/// for the hunk's text); the job's events carry `verify.started` and
/// `verify.completed`, and nothing reaches the root.
#[test]
fn verify_over_http_checks_the_accepted_hunks_without_writing() {
    let env = Env::new();
    let dir = project();
    let root = dir.path();
    let server = LlmServer::start(edit_then_answer());
    let cfg = config(&env, "openai", &server.url(), "");
    add_config(
        &cfg,
        "[verify]\ncommand = \"grep -q hola src/greet.rs || { echo 'greet does not say hola'; exit 3; }\"\n",
    );
    let srv = serve(&env, &cfg, root);
    let c = Client::new(&srv.base, srv.token.as_deref().unwrap());
    let before = snapshot(root);
    rt().block_on(async {
        let (_, s) = c
            .post("/api/v1/agent/sessions", json!({"workspace_id": "default"}))
            .await;
        let session = s["session_id"].as_str().unwrap().to_string();
        let (_, run) = c
            .post(
                "/api/v1/agent/run",
                json!({"session_id": session, "instruction": "say hola", "mode": "agent"}),
            )
            .await;
        let job = run["job_id"].as_str().unwrap().to_string();
        let all = c.stream(&job, None).await;
        assert_eq!(all.last().unwrap().2["data"]["status"], "awaiting_review");
        let (status, e) = c
            .post(&format!("/api/v1/agent/jobs/{job}/verify"), json!({}))
            .await;
        assert_eq!(status, 422, "nothing accepted: {e}");
        assert!(error_code(&e) == "invalid", "{e}");
        let (status, v) = c
            .post(
                &format!("/api/v1/agent/jobs/{job}/verify"),
                json!({"accepted_hunk_ids": ["h_1"]}),
            )
            .await;
        assert_eq!(status, 200, "{v}");
        assert_eq!(v["verify"]["passed"], true, "{v}");
        assert_eq!(v["verify"]["hunk_ids"], json!(["h_1"]), "{v}");
        // Rejected: nothing is left to verify.
        let (status, v) = c
            .post(
                &format!("/api/v1/agent/jobs/{job}/verify"),
                json!({"rejected_hunk_ids": ["h_1"]}),
            )
            .await;
        assert_eq!(status, 422, "{v}");
        let (_, events) = c
            .get(&format!("/api/v1/agent/jobs/{job}/events?cursor=0"))
            .await;
        let kinds: Vec<&str> = events["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["type"].as_str().unwrap())
            .collect();
        assert!(
            kinds.contains(&"verify.started") && kinds.contains(&"verify.completed"),
            "{kinds:?}"
        );
    });
    assert_eq!(snapshot(root), before, "the root is untouched");
}

/// A `read_only` workspace changes nothing on the model's account either:
/// agent mode (whose proposals could never be applied there) is refused
/// with a hint, and ask and plan run.
#[test]
fn a_read_only_workspace_runs_no_agent_job() {
    let env = Env::new();
    let dir = project();
    let server = LlmServer::start(vec![sse(openai::text(&["a plan"]))]);
    let cfg = config(&env, "openai", &server.url(), "");
    add_config(
        &cfg,
        &format!(
            "[approvals]\nexec = \"auto\"\n\
             [[server.workspaces]]\nid = \"app\"\nroot = \"{root}\"\nusers = [\"*\"]\n\
             [[server.workspaces]]\nid = \"ro\"\nroot = \"{root}\"\nusers = [\"*\"]\nread_only = true\n",
            root = dir.path().display()
        ),
    );
    let srv = serve(&env, &cfg, dir.path());
    let c = Client::new(&srv.base, srv.token.as_deref().unwrap());
    rt().block_on(async {
        let (status, s) = c
            .post("/api/v1/agent/sessions", json!({"workspace_id": "ro"}))
            .await;
        assert_eq!(status, 201, "{s}");
        let run = |mode: &str| {
            json!({"session_id": s["session_id"], "instruction": "make a file", "mode": mode})
        };
        let (status, refused) = c.post("/api/v1/agent/run", run("agent")).await;
        assert_eq!(status, 403, "{refused}");
        assert!(refused["error"]["hint"].as_str().unwrap().contains("plan"), "{refused}");
        let (status, ran) = c.post("/api/v1/agent/run", run("plan")).await;
        assert_eq!(status, 202, "{ran}");
        let job = ran["job_id"].as_str().unwrap().to_string();
        c.wait_event(&job, 20, |e| e["type"] == "job.completed").await;
    });
    assert!(!dir.path().join("made.txt").exists());
}

/// A token revoked while its event stream is open ends that stream (within
/// about a second), as it refuses every new request at once.
#[test]
fn a_revoked_token_ends_its_open_stream() {
    let env = Env::new();
    let dir = project();
    let out = env
        .cmd()
        .args(["serve", "token", "add", "bob", "--role", "user"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let bob = stdout(&out).trim().to_string();
    let call = json!({"command": "echo waiting"}).to_string();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "run_command", &call)])),
        sse(openai::text(&["ran it"])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "");
    let srv = serve(&env, &cfg, dir.path());
    rt().block_on(async {
        let b = Client::new(&srv.base, &bob);
        let (_, job) = b.session_and_run("run it", "agent").await;
        b.wait_event(&job, 20, |e| e["type"] == "approval.requested")
            .await;
        let mut revoke = env.cmd();
        revoke.args(["serve", "token", "revoke", "bob"]);
        let revoker = tokio::task::spawn_blocking(move || {
            std::thread::sleep(std::time::Duration::from_millis(800));
            revoke.output().unwrap()
        });
        // The job waits for an approval: only the revoke can end this.
        let text = tokio::time::timeout(
            std::time::Duration::from_secs(15),
            b.stream_text(&job, None),
        )
        .await
        .expect("the revoked token's stream stayed open");
        assert_eq!(code(&revoker.await.unwrap()), 0);
        assert!(text.contains("approval.requested"), "{text}");
        assert!(!text.contains("job.completed"), "{text}");
    });
}
