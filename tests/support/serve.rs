//! `agent-tui serve` driven over real HTTP: the binary on a random
//! loopback port (its one-run token read from stdout) and a reqwest client
//! with the SSE frames it reads.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::Value;

use super::Env;
use super::jobs::KEY;

/// A running `serve` on 127.0.0.1 and a random port.
pub struct Server {
    pub child: Child,
    pub base: String,
    /// The token printed at start (loopback without users), if any.
    pub token: Option<String>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn serve(env: &Env, cfg: &Path, root: &Path) -> Server {
    serve_with(env, cfg, root, &[])
}

/// `serve` with extra environment variables (a shared store's URL).
pub fn serve_with(env: &Env, cfg: &Path, root: &Path, vars: &[(&str, &str)]) -> Server {
    serve_at(env, cfg, root, "127.0.0.1:0", vars)
}

/// `serve` on `bind` (a fixed port, to come back where clients look).
pub fn serve_at(env: &Env, cfg: &Path, root: &Path, bind: &str, vars: &[(&str, &str)]) -> Server {
    let port_file = env.home.path().join(format!("port-{}", fastrand::u32(..)));
    let mut child = env
        .cmd()
        .envs(vars.iter().copied())
        .env("TEST_LLM_KEY", KEY)
        .arg("--config")
        .arg(cfg)
        .args(["serve", "--bind", bind, "--port-file"])
        .arg(&port_file)
        .arg("--root")
        .arg(root)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let port = loop {
        if let Ok(text) = std::fs::read_to_string(&port_file)
            && let Ok(port) = text.trim().parse::<u16>()
        {
            break port;
        }
        assert!(Instant::now() < deadline, "serve did not start");
        assert!(child.try_wait().unwrap().is_none(), "serve exited early");
        std::thread::sleep(Duration::from_millis(20));
    };
    // Its token, when it made one, is stdout's first line (printed before listening).
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line.trim().to_string());
    });
    let token = rx
        .recv_timeout(Duration::from_millis(500))
        .ok()
        .filter(|t| !t.is_empty());
    Server {
        child,
        base: format!("http://127.0.0.1:{port}"),
        token,
    }
}

pub fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

pub struct Client {
    pub http: reqwest::Client,
    pub base: String,
    pub token: String,
}

impl Client {
    pub fn new(base: &str, token: &str) -> Client {
        Client {
            http: reqwest::Client::new(),
            base: base.to_string(),
            token: token.to_string(),
        }
    }

    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        let r = self
            .http
            .get(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .send()
            .await
            .unwrap();
        let status = r.status();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    pub async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.post_with(path, body, None).await
    }

