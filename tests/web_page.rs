//! The web page's own behaviour in real Chromium (SPEC 13 "Web UI"), served
//! by the real `serve` binary with a loopback model behind it: an approval
//! prompt never takes the keys typed for the instruction box; signing out
//! forgets the token and everything of that user, and a `#token=` pasted
//! into an open tab signs in; a job left behind in another session keeps
//! its review there; Stop and Esc cancel the running job; a failed job
//! says why; an apply says what it wrote; markdown quotes, tables, rules
//! and nested lists render as such. No console error anywhere.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use fantoccini::Locator;
use fantoccini::key::Key;
use serde_json::json;
use support::browser::{
    Driver, available, no_errors_then_close, send_with_enter, sign_in, testid, until,
};
use support::jobs::{NO_RETRY, config, config_with, project, sse};
use support::llm_server::{LlmServer, Reply, openai};
use support::serve::{Client, edit_then_answer, rt, serve};
use support::{Env, code, stderr, stdout};

/// A token stored for `name` with `role` (printed once by `serve token add`).
fn stored_token(env: &Env, name: &str, role: &str) -> String {
    let out = env
        .cmd()
        .args(["serve", "token", "add", name, "--role", role])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    stdout(&out).trim().to_string()
}

/// Signs in by pasting `token` into the form and pressing Sign in.
async fn sign_in_by_form(b: &fantoccini::Client, token: &str) {
    let field = b
        .wait()
        .at_most(Duration::from_secs(20))
        .for_element(Locator::Id("token"))
        .await
        .unwrap();
    field.send_keys(token).await.unwrap();
    b.find(Locator::Css("#login button[type=submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    until(
        b,
        20,
        "signed in",
        "return !document.getElementById('app').hidden && document.querySelectorAll('[data-testid=workspace-select] option').length",
    )
    .await;
}

/// An answer of `words` words streamed one every 40 ms.
fn slow_answer(words: usize) -> Reply {
    let words: Vec<String> = (0..words).map(|i| format!("w{i} ")).collect();
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    Reply::Slow {
        events: openai::text(&refs),
        delay_ms: 40,
    }
}

/// Picks Ask in the mode select.
async fn ask_mode(b: &fantoccini::Client) {
    b.find(Locator::Css("[data-testid=mode] option[value=ask]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

/// The id of the newest job on the page.
async fn last_job(b: &fantoccini::Client) -> String {
    let job = until(
        b,
        20,
        "a job",
        "const j = [...document.querySelectorAll('.job')].pop(); return j && j.dataset.jobId",
    )
    .await;
    job.as_str().unwrap().to_string()
}

/// The edit `edit_then_answer` proposes: `hello` -> `hola` in src/greet.rs.
fn greet_edit() -> String {
    json!({"edits": [
        {"file_path": "src/greet.rs", "operation": "replace", "start_line": 2, "end_line": 2,
         "old_text": "    println!(\"hello\");", "new_text": "    println!(\"hola\");\n"}
    ]})
    .to_string()
}

/// The approval prompt appears while the user types the next instruction:
/// the focus stays in the instruction box, the keys go on into it (a space
/// or an Enter there never answers the prompt), and nothing runs until a
/// deliberate click on Deny.
#[test]
fn an_approval_prompt_never_takes_the_keys_typed_for_the_instruction() {
    if !available() {
        return;
    }
    let env = Env::new();
    let dir = project();
    let call = json!({"command": "touch typed-through.txt"}).to_string();
    let again = json!({"command": "touch keyed-through.txt"}).to_string();
    let model = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "run_command", &call)])),
        sse(openai::text(&["Not run, then."])),
        sse(openai::tool_calls(&[("c2", "run_command", &again)])),
        sse(openai::text(&["Not run either."])),
    ]);
    let cfg = config(&env, "openai", &model.url(), "");
    let srv = serve(&env, &cfg, dir.path());
    let token = srv.token.clone().unwrap();
    let driver = Driver::start();
    rt().block_on(async {
        let b = driver.browser(1280, 800).await;
        sign_in(&b, &srv.base, &token).await;
        send_with_enter(&b, "run the command").await;
        let prompt = testid(&b, "approval").await;
        assert!(prompt.text().await.unwrap().contains("touch typed-through.txt"));
        tokio::time::sleep(Duration::from_millis(500)).await;
        let active = b.execute("return document.activeElement.id", vec![]).await.unwrap();
        assert_eq!(active, "instruction", "the prompt took the focus from the instruction box");
        // The user goes on typing (spaces too) where the focus is.
        b.active_element()
            .await
            .unwrap()
            .send_keys("and then tidy up")
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(800)).await;
        let typed = b
            .execute("return document.getElementById('instruction').value", vec![])
            .await
            .unwrap();
        assert_eq!(typed, "and then tidy up", "the keys went to the instruction box");
        let job = last_job(&b).await;
        let c = Client::new(&srv.base, &token);
        let (_, page) = c
            .get(&format!("/api/v1/agent/jobs/{job}/events?cursor=0"))
            .await;
        let resolved = page["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["type"] == "approval.resolved");
        assert!(!resolved, "typing answered the prompt: {page}");
        assert!(!dir.path().join("typed-through.txt").exists(), "the command ran");
        let text = testid(&b, "approval").await.text().await.unwrap();
        assert!(!text.contains("allowed") && !text.contains("denied"), "{text}");
        // A deliberate click decides.
        testid(&b, "deny").await.click().await.unwrap();
        until(&b, 20, "denied", "return (document.querySelector('[data-testid=approval]') || {textContent: ''}).textContent.includes('denied (')").await;
        until(&b, 20, "the answer", "return [...document.querySelectorAll('[data-testid=answer]')].some(a => a.textContent.includes('Not run, then.'))").await;
        assert!(!dir.path().join("typed-through.txt").exists(), "denied: nothing ran");
        // With nothing focused (the user clicked elsewhere), the prompt does
        // not take the keys either: Space and Enter decide nothing.
        send_with_enter(&b, "run another").await;
        b.execute("document.activeElement.blur()", vec![]).await.unwrap();
        until(&b, 20, "the second prompt", "return document.querySelectorAll('[data-testid=approval]').length === 2").await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        let active = b
            .execute("return document.activeElement.getAttribute('data-testid')", vec![])
            .await
            .unwrap();
        assert_ne!(active, "approve", "the prompt took the focus");
        let keys = format!(" {}", char::from(Key::Enter));
        b.active_element().await.unwrap().send_keys(&keys).await.unwrap();
        tokio::time::sleep(Duration::from_millis(800)).await;
        assert!(!dir.path().join("keyed-through.txt").exists(), "a key ran the command");
        let last = b
            .execute("return [...document.querySelectorAll('[data-testid=approval]')].pop().textContent", vec![])
            .await
            .unwrap();
        assert!(!last.as_str().unwrap_or_default().contains("allowed"), "{last}");
        no_errors_then_close(&driver, b).await;
    });
}

