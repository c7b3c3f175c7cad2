//! The reference model of a suite: a loopback model that performs each
//! task's `reference.json` (the tool calls and answer a correct agent
//! makes), step by step, whatever order parallel tasks ask in.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use super::jobs::sse;
use super::llm_server::{Handler, RecordedRequest, Reply, openai};

/// A config whose only provider, `ref`, is the model at `server`.
pub fn reference_config(
    env: &super::Env,
    server: &super::llm_server::LlmServer,
) -> std::path::PathBuf {
    let cfg = env.home.path().join("config.toml");
    std::fs::write(
        &cfg,
        format!(
            "provider = \"ref\"\n[providers.ref]\nkind = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"\"\nmodel = \"reference\"\ncontext_window = 32768\n",
            server.url()
        ),
    )
    .unwrap();
    cfg
}

/// (prompt, steps) of every task of the suite at `dir`.
pub fn references(dir: &Path) -> Vec<(String, Vec<Value>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir.join("tasks")).unwrap() {
        let task = entry.unwrap().path();
        let spec: toml::Value =
            toml::from_str(&std::fs::read_to_string(task.join("task.toml")).unwrap()).unwrap();
        let reference: Value =
            serde_json::from_str(&std::fs::read_to_string(task.join("reference.json")).unwrap())
                .unwrap();
        out.push((
            spec["prompt"].as_str().unwrap().to_string(),
            reference["steps"].as_array().unwrap().clone(),
        ));
    }
    out
}

/// A handler that answers each request with the next step of its task:
/// the task is the one whose prompt the latest instruction holds, the step
/// the number of model turns since that instruction.
pub fn reference_model(dir: &Path) -> Handler {
    let tasks = references(dir);
    let ids = AtomicU64::new(1);
    Box::new(move |req: &RecordedRequest| {
        let messages = req.body["messages"].as_array().cloned().unwrap_or_default();
        let found = messages.iter().enumerate().rev().find_map(|(i, m)| {
            let content = m["content"].as_str().filter(|_| m["role"] == "user")?;
            let task = tasks
                .iter()
                .find(|(prompt, _)| content.contains(prompt.as_str()))?;
            Some((i, task))
        });
        let Some((at, (_, steps))) = found else {
            return sse(openai::text(&["No task matches this request."]));
        };
        let step = messages[at..]
            .iter()
            .filter(|m| m["role"] == "assistant")
            .count();
        match steps.get(step) {
            Some(s) if s.get("call").is_some() => {
                let id = format!("ref_{}", ids.fetch_add(1, Ordering::Relaxed));
                let args = s["arguments"].to_string();
                sse(openai::tool_calls(&[(
                    &id,
                    s["call"].as_str().unwrap(),
                    &args,
                )]))
            }
            Some(s) => sse(openai::text(&[s["answer"].as_str().unwrap()])),
            None => Reply::Status {
                code: 500,
                headers: vec![],
                body: "{\"error\": {\"message\": \"the reference has no more steps\"}}".into(),
            },
        }
    })
}
