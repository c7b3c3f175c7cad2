//! `agent-tui eval` end to end: a suite written here, a loopback model that
//! performs each task's reference solution (whatever order the parallel
//! tasks ask in), the reviewer's rejections, drift forcing a conflict and
//! the re-run, clarifications, a hanging task, malformed suites, and the
//! report's shape.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;

use serde_json::{Value, json};
use support::llm_server::{LlmServer, RecordedRequest, Reply, openai};
use support::{Env, code, stderr, stdout, write_files};

fn sse(events: Vec<String>) -> Reply {
    support::jobs::sse(events)
}

/// The reference model: reads which task is asking from its instruction.
fn reference(req: &RecordedRequest) -> Reply {
    let messages = req.body["messages"].as_array().cloned().unwrap_or_default();
    let instruction = messages
        .iter()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string();
    let last = messages.last().cloned().unwrap_or(Value::Null);
    let after_tool = last["role"] == "tool";
    let edit = |file: &str, text: &str| json!({"file_path": file, "operation": "replace", "start_line": 1, "end_line": 1, "new_text": text});
    let propose = |edits: Vec<Value>| {
        sse(openai::tool_calls(&[(
            "c1",
            "propose_edits",
            &json!({"edits": edits}).to_string(),
        )]))
    };
    if instruction.contains("What does greet print") {
        return sse(openai::text(&["It prints ", "hello."]));
    }
    if instruction.contains("Rename hello") {
        // Reads a.txt, then proposes, then answers.
        let results = messages.iter().filter(|m| m["role"] == "tool").count();
        return match results {
            0 => sse(openai::tool_calls(&[(
                "r1",
                "read_file",
                r#"{"file_path": "a.txt"}"#,
            )])),
            1 => propose(vec![edit("a.txt", "hi\n"), edit("vendor/lib.txt", "hi\n")]),
            _ => sse(openai::text(&["Renamed."])),
        };
    }
    if instruction.contains("Mark b.txt") {
        return if after_tool {
            sse(openai::text(&["Marked."]))
        } else {
            propose(vec![edit("b.txt", "EDITED\n")])
        };
    }
    if instruction.contains("Pick a colour") {
        return if after_tool {
            let chosen = last["content"].as_str().unwrap_or_default().to_string();
            sse(openai::text(&[&format!("You chose {chosen}.")]))
        } else {
            sse(openai::tool_calls(&[(
                "q1",
                "clarify_user",
                r#"{"question": "Which colour?"}"#,
            )]))
        };
    }
    if instruction.contains("Hang") {
        return Reply::Stall { secs: 30 };
    }
    sse(openai::text(&["I do not know this task."]))
}

fn suite(dir: &Path, with_hang: bool) {
    let mut files = vec![
        (
            "tasks/ask/task.toml",
            "prompt = \"What does greet print?\"\nmode = \"ask\"\n[[checks]]\nanswer_matches = \"(?i)hello\"\n[[checks]]\nfile = \"greet.py\"\nunchanged = true\n",
        ),
        (
            "tasks/ask/files/greet.py",
            "def greet():\n    print('hello')\n",
        ),
        (
            "tasks/rename/task.toml",
            "prompt = \"Rename hello to hi\"\nreject_paths = [\"vendor/\"]\n[[checks]]\nfile = \"a.txt\"\nequals = \"hi\\n\"\n[[checks]]\nfile = \"vendor/lib.txt\"\nunchanged = true\n[[checks]]\ncommand = [\"grep\", \"-q\", \"hi\", \"a.txt\"]\n",
        ),
        ("tasks/rename/files/a.txt", "hello\n"),
        ("tasks/rename/files/vendor/lib.txt", "hello\n"),
        (
            "tasks/conflict/task.toml",
            "prompt = \"Mark b.txt as edited\"\ndrift = [{file = \"b.txt\", append = \"late line\\n\"}]\n[[checks]]\nfile = \"b.txt\"\nequals = \"EDITED\\nlate line\\n\"\n",
        ),
        ("tasks/conflict/files/b.txt", "plain\n"),
        (
            "tasks/clarify/task.toml",
            "prompt = \"Pick a colour for the theme\"\nmode = \"ask\"\nanswers = [\"blue\"]\n[[checks]]\nanswer_matches = \"blue\"\n",
        ),
    ];
    if with_hang {
        files.push((
            "tasks/hang/task.toml",
            "prompt = \"Hang forever\"\nmode = \"ask\"\n[[checks]]\nanswer_matches = \"x\"\n",
        ));
    }
    write_files(dir, &files);
}

