//! `web_fetch` (SPEC 20) through the binary, against local servers only: a
//! page becomes clean Markdown; addresses that are not public are refused
//! before anything connects (the servers count no hit), redirects included;
//! addresses beyond loopback (the metadata address, 10.x) are tried only
//! inside an empty network namespace (`unshare -n`), so that even a wrong
//! build could not send them a packet; the approval tier and the audit.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use support::Env;
use support::jobs::{config, project, sse};
use support::llm_server::{LlmServer, Reply, openai};
use support::serve::add_config;

const PAGE: &str = r#"<!doctype html><html><head><title>Notes</title>
<style>.x { color: red }</style><script>document.write("tracking")</script></head>
<body><nav><a href="/">Home</a> | <a href="/blog">Blog</a></nav>
<h1>Release 2.0</h1>
<p>Read <a href="https://example.org/guide">the guide</a> first.</p>
<h2>Changes</h2><ul><li>faster <code>parse()</code></li><li>new API</li></ul>
<table><thead><tr><th>Option</th><th>Default</th></tr></thead>
<tbody><tr><td>depth</td><td>3</td></tr></tbody></table>
<pre><code>cargo add thing@2</code></pre>
<footer>© 2026</footer></body></html>"#;

/// A config whose `[web]` lets the test's page server be fetched.
fn allowing(env: &Env, port: u16, extra: &str) -> std::path::PathBuf {
    let cfg = config(env, "openai", "http://127.0.0.1:9", "");
    add_config(
        &cfg,
        &format!("[web]\nallow_private = [\"127.0.0.1:{port}\"]\n{extra}"),
    );
    cfg
}

/// `agent-tui tool web_fetch ARGS` (optionally in an empty network
/// namespace): its exit code and JSON.
fn fetch(env: &Env, cfg: &std::path::Path, args: Value, isolated: bool) -> (i32, Value) {
    let root = project();
    if !isolated {
        return env.tool_in(cfg, root.path(), "web_fetch", &args.to_string());
    }
    let mut cmd = Command::new("unshare");
    cmd.arg("-n")
        .arg(env!("CARGO_BIN_EXE_agent-tui"))
        .arg("--config")
        .arg(cfg)
        .args(["tool", "web_fetch", &args.to_string(), "--root"])
        .arg(root.path());
    for (k, v) in env.cmd().get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let out: Output = cmd.stdin(Stdio::null()).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"));
    (out.status.code().unwrap_or(-1), value)
}

#[test]
fn a_page_with_scripts_styles_a_table_and_links_becomes_clean_markdown() {
    let env = Env::new();
    let server = LlmServer::start_with_side(vec![], vec![Reply::html(PAGE)]);
    let port = server.port();
    let cfg = allowing(&env, port, "");
    let url = format!("{}/notes", server.url());
    let (code, v) = fetch(&env, &cfg, json!({"url": url}), false);
    assert_eq!(code, 0, "{v}");
    let md = v["markdown"].as_str().unwrap();
    assert!(md.starts_with("# Release 2.0"), "{md}");
    assert!(
        md.contains("[the guide](https://example.org/guide)"),
        "{md}"
    );
    assert!(md.contains("## Changes"), "{md}");
    assert!(md.contains("`parse()`"), "{md}");
    // Cells are padded to line up: compared with the spaces squeezed.
    let flat = md
        .split(' ')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    assert!(flat.contains("| Option | Default |"), "{md}");
    assert!(flat.contains("| depth | 3 |"), "{md}");
    assert!(md.contains("cargo add thing@2"), "{md}");
    for gone in ["tracking", "color: red", "Home", "Blog", "© 2026", "<"] {
        assert!(!md.contains(gone), "{gone} left in: {md}");
    }
    assert_eq!(v["status"], 200);
    assert_eq!(v["bytes"], PAGE.len());
    assert_eq!(v["truncated"], false);
    let sha = v["sha256"].as_str().unwrap();
    assert!(sha.starts_with("sha256:") && sha.len() == 71, "{sha}");
    assert_eq!(v["url"], url);
}

