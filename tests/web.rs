//! The web page in real Chromium (SPEC 13 "Web UI"), served by the real
//! `serve` binary with a loopback model behind it: sign in by `#token=`,
//! pick the workspace, ask, watch the answer stream, review hunks with the
//! keys (y, Ctrl+S) and per file, a conflict explained, apply, the
//! three-way view, roll back (confirmed), approve a command by keyboard, an
//! approval answered elsewhere, a session restored on a new visit, and
//! a server killed mid-stream and started again: the page says it is
//! offline, comes back by itself and shows every stored event once; and
//! two hosts on PostgreSQL behind one address, the page's host killed: it
//! carries on through the other; verify before apply from the page; what
//! the engine did for the model (a file read in for it, tools moved into
//! the prompt, a fallback to the remote) said as in the TUI. No
//! console error anywhere. Screenshots of the page, wide and narrow, land
//! in docs/web/ with `AGENT_TUI_SCREENSHOTS=1` (else in target/).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use fantoccini::Locator;
use fantoccini::key::Key;
use serde_json::{Value, json};
use support::browser::{Driver, available, testid, until};
use support::jobs::{config, project, sse};
use support::llm_server::{LlmServer, Reply, openai};
use support::serve::{Client, edit_then_answer, rt, serve, serve_at};
use support::{Env, code, stderr, stdout};

/// Browser console entries that are errors (none are allowed).
fn errors(entries: &[Value]) -> Vec<&Value> {
    entries.iter().filter(|e| e["level"] == "SEVERE").collect()
}

/// A screenshot: into docs/web with `AGENT_TUI_SCREENSHOTS=1` (to refresh
/// the README's), else into target/ (a plain run leaves the tree alone).
fn shot(name: &str, png: &[u8]) {
    let at = if std::env::var_os("AGENT_TUI_SCREENSHOTS").is_some() {
        "docs/web"
    } else {
        "target/web-screenshots"
    };
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(at);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), png).unwrap();
}