/// Sign out forgets the token (the form is empty: Sign in alone does not
/// sign back in) and everything of that user (chat, checkpoints, sessions,
/// review); the next user starts clean and works in a session of their
/// own. A `#token=` pasted into the open tab then signs in, and leaves the
/// address bar.
#[test]
fn signing_out_forgets_the_token_and_the_user_and_a_fragment_signs_in_again() {
    if !available() {
        return;
    }
    let env = Env::new();
    let dir = project();
    let alice = stored_token(&env, "alice", "admin");
    let bob = stored_token(&env, "bob", "user");
    let mut script = edit_then_answer();
    script.push(sse(openai::text(&["Hello bob."])));
    let model = LlmServer::start(script);
    let cfg = config(&env, "openai", &model.url(), "");
    let srv = serve(&env, &cfg, dir.path());
    let driver = Driver::start();
    rt().block_on(async {
        let b = driver.browser(1280, 800).await;
        b.goto(&format!("{}/", srv.base)).await.unwrap();
        sign_in_by_form(&b, &alice).await;
        // Alice changes a file: her chat, review and checkpoint are on screen.
        testid(&b, "instruction").await.send_keys("change it").await.unwrap();
        testid(&b, "send").await.click().await.unwrap();
        until(&b, 20, "a hunk", "return document.querySelectorAll('[data-testid=hunk]').length").await;
        testid(&b, "accept-file").await.click().await.unwrap();
        testid(&b, "apply").await.click().await.unwrap();
        testid(&b, "checkpoint").await;
        until(&b, 20, "the answer", "return [...document.querySelectorAll('[data-testid=answer]')].some(a => a.textContent.includes('changed'))").await;

        b.find(Locator::Id("signout")).await.unwrap().click().await.unwrap();
        until(&b, 5, "the form", "return !document.getElementById('login').hidden").await;
        let left = b
            .execute(
                "return {token: document.getElementById('token').value, stored: sessionStorage.length,
                  log: document.getElementById('log').textContent, sessions: document.querySelectorAll('#sessions li').length,
                  checkpoints: document.querySelectorAll('#checkpoints li').length, hunks: document.querySelectorAll('[data-testid=hunk]').length,
                  review: document.getElementById('review').hidden}",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(
            left,
            json!({"token": "", "stored": 0, "log": "", "sessions": 0, "checkpoints": 0, "hunks": 0, "review": true}),
            "something of alice stayed after sign-out"
        );
        // Sign in with nothing typed: still signed out.
        b.find(Locator::Css("#login button[type=submit]")).await.unwrap().click().await.unwrap();
        tokio::time::sleep(Duration::from_millis(700)).await;
        let app = b.execute("return document.getElementById('app').hidden && sessionStorage.length === 0", vec![]).await.unwrap();
        assert_eq!(app, true, "signed back in with no token typed");

        // Bob (a user) sees nothing of alice's, and works in his own session.
        sign_in_by_form(&b, &bob).await;
        tokio::time::sleep(Duration::from_millis(700)).await;
        let seen = b
            .execute(
                "return {log: document.getElementById('log').textContent, sessions: document.querySelectorAll('#sessions li').length,
                  checkpoints: document.querySelectorAll('#checkpoints li').length, review: document.getElementById('review').hidden}",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(seen, json!({"log": "", "sessions": 0, "checkpoints": 0, "review": true}), "bob sees alice's page");
        ask_mode(&b).await;
        send_with_enter(&b, "hello").await;
        until(&b, 20, "bob's answer", "return [...document.querySelectorAll('[data-testid=answer]')].some(a => a.textContent.includes('Hello bob.'))").await;
        let failed = b.execute("return document.querySelectorAll('.status.failed').length", vec![]).await.unwrap();
        assert_eq!(failed, 0, "bob's instruction failed");
        until(&b, 10, "bob's one session", "return document.querySelectorAll('#sessions li').length === 1").await;

        // Alice's token pasted into the address bar of this open tab.
        b.goto(&format!("{}/#token={alice}", srv.base)).await.unwrap();
        until(&b, 20, "alice's sessions", "return [...document.querySelectorAll('#sessions button')].some(s => s.textContent === 'change it')").await;
        let href = b.current_url().await.unwrap();
        assert!(!href.as_str().contains("token"), "{href}");
        let log = b.execute("return document.getElementById('log').textContent", vec![]).await.unwrap();
        assert_eq!(log, "", "bob's chat stayed");
        no_errors_then_close(&driver, b).await;
    });
}

