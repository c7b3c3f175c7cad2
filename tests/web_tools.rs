//! The rest of SPEC 20's web tools through the binary, against local
//! servers only: a page fetched again is asked for conditionally (its ETag)
//! and a 304 gives the kept copy; `web_search` asks the configured SearXNG
//! and is offered only with one; `/web URL` in the TUI pins a page, which
//! the model then reads without the user being asked again.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};
use support::Env;
use support::jobs::{config, project, sse};
use support::llm_server::{LlmServer, Reply, openai};
use support::serve::add_config;

const PAGE: &str =
    "<html><body><main><h1>Changelog</h1><p>Version 3 is out.</p></main></body></html>";

/// `agent-tui tool NAME ARGS` in a fresh project: exit code and JSON.
fn tool(env: &Env, cfg: &std::path::Path, name: &str, args: Value) -> (i32, Value) {
    env.tool_in(cfg, project().path(), name, &args.to_string())
}

#[test]
fn a_page_fetched_again_is_asked_for_by_its_etag_and_a_304_gives_the_kept_copy() {
    let env = Env::new();
    let server = LlmServer::start_with_side(
        vec![],
        vec![
            Reply::Status {
                code: 200,
                headers: vec![
                    ("Content-Type".into(), "text/html".into()),
                    ("ETag".into(), "\"v1\"".into()),
                    (
                        "Last-Modified".into(),
                        "Wed, 21 Oct 2026 07:28:00 GMT".into(),
                    ),
                ],
                body: PAGE.into(),
            },
            Reply::Status {
                code: 304,
                headers: vec![("ETag".into(), "\"v1\"".into())],
                body: String::new(),
            },
        ],
    );
    let cfg = config(&env, "openai", "http://127.0.0.1:9", "");
    add_config(
        &cfg,
        &format!("[web]\nallow_private = [\"127.0.0.1:{}\"]\n", server.port()),
    );
    let url = format!("{}/changelog", server.url());
    let (code, first) = tool(&env, &cfg, "web_fetch", json!({ "url": url }));
    assert_eq!(code, 0, "{first}");
    let (code, second) = tool(&env, &cfg, "web_fetch", json!({ "url": url }));
    assert_eq!(code, 0, "{second}");
    assert_eq!(second["markdown"], first["markdown"]);
    assert_eq!(second["sha256"], first["sha256"]);
    assert_eq!(second["status"], 200);
    assert!(
        first["markdown"]
            .as_str()
            .unwrap()
            .contains("Version 3 is out.")
    );
    let asked = server.side_requests();
    assert_eq!(asked.len(), 2);
    assert_eq!(asked[0].header("if-none-match"), None);
    assert_eq!(asked[1].header("if-none-match"), Some("\"v1\""));
    assert_eq!(
        asked[1].header("if-modified-since"),
        Some("Wed, 21 Oct 2026 07:28:00 GMT")
    );
}

#[test]
fn web_search_asks_the_configured_searxng_and_is_offered_only_with_one() {
    let env = Env::new();
    let searx = LlmServer::start_with_side(
        vec![],
        vec![Reply::json(
            200,
            json!({"query": "tokio runtime", "results": [
                {"title": "Tokio docs", "url": "https://docs.rs/tokio", "content": "An asynchronous runtime."},
                {"title": "Other", "url": "https://example.org/", "content": "x"}
            ]}),
        )],
    );
    let cfg = config(&env, "openai", "http://127.0.0.1:9", "");
    let out = env
        .cmd()
        .args(["--config", cfg.to_str().unwrap(), "tool", "--list"])
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(list.contains("web_fetch"), "{list}");
    assert!(
        !list.contains("web_search"),
        "not offered without a service: {list}"
    );
    add_config(
        &cfg,
        &format!("[web]\nsearch_url = \"{}/search\"\n", searx.url()),
    );
    let (code, v) = tool(
        &env,
        &cfg,
        "web_search",
        json!({"query": "tokio runtime", "limit": 1}),
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        v["results"],
        json!([{"title": "Tokio docs", "url": "https://docs.rs/tokio", "snippet": "An asynchronous runtime."}])
    );
    let asked = &searx.side_requests()[0];
    assert!(asked.path.contains("q=tokio+runtime"), "{}", asked.path);
    assert!(asked.path.contains("format=json"), "{}", asked.path);
}

#[test]
fn web_pins_a_page_in_the_tui_and_the_model_reads_it_unasked() {
    let env = Env::new();
    let dir = project();
    let page = LlmServer::start_with_side(vec![], vec![Reply::html(PAGE)]);
    let url = format!("{}/changelog", page.url());
    let model = LlmServer::start(vec![
        sse(openai::tool_calls(&[(
            "c1",
            "web_fetch",
            &json!({ "url": url }).to_string(),
        )])),
        sse(openai::text(&["Version 3 shipped."])),
    ]);
    let cfg = config(&env, "openai", &model.url(), "");
    add_config(
        &cfg,
        &format!("[web]\nallow_private = [\"127.0.0.1:{}\"]\n", page.port()),
    );
    let tmux = support::tmux::start_agent(&env, &cfg, dir.path(), "webpin", "");
    tmux.wait_for("F1 help");
    tmux.keys(&["-l", &format!("/web {url}")]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Pinned http://127.0.0.1");
    tmux.keys(&["-l", "what changed?"]);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("Version 3 shipped.");
    assert!(!screen.contains("Allow"), "nothing was asked: {screen}");
    let first = model.requests()[0].body["messages"].to_string();
    assert!(first.contains("read them with web_fetch"), "{first}");
    assert!(first.contains(&url), "{first}");
    assert_eq!(page.side_requests().len(), 1);
    let second = model.requests()[1].body["messages"].to_string();
    assert!(second.contains("Version 3 is out."), "{second}");
}
