//! Running `agent-tui exec` against a loopback provider: config, project
//! fixture and a parsed view of the output.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::Value;

use super::llm_server::{LlmServer, Reply, Split, openai};
use super::{Env, code, stderr, stdout, write_files};

pub const KEY: &str = "sk-loopback-SECRET-42";

/// `[agent]` settings for jobs whose requests must not be retried.
pub const NO_RETRY: &str = "retry_base_delay_ms = 10\nmax_retries = 0\nrequest_timeout_secs = 10";

/// One headless job (`exec --json`) whose model makes `calls` (tool name,
/// arguments; ids c1, c2, ...) in one turn, then answers "done"; `tables`
/// are added to the config. The job must exit 0. Returns its events and
/// the server, which holds what the model was sent.
pub fn one_turn(
    env: &Env,
    root: &Path,
    calls: &[(&str, Value)],
    tables: &str,
) -> (Vec<Value>, LlmServer) {
    let (events, server, _) = one_turn_configured(env, root, calls, tables);
    (events, server)
}

/// `one_turn`, and the config it ran with (for later commands on the
/// same state: `review`, `review --verify`).
pub fn one_turn_configured(
    env: &Env,
    root: &Path,
    calls: &[(&str, Value)],
    tables: &str,
) -> (Vec<Value>, LlmServer, std::path::PathBuf) {
    let owned: Vec<(String, String)> = calls
        .iter()
        .enumerate()
        .map(|(i, (_, args))| (format!("c{}", i + 1), args.to_string()))
        .collect();
    let refs: Vec<(&str, &str, &str)> = calls
        .iter()
        .zip(&owned)
        .map(|((name, _), (id, args))| (id.as_str(), *name, args.as_str()))
        .collect();
    let server = LlmServer::start(vec![
        sse(openai::tool_calls(&refs)),
        sse(openai::text(&["done"])),
    ]);
    let cfg = config_with(
        env,
        "openai",
        &server.url(),
        "",
        &format!("{NO_RETRY}\n{tables}"),
    );
    let run = exec(env, &cfg, root, &["--json", "do it"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    (run.events(), server, cfg)
}

/// The tool results the model got back in its second request, in order.
pub fn tool_results(server: &LlmServer) -> Vec<String> {
    server.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect()
}

/// A model that reads `path` (call `c1`), then answers `answer`.
pub fn read_then_answer(path: &str, answer: &str) -> Vec<Reply> {
    let args = serde_json::json!({ "file_path": path }).to_string();
    vec![
        sse(openai::tool_calls(&[("c1", "read_file", &args)])),
        sse(openai::text(&[answer])),
    ]
}

/// The events of type `kind`, in order.
pub fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

pub fn sse(events: Vec<String>) -> Reply {
    Reply::Sse {
        events,
        split: Split::Random { seed: 7, max: 9 },
    }
}

/// A config naming a provider `test` of `kind` at the server, with fast retries.
pub fn config(env: &Env, kind: &str, url: &str, provider_extra: &str) -> std::path::PathBuf {
    config_with(
        env,
        kind,
        url,
        provider_extra,
        "retry_base_delay_ms = 10\nmax_retries = 2\nrequest_timeout_secs = 5",
    )
}

/// Like `config`, with the whole `[agent]` table given.
pub fn config_with(
    env: &Env,
    kind: &str,
    url: &str,
    provider_extra: &str,
    agent: &str,
) -> std::path::PathBuf {
    let base = if kind == "openai" {
        format!("{url}/v1")
    } else {
        url.to_string()
    };
    let text = format!(
        "provider = \"test\"\n[providers.test]\nkind = \"{kind}\"\nbase_url = \"{base}\"\n\
         api_key_env = \"TEST_LLM_KEY\"\nmodel = \"test-model\"\n{provider_extra}\n[agent]\n{agent}\n"
    );
    let path = env.home.path().join("config.toml");
    std::fs::write(&path, text).unwrap();
    path
}

pub fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            ("src/main.rs", "fn main() {\n    greet();\n}\n"),
            (
                "src/greet.rs",
                "pub fn greet() {\n    println!(\"hello\");\n}\n",
            ),
            ("AGENTS.md", "Always answer in haiku.\n"),
        ],
    );
    dir
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn events(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect()
    }

    pub fn types(&self) -> Vec<String> {
        self.events()
            .iter()
            .map(|e| e["type"].as_str().unwrap().to_string())
            .collect()
    }
}

pub fn exec(env: &Env, cfg: &Path, root: &Path, args: &[&str]) -> Run {
    let out = env
        .cmd()
        .env("TEST_LLM_KEY", KEY)
        .arg("--config")
        .arg(cfg)
        .args(["exec", "--root"])
        .arg(root)
        .args(args)
        .output()
        .unwrap();
    Run {
        code: code(&out),
        stdout: stdout(&out),
        stderr: stderr(&out),
    }
}

/// `agent-tui doctor` with `cfg` (the loopback key set): its stdout.
pub fn doctor(env: &Env, cfg: &Path) -> String {
    let out = env
        .cmd()
        .env("TEST_LLM_KEY", "k")
        .arg("--config")
        .arg(cfg)
        .arg("doctor")
        .output()
        .unwrap();
    stdout(&out)
}

/// A models list naming `test-model` (what `doctor`'s probe and window
/// discovery ask first).
pub fn models_list() -> Reply {
    Reply::Status {
        code: 200,
        headers: vec![],
        body: serde_json::json!({"data": [{"id": "test-model"}]}).to_string(),
    }
}
