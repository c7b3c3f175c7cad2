//! The server against its own OpenAPI document, black box: schemathesis
//! (from PyPI; `tests/run` installs it) generates requests from
//! `/openapi.json` (valid ones, invalid ones, methods no route declares)
//! and runs every check it has on the answers of the installed binary:
//! no server error, every status and body the document declares, a
//! well-formed request accepted, a malformed one refused, 405 with `Allow`
//! for an undeclared method. The repository's `schemathesis.toml` is used
//! (422 answers well-formed data that cannot be acted on).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::Env;
use support::jobs::{config, project, sse};
use support::llm_server::{LlmServer, openai};
use support::serve::{add_config, serve};

/// schemathesis, or `None` (why printed) where it is not installed; CI
/// sets AGENT_TUI_REQUIRE_SCHEMATHESIS=1 (and AGENT_TUI_SCHEMATHESIS to
/// the one it installed).
fn schemathesis() -> Option<PathBuf> {
    let named = std::env::var_os("AGENT_TUI_SCHEMATHESIS").map(PathBuf::from);
    let program = named.unwrap_or_else(|| PathBuf::from("schemathesis"));
    if Command::new(&program).arg("--version").output().is_ok() {
        return Some(program);
    }
    let why = "schemathesis is not installed (tests/run installs it)";
    assert!(
        std::env::var("AGENT_TUI_REQUIRE_SCHEMATHESIS").as_deref() != Ok("1"),
        "{why}"
    );
    eprintln!("skipped: {why}");
    None
}

#[test]
fn schemathesis_finds_nothing_the_document_does_not_say() {
    let Some(program) = schemathesis() else {
        return;
    };
    let env = Env::new();
    let dir = project();
    // A model that always answers: runs the fuzzer starts end quickly.
    let model = LlmServer::start_model(Box::new(|_| sse(openai::text(&["fine"]))));
    let cfg = config(&env, "openai", &model.url(), "");
    add_config(
        &cfg,
        "[server]\nrate_limit_per_minute = 1000000\nmax_concurrent_jobs_per_user = 1000\n",
    );
    let srv = serve(&env, &cfg, dir.path());
    let token = srv.token.clone().unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let seed = std::env::var("AGENT_TUI_SCHEMATHESIS_SEED").unwrap_or_else(|_| "7".into());
    let out = Command::new(&program)
        .current_dir(repo)
        .args(["run", &format!("{}/openapi.json", srv.base)])
        .args(["--checks", "all", "--max-examples", "30", "--workers", "1"])
        .args(["--seed", &seed, "--request-timeout", "20"])
        .arg("-H")
        .arg(format!("Authorization: Bearer {token}"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "schemathesis found failures:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !text.contains("failures,") && text.contains("passed"),
        "{text}"
    );
}