fn config(env: &Env, server: &LlmServer) -> std::path::PathBuf {
    let text = format!(
        "provider = \"m\"\n[providers.m]\nkind = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"\"\nmodel = \"ref\"\ncontext_window = 32768\nprice_input_per_mtok = 1.0\nprice_output_per_mtok = 2.0\n[agent]\nrequest_timeout_secs = 60\n",
        server.url()
    );
    let path = env.home.path().join("config.toml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_suite_runs_in_parallel_and_reports_every_metric() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), true);
    let server = LlmServer::start_model(Box::new(reference));
    let cfg = config(&env, &server);
    let out_dir = dir.path().join("out");
    let out = env
        .cmd()
        .arg("--config")
        .arg(&cfg)
        .args([
            "eval",
            "--jobs",
            "2",
            "--task-timeout",
            "2",
            "--json",
            "--out",
        ])
        .arg(&out_dir)
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        report,
        serde_json::from_str::<Value>(
            &std::fs::read_to_string(out_dir.join("report.json")).unwrap()
        )
        .unwrap()
    );
    let run = &report["runs"][0];
    assert_eq!(run["routing"], "remote");
    let tasks: Vec<&Value> = run["tasks"].as_array().unwrap().iter().collect();
    let names: Vec<&str> = tasks.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["ask", "clarify", "conflict", "hang", "rename"],
        "suite order"
    );
    let task = |name: &str| tasks.iter().find(|t| t["name"] == name).unwrap();
    let mut keys: Vec<&str> = task("ask")
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "checks_failed",
            "clarifications",
            "conflicts",
            "cost_usd",
            "error",
            "fallback_reason",
            "hunks_accepted",
            "hunks_proposed",
            "input_tokens",
            "latency_ms",
            "name",
            "output_tokens",
            "provider",
            "reads_before_edit",
            "repairs",
            "success",
            "tool_calls",
            "verifies",
            "verify_passed"
        ]
    );
    for ok in ["ask", "clarify", "conflict", "rename"] {
        assert_eq!(task(ok)["success"], true, "{ok}: {}", task(ok));
    }
    let rename = task("rename");
    assert_eq!(
        (
            rename["hunks_proposed"].as_u64(),
            rename["hunks_accepted"].as_u64()
        ),
        (Some(2), Some(1))
    );
    // One file read before the first edit; none in a task with no edit.
    assert_eq!(rename["reads_before_edit"], 1, "{rename}");
    assert_eq!(task("ask")["reads_before_edit"], 0);
    assert_eq!(task("conflict")["conflicts"], 1);
    assert_eq!(task("clarify")["clarifications"], 1);
    assert_eq!(task("ask")["provider"], "m");
    assert!(task("ask")["cost_usd"].as_f64().unwrap() > 0.0);
    let hang = task("hang");
    assert_eq!(hang["success"], false);
    // A task that timed out took its time, on its provider.
    assert!(hang["latency_ms"].as_u64().unwrap() >= 1900, "{hang}");
    assert_eq!(hang["provider"], "m", "{hang}");
    assert!(m_p95(&run["metrics"]) >= 1900, "{}", run["metrics"]);
    assert!(
        hang["error"]
            .as_str()
            .unwrap()
            .contains("did not finish within 2 s"),
        "{hang}"
    );
    let m = &run["metrics"];
    assert_eq!(m["tasks"], 5);
    assert_eq!(m["success_rate"], 0.8);
    assert_eq!(m["conflict_rate"], 0.2);
    assert_eq!(m["clarification_rate"], 0.2);
    assert_eq!(m["fallback_rate"], 0.0);
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert!(
        md.contains("## Routing: remote")
            && md.contains("## Side by side")
            && md.contains("| success rate | 80 % |"),
        "{md}"
    );
}

fn m_p95(metrics: &Value) -> u64 {
    metrics["p95_latency_ms"].as_u64().unwrap()
}