/// A hostile page nesting lists and quotes thousands deep: its Markdown
/// keeps short prefixes (it grew with the square of the page before, found
/// by the html fuzz target), and a list numbered from the largest start
/// counts no further rather than wrapping to 0.
#[test]
fn a_page_nested_thousands_deep_keeps_its_lines_short() {
    let env = Env::new();
    let page = format!(
        "<html><body>{}<p>after the lists</p>{}deep quote</blockquote>\
         <ol start=\"4294967295\"><li>last<li>after it</ol></body></html>",
        "<ul><li>item".repeat(5_000),
        "<blockquote>".repeat(5_000),
    );
    let server = LlmServer::start_with_side(vec![], vec![Reply::html(&page)]);
    let cfg = allowing(&env, server.port(), "");
    let url = format!("{}/deep", server.url());
    let (code, v) = fetch(&env, &cfg, json!({"url": url}), false);
    assert_eq!(code, 0, "{v}");
    let md = v["markdown"].as_str().unwrap();
    // At most six quote marks and five list indents before a line's text.
    let widest = md.lines().max_by_key(|l| l.len()).unwrap();
    let longest_text = "4294967295. after it".len();
    assert!(widest.len() <= 12 + 10 + longest_text, "{widest:?}");
    assert!(md.starts_with("- item\n  - item\n"), "{}", &md[..60]);
    assert_eq!(md.matches("- item").count(), 5_000, "every item kept");
    assert!(md.contains("> > > > > > deep quote"), "the quote kept");
    let numbered: Vec<&str> = md.lines().filter(|l| l.contains("4294967295. ")).collect();
    assert_eq!(numbered.len(), 2, "{numbered:?}");
    assert!(
        numbered[1].ends_with("4294967295. after it"),
        "{numbered:?}"
    );
}

#[test]
fn loopback_and_other_schemes_are_refused_before_any_connection() {
    let env = Env::new();
    let server = LlmServer::start_with_side(vec![], vec![Reply::html(PAGE), Reply::html(PAGE)]);
    let port = server.port();
    // Nothing allowed: every way of naming this machine is refused.
    let cfg = config(&env, "openai", "http://127.0.0.1:9", "");
    for url in [
        format!("http://127.0.0.1:{port}/"),
        format!("http://localhost:{port}/"),
        format!("http://[::1]:{port}/"),
        format!("http://[::ffff:127.0.0.1]:{port}/"),
        format!("http://0.0.0.0:{port}/"),
    ] {
        let (code, v) = fetch(&env, &cfg, json!({"url": url}), false);
        assert_ne!(code, 0, "{url}: {v}");
        assert_eq!(v["error"]["code"], "address_refused", "{url}: {v}");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(message.contains("allow_private"), "{message}");
    }
    for url in ["file:///etc/passwd", "ftp://example.org/x", "gopher://x/"] {
        let (_, v) = fetch(&env, &cfg, json!({"url": url}), false);
        assert_eq!(v["error"]["code"], "bad_url", "{url}: {v}");
    }
    assert_eq!(
        server.side_requests().len(),
        0,
        "nothing reached the server"
    );
}

#[test]
fn addresses_beyond_loopback_are_refused_inside_an_empty_network() {
    let env = Env::new();
    let cfg = config(&env, "openai", "http://127.0.0.1:9", "");
    for (url, why) in [
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://10.1.2.3/", "private"),
        ("http://192.168.0.1:8080/", "private"),
        ("http://[fd00::1]/", "private"),
        ("http://100.64.0.1/", "shared"),
    ] {
        let (code, v) = fetch(&env, &cfg, json!({"url": url}), true);
        assert_ne!(code, 0, "{url}: {v}");
        assert_eq!(v["error"]["code"], "address_refused", "{url}: {v}");
        assert!(
            v["error"]["message"].as_str().unwrap().contains(why),
            "{url}: {v}"
        );
    }
}

