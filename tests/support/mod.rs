//! Helpers for integration tests: run the real `agent-tui` binary in a clean,
//! offline environment and decode its JSON output.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

#[cfg(unix)]
pub mod browser;
pub mod db;
pub mod engine;
pub mod fake_model;
pub mod hostile;
pub mod jobs;
pub mod llm_server;
pub mod pg;
pub mod reference;
pub mod serve;
pub mod strace;
pub mod tmux;
pub mod tui;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// Environment variables that could leak the developer's setup into a test.
const SCRUBBED: &[&str] = &[
    "AGENT_TUI_CONFIG",
    "AGENT_TUI_HOME",
    "AGENT_TUI_DATABASE_URL",
    "AGENT_TUI_DB_PASSWORD",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
];

/// A temporary sandbox for one test: `home` holds config and state dirs.
pub struct Env {
    pub home: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Env {
        Env {
            home: tempfile::tempdir().unwrap(),
        }
    }

    /// `agent-tui` with a scrubbed environment whose XDG dirs and
    /// AGENT_TUI_HOME point inside this test's temp dir.
    pub fn cmd(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_agent-tui"));
        for var in SCRUBBED {
            cmd.env_remove(var);
        }
        let home = self.home.path();
        cmd.env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_DATA_HOME", home.join("data"))
            .env("AGENT_TUI_HOME", home.join("state"))
            .stdin(Stdio::null());
        cmd
    }

    /// Path of the default config file for this environment.
    pub fn default_config_path(&self) -> std::path::PathBuf {
        self.home.path().join("config/agent-tui/config.toml")
    }

    /// `agent-tui tool --list --root ROOT`: the tools that root offers
    /// (the command must succeed).
    pub fn tool_list(&self, root: &Path) -> Vec<Value> {
        let out = self
            .cmd()
            .args(["tool", "--list", "--root"])
            .arg(root)
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        json_of(&out)["tools"].as_array().unwrap().clone()
    }

    /// `agent-tui tool NAME ARGS --root ROOT`: exit code and parsed stdout.
    pub fn tool(&self, root: &Path, name: &str, args: &str) -> (i32, Value) {
        let out = self
            .cmd()
            .args(["tool", name, args, "--root"])
            .arg(root)
            .output()
            .unwrap();
        (code(&out), json_of(&out))
    }

    /// `agent-tui ARGS --root ROOT`: exit code, stdout and stderr.
    pub fn run_in(&self, root: &Path, args: &[&str]) -> (i32, String, String) {
        let out = self
            .cmd()
            .args(args)
            .arg("--root")
            .arg(root)
            .output()
            .unwrap();
        (code(&out), stdout(&out), stderr(&out))
    }

    /// `tool` with the config file `cfg`.
    pub fn tool_in(&self, cfg: &Path, root: &Path, name: &str, args: &str) -> (i32, Value) {
        let out = self
            .cmd()
            .arg("--config")
            .arg(cfg)
            .args(["tool", name, args, "--root"])
            .arg(root)
            .output()
            .unwrap();
        (code(&out), json_of(&out))
    }
}

impl Env {
    /// Every file under the state dir (`AGENT_TUI_HOME`).
    pub fn state_files(&self) -> Vec<std::path::PathBuf> {
        walk(&self.home.path().join("state"))
    }

    /// The store of this sandbox's state home.
    pub fn state_db(&self) -> std::path::PathBuf {
        db::state_db(&self.home.path().join("state"))
    }

    /// Every audit record in the store.
    pub fn audit_records(&self) -> Vec<Value> {
        db::audit_records(&self.state_db())
    }

    /// Every recorded event and conversation record, in order.
    pub fn session_text(&self) -> String {
        db::session_text(&self.state_db())
    }
}

/// Every file below `dir`, recursively; none if it does not exist.
pub fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

pub fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON value ({e}):\n{}\nstderr:\n{}",
            stdout(out),
            stderr(out)
        )
    })
}

/// Writes `files` (path, contents) under `root`, creating parent dirs.
pub fn write_files(root: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}