/// Signs in at `base` with `token`, waits for the workspaces and sends
/// `instruction`.
async fn send_from_page(b: &fantoccini::Client, base: &str, token: &str, instruction: &str) {
    b.goto(&format!("{base}/#token={token}")).await.unwrap();
    until(
        b,
        20,
        "workspaces listed",
        "return document.querySelectorAll('[data-testid=workspace-select] option').length",
    )
    .await;
    testid(b, "instruction")
        .await
        .send_keys(instruction)
        .await
        .unwrap();
    testid(b, "send").await.click().await.unwrap();
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
    let ask = json!({"question": "Which greeting?"}).to_string();
    script.push(sse(openai::tool_calls(&[("q1", "clarify_user", &ask)])));
    script.push(sse(openai::text(&[
        "ran again, then:\n\n```rust\nfn main() {}\n```\n",
    ])));
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
        // The file changed underneath: Ctrl+S writes nothing and says why.
        std::fs::write(&greet, before.replace("hello", "hallo")).unwrap();
        b.find(Locator::Css("[data-testid=hunk]")).await.unwrap().send_keys(&ctrl_s).await.unwrap();
        let why = until(&b, 10, "the conflict explained", "const t = document.getElementById('review-status').textContent; return t.startsWith('nothing written') && t").await;
        assert!(why.as_str().unwrap().contains("src/greet.rs"), "{why}");
        assert!(std::fs::read_to_string(&greet).unwrap().contains("hallo"), "nothing written");
        std::fs::write(&greet, &before).unwrap();
        // Whole files are decided at once too.
        testid(&b, "reject-file").await.click().await.unwrap();
        until(&b, 5, "rejected", "return document.querySelector('[data-testid=hunk]').classList.contains('rejected')").await;
        testid(&b, "accept-file").await.click().await.unwrap();
        until(&b, 5, "accepted", "return document.querySelector('[data-testid=hunk]').classList.contains('accepted')").await;
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

        // A command asks first; the prompt names it and the workspace. All
        // by keyboard: Enter sends; the prompt leaves the focus in the
        // instruction box (keys typed there are never for it); focused,
        // Enter allows.
        let enter = char::from(Key::Enter).to_string();
        testid(&b, "instruction").await.send_keys(&format!("run it{enter}")).await.unwrap();
        let prompt = testid(&b, "approval").await;
        let text = prompt.text().await.unwrap();
        assert!(text.contains("echo approved-from-web"), "{text}");
        assert!(text.contains("workspace: default"), "{text}");
        let active = b.execute("return document.activeElement.id", vec![]).await.unwrap();
        assert_eq!(active, "instruction", "the prompt took the focus from the instruction box");
        b.execute("document.querySelector('[data-testid=approve]').focus()", vec![]).await.unwrap();
        tokio::time::sleep(Duration::from_millis(400)).await;
        b.active_element().await.unwrap().send_keys(&enter).await.unwrap();
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
        let (status, body) = c.decide(job, id, "deny").await;
        assert_eq!(status, 200, "{body}");
        until(&b, 20, "closed by the other answer", "const p = [...document.querySelectorAll('[data-testid=approval]')].pop(); return p.textContent.includes('denied (') && p.querySelector('[data-testid=approve]').disabled").await;
        // A question from the model, answered from the page.
        let question = testid(&b, "clarification").await;
        assert!(question.text().await.unwrap().contains("Which greeting?"));
        until(&b, 5, "the question focused", "return document.activeElement.tagName === 'INPUT'").await;
        b.active_element().await.unwrap().send_keys(&format!("hola{enter}")).await.unwrap();
        let asked_q = c.wait_event(job, 10, |e| e["type"] == "clarification.received").await;
        assert_eq!(asked_q["data"]["answer"], "hola", "{asked_q}");
        // The answer's code block is highlighted.
        until(&b, 20, "highlighted code", "return [...document.querySelectorAll('[data-testid=answer] pre code .tok-k')].some(k => k.textContent === 'fn')").await;
        shot("chat-wide.png", &b.screenshot().await.unwrap());
        b.set_window_size(390, 844).await.unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let wide = b.execute("return document.documentElement.scrollWidth", vec![]).await.unwrap();
        assert!(wide.as_u64().unwrap() <= 390, "no sideways scroll at 390 px: {wide}");
        shot("chat-narrow.png", &b.screenshot().await.unwrap());

        // A new visit restores a session from the list, its history shown.
        b.set_window_size(1280, 800).await.unwrap();
        b.goto(&format!("{}/#token={token}", srv.base)).await.unwrap();
        until(&b, 20, "sessions listed", "return document.querySelectorAll('#sessions button').length").await;
        b.find(Locator::Css("#sessions button")).await.unwrap().click().await.unwrap();
        let history = until(&b, 10, "the history", "const t = document.getElementById('log').textContent; return t.includes('say hola') && t.includes('ran again, then') && t").await;
        assert!(history.as_str().unwrap().contains("changed the greeting"), "{history}");

        let console = driver.console(&b).await;
        // Chromium itself logs the refused apply (409) as a network error;
        // the page's own code logs nothing.
        let own: Vec<_> = errors(&console)
            .into_iter()
            .filter(|e| !e["message"].as_str().unwrap_or("").contains("/api/v1/agent/apply - Failed to load resource: the server responded with a status of 409"))
            .collect();
        assert!(own.is_empty(), "console errors: {console:?}");
        b.close().await.unwrap();
    });
}