/// A job left running in session A (the user opened a new session B)
/// never opens its review in B; opening A again brings the review back,
/// and it applies there.
#[test]
fn a_job_left_in_another_session_keeps_its_review_there() {
    if !available() {
        return;
    }
    let env = Env::new();
    let dir = project();
    let greet = dir.path().join("src/greet.rs");
    let edits = greet_edit();
    // The proposal takes a few seconds to arrive.
    let model = LlmServer::start(vec![
        Reply::Slow {
            events: openai::tool_calls(&[("c1", "propose_edits", &edits)]),
            delay_ms: 600,
        },
        sse(openai::text(&["Changed it."])),
    ]);
    let cfg = config(&env, "openai", &model.url(), "");
    let srv = serve(&env, &cfg, dir.path());
    let token = srv.token.clone().unwrap();
    let driver = Driver::start();
    rt().block_on(async {
        let b = driver.browser(1280, 800).await;
        sign_in(&b, &srv.base, &token).await;
        send_with_enter(&b, "change it").await;
        let job = last_job(&b).await;
        // Session B, while A's job still runs.
        b.find(Locator::Id("new-session")).await.unwrap().click().await.unwrap();
        until(&b, 10, "session B open", "const s = document.querySelector('#sessions button[aria-current=true]'); return s && s.textContent !== 'change it' && document.getElementById('log').children.length === 0").await;
        let c = Client::new(&srv.base, &token);
        c.wait_event(&job, 30, |e| e["type"] == "job.completed").await;
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let in_b = b
            .execute(
                "return {review: document.getElementById('review').hidden, hunks: document.querySelectorAll('[data-testid=hunk]').length,
                  log: document.getElementById('log').textContent}",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(in_b, json!({"review": true, "hunks": 0, "log": ""}), "A's job showed up in B");
        // Back in A: its review is there, and applies.
        b.execute("[...document.querySelectorAll('#sessions button')].find(s => s.textContent === 'change it').click()", vec![])
            .await
            .unwrap();
        until(&b, 20, "A's review", "return !document.getElementById('review').hidden && document.querySelectorAll('[data-testid=hunk]').length === 1").await;
        testid(&b, "accept-file").await.click().await.unwrap();
        testid(&b, "apply").await.click().await.unwrap();
        until(&b, 20, "applied", "const n = document.querySelector('[data-testid=applied]'); return n && n.textContent").await;
        assert!(std::fs::read_to_string(&greet).unwrap().contains("hola"), "the apply wrote");
        no_errors_then_close(&driver, b).await;
    });
}