#[test]
fn a_redirect_to_a_refused_address_is_not_followed() {
    let env = Env::new();
    let target = LlmServer::start_with_side(vec![], vec![Reply::html("<p>secret</p>")]);
    let hop = LlmServer::start_with_side(
        vec![],
        vec![Reply::Status {
            code: 302,
            headers: vec![(
                "Location".into(),
                format!("http://localhost:{}/admin", target.port()),
            )],
            body: String::new(),
        }],
    );
    let cfg = allowing(&env, hop.port(), "");
    let (code, v) = fetch(&env, &cfg, json!({"url": hop.url()}), false);
    assert_ne!(code, 0, "{v}");
    assert_eq!(v["error"]["code"], "address_refused", "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("localhost")
    );
    assert_eq!(hop.side_requests().len(), 1);
    assert_eq!(
        target.side_requests().len(),
        0,
        "the redirect was not followed"
    );
}

#[test]
fn other_types_are_refused_with_what_they_were_and_text_comes_as_it_is() {
    let env = Env::new();
    let server = LlmServer::start_with_side(
        vec![],
        vec![
            Reply::Status {
                code: 200,
                headers: vec![("Content-Type".into(), "image/png".into())],
                body: "\u{89}PNG....".into(),
            },
            Reply::json(200, json!({"version": "2.0", "items": [1, 2]})),
            Reply::Status {
                code: 200,
                headers: vec![("Content-Type".into(), "text/plain".into())],
                body: "x".repeat(5000),
            },
        ],
    );
    let cfg = allowing(&env, server.port(), "max_bytes = 1000\n");
    let (_, v) = fetch(&env, &cfg, json!({"url": server.url()}), false);
    assert_eq!(v["error"]["code"], "unsupported_type", "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("image/png")
    );
    let (code, v) = fetch(&env, &cfg, json!({"url": server.url()}), false);
    assert_eq!(code, 0, "{v}");
    let body: Value = serde_json::from_str(v["markdown"].as_str().unwrap()).unwrap();
    assert_eq!(body["items"], json!([1, 2]));
    let (_, v) = fetch(&env, &cfg, json!({"url": server.url()}), false);
    assert_eq!(v["truncated"], true, "{v}");
    assert_eq!(v["bytes"], 1000);
}

#[test]
fn in_a_job_a_fetch_is_asked_unless_its_domain_is_allowed_and_it_is_audited() {
    let env = Env::new();
    let dir = project();
    let page = LlmServer::start_with_side(vec![], vec![Reply::html(PAGE)]);
    let url = format!("http://127.0.0.1:{}/notes", page.port());
    let call = |id: &str| {
        sse(openai::tool_calls(&[(
            id,
            "web_fetch",
            &json!({ "url": url }).to_string(),
        )]))
    };
    let model = LlmServer::start(vec![
        call("c1"),
        sse(openai::text(&["Could not read it."])),
        call("c2"),
        sse(openai::text(&["It is release 2.0."])),
    ]);
    let cfg = config(&env, "openai", &model.url(), "");
    add_config(
        &cfg,
        &format!("[web]\nallow_private = [\"127.0.0.1:{}\"]\n", page.port()),
    );
    // Asked, and nobody can answer a headless exec: denied, nothing fetched.
    let run = support::jobs::exec(&env, &cfg, dir.path(), &["--mode", "ask", "read the notes"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(page.side_requests().len(), 0);
    let denied = model.requests()[1].body["messages"].to_string();
    assert!(denied.contains("denied"), "{denied}");
    // Its domain allowed: fetched unasked, and the audit names what came.
    add_config(&cfg, "");
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("[web]\n", "[web]\nallow_domains = [\"127.0.0.1\"]\n");
    std::fs::write(&cfg, text).unwrap();
    let run = support::jobs::exec(&env, &cfg, dir.path(), &["--mode", "ask", "read the notes"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("It is release 2.0."), "{}", run.stdout);
    assert_eq!(page.side_requests().len(), 1);
    let seen = model.requests()[3].body["messages"].to_string();
    assert!(seen.contains("Release 2.0"), "{seen}");
    let out = env
        .cmd()
        .args([
            "--config",
            cfg.to_str().unwrap(),
            "audit",
            "list",
            "--json",
            "--root",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    let audit = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        audit.contains(&format!("ok: {url} status 200 bytes {}", PAGE.len())),
        "{audit}"
    );
    assert!(audit.contains("sha256"), "{audit}");
}
