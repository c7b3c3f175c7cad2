//! `/model` (SPEC 19), through the real binary: the picker lists the
//! configured providers with the models their servers list, and the pick
//! sends the session's next messages to that provider and model; a server
//! run names them with `provider` / `model`; a custom command's front
//! matter chooses its own; a provider that cannot be used is refused before
//! anything is kept.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;

use serde_json::json;
use support::Env;
use support::jobs::{config, project, sse};
use support::llm_server::{LlmServer, Reply, openai};
use support::serve::{Client, add_config, error_code, rt, serve};

/// A models list as OpenAI-compatible servers answer it.
fn listing(ids: &[&str]) -> Vec<Reply> {
    let data: Vec<serde_json::Value> = ids.iter().map(|id| json!({"id": id})).collect();
    // Enough for every side request a run makes (probes, discovery).
    (0..12)
        .map(|_| Reply::json(200, json!({"object": "list", "data": data})))
        .collect()
}

/// The config of `support::jobs::config` plus a provider `second` at `url`.
fn two_providers(env: &Env, first: &LlmServer, second: &LlmServer) -> std::path::PathBuf {
    let cfg = config(env, "openai", &first.url(), "");
    add_config(
        &cfg,
        &format!(
            "[providers.second]\nkind = \"openai\"\nbase_url = \"{}/v1\"\n\
             api_key_env = \"TEST_LLM_KEY\"\nmodel = \"alpha\"\n",
            second.url()
        ),
    );
    cfg
}