/// Verify before apply from the page (SPEC 17): `v` runs the project's
/// check on the accepted hunks in a scratch copy, the result shows beside
/// the hunks (its output when it fails), turns stale when a decision
/// changes, Ctrl+S after a failure that still matches asks once more, and
/// `f` sends the failure to the model, whose new job the page follows. The
/// root is never touched by a verify.
#[test]
fn verify_the_accepted_hunks_from_the_page_and_send_a_failure_back() {
    if !available() {
        return;
    }
    let env = Env::new();
    let dir = project();
    let main_rs = dir.path().join("src/main.rs");
    let main_before = std::fs::read_to_string(&main_rs).unwrap();
    let edits = json!({"edits": [
        {"file_path": "src/greet.rs", "operation": "replace", "start_line": 2, "end_line": 2,
         "old_text": "    println!(\"hello\");", "new_text": "    println!(\"hola\");\n"},
        {"file_path": "src/main.rs", "operation": "replace", "start_line": 2, "end_line": 2,
         "old_text": "    greet();", "new_text": "    greet(); // BROKEN\n"}
    ]})
    .to_string();
    let model = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "propose_edits", &edits)])),
        sse(openai::text(&["Two changes."])),
        sse(openai::text(&[
            "I see: main.rs is broken; dropping that hunk.",
        ])),
    ]);
    let cfg = config(&env, "openai", &model.url(), "");
    let mut toml = std::fs::read_to_string(&cfg).unwrap();
    toml.push_str(
        "\n[verify]\ncommand = '''if grep -q BROKEN src/main.rs; then echo \"main.rs is broken\"; exit 1; fi'''\ntimeout_secs = 30\n",
    );
    std::fs::write(&cfg, toml).unwrap();
    let srv = serve(&env, &cfg, dir.path());
    let token = srv.token.clone().unwrap();
    let driver = Driver::start();
    rt().block_on(async {
        let b = driver.browser(1280, 800).await;
        send_from_page(&b, &srv.base, &token, "change both").await;
        until(&b, 20, "two hunks", "return document.querySelectorAll('[data-testid=hunk]').length === 2").await;
        // y, y: both accepted (the focus moves on to the next hunk).
        let first = b.find(Locator::Css("[data-testid=hunk]")).await.unwrap();
        first.click().await.unwrap();
        first.send_keys("y").await.unwrap();
        b.active_element().await.unwrap().send_keys("y").await.unwrap();
        until(&b, 5, "both accepted", "return document.querySelectorAll('[data-testid=hunk].accepted').length === 2").await;
        let outcome = |want: &str| {
            format!("const r = document.querySelector('[data-testid=verify-result]'); return !r.hidden && `${{r.dataset.outcome}} ${{r.dataset.stale}}` === '{want}'")
        };
        // v: the check fails on the copy with both hunks, not on the root.
        b.active_element().await.unwrap().send_keys("v").await.unwrap();
        until(&b, 30, "a failed verify", &outcome("failed false")).await;
        let out = testid(&b, "verify-output").await.text().await.unwrap();
        assert!(out.contains("main.rs is broken"), "{out}");
        let line = testid(&b, "verify-result").await.text().await.unwrap();
        assert!(line.contains("these hunks break it") && line.contains("exit 1"), "{line}");
        assert_eq!(std::fs::read_to_string(&main_rs).unwrap(), main_before, "the root untouched");
        shot("verify-wide.png", &b.screenshot().await.unwrap());
        // n on the second hunk: the result is stale; v again passes.
        let second = b.find_all(Locator::Css("[data-testid=hunk]")).await.unwrap().remove(1);
        second.click().await.unwrap();
        second.send_keys("n").await.unwrap();
        until(&b, 5, "stale", &outcome("failed true")).await;
        b.active_element().await.unwrap().send_keys("v").await.unwrap();
        until(&b, 30, "a pass", &outcome("passed false")).await;
        // Accepted again and verified: failed. Ctrl+S asks once more; no.
        let second = b.find_all(Locator::Css("[data-testid=hunk]")).await.unwrap().remove(1);
        second.click().await.unwrap();
        second.send_keys("y").await.unwrap();
        b.active_element().await.unwrap().send_keys("v").await.unwrap();
        until(&b, 30, "failed again", &outcome("failed false")).await;
        let ctrl_s = format!("{}s", char::from(Key::Control));
        b.active_element().await.unwrap().send_keys(&ctrl_s).await.unwrap();
        let asked = b.get_alert_text().await.unwrap();
        assert!(asked.contains("Apply them anyway?"), "{asked}");
        b.dismiss_alert().await.unwrap();
        until(&b, 5, "nothing written", "return document.getElementById('review-status').textContent === 'nothing written: the verify failed'").await;
        assert_eq!(std::fs::read_to_string(&main_rs).unwrap(), main_before);
        // f: the failure goes to the model; the page follows its new job.
        b.active_element().await.unwrap().send_keys("f").await.unwrap();
        until(&b, 30, "the model's reply", "return [...document.querySelectorAll('[data-testid=answer]')].some(a => a.textContent.includes('dropping that hunk'))").await;
        let told = model.requests().last().unwrap().body.to_string();
        assert!(told.contains("main.rs is broken"), "the model read the output: {told}");
        assert_eq!(std::fs::read_to_string(&main_rs).unwrap(), main_before, "the root untouched");
        let console = driver.console(&b).await;
        assert!(errors(&console).is_empty(), "console errors: {console:?}");
        b.close().await.unwrap();
    });
}