/// A running job shows Stop; Stop cancels it (`POST …/jobs/{id}/cancel`),
/// and so does Esc in the instruction box.
#[test]
fn stop_and_esc_cancel_the_running_job() {
    if !available() {
        return;
    }
    let env = Env::new();
    let dir = project();
    let model = LlmServer::start(vec![slow_answer(300), slow_answer(300)]);
    let cfg = config(&env, "openai", &model.url(), "");
    let srv = serve(&env, &cfg, dir.path());
    let token = srv.token.clone().unwrap();
    let driver = Driver::start();
    rt().block_on(async {
        let b = driver.browser(1280, 800).await;
        sign_in(&b, &srv.base, &token).await;
        ask_mode(&b).await;
        let c = Client::new(&srv.base, &token);
        send_with_enter(&b, "talk").await;
        until(&b, 20, "streaming", "return (document.querySelector('.job [data-testid=answer]') || {}).textContent").await;
        let job = last_job(&b).await;
        until(&b, 5, "Stop shown", "const s = document.querySelector('[data-testid=stop]'); return s && !s.hidden").await;
        testid(&b, "stop").await.click().await.unwrap();
        c.wait_event(&job, 20, |e| e["type"] == "job.cancelled").await;
        until(&b, 20, "cancelled", "return (document.querySelector('.job .status') || {}).textContent === 'cancelled'").await;
        until(&b, 5, "Stop hidden", "return document.querySelector('[data-testid=stop]').hidden").await;

        // Esc in the instruction box.
        send_with_enter(&b, "talk again").await;
        until(&b, 20, "streaming again", "const j = document.querySelectorAll('.job'); return j.length === 2 && j[1].querySelector('[data-testid=answer]').textContent").await;
        let second = last_job(&b).await;
        assert_ne!(second, job);
        let active = b.execute("return document.activeElement.id", vec![]).await.unwrap();
        assert_eq!(active, "instruction");
        b.active_element()
            .await
            .unwrap()
            .send_keys(&char::from(Key::Escape).to_string())
            .await
            .unwrap();
        c.wait_event(&second, 20, |e| e["type"] == "job.cancelled").await;
        until(&b, 20, "cancelled by Esc", "return [...document.querySelectorAll('.job .status')].pop().textContent === 'cancelled'").await;
        no_errors_then_close(&driver, b).await;
    });
}

