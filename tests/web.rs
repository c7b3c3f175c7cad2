//! The web page in real Chromium (SPEC 13 "Web UI"), served by the real
//! `serve` binary with a loopback model behind it: sign in by `#token=`,
//! pick the workspace, ask, watch the answer stream, review hunks with the
//! keys (y, Ctrl+S), apply, roll back (confirmed), approve a command, and
//! a server killed mid-stream and started again: the page says it is
//! offline, comes back by itself and shows every stored event once. No
//! console error anywhere. Screenshots of the page, wide and narrow, land
//! in docs/web/.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use fantoccini::Locator;
use fantoccini::key::Key;
use serde_json::{Value, json};
use support::browser::{Driver, available, testid, until};
use support::jobs::{config, project, sse};
use support::llm_server::{LlmServer, Reply, openai};
use support::serve::{Client, rt, serve, serve_at};
use support::{Env, code, stderr, stdout};

fn edit_then_answer() -> Vec<Reply> {
    let edits = json!({"edits": [
        {"file_path": "src/greet.rs", "operation": "replace", "start_line": 2, "end_line": 2,
         "old_text": "    println!(\"hello\");", "new_text": "    println!(\"hola\");\n"}
    ]})
    .to_string();
    vec![
        sse(openai::tool_calls(&[("c1", "propose_edits", &edits)])),
        sse(openai::text(&["I **changed** ", "the `greeting`."])),
    ]
}

/// Browser console entries that are errors (none are allowed).
fn errors(entries: &[Value]) -> Vec<&Value> {
    entries.iter().filter(|e| e["level"] == "SEVERE").collect()
}

fn shot(name: &str, png: &[u8]) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/web");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), png).unwrap();
}

#[test]
fn sign_in_ask_review_apply_roll_back_and_approve() {
    if !available() {
        return;
    }
    let env = Env::new();
    let dir = project();
    let greet = dir.path().join("src/greet.rs");
    let before = std::fs::read_to_string(&greet).unwrap();
    let call = json!({"command": "echo approved-from-web"}).to_string();
    let mut script = edit_then_answer();
    script.push(sse(openai::tool_calls(&[("c2", "run_command", &call)])));
    script.push(sse(openai::text(&["ran ", "it"])));
    let again = json!({"command": "echo decided-elsewhere"}).to_string();
    script.push(sse(openai::tool_calls(&[("c3", "run_command", &again)])));
    script.push(sse(openai::text(&["ran ", "again"])));
    let model = LlmServer::start(script);
    let cfg = config(&env, "openai", &model.url(), "");
    let srv = serve(&env, &cfg, dir.path());
    let token = srv.token.clone().unwrap();
    let driver = Driver::start();
    rt().block_on(async {
        let b = driver.browser(1280, 800).await;
        // Signed in from the fragment, which never reaches the server and
        // leaves the address bar.
        let t0 = Instant::now();
        b.goto(&format!("{}/#token={token}", srv.base)).await.unwrap();
        until(&b, 20, "workspaces listed", "return document.querySelectorAll('[data-testid=workspace-select] option').length").await;
        eprintln!("page ready (token to workspaces listed, incl. navigation): {:?}", t0.elapsed());
        let href = b.current_url().await.unwrap();
        assert!(!href.as_str().contains("token"), "{href}");
        let banner = testid(&b, "banner").await.text().await.unwrap();
        assert_eq!(banner, "Actions run on the server host");
        until(&b, 20, "online", "return document.querySelector('[data-testid=availability]').textContent === 'online'").await;
        let mode = testid(&b, "mode").await;
        assert_eq!(mode.prop("value").await.unwrap().as_deref(), Some("agent"), "Agent first");

        // Ask; the answer streams, rendered as markdown.
        testid(&b, "instruction").await.send_keys("say hola").await.unwrap();
        testid(&b, "send").await.click().await.unwrap();
        until(&b, 20, "a hunk", "return document.querySelectorAll('[data-testid=hunk]').length").await;
        let answer = until(&b, 20, "the answer", "return [...document.querySelectorAll('[data-testid=answer]')].map(a => a.innerHTML).join('')").await;
        assert!(answer.as_str().unwrap().contains("<strong>changed</strong>"), "{answer}");
        assert!(answer.as_str().unwrap().contains("<code>greeting</code>"), "{answer}");
        let hunk = testid(&b, "hunk").await;
        assert!(hunk.text().await.unwrap().contains("+    println!(\"hola\");"));
        shot("review-wide.png", &b.screenshot().await.unwrap());

        // y accepts the hunk under focus, Ctrl+S applies.
        hunk.click().await.unwrap();
        hunk.send_keys("y").await.unwrap();
        until(&b, 5, "accepted", "return document.querySelector('[data-testid=hunk]').classList.contains('accepted')").await;
        let ctrl_s = format!("{}s", char::from(Key::Control));
        b.find(Locator::Css("[data-testid=hunk]")).await.unwrap().send_keys(&ctrl_s).await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !std::fs::read_to_string(&greet).unwrap().contains("hola") {
            assert!(Instant::now() < deadline, "the apply did not write");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }

        // Its three-way view: before, what it wrote, now.
        testid(&b, "three-way").await.click().await.unwrap();
        let three = testid(&b, "diff3").await.text().await.unwrap();
        assert!(three.contains("hello") && three.contains("hola"), "{three}");
        // The checkpoint rolls back, after a confirmation.
        testid(&b, "checkpoint").await;
        testid(&b, "rollback").await.click().await.unwrap();
        b.accept_alert().await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::fs::read_to_string(&greet).unwrap() != before {
            assert!(Instant::now() < deadline, "the rollback did not restore the file");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }

        // A command asks first; the prompt names it and the workspace.
        testid(&b, "instruction").await.send_keys("run it").await.unwrap();
        testid(&b, "send").await.click().await.unwrap();
        let prompt = testid(&b, "approval").await;
        let text = prompt.text().await.unwrap();
        assert!(text.contains("echo approved-from-web"), "{text}");
        assert!(text.contains("workspace: default"), "{text}");
        testid(&b, "approve").await.click().await.unwrap();
        until(&b, 20, "decided", "return document.querySelector('[data-testid=approval]').textContent.includes('allowed (')").await;
        until(&b, 20, "the second answer", "return [...document.querySelectorAll('[data-testid=answer]')].some(a => a.textContent.includes('ran it'))").await;
        // Answered elsewhere first (another client): the prompt closes,
        // saying who decided.
        testid(&b, "instruction").await.send_keys("run again").await.unwrap();
        testid(&b, "send").await.click().await.unwrap();
        until(&b, 20, "a second prompt", "return document.querySelectorAll('[data-testid=approval]').length === 2").await;
        let c = Client::new(&srv.base, &token);
        let job = until(&b, 5, "the job", "return [...document.querySelectorAll('.job')].pop().dataset.jobId").await;
        let job = job.as_str().unwrap();
        let asked = c.wait_event(job, 10, |e| e["type"] == "approval.requested").await;
        let id = asked["data"]["tool_call_id"].as_str().unwrap();
        let (status, body) = c
            .post(&format!("/api/v1/agent/jobs/{job}/approvals/{id}"), json!({"decision": "deny"}))
            .await;
        assert_eq!(status, 200, "{body}");
        until(&b, 20, "closed by the other answer", "const p = [...document.querySelectorAll('[data-testid=approval]')].pop(); return p.textContent.includes('denied (') && p.querySelector('[data-testid=approve]').disabled").await;
        shot("chat-wide.png", &b.screenshot().await.unwrap());
        b.set_window_size(390, 844).await.unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let wide = b.execute("return document.documentElement.scrollWidth", vec![]).await.unwrap();
        assert!(wide.as_u64().unwrap() <= 390, "no sideways scroll at 390 px: {wide}");
        shot("chat-narrow.png", &b.screenshot().await.unwrap());

        let console = driver.console(&b).await;
        assert!(errors(&console).is_empty(), "console errors: {console:?}");
        b.close().await.unwrap();
    });
}

