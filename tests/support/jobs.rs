//! Running `agent-tui exec` against a loopback provider: config, project
//! fixture and a parsed view of the output.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::Value;

use super::llm_server::{Reply, Split};
use super::{Env, code, stderr, stdout, write_files};

pub const KEY: &str = "sk-loopback-SECRET-42";

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