/// A failed job says what happened (`data.error`) and its kind
/// (`data.code`), not the code alone.
#[test]
fn a_failed_job_shows_its_error() {
    if !available() {
        return;
    }
    let env = Env::new();
    let dir = project();
    let model = LlmServer::start(vec![Reply::json(
        500,
        json!({"error": {"message": "model crashed on purpose", "type": "server_error"}}),
    )]);
    let cfg = config_with(&env, "openai", &model.url(), "", NO_RETRY);
    let srv = serve(&env, &cfg, dir.path());
    let token = srv.token.clone().unwrap();
    let driver = Driver::start();
    rt().block_on(async {
        let b = driver.browser(1280, 800).await;
        sign_in(&b, &srv.base, &token).await;
        ask_mode(&b).await;
        send_with_enter(&b, "hello").await;
        let job = last_job(&b).await;
        let status = until(&b, 30, "failed", "const s = (document.querySelector('.job .status') || {}).textContent || ''; return s.startsWith('failed') && s").await;
        let c = Client::new(&srv.base, &token);
        let failed = c.wait_event(&job, 10, |e| e["type"] == "job.failed").await;
        let error = failed["data"]["error"].as_str().unwrap();
        let kind = failed["data"]["code"].as_str().unwrap();
        assert!(error.contains("model crashed on purpose"), "{failed}");
        assert_eq!(status.as_str().unwrap(), format!("failed: {error} ({kind})"));
        no_errors_then_close(&driver, b).await;
    });
}

/// After Apply, a confirmation stays in the chat (the file written, the
/// checkpoint) and the job no longer says "awaiting review".
#[test]
fn an_apply_says_what_it_wrote_and_its_checkpoint() {
    if !available() {
        return;
    }
    let env = Env::new();
    let dir = project();
    let model = LlmServer::start(edit_then_answer());
    let cfg = config(&env, "openai", &model.url(), "");
    let srv = serve(&env, &cfg, dir.path());
    let token = srv.token.clone().unwrap();
    let driver = Driver::start();
    rt().block_on(async {
        let b = driver.browser(1280, 800).await;
        sign_in(&b, &srv.base, &token).await;
        send_with_enter(&b, "change it").await;
        until(&b, 20, "awaiting review", "return (document.querySelector('.job .status') || {}).textContent === 'awaiting review'").await;
        testid(&b, "accept-file").await.click().await.unwrap();
        testid(&b, "apply").await.click().await.unwrap();
        let said = until(&b, 20, "the confirmation shown", "const n = document.querySelector('#log [data-testid=applied]'); return n && n.offsetParent !== null && n.textContent").await;
        let said = said.as_str().unwrap();
        let checkpoint = until(&b, 20, "the checkpoint", "const c = document.querySelector('[data-testid=checkpoint]'); return c && c.dataset.checkpointId").await;
        let checkpoint = checkpoint.as_str().unwrap();
        assert!(said.contains("src/greet.rs"), "{said}");
        assert!(said.contains(&format!("checkpoint {checkpoint}")), "{said}");
        let status = b.execute("return document.querySelector('.job .status').textContent", vec![]).await.unwrap();
        let status = status.as_str().unwrap();
        assert!(!status.contains("awaiting review") && status.contains(checkpoint), "{status}");
        // It stays.
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(b.find(Locator::Css("#log [data-testid=applied]")).await.is_ok());
        no_errors_then_close(&driver, b).await;
    });
}