/// The model calls a server got: each one's `model`.
fn models_called(server: &LlmServer) -> Vec<String> {
    server
        .requests()
        .iter()
        .filter(|r| r.is_model_call())
        .map(|r| r.body["model"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The messages of the first model call a server got, as text.
fn first_call(server: &LlmServer) -> String {
    let call = server.requests().into_iter().find(|r| r.is_model_call());
    call.unwrap().body["messages"].to_string()
}

#[test]
fn the_model_picker_sends_the_next_messages_to_the_picked_provider_and_model() {
    let env = Env::new();
    let dir = project();
    let first = LlmServer::start_with_side(
        vec![sse(openai::text(&["From the first."]))],
        listing(&["test-model"]),
    );
    let second = LlmServer::start_with_side(
        vec![sse(openai::text(&["From beta."]))],
        listing(&["alpha", "beta"]),
    );
    let cfg = two_providers(&env, &first, &second);
    let tmux = support::tmux::start_agent(&env, &cfg, dir.path(), "model", "");
    tmux.wait_for("F1 help");
    tmux.keys(&["-l", "say hello"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("From the first.");
    tmux.keys(&["-l", "/model"]);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("beta");
    assert!(screen.contains("Provider and model"), "{screen}");
    assert!(screen.contains("test-model  (default)"), "{screen}");
    assert!(screen.contains("alpha"), "{screen}");
    // A provider whose key is unset is marked, and cannot be picked.
    assert!(screen.contains("no key: set ANTHROPIC_API_KEY"), "{screen}");
    tmux.keys(&["-l", "sec bet"]);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("second beta (/model)");
    assert!(!screen.contains("Provider and model"), "{screen}");
    tmux.keys(&["-l", "and now?"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("From beta.");
    assert_eq!(models_called(&first), vec!["test-model"]);
    assert_eq!(models_called(&second), vec!["beta"]);
    // The second request carries the conversation so far.
    let asked = first_call(&second);
    assert!(asked.contains("From the first."), "{asked}");
    tmux.quit();
    // The history says which provider and model answered each job.
    let run = |args: &[&str]| {
        let out = env
            .cmd()
            .env("TEST_LLM_KEY", support::jobs::KEY)
            .arg("--config")
            .arg(&cfg)
            .args(args)
            .arg("--root")
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let list: serde_json::Value =
        serde_json::from_str(&run(&["sessions", "list", "--json"])).unwrap();
    let id = list[0]["session_id"].as_str().unwrap().to_string();
    let shown: serde_json::Value =
        serde_json::from_str(&run(&["sessions", "show", &id, "--json"])).unwrap();
    let on: Vec<(&str, &str)> = shown["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["provider"].as_str().unwrap(),
                j["model"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(on, [("test", "test-model"), ("second", "beta")], "{shown}");
    let text = run(&["sessions", "show", &id]);
    assert!(text.contains("on test (test-model) > say hello"), "{text}");
    assert!(text.contains("on second (beta) > and now?"), "{text}");
}

#[test]
fn a_server_run_names_its_provider_and_model_and_the_models_are_listed() {
    let env = Env::new();
    let dir = project();
    let first = LlmServer::start_with_side(vec![], listing(&["test-model"]));
    let second = LlmServer::start_with_side(
        vec![sse(openai::text(&["Beta here."]))],
        listing(&["alpha", "beta"]),
    );
    let cfg = two_providers(&env, &first, &second);
    let srv = serve(&env, &cfg, dir.path());
    let c = Client::new(&srv.base, srv.token.as_deref().unwrap());
    rt().block_on(async {
        let (status, list) = c.get("/api/v1/agent/models?workspace_id=default").await;
        assert_eq!(status, 200, "{list}");
        let providers = list["providers"].as_array().unwrap();
        let named = |n: &str| providers.iter().find(|p| p["name"] == n).unwrap().clone();
        let s = named("second");
        assert_eq!(s["models"], json!(["alpha", "beta"]), "{s}");
        assert_eq!(s["reach"]["state"], "listed");
        assert_eq!(s["current"], false);
        assert_eq!(named("test")["current"], true);
        let a = named("anthropic");
        assert_eq!(
            a["reach"],
            json!({"state": "no_key", "var": "ANTHROPIC_API_KEY"})
        );
        let (status, s) = c
            .post("/api/v1/agent/sessions", json!({"workspace_id": "default"}))
            .await;
        assert_eq!(status, 201, "{s}");
        let session = s["session_id"].as_str().unwrap();
        let run = |provider: &str, model: &str| {
            json!({"session_id": session, "instruction": "hi", "mode": "ask",
                   "provider": provider, "model": model})
        };
        let (status, body) = c.post("/api/v1/agent/run", run("nope", "x")).await;
        assert_eq!(status, 400, "{body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains("no provider named nope"), "{body}");
        assert!(message.contains("second"), "{body}");
        let (status, body) = c
            .post("/api/v1/agent/run", run("anthropic", "claude-x"))
            .await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(error_code(&body), "invalid");
        assert!(body.to_string().contains("ANTHROPIC_API_KEY"), "{body}");
        let (status, body) = c.post("/api/v1/agent/run", run("second", "beta")).await;
        assert_eq!(status, 202, "{body}");
        let job = body["job_id"].as_str().unwrap();
        let started = c.wait_event(job, 20, |e| e["type"] == "job.started").await;
        assert_eq!(started["data"]["provider"], "second", "{started}");
        assert_eq!(started["data"]["model"], "beta", "{started}");
        let done = c
            .wait_event(job, 20, |e| e["type"] == "job.completed")
            .await;
        assert_eq!(done["data"]["answer"], "Beta here.", "{done}");
    });
    assert_eq!(models_called(&second), vec!["beta"]);
    assert!(
        models_called(&first).is_empty(),
        "refused runs asked nobody"
    );
}

fn with_quick_command(root: &Path) {
    support::write_files(
        root,
        &[(
            ".claude/commands/quick.md",
            "---\ndescription: A quick look\nprovider: second\nmodel: beta\n---\nGlance at $ARGUMENTS.\n",
        )],
    );
}

#[test]
fn a_custom_commands_front_matter_picks_its_provider_and_model() {
    let env = Env::new();
    let dir = project();
    with_quick_command(dir.path());
    let first = LlmServer::start_with_side(
        vec![sse(openai::text(&["Plain."]))],
        listing(&["test-model"]),
    );
    let second = LlmServer::start_with_side(
        vec![sse(openai::text(&["Glanced."]))],
        listing(&["alpha", "beta"]),
    );
    let cfg = two_providers(&env, &first, &second);
    let run = support::jobs::exec(&env, &cfg, dir.path(), &["/quick src/main.rs"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("Glanced."), "{}", run.stdout);
    let run = support::jobs::exec(&env, &cfg, dir.path(), &["what is this?"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(models_called(&second), vec!["beta"]);
    assert_eq!(models_called(&first), vec!["test-model"]);
    let asked = first_call(&second);
    assert!(asked.contains("Glance at src/main.rs."), "{asked}");
}

#[test]
fn the_web_pages_picker_lists_the_models_and_a_pick_goes_with_the_run() {
    use support::browser::{
        Driver, available, no_errors_then_close, send_with_enter, sign_in, until,
    };
    if !available() {
        return;
    }
    let env = Env::new();
    let dir = project();
    let first = LlmServer::start_with_side(vec![], listing(&["test-model"]));
    let second = LlmServer::start_with_side(
        vec![sse(openai::text(&["Beta on the page."]))],
        listing(&["alpha", "beta"]),
    );
    let cfg = two_providers(&env, &first, &second);
    let srv = serve(&env, &cfg, dir.path());
    let token = srv.token.clone().unwrap();
    let driver = Driver::start();
    rt().block_on(async {
        let b = driver.browser(1280, 800).await;
        sign_in(&b, &srv.base, &token).await;
        let options = until(
            &b,
            20,
            "models listed",
            "const o = [...document.querySelectorAll('[data-testid=model] option')]; \
             return o.length > 2 && o.map(x => `${x.parentNode.label}|${x.textContent}|${x.disabled}`)",
        )
        .await;
        let text = options.to_string();
        assert!(text.contains("test|test-model (default)|false"), "{text}");
        assert!(text.contains("second|beta|false"), "{text}");
        assert!(
            text.contains("anthropic (no key: set ANTHROPIC_API_KEY)|claude-sonnet-4-5|true"),
            "{text}"
        );
        b.execute(
            "const s = document.querySelector('[data-testid=model]'); \
             s.value = [...s.options].find(o => o.textContent === 'beta').value; \
             document.querySelector('[data-testid=mode]').value = 'ask';",
            vec![],
        )
        .await
        .unwrap();
        send_with_enter(&b, "which model are you?").await;
        until(
            &b,
            20,
            "answered",
            "return [...document.querySelectorAll('.job [data-testid=answer]')].some(a => a.textContent.includes('Beta on the page.'))",
        )
        .await;
        // The history, opened again, names who answered.
        b.execute("location.reload()", vec![]).await.unwrap();
        until(
            &b,
            20,
            "session listed",
            "const s = document.querySelector('[data-session-id]'); if (s) s.click(); return !!s",
        )
        .await;
        let by = until(
            &b,
            20,
            "answered by",
            "const a = document.querySelector('[data-testid=answered-by]'); return a && a.textContent",
        )
        .await;
        assert_eq!(by, serde_json::json!("second · beta"));
        no_errors_then_close(&driver, b).await;
    });
    assert_eq!(models_called(&second), vec!["beta"]);
    assert!(models_called(&first).is_empty());
}