/// Runs `eval` on `suite` with `cfg` and `args`; the parsed report.
fn eval(env: &Env, cfg: &Path, suite: &Path, args: &[&str]) -> Value {
    let out = env
        .cmd()
        .arg("--config")
        .arg(cfg)
        .args(["eval", "--json", "--out"])
        .arg(suite.join("out"))
        .args(args)
        .arg(suite)
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

/// `hybrid_auto` and `local` on a local model without a price whose tool
/// calls are unusable, and a priced remote one that answers.
#[test]
fn cost_is_per_provider_and_failed_tasks_keep_their_time_and_provider() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[(
            "tasks/ask/task.toml",
            "prompt = \"What does greet print?\"\nmode = \"ask\"\n[[checks]]\nanswer_matches = \"hello\"\n",
        )],
    );
    let local = LlmServer::start_model(Box::new(|_: &RecordedRequest| {
        sse(openai::tool_calls(&[("c1", "no_such_tool", "{}")]))
    }));
    let remote = LlmServer::start_model(Box::new(|_: &RecordedRequest| {
        sse(openai::text(&["It prints hello."]))
    }));
    let provider = |name: &str, url: String, price: &str| {
        format!(
            "[providers.{name}]\nkind = \"openai\"\nbase_url = \"{url}/v1\"\napi_key_env = \"\"\nmodel = \"{name}\"\ncontext_window = 32768\ntool_protocol = \"native\"\n{price}"
        )
    };
    let cfg = env.home.path().join("config.toml");
    std::fs::write(
        &cfg,
        format!(
            "{}{}[agent]\nmax_retries = 0\n[routing]\nlocal = \"local\"\nremote = \"remote\"\n",
            provider("local", local.url(), ""),
            provider(
                "remote",
                remote.url(),
                "price_input_per_mtok = 2.0\nprice_output_per_mtok = 8.0\n"
            ),
        ),
    )
    .unwrap();
    let report = eval(&env, &cfg, dir.path(), &["--routing", "hybrid_auto,local"]);
    let hybrid = &report["runs"][0]["tasks"][0];
    assert_eq!(hybrid["success"], true, "{hybrid}");
    assert_eq!(hybrid["provider"], "remote");
    assert_eq!(hybrid["fallback_reason"], "schema_failures");
    // Two local requests and one remote one, 11/7 tokens each.
    assert_eq!(
        (
            hybrid["input_tokens"].as_u64(),
            hybrid["output_tokens"].as_u64()
        ),
        (Some(33), Some(21))
    );
    let cost = hybrid["cost_usd"].as_f64().unwrap();
    let remote_only = (11.0 * 2.0 + 7.0 * 8.0) / 1e6;
    assert!((cost - remote_only).abs() < 1e-12, "{cost}: {hybrid}");
    // Local only: it fails, after its time, on local, at no known price.
    let failed = &report["runs"][1]["tasks"][0];
    assert_eq!(failed["success"], false, "{failed}");
    assert!(failed["error"].as_str().is_some_and(|e| !e.is_empty()));
    assert_eq!(failed["provider"], "local", "{failed}");
    assert!(failed["latency_ms"].as_u64().unwrap() > 0, "{failed}");
    assert!(failed["input_tokens"].as_u64().unwrap() > 0, "{failed}");
    assert_eq!(failed["cost_usd"], Value::Null, "{failed}");
    assert_eq!(
        report["runs"][1]["metrics"]["cost_per_task_usd"],
        Value::Null
    );
}

/// `--task-timeout` bounds a command check too: it is ended with what it
/// started, and the task fails saying so.
#[test]
fn a_hanging_check_is_stopped_at_the_task_timeout() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("child.pid");
    let check = format!(
        "prompt = \"What does greet print?\"\nmode = \"ask\"\n[[checks]]\ncommand = [\"sh\", \"-c\", \"sleep 57 & echo $! > {}; wait\"]\n",
        pid_file.display()
    );
    write_files(
        dir.path(),
        &[
            ("tasks/h/task.toml", check.as_str()),
            ("tasks/h/files/a.txt", "a\n"),
        ],
    );
    let server = LlmServer::start_model(Box::new(reference));
    let cfg = config(&env, &server);
    let started = std::time::Instant::now();
    let report = eval(&env, &cfg, dir.path(), &["--task-timeout", "2"]);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let task = &report["runs"][0]["tasks"][0];
    assert_eq!(task["success"], false, "{task}");
    assert!(
        task["error"]
            .as_str()
            .unwrap()
            .contains("did not finish within 2 s"),
        "{task}"
    );
    assert_eq!(task["checks_failed"].as_array().unwrap().len(), 1, "{task}");
    // The check's own child went with it (gone, or a zombie to reap).
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).unwrap_or_default();
    assert!(
        stat.is_empty() || stat.contains(") Z "),
        "the check's child still runs: {stat}"
    );
}

/// `agent-tui --config CFG eval ARGS... SUITE`, for a suite that is not
/// run: exit 2, and what it said on stderr.
fn refused(env: &Env, cfg: &Path, args: &[&str], suite: &Path) -> String {
    let out = env
        .cmd()
        .arg("--config")
        .arg(cfg)
        .arg("eval")
        .args(args)
        .arg(suite)
        .output()
        .unwrap();
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    stderr(&out)
}

