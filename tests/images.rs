//! Images with an instruction (SPEC 20), through the real binary against
//! loopback model servers: `exec --image` sends the exact bytes as an
//! OpenAI `image_url` data URL and as an Anthropic base64 block; a model
//! that cannot see (`vision = false`, a llama.cpp `/props` without vision)
//! fails before any chat request; a too-large or unknown file is refused
//! with what it was; a continued session sends its images again, read
//! back from the store.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::{Value, json};
use support::Env;
use support::jobs::{config, exec, project, sse};
use support::llm_server::{LlmServer, anthropic, openai};

fn red_png() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/images/red.png")
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The model calls' bodies.
fn calls(server: &LlmServer) -> Vec<Value> {
    server
        .requests()
        .into_iter()
        .filter(|r| r.is_model_call())
        .map(|r| r.body)
        .collect()
}

/// The last user message of a chat body.
fn last_user(body: &Value) -> Value {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .cloned()
        .unwrap()
}

fn image_arg(path: &Path) -> String {
    path.display().to_string()
}

#[test]
fn exec_sends_the_exact_bytes_as_an_openai_data_url() {
    let env = Env::new();
    let dir = project();
    let server = LlmServer::start(vec![sse(openai::text(&["A red square."]))]);
    let cfg = config(&env, "openai", &server.url(), "vision = true");
    let png = std::fs::read(red_png()).unwrap();
    let run = exec(
        &env,
        &cfg,
        dir.path(),
        &[
            "--image",
            &image_arg(&red_png()),
            "What is in this picture?",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("image red.png · PNG 4×3 · 73 B"),
        "{}",
        run.stderr
    );
    let bodies = calls(&server);
    assert_eq!(bodies.len(), 1);
    let user = last_user(&bodies[0]);
    assert_eq!(
        user["content"],
        json!([
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{}", b64(&png))}},
            {"type": "text", "text": "What is in this picture?"}
        ]),
        "{user}"
    );
}

#[test]
fn exec_sends_the_exact_bytes_as_an_anthropic_base64_block() {
    let env = Env::new();
    let dir = project();
    let server = LlmServer::start(vec![sse(anthropic::text(&["A red square."]))]);
    let cfg = config(&env, "anthropic", &server.url(), "");
    let png = std::fs::read(red_png()).unwrap();
    let run = exec(
        &env,
        &cfg,
        dir.path(),
        &["--image", &image_arg(&red_png()), "Describe it."],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let bodies = calls(&server);
    assert_eq!(bodies.len(), 1);
    let user = last_user(&bodies[0]);
    assert_eq!(
        user["content"],
        json!([
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(&png)}},
            {"type": "text", "text": "Describe it."}
        ]),
        "{user}"
    );
}

