//! Every input kept for the fuzz targets (`fuzz/corpus/TARGET`, the seeds,
//! and `fuzz/regressions/TARGET`, each finding once fixed) replayed through
//! the same fuzz doors in the normal test run: a property that fails here
//! failed the fuzzer once, or fails on a seed.

use std::path::{Path, PathBuf};

type Door = fn(&[u8]);

const DOORS: [(&str, Door); 10] = [
    ("sse", agent_tui::llm::fuzzing::sse),
    ("json_action", agent_tui::llm::fuzzing::tool_text),
    ("think", agent_tui::llm::fuzzing::think),
    ("edit", agent_tui::review::fuzzing::edit),
    ("config", agent_tui::config::fuzzing::config),
    ("markdown", agent_tui::tui::fuzzing::markdown),
    ("patch", agent_tui::agent::fuzzing::patch),
    ("html", agent_tui::web::fuzzing::html),
    ("commands", agent_tui::agent::fuzzing::commands),
    ("hook_output", agent_tui::agent::fuzzing::hook_output),
];

/// The kept inputs of `target`.
fn inputs(target: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut out = Vec::new();
    for kind in ["corpus", "regressions"] {
        if let Ok(entries) = std::fs::read_dir(root.join(kind).join(target)) {
            out.extend(entries.filter_map(Result::ok).map(|e| e.path()));
        }
    }
    out.sort();
    out
}

#[test]
fn every_kept_input_holds_its_properties() {
    for (target, door) in DOORS {
        let kept = inputs(target);
        assert!(!kept.is_empty(), "no seed for {target}");
        for path in kept {
            let data = std::fs::read(&path).unwrap();
            let run = std::panic::catch_unwind(|| door(&data));
            assert!(run.is_ok(), "{target}: {} fails", path.display());
        }
    }
}

/// The server's inputs, in a child process of this test with a scratch
/// state home (the engine finds it in the environment).
#[test]
fn every_kept_request_gets_an_answer() {
    if std::env::var_os("AGENT_TUI_FUZZ_CHILD").is_some() {
        let harness = agent_tui::server::fuzzing::Harness::start().unwrap();
        for path in inputs("http") {
            let data = std::fs::read(&path).unwrap();
            harness.request(&data);
        }
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "every_kept_request_gets_an_answer",
            "--nocapture",
        ])
        .env("AGENT_TUI_FUZZ_CHILD", "1")
        .env("AGENT_TUI_HOME", home.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!inputs("http").is_empty());
}