#[test]
fn a_malformed_suite_is_exit_2_naming_file_field_and_why() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[(
            "tasks/bad/task.toml",
            "prompt = \"p\"\n[[checks]]\nfile = \"a\"\n",
        )],
    );
    let server = LlmServer::start(vec![]);
    let cfg = config(&env, &server);
    let err = refused(&env, &cfg, &[], dir.path());
    assert!(
        err.contains("tasks/bad/task.toml: checks[0]: give `file` with one of"),
        "{err}"
    );
    assert!(server.requests().is_empty());
    refused(&env, &cfg, &["--routing", "local"], dir.path());
    // A drift written as an array: named, not read as (file, append).
    write_files(
        dir.path(),
        &[
            (
                "tasks/bad/task.toml",
                "prompt = \"p\"\ndrift = [[\"a.txt\", \"more\"]]\n\
                 [[checks]]\nfile = \"a.txt\"\ncontains = \"x\"\n",
            ),
            ("tasks/bad/files/a.txt", "x\n"),
        ],
    );
    let err = refused(&env, &cfg, &[], dir.path());
    assert!(
        err.contains("tasks/bad/task.toml: drift[0]: expected a table, found an array"),
        "{err}"
    );
    assert!(server.requests().is_empty());
    let empty = tempfile::tempdir().unwrap();
    let err = refused(&env, &cfg, &[], empty.path());
    assert!(
        err.contains("tasks: cannot read the suite's tasks folder"),
        "{err}"
    );
}

/// A model that breaks `mul` first, and fixes it once a verify's failure
/// is sent back.
fn breaks_then_repairs(req: &RecordedRequest) -> Reply {
    let messages = req.body["messages"].as_array().cloned().unwrap_or_default();
    let last = messages.last().cloned().unwrap_or(Value::Null);
    if last["role"] == "tool" {
        return sse(openai::text(&["Done."]));
    }
    let repair = last["content"]
        .as_str()
        .is_some_and(|t| t.contains("[agent-tui: verify]") && t.contains("test_mul"));
    let body = if repair {
        "    return a * b\n"
    } else {
        "    return a ** b\n"
    };
    let edits = json!({"edits": [{"file_path": "calc.py", "operation": "replace",
        "start_line": 2, "end_line": 2, "old_text": "    return a + b", "new_text": body}]});
    sse(openai::tool_calls(&[(
        "c1",
        "propose_edits",
        &edits.to_string(),
    )]))
}

#[test]
fn verify_and_repair_is_reported_beside_the_plain_run() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            (
                "tasks/fix_mul/task.toml",
                "prompt = \"Make mul multiply\"\n[[checks]]\ncommand = [\"pytest\", \"-q\"]\n",
            ),
            (
                "tasks/fix_mul/files/calc.py",
                "def mul(a, b):\n    return a + b\n",
            ),
            (
                "tasks/fix_mul/files/test_calc.py",
                "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
            ),
            ("tasks/fix_mul/files/pytest.ini", "[pytest]\n"),
        ],
    );
    let server = LlmServer::start_model(Box::new(breaks_then_repairs));
    let cfg = config(&env, &server);
    let out_dir = dir.path().join("out");
    let out = env
        .cmd()
        .arg("--config")
        .arg(&cfg)
        .args(["eval", "--verify", "--json", "--out"])
        .arg(&out_dir)
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["routing"], "remote");
    assert_eq!(runs[0]["reviewer"], "plain");
    assert_eq!(runs[1]["routing"], "remote + verify");
    assert_eq!(runs[1]["reviewer"], "verify_and_repair");
    let (plain, verified) = (&runs[0]["tasks"][0], &runs[1]["tasks"][0]);
    assert_eq!(
        plain["success"], false,
        "the broken edit was applied: {plain}"
    );
    assert_eq!(plain["verify_passed"], Value::Null);
    assert_eq!(verified["success"], true, "{verified}");
    assert_eq!(verified["verifies"], 2, "{verified}");
    assert_eq!(verified["repairs"], 1, "{verified}");
    assert_eq!(verified["verify_passed"], true);
    assert_eq!(runs[1]["metrics"]["verify_pass_rate"], 1.0);
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert!(
        md.contains("| success rate | 0 % | 100 % |")
            && md.contains("| verify pass rate | – | 100 % |")
            && md.contains("passed (2 runs, 1 repair)"),
        "{md}"
    );
}