#[test]
fn the_page_rides_out_a_server_restart_mid_stream() {
    if !available() {
        return;
    }
    let env = Env::new();
    let dir = project();
    // A stored token outlives the restart (a one-run token would not).
    let out = env
        .cmd()
        .args(["serve", "token", "add", "web", "--role", "admin"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let token = stdout(&out).trim().to_string();
    let words: Vec<String> = (0..200).map(|i| format!("w{i} ")).collect();
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    let model = LlmServer::start(vec![Reply::Slow {
        events: openai::text(&refs),
        delay_ms: 25,
    }]);
    let cfg = config(&env, "openai", &model.url(), "");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let bind = format!("127.0.0.1:{port}");
    let mut srv = serve_at(&env, &cfg, dir.path(), &bind, &[]);
    let driver = Driver::start();
    rt().block_on(async {
        let b = driver.browser(1280, 800).await;
        b.goto(&format!("{}/#token={token}", srv.base)).await.unwrap();
        until(&b, 20, "workspaces listed", "return document.querySelectorAll('[data-testid=workspace-select] option').length").await;
        b.find(Locator::Css("[data-testid=mode] option[value=ask]")).await.unwrap().click().await.unwrap();
        testid(&b, "instruction").await.send_keys("talk").await.unwrap();
        testid(&b, "send").await.click().await.unwrap();
        until(&b, 20, "streaming", "return (document.querySelector('.job [data-testid=answer]') || {}).textContent").await;
        // The server goes away mid-stream, and comes back on its address.
        srv.child.kill().unwrap();
        srv.child.wait().unwrap();
        until(&b, 20, "offline shown", "return !document.getElementById('offline').hidden").await;
        srv = serve_at(&env, &cfg, dir.path(), &bind, &[]);
        until(&b, 30, "the job's end", "return document.querySelector('.job .status').textContent.match(/failed|cancelled|completed/)").await;
        until(&b, 10, "online again", "return document.getElementById('offline').hidden").await;
        let job = b.execute("return document.querySelector('.job').dataset.jobId", vec![]).await.unwrap();
        let shown = b.execute("return Number(document.querySelector('.job').dataset.stored)", vec![]).await.unwrap();
        let dupes = b.execute("return document.body.dataset.duplicates || '0'", vec![]).await.unwrap();
        assert_eq!(dupes, "0", "no stored event shown twice");
        let c = Client::new(&srv.base, &token);
        let (_, page) = c.get(&format!("/api/v1/agent/jobs/{}/events?cursor=0", job.as_str().unwrap())).await;
        let stored = page["events"].as_array().unwrap().len() as u64;
        assert_eq!(shown.as_u64().unwrap(), stored, "every stored event shown once: {page}");
        let console = driver.console(&b).await;
        // A dropped connection is logged by Chromium itself as a network
        // error; the page's own code logs nothing.
        let own: Vec<_> = errors(&console)
            .into_iter()
            .filter(|e| !e["message"].as_str().unwrap_or("").contains("net::ERR_"))
            .collect();
        assert!(own.is_empty(), "console errors: {console:?}");
        b.close().await.unwrap();
    });
}