#[test]
fn a_model_that_cannot_see_fails_before_any_chat_request() {
    let env = Env::new();
    let dir = project();
    let image = image_arg(&red_png());
    // Said in the config.
    let server = LlmServer::start(vec![sse(openai::text(&["never"]))]);
    let cfg = config(&env, "openai", &server.url(), "vision = false");
    let run = exec(&env, &cfg, dir.path(), &["--image", &image, "Look."]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("model test-model of provider test cannot see images (vision = false in [providers.test])"),
        "{}",
        run.stderr
    );
    assert!(calls(&server).is_empty());

    // Said by llama.cpp's /props (the models list says nothing of images).
    let paths = |vision: bool| {
        [
            (
                "/v1/models",
                json!({"object": "list", "data": [{"id": "test-model"}]}),
            ),
            (
                "/props",
                json!({"default_generation_settings": {"n_ctx": 4096}, "modalities": {"vision": vision}}),
            ),
        ]
    };
    let blind = LlmServer::start_with_paths(vec![sse(openai::text(&["never"]))], &paths(false));
    let cfg = config(&env, "openai", &blind.url(), "");
    let run = exec(&env, &cfg, dir.path(), &["--image", &image, "Look."]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("cannot see images (llama.cpp /props modalities.vision)"),
        "{}",
        run.stderr
    );
    assert!(calls(&blind).is_empty());
    assert!(
        blind.side_requests().iter().any(|r| r.path == "/props"),
        "/props was asked"
    );
    // The same server with vision: the request goes.
    let seeing = LlmServer::start_with_paths(vec![sse(openai::text(&["Red."]))], &paths(true));
    let cfg = config(&env, "openai", &seeing.url(), "");
    let run = exec(&env, &cfg, dir.path(), &["--image", &image, "Look."]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(calls(&seeing).len(), 1);
    // llama-cpp-python says nothing of images, and a text model's template
    // breaks on them: taken as blind unless the config says it sees.
    let lcp = [(
        "/v1/models",
        json!({"object": "list", "data": [{"id": "test-model", "object": "model", "owned_by": "me", "permissions": []}]}),
    )];
    let python = LlmServer::start_with_paths(vec![sse(openai::text(&["never"]))], &lcp);
    let cfg = config(&env, "openai", &python.url(), "");
    let run = exec(&env, &cfg, dir.path(), &["--image", &image, "Look."]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("cannot see images (llama-cpp-python"),
        "{}",
        run.stderr
    );
    assert!(calls(&python).is_empty());
    // Without images, a blind model answers as before.
    let run = exec(
        &env,
        &config(&env, "openai", &blind.url(), ""),
        dir.path(),
        &["Hello."],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn a_large_or_unknown_file_is_refused_with_what_it_was() {
    let env = Env::new();
    let dir = project();
    let server = LlmServer::start(vec![]);
    let cfg = config(&env, "openai", &server.url(), "vision = true");
    let big = dir.path().join("big.png");
    let mut bytes = std::fs::read(red_png()).unwrap();
    bytes.resize(6 * 1024 * 1024, 0);
    std::fs::write(&big, &bytes).unwrap();
    let run = exec(
        &env,
        &cfg,
        dir.path(),
        &["--image", &image_arg(&big), "Look."],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("big.png is 6.0 MB and images are limited to 5.0 MB"),
        "{}",
        run.stderr
    );
    let notes = dir.path().join("notes.png");
    std::fs::write(&notes, "plain text, not a picture").unwrap();
    let run = exec(
        &env,
        &cfg,
        dir.path(),
        &["--image", &image_arg(&notes), "Look."],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("is not a PNG, JPEG, GIF or WebP image"),
        "{}",
        run.stderr
    );
    let run = exec(
        &env,
        &cfg,
        dir.path(),
        &["--image", "/nowhere/x.png", "Look."],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("/nowhere/x.png: cannot be read"),
        "{}",
        run.stderr
    );
    assert!(server.requests().is_empty());
}

#[test]
fn a_continued_session_sends_its_image_again_from_the_store() {
    let env = Env::new();
    let dir = project();
    let server = LlmServer::start(vec![
        sse(openai::text(&["A red square."])),
        sse(openai::text(&["Still red."])),
    ]);
    let cfg = config(&env, "openai", &server.url(), "vision = true");
    let png = std::fs::read(red_png()).unwrap();
    let run = exec(
        &env,
        &cfg,
        dir.path(),
        &["--image", &image_arg(&red_png()), "What colour?"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = exec(&env, &cfg, dir.path(), &["--continue", "And now?"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let bodies = calls(&server);
    assert_eq!(bodies.len(), 2);
    let second = bodies[1]["messages"].to_string();
    assert!(
        second.contains(&format!("data:image/png;base64,{}", b64(&png))),
        "{second}"
    );
    // The session's records name the image; its bytes are kept once, apart.
    let records = env.session_text();
    assert!(records.contains("\"sha256\""), "{records}");
    assert!(
        !records.contains(&b64(&png)),
        "bytes are not in the records"
    );
}

/// The images of a chat body's user turns, as `data:` URLs.
fn data_urls(body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for m in body["messages"].as_array().unwrap() {
        for part in m["content"].as_array().into_iter().flatten() {
            if let Some(url) = part["image_url"]["url"].as_str() {
                out.push(url.to_string());
            }
        }
    }
    out
}

#[test]
fn a_server_run_takes_base64_images_and_workspace_paths() {
    use support::serve::{Client, error_code, rt, serve};
    let env = Env::new();
    let dir = project();
    let png = std::fs::read(red_png()).unwrap();
    std::fs::create_dir_all(dir.path().join("shots")).unwrap();
    std::fs::write(dir.path().join("shots/red.png"), &png).unwrap();
    let server = LlmServer::start(vec![sse(openai::text(&["Two red squares."]))]);
    let cfg = config(&env, "openai", &server.url(), "vision = true");
    let srv = serve(&env, &cfg, dir.path());
    let c = Client::new(&srv.base, srv.token.as_deref().unwrap());
    rt().block_on(async {
        let (status, s) = c
            .post("/api/v1/agent/sessions", json!({"workspace_id": "default"}))
            .await;
        assert_eq!(status, 201, "{s}");
        let session = s["session_id"].as_str().unwrap();
        let run = |extra: Value| {
            let mut body = json!({"session_id": session, "instruction": "compare", "mode": "ask"});
            body.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            body
        };
        // Refused before anything is kept, each saying why.
        let refused = [
            (
                json!({"images": [{"name": "x.png", "data_base64": b64(b"not an image")}]}),
                "x.png is not a PNG, JPEG, GIF or WebP image",
            ),
            (
                json!({"images": [{"name": "x.png", "data_base64": "%%%"}]}),
                "x.png: data_base64 is not base64",
            ),
            (json!({"image_paths": ["../outside.png"]}), "../outside.png"),
            (json!({"image_paths": ["shots/none.png"]}), "shots/none.png"),
        ];
        for (extra, said) in refused {
            let (status, body) = c.post("/api/v1/agent/run", run(extra)).await;
            assert_eq!(status, 400, "{body}");
            assert_eq!(error_code(&body), "invalid", "{body}");
            assert!(body.to_string().contains(said), "{said}: {body}");
        }
        let big = b64(&vec![0u8; 5 * 1024 * 1024 + 10]);
        let (status, body) = c
            .post(
                "/api/v1/agent/run",
                run(json!({"images": [{"name": "big.png", "data_base64": big}]})),
            )
            .await;
        assert_eq!(status, 400, "{body}");
        assert!(
            body.to_string().contains("images are limited to 5.0 MB"),
            "{body}"
        );
        let extra = json!({
            "images": [{"name": "pasted.png", "media_type": "image/png", "data_base64": b64(&png)}],
            "image_paths": ["shots/red.png"],
        });
        let (status, body) = c.post("/api/v1/agent/run", run(extra)).await;
        assert_eq!(status, 202, "{body}");
        let job = body["job_id"].as_str().unwrap();
        let started = c.wait_event(job, 20, |e| e["type"] == "job.started").await;
        let names: Vec<&str> = started["data"]["images"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["pasted.png", "shots/red.png"], "{started}");
        c.wait_event(job, 20, |e| e["type"] == "job.completed")
            .await;
        let (status, shown) = c.get(&format!("/api/v1/agent/sessions/{session}")).await;
        assert_eq!(status, 200, "{shown}");
        assert_eq!(shown["jobs"][0]["images"][1]["width"], 4, "{shown}");
        assert_eq!(
            shown["chat"][0]["images"][0]["name"], "pasted.png",
            "{shown}"
        );
    });
    let bodies = calls(&server);
    assert_eq!(bodies.len(), 1, "refused runs asked nobody");
    let url = format!("data:image/png;base64,{}", b64(&png));
    assert_eq!(data_urls(&bodies[0]), vec![url.clone(), url]);
}

#[test]
fn the_web_page_attaches_an_image_and_shows_its_chip_again_when_reopened() {
    use support::browser::{
        Driver, available, no_errors_then_close, send_with_enter, sign_in, until,
    };
    use support::serve::{rt, serve};
    if !available() {
        return;
    }
    let env = Env::new();
    let dir = project();
    let png = std::fs::read(red_png()).unwrap();
    let server = LlmServer::start(vec![sse(openai::text(&["Red on the page."]))]);
    let cfg = config(&env, "openai", &server.url(), "vision = true");
    let srv = serve(&env, &cfg, dir.path());
    let token = srv.token.clone().unwrap();
    let driver = Driver::start();
    rt().block_on(async {
        let b = driver.browser(1280, 800).await;
        sign_in(&b, &srv.base, &token).await;
        // The file input, given a file as a user's pick gives it.
        let script = format!(
            "const bytes = Uint8Array.from(atob('{}'), c => c.charCodeAt(0)); \
             const dt = new DataTransfer(); \
             dt.items.add(new File([bytes], 'red.png', {{type: 'image/png'}})); \
             const input = document.querySelector('[data-testid=image-file]'); \
             input.files = dt.files; input.dispatchEvent(new Event('change'));",
            b64(&png)
        );
        b.execute(&script, vec![]).await.unwrap();
        let chip = until(
            &b,
            10,
            "attached chip",
            "const c = document.querySelector('[data-testid=attached-chip]'); return c && c.textContent",
        )
        .await;
        assert!(chip.to_string().contains("red.png · 73 B"), "{chip}");
        b.execute("document.querySelector('[data-testid=mode]').value = 'ask';", vec![])
            .await
            .unwrap();
        send_with_enter(&b, "what colour is it?").await;
        until(
            &b,
            20,
            "answered",
            "return [...document.querySelectorAll('.job [data-testid=answer]')].some(a => a.textContent.includes('Red on the page.'))",
        )
        .await;
        let left = b
            .execute("return document.querySelectorAll('[data-testid=attached-chip]').length", vec![])
            .await
            .unwrap();
        assert_eq!(left.to_string(), "0", "sent images leave the box");
        // Opened again (a reload, then the session picked): the message
        // shows its image's chip.
        b.execute("location.reload()", vec![]).await.unwrap();
        until(
            &b,
            20,
            "session listed",
            "const s = document.querySelector('[data-session-id]'); if (s) s.click(); return !!s",
        )
        .await;
        let shown = until(
            &b,
            20,
            "chip after reopening",
            "const c = document.querySelector('.you [data-testid=image-chip]'); return c && c.textContent",
        )
        .await;
        assert!(shown.to_string().contains("red.png · PNG 4×3 · 73 B"), "{shown}");
        no_errors_then_close(&driver, b).await;
    });
    let bodies = calls(&server);
    assert_eq!(
        data_urls(&bodies[0]),
        vec![format!("data:image/png;base64,{}", b64(&png))]
    );
}