/// Markdown answers: a block quote, an aligned table (an HTML table), a
/// rule, and a bullet nested in an ordered list that stays nested (the
/// numbering goes on after it); a fence indented under a list item is a
/// code block in that item (no ``` left as text); `#####` is an <h5>; a
/// line ending in two spaces breaks; a link is readable on the dark
/// background (contrast at least 4.5:1); the model's HTML stays text.
#[test]
fn markdown_quotes_tables_rules_and_nested_lists() {
    if !available() {
        return;
    }
    const MD: &str = "Intro line.\n\n> a quoted line\n> continues here\n\n| col a | col b |\n|:------|------:|\n| 1 | two |\n| 3 | four |\n\n1. first item\n2. second item\n   - nested bullet\n3. third item\n   ```sh\n   cargo build --release\n   ```\n\n---\n\n##### Heading five\nsnake_case_name  \nafter the break and [a link](https://example.com/docs).\n\nLast with <b>html</b> and <script>alert(1)</script>.\n";
    let env = Env::new();
    let dir = project();
    let model = LlmServer::start(vec![sse(openai::text(&[&MD[..60], &MD[60..]]))]);
    let cfg = config(&env, "openai", &model.url(), "");
    let srv = serve(&env, &cfg, dir.path());
    let token = srv.token.clone().unwrap();
    let driver = Driver::start();
    rt().block_on(async {
        let b = driver.browser(1280, 800).await;
        sign_in(&b, &srv.base, &token).await;
        ask_mode(&b).await;
        send_with_enter(&b, "show me markdown").await;
        until(&b, 20, "completed", "return (document.querySelector('.job .status') || {}).textContent === 'completed'").await;
        // The answer is drawn on the next frame after the status: the
        // whole of it, its link included.
        until(
            &b,
            20,
            "answer drawn",
            "const a = document.querySelector('.job [data-testid=answer]'); \
             return !!(a && a.querySelector('a') && a.textContent.includes('Last with'))",
        )
        .await;
        let got = b
            .execute(
                "const a = document.querySelector('.job [data-testid=answer]');
                 return {
                   quote: a.querySelector('blockquote') && a.querySelector('blockquote').textContent.trim(),
                   heads: [...a.querySelectorAll('table thead th')].map(t => t.textContent),
                   rows: [...a.querySelectorAll('table tbody tr')].map(r => [...r.cells].map(c => c.textContent)),
                   right: [...a.querySelectorAll('table tbody td')].map(t => getComputedStyle(t).textAlign),
                   rules: a.querySelectorAll('hr').length,
                   top: [...a.querySelectorAll(':scope > ol > li')].map(li => li.firstChild.textContent),
                   nested: [...a.querySelectorAll(':scope > ol > li > ul > li')].map(li => li.textContent),
                   html: a.querySelectorAll('script, b').length,
                   raw: [...a.querySelectorAll('p')].some(p => /^(>|\\||---)/.test(p.textContent)),
                   text: a.textContent.includes('<script>alert(1)</script>'),
                   fenced: [...a.querySelectorAll(':scope > ol > li > pre > code')].map(c => [c.closest('li').firstChild.textContent, c.dataset.lang, c.textContent]),
                   fences: [...a.querySelectorAll('li, p')].some(n => n.textContent.includes('```')),
                   h5: [...a.querySelectorAll('h5')].map(h => h.textContent),
                   hashes: a.textContent.includes('#####'),
                   broken: [...a.querySelectorAll('p')].filter(p => p.querySelector('br')).map(p => [...p.childNodes].map(n => n.nodeName === 'BR' ? '<br>' : n.textContent).join('')),
                   link: [...a.querySelectorAll('a')].map(l => [l.textContent, l.getAttribute('href')]),
                   contrast: (() => {
                     const lum = (c) => {
                       const [r, g, b] = c.match(/[\\d.]+/g).slice(0, 3).map(Number).map(v => v / 255)
                         .map(v => v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4));
                       return 0.2126 * r + 0.7152 * g + 0.0722 * b;
                     };
                     const link = lum(getComputedStyle(a.querySelector('a')).color);
                     const bg = lum(getComputedStyle(document.documentElement).backgroundColor);
                     return (Math.max(link, bg) + 0.05) / (Math.min(link, bg) + 0.05) >= 4.5 && link > bg;
                   })(),
                 };",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(
            got,
            json!({
                "quote": "a quoted line continues here",
                "heads": ["col a", "col b"],
                "rows": [["1", "two"], ["3", "four"]],
                "right": ["left", "right", "left", "right"],
                "rules": 1,
                "top": ["first item", "second item", "third item"],
                "nested": ["nested bullet"],
                "html": 0,
                "raw": false,
                "text": true,
                "fenced": [["third item", "sh", "cargo build --release"]],
                "fences": false,
                "h5": ["Heading five"],
                "hashes": false,
                "broken": ["snake_case_name<br>after the break and a link."],
                "link": [["a link", "https://example.com/docs"]],
                "contrast": true,
            }),
            "the markdown as rendered"
        );
        no_errors_then_close(&driver, b).await;
    });
}