/// What the engine did for the model shows on the page as in the TUI: a
/// file the instruction names, read in before the first request (marked
/// as agent-tui's own read), a chat template that drops the tools (`auto`
/// moves them into the prompt, said once), and an answer stopped where it
/// went round in a loop.
#[test]
fn the_page_says_what_was_done_for_a_small_model() {
    if !available() {
        return;
    }
    let env = Env::new();
    let dir = project();
    // The server counts 11 prompt tokens where its tokenizer makes 300 of
    // the request without tools and 900 with them.
    // Its answer goes round in a loop.
    let answer = "It prints a greeting and returns. ".repeat(12);
    let model = LlmServer::start_with_tokenizer(
        vec![openai::probe(11), sse(openai::text(&[&answer]))],
        vec![openai::count(300), openai::count(900)],
    );
    let cfg = config(&env, "openai", &model.url(), "context_window = 2048");
    let srv = serve(&env, &cfg, dir.path());
    let token = srv.token.clone().unwrap();
    let driver = Driver::start();
    rt().block_on(async {
        let b = driver.browser(1280, 800).await;
        send_from_page(&b, &srv.base, &token, "what does src/greet.rs do?").await;
        until(&b, 20, "the answer", "return [...document.querySelectorAll('[data-testid=answer]')].some(a => a.textContent.includes('prints a greeting'))").await;
        let read = until(&b, 5, "the read shown", "const c = document.querySelector('[data-testid=tool-log] .call.attached'); return c && c.querySelector('summary').textContent").await;
        let read = read.as_str().unwrap();
        assert!(read.contains("src/greet.rs") && read.contains("read for the model: the instruction names it"), "{read}");
        let notes = until(&b, 20, "the notes", "const n = [...document.querySelectorAll('[data-testid=note]')].map(n => n.textContent); return n.length === 2 && n").await;
        let notes = notes.as_array().unwrap();
        let note = notes[0].as_str().unwrap();
        assert!(note.contains("chat template drops the tools") && note.contains("11 prompt tokens"), "{note}");
        let note = notes[1].as_str().unwrap();
        assert!(note.contains("went round in a loop (the same 34 characters 12 times in a row)"), "{note}");
        let shown = until(&b, 5, "the answer", "return [...document.querySelectorAll('[data-testid=answer]')].map(a => a.textContent).join('')").await;
        assert_eq!(shown.as_str().unwrap().matches("prints a greeting").count(), 1, "{shown}");
        let console = driver.console(&b).await;
        assert!(errors(&console).is_empty(), "console errors: {console:?}");
        b.close().await.unwrap();
    });
    let requests = model.requests();
    assert_eq!(requests.len(), 2, "the probe, then the request");
    assert!(
        requests[1].body.get("tools").is_none(),
        "the tools moved into the prompt"
    );
}