    pub async fn post_with(
        &self,
        path: &str,
        body: Value,
        key: Option<&str>,
    ) -> (StatusCode, Value) {
        let mut req = self
            .http
            .post(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .json(&body);
        if let Some(key) = key {
            req = req.header("Idempotency-Key", key);
        }
        let r = req.send().await.unwrap();
        let status = r.status();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    /// The raw text of a job's SSE stream until it ends.
    pub async fn stream_text(&self, job: &str, last_id: Option<u64>) -> String {
        let mut req = self
            .http
            .get(format!("{}/api/v1/agent/jobs/{job}/stream", self.base))
            .bearer_auth(&self.token);
        if let Some(id) = last_id {
            req = req.header("Last-Event-ID", id.to_string());
        }
        let mut r = req.send().await.unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(
            r.headers()["content-type"].to_str().unwrap(),
            "text/event-stream"
        );
        let mut text = String::new();
        let read = async {
            while let Some(chunk) = r.chunk().await.unwrap() {
                text.push_str(&String::from_utf8_lossy(&chunk));
            }
        };
        tokio::time::timeout(Duration::from_secs(20), read)
            .await
            .expect("the stream ends after the job's last event");
        text
    }

    /// The stored events of a job's stream until it ends: (id, event, data).
    pub async fn stream(&self, job: &str, last_id: Option<u64>) -> Vec<(u64, String, Value)> {
        frames(&self.stream_text(job, last_id).await)
    }
}

pub fn frames(text: &str) -> Vec<(u64, String, Value)> {
    // Stored events only: they carry their cursor as `id:` (streamed text
    // carries none).
    text.split("\n\n")
        .filter(|f| f.contains("data:") && f.lines().any(|l| l.starts_with("id:")))
        .map(|f| {
            let field = |name: &str| {
                f.lines()
                    .find_map(|l| l.strip_prefix(name))
                    .map(|v| v.trim().to_string())
                    .unwrap()
            };
            (
                field("id:").parse().unwrap(),
                field("event:"),
                serde_json::from_str(&field("data:")).unwrap(),
            )
        })
        .collect()
}

/// Every frame of an SSE text (ids or not): (event, data).
pub fn frames_all(text: &str) -> Vec<(String, Value)> {
    text.split("\n\n")
        .filter(|f| f.contains("data:"))
        .map(|f| {
            let field = |name: &str| {
                f.lines()
                    .find_map(|l| l.strip_prefix(name))
                    .map(|v| v.trim().to_string())
                    .unwrap_or_default()
            };
            (
                field("event:"),
                serde_json::from_str(&field("data:")).unwrap(),
            )
        })
        .collect()
}

pub fn error_code(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or("")
}

impl Client {
    /// A new session in workspace `default` and a job started in it:
    /// (session, job).
    pub async fn session_and_run(&self, instruction: &str, mode: &str) -> (String, String) {
        let (status, s) = self
            .post(
                "/api/v1/agent/sessions",
                serde_json::json!({"workspace_id": "default"}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{s}");
        let session = s["session_id"].as_str().unwrap().to_string();
        let (status, run) = self
            .post(
                "/api/v1/agent/run",
                serde_json::json!({"session_id": session, "instruction": instruction, "mode": mode}),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{run}");
        (session, run["job_id"].as_str().unwrap().to_string())
    }

    /// Rolls checkpoint `id` back whole (`hard_all`).
    pub async fn rollback_all(&self, id: &str) -> (StatusCode, Value) {
        self.post(
            &format!("/api/v1/agent/checkpoints/{id}/rollback"),
            serde_json::json!({"mode": "hard_all"}),
        )
        .await
    }

    /// Answers approval `tool_call_id` of `job` (`allow` or `deny`).
    pub async fn decide(
        &self,
        job: &str,
        tool_call_id: &str,
        decision: &str,
    ) -> (StatusCode, Value) {
        self.post(
            &format!("/api/v1/agent/jobs/{job}/approvals/{tool_call_id}"),
            serde_json::json!({ "decision": decision }),
        )
        .await
    }

    /// The first stored event of `job` that `pick` accepts, read by cursor
    /// until it is there (at most `secs` seconds).
    pub async fn wait_event(&self, job: &str, secs: u64, pick: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let (_, page) = self
                .get(&format!("/api/v1/agent/jobs/{job}/events?cursor=0"))
                .await;
            if let Some(e) = page["events"]
                .as_array()
                .and_then(|e| e.iter().find(|e| pick(e)))
            {
                return e.clone();
            }
            assert!(Instant::now() < deadline, "no such event of {job}: {page}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Adds `text` (TOML tables) to the config file `cfg`.
pub fn add_config(cfg: &Path, text: &str) {
    let before = std::fs::read_to_string(cfg).unwrap();
    std::fs::write(cfg, format!("{before}\n{text}")).unwrap();
}

/// A model that proposes one edit (`hello` -> `hola` in src/greet.rs of
/// `jobs::project`), then answers.
pub fn edit_then_answer() -> Vec<super::llm_server::Reply> {
    use super::llm_server::openai;
    let edits = serde_json::json!({"edits": [
        {"file_path": "src/greet.rs", "operation": "replace", "start_line": 2, "end_line": 2,
         "old_text": "    println!(\"hello\");", "new_text": "    println!(\"hola\");\n"}
    ]})
    .to_string();
    vec![
        super::jobs::sse(openai::tool_calls(&[("c1", "propose_edits", &edits)])),
        super::jobs::sse(openai::text(&["I **changed** ", "the `greeting`."])),
    ]
}

/// `serve token add NAME --role ROLE` in `env`'s store: the token.
pub fn add_token(env: &Env, name: &str, role: &str) -> String {
    let out = env
        .cmd()
        .args(["serve", "token", "add", name, "--role", role])
        .output()
        .unwrap();
    assert_eq!(super::code(&out), 0, "{}", super::stderr(&out));
    super::stdout(&out).trim().to_string()
}

/// Adds a workspace `app` at `root` for `users`, with `allowed_commands`.
pub fn add_workspace(cfg: &Path, root: &Path, users: &[&str], commands: &[&str]) {
    let list = |items: &[&str]| {
        items
            .iter()
            .map(|i| format!("{i:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    add_config(
        cfg,
        &format!(
            "[[server.workspaces]]\nid = \"app\"\nroot = \"{}\"\nusers = [{}]\nallowed_commands = [{}]\n",
            root.display(),
            list(users),
            list(commands)
        ),
    );
}