/// The code search box: ranked files with why and their best lines, from
/// the workspace's index; a regex that does not compile... is text here.
#[test]
fn the_code_search_box_lists_ranked_files_with_why() {
    if !available() {
        return;
    }
    let env = Env::new();
    let dir = project();
    let model = LlmServer::start(vec![sse(openai::text(&["ok"]))]);
    let cfg = config(&env, "openai", &model.url(), "");
    let srv = serve(&env, &cfg, dir.path());
    let token = srv.token.clone().unwrap();
    let driver = Driver::start();
    rt().block_on(async {
        let b = driver.browser(1280, 800).await;
        sign_in(&b, &srv.base, &token).await;
        let input = b.find(Locator::Css("[data-testid=code-query]")).await.unwrap();
        input.send_keys("greet hello").await.unwrap();
        input.send_keys(&Key::Enter.to_string()).await.unwrap();
        let first = until(&b, 30, "results", "const r = document.querySelector('[data-testid=code-result]'); return r && r.dataset.path").await;
        assert_eq!(first.as_str().unwrap(), "src/greet.rs");
        let text = until(&b, 5, "why and lines", "const r = document.querySelector('[data-testid=code-result]'); return r && r.textContent").await;
        let text = text.as_str().unwrap();
        assert!(text.contains("defines: greet"), "{text}");
        assert!(text.contains("println!(\"hello\")"), "{text}");
        let status = until(&b, 5, "status", "return document.getElementById('code-status').textContent").await;
        assert!(status.as_str().unwrap().contains("indexed"), "{status}");
        no_errors_then_close(&driver, b).await;
    });
}