/// `hybrid_auto`'s fallback shows on the page: a note with the reason,
/// and the job's status names the provider it goes on with.
#[test]
fn a_fallback_to_the_remote_shows_on_the_page() {
    if !available() {
        return;
    }
    let env = Env::new();
    let dir = project();
    let local = LlmServer::start(vec![Reply::Status {
        code: 500,
        headers: vec![],
        body: json!({"error": {"message": "model crashed"}}).to_string(),
    }]);
    let remote = LlmServer::start(vec![sse(openai::text(&["Remote answer."]))]);
    let text = format!(
        "[providers.local]\nkind = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"\"\nmodel = \"small\"\ncontext_window = 16384\n\
         [providers.remote]\nkind = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"TEST_LLM_KEY\"\nmodel = \"big\"\ncontext_window = 16384\n\
         [agent]\nretry_base_delay_ms = 10\nmax_retries = 0\n\
         [routing]\nlocal = \"local\"\nremote = \"remote\"\nmode = \"hybrid_auto\"\n",
        local.url(),
        remote.url()
    );
    let cfg = env.home.path().join("config.toml");
    std::fs::write(&cfg, text).unwrap();
    let srv = serve(&env, &cfg, dir.path());
    let token = srv.token.clone().unwrap();
    let driver = Driver::start();
    rt().block_on(async {
        let b = driver.browser(1280, 800).await;
        send_from_page(&b, &srv.base, &token, "hello").await;
        until(&b, 20, "the remote's answer", "return [...document.querySelectorAll('[data-testid=answer]')].some(a => a.textContent.includes('Remote answer.'))").await;
        let note = until(&b, 5, "the note", "const n = document.querySelector('[data-testid=note]'); return n && n.textContent").await;
        let note = note.as_str().unwrap();
        assert!(note.contains("gave up (provider error)") && note.contains("goes on with"), "{note}");
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
        shown_once(&driver, &b, &Client::new(&srv.base, &token)).await;
        b.close().await.unwrap();
    });
}

/// The page's job showed every stored event once (as `c` reads them from
/// the store), and the page logged no error (a dropped connection is logged
/// by Chromium itself as a network error; that one is expected). The
/// job's stored events.
async fn shown_once(driver: &Driver, b: &fantoccini::Client, c: &Client) -> Value {
    let job = b
        .execute(
            "return document.querySelector('.job').dataset.jobId",
            vec![],
        )
        .await
        .unwrap();
    let shown = b
        .execute(
            "return Number(document.querySelector('.job').dataset.stored)",
            vec![],
        )
        .await
        .unwrap();
    let dupes = b
        .execute("return document.body.dataset.duplicates || '0'", vec![])
        .await
        .unwrap();
    assert_eq!(dupes, "0", "no stored event shown twice");
    let (_, page) = c
        .get(&format!(
            "/api/v1/agent/jobs/{}/events?cursor=0",
            job.as_str().unwrap()
        ))
        .await;
    let stored = page["events"].as_array().unwrap().len() as u64;
    assert_eq!(
        shown.as_u64().unwrap(),
        stored,
        "every stored event shown once: {page}"
    );
    let console = driver.console(b).await;
    let own: Vec<_> = errors(&console)
        .into_iter()
        .filter(|e| !e["message"].as_str().unwrap_or("").contains("net::ERR_"))
        .collect();
    assert!(own.is_empty(), "console errors: {console:?}");
    page
}