/// While a job runs, Enter in the instruction box steers it (the page
/// shows the words where the model read them) and the Queue button runs
/// the text after it (SPEC 19).
#[test]
fn enter_steers_a_running_job_and_queue_runs_the_text_after_it() {
    if !available() {
        return;
    }
    let env = Env::new();
    let dir = project();
    let model = LlmServer::start(vec![
        slow_answer(80),
        sse(openai::text(&["Steered answer."])),
        sse(openai::text(&["Queued answer."])),
    ]);
    let cfg = config(&env, "openai", &model.url(), "");
    let srv = serve(&env, &cfg, dir.path());
    let token = srv.token.clone().unwrap();
    let driver = Driver::start();
    rt().block_on(async {
        let b = driver.browser(1280, 800).await;
        sign_in(&b, &srv.base, &token).await;
        ask_mode(&b).await;
        // Notifications: never asked on load; asked once, at the first send.
        let asked = b
            .execute(
                "window.__asked = 0; if (window.Notification) { Notification.requestPermission = () => { window.__asked++; return Promise.resolve('default'); }; } return state.askedNotify;",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(asked, json!(false));
        send_with_enter(&b, "talk").await;
        until(&b, 20, "streaming", "return (document.querySelector('.job [data-testid=answer]') || {}).textContent").await;
        until(&b, 5, "Queue shown", "const q = document.querySelector('[data-testid=queue]'); return q && !q.hidden").await;
        send_with_enter(&b, "and mention the tests").await;
        testid(&b, "instruction")
            .await
            .send_keys("then the README")
            .await
            .unwrap();
        testid(&b, "queue").await.click().await.unwrap();
        until(&b, 20, "steer shown", "const s = document.querySelector('[data-testid=steer]'); return s && s.textContent.includes('and mention the tests')").await;
        until(&b, 30, "the queued run answered", "return [...document.querySelectorAll('.job [data-testid=answer]')].some(a => a.textContent.includes('Queued answer.'))").await;
        until(&b, 5, "Queue hidden", "return document.querySelector('[data-testid=queue]').hidden").await;
        let asked = b.execute("return window.__asked", vec![]).await.unwrap();
        assert_eq!(asked, json!(1), "asked once for three sends");
        no_errors_then_close(&driver, b).await;
    });
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    let second = requests[1].body["messages"].to_string();
    assert!(second.contains("and mention the tests"), "{second}");
    let third = requests[2].body["messages"].to_string();
    assert!(
        third.contains("then the README") && third.contains("Steered answer."),
        "{third}"
    );
}

/// A streamed answer is drawn block by block: in any split into pieces,
/// what is drawn at the end is the same DOM as the whole text drawn at
/// once (loose lists, fences with blank lines, lists holding fences,
/// tables, quotes), and a long answer keeps only its last block open (the
/// finished ones are laid out once).
#[test]
fn a_streamed_answer_draws_as_the_whole_and_keeps_only_its_last_block_open() {
    if !available() {
        return;
    }
    let env = Env::new();
    let dir = project();
    let model = LlmServer::start(vec![]);
    let cfg = config(&env, "openai", &model.url(), "");
    let srv = serve(&env, &cfg, dir.path());
    let token = srv.token.clone().unwrap();
    let driver = Driver::start();
    rt().block_on(async {
        let b = driver.browser(1280, 800).await;
        sign_in(&b, &srv.base, &token).await;
        let docs = json!([
            "Intro line.\n\n> a quoted line\n> continues here\n\n| col a | col b |\n|:------|------:|\n| 1 | two |\n\n1. first item\n2. second item\n   - nested bullet\n3. third item\n   ```sh\n   cargo build\n\n   cargo test\n   ```\n\n---\n\n##### Heading five\nsnake  \nafter.\n",
            "- a\n\n- b\n\n  more of b\n\nafter the list\n\n```rust\nfn main() {\n\n    println!(\"hi\");\n}\n```\n\ntext after the fence\n",
            "1. one\n\n2. two\n\n\n3. three\n\nplain\n    indented\n\n~~~\n~~~~\n\n~~~\n\nend",
            "para one\nstill one\n\npara two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n> q\n\n> r\n"
        ]);
        let same = b
            .execute(
                "const docs = arguments[0];
                 const html = (src) => { const d = document.createElement('div'); d.append(markdown(src)); return d.innerHTML; };
                 const out = [];
                 for (const doc of docs) {
                   for (const size of [1, 2, 3, 7, 16, 64, 1000]) {
                     const node = document.createElement('div');
                     const drawn = new StreamedMarkdown(node);
                     let text = '';
                     for (let i = 0; i < doc.length; i += size) { text += doc.slice(i, i + size); drawn.show(text); }
                     if (node.innerHTML !== html(doc)) out.push([size, doc.slice(0, 20), node.innerHTML, html(doc)]);
                   }
                 }
                 return out;",
                vec![docs],
            )
            .await
            .unwrap();
        assert_eq!(same, json!([]), "streamed and whole differ");
        let open = b
            .execute(
                "const node = document.createElement('div');
                 const drawn = new StreamedMarkdown(node);
                 let text = '';
                 for (let i = 0; i < 2000; i++) { text += `Paragraph ${i} with **bold** and \\`code\\`.\\n\\n`; drawn.show(text); }
                 text += 'the last one, open';
                 drawn.show(text);
                 return [text.length - drawn.done, node.querySelectorAll('p').length];",
                vec![],
            )
            .await
            .unwrap();
        assert!(open[0].as_u64().unwrap() < 80, "{open}");
        assert_eq!(open[1], 2001, "{open}");
        // A burst drawn a frame at a time: no frame lays out more than
        // the page's share of new text (a line longer than that whole),
        // and the end is the same DOM as the whole text at once.
        let frames = b
            .execute(
                "const node = document.createElement('div');
                 const drawn = new StreamedMarkdown(node);
                 let text = 'x'.repeat(5000) + '\\n\\n';
                 for (let i = 0; i < 3000; i++) text += `Paragraph ${i} with **bold** words.\\n\\n`;
                 const steps = [];
                 let part = '';
                 while (part !== text && steps.length < 1000) {
                   const before = part.length;
                   part = drawn.within(text, 4096);
                   drawn.show(part);
                   steps.push(part.length - before);
                 }
                 const whole = document.createElement('div');
                 whole.append(markdown(text));
                 return [steps, node.innerHTML === whole.innerHTML];",
                vec![],
            )
            .await
            .unwrap();
        let steps: Vec<u64> = frames[0]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert_eq!(frames[1], true, "a burst drawn in frames differs from the whole");
        assert!(steps.len() > 20, "{steps:?}");
        assert!(steps[0] >= 5000, "a long first line is drawn whole: {steps:?}");
        assert!(steps[1..].iter().all(|&n| n <= 4096 + 80), "{steps:?}");
        no_errors_then_close(&driver, b).await;
    });
}