/// A TCP front door for the test: connections go to whichever backend
/// port is current (a load balancer after a health check moves on).
fn front_door(backend: std::sync::Arc<std::sync::atomic::AtomicU16>) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { continue };
            let to = backend.load(std::sync::atomic::Ordering::SeqCst);
            let Ok(server) = std::net::TcpStream::connect(("127.0.0.1", to)) else {
                continue;
            };
            let (mut c2, mut s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            let (mut c1, mut s1) = (client, server);
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut c1, &mut s1);
                let _ = s1.shutdown(std::net::Shutdown::Both);
            });
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut s2, &mut c2);
                let _ = c2.shutdown(std::net::Shutdown::Both);
            });
        }
    });
    port
}

/// Two hosts on one PostgreSQL behind one address: the host the page talks
/// to dies mid-stream; the page comes back through the same address to the
/// other host and shows every stored event once, to the job's end
/// (`host_lost`, reported by the surviving host).
#[test]
fn the_page_moves_to_another_host_behind_one_address() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU16, Ordering};
    use support::pg::{Cluster, PASSWORD};
    if !available() {
        return;
    }
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let dir = project();
    let words: Vec<String> = (0..400).map(|i| format!("w{i} ")).collect();
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    let model = LlmServer::start(vec![Reply::Slow {
        events: openai::text(&refs),
        delay_ms: 25,
    }]);
    let url = cluster.url();
    let vars = [
        ("AGENT_TUI_DATABASE_URL", url.as_str()),
        ("AGENT_TUI_DB_PASSWORD", PASSWORD),
    ];
    let envs = [Env::new(), Env::new()];
    let cfgs: Vec<_> = envs
        .iter()
        .map(|env| {
            let cfg = config(env, "openai", &model.url(), "");
            // The front door's address is this server's Host too.
            support::serve::add_config(
                &cfg,
                "[storage]\npassword_env = \"AGENT_TUI_DB_PASSWORD\"\n",
            );
            cfg
        })
        .collect();
    let out = envs[0]
        .cmd()
        .envs(vars)
        .arg("--config")
        .arg(&cfgs[0])
        .args(["serve", "token", "add", "web", "--role", "admin"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let token = stdout(&out).trim().to_string();
    let mut a = support::serve::serve_with(&envs[0], &cfgs[0], dir.path(), &vars);
    let b_host = support::serve::serve_with(&envs[1], &cfgs[1], dir.path(), &vars);
    let port_of =
        |s: &support::serve::Server| s.base.rsplit(':').next().unwrap().parse::<u16>().unwrap();
    let backend = Arc::new(AtomicU16::new(port_of(&a)));
    let door = front_door(backend.clone());
    let base = format!("http://127.0.0.1:{door}");
    let driver = Driver::start();
    rt().block_on(async {
        let b = driver.browser(1280, 800).await;
        b.goto(&format!("{base}/#token={token}")).await.unwrap();
        until(&b, 20, "workspaces listed", "return document.querySelectorAll('[data-testid=workspace-select] option').length").await;
        b.find(Locator::Css("[data-testid=mode] option[value=ask]")).await.unwrap().click().await.unwrap();
        testid(&b, "instruction").await.send_keys("talk").await.unwrap();
        testid(&b, "send").await.click().await.unwrap();
        until(&b, 20, "streaming", "return (document.querySelector('.job [data-testid=answer]') || {}).textContent").await;
        // The host behind the address dies; the address now leads to the other.
        backend.store(port_of(&b_host), Ordering::SeqCst);
        a.child.kill().unwrap();
        a.child.wait().unwrap();
        until(&b, 40, "the job's end", "return document.querySelector('.job .status').textContent.match(/failed|cancelled|completed/)").await;
        let status = b.execute("return document.querySelector('.job .status').textContent", vec![]).await.unwrap();
        assert!(status.as_str().unwrap().starts_with("failed"), "{status}");
        let page = shown_once(&driver, &b, &Client::new(&b_host.base, &token)).await;
        let last = page["events"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(last["data"]["code"], "host_lost", "{last}");
        b.close().await.unwrap();
    });
}
