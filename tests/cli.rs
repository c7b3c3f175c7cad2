//! The command line from outside: help, version, exit codes, subcommands
//! that are not built yet, config lookup and config errors, doctor.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use support::llm_server::{LlmServer, Reply};
use support::{Env, code, stderr, stdout, write_files};

const SUBCOMMANDS: &[&str] = &[
    "exec",
    "tool",
    "sessions",
    "review",
    "checkpoints",
    "rollback",
    "audit",
    "doctor",
];

#[test]
fn version_and_help() {
    let env = Env::new();
    let out = env.cmd().arg("--version").output().unwrap();
    assert_eq!(code(&out), 0);
    assert_eq!(
        stdout(&out).trim(),
        format!("agent-tui {}", env!("CARGO_PKG_VERSION"))
    );
    let out = env.cmd().arg("--help").output().unwrap();
    assert_eq!(code(&out), 0);
    let help = stdout(&out);
    for sub in SUBCOMMANDS {
        assert!(help.contains(sub), "--help lacks {sub}:\n{help}");
    }
    for flag in [
        "--config",
        "--provider",
        "--model",
        "--verbose",
        "--continue",
        "--resume",
    ] {
        assert!(help.contains(flag), "--help lacks {flag}");
    }
}

#[test]
fn every_subcommand_has_help() {
    let env = Env::new();
    let expectations: &[(&[&str], &[&str])] = &[
        (
            &["exec"],
            &[
                "--root",
                "--mode",
                "--json",
                "--apply",
                "--session",
                "--continue",
                "--max-tool-calls",
                "--answer",
                "PROMPT",
            ],
        ),
        (&["tool"], &["NAME", "JSON", "--root"]),
        (&["sessions"], &["list", "show", "--root", "--json"]),
        (
            &["review"],
            &[
                "SESSION",
                "--accept",
                "--reject",
                "--accept-all",
                "--apply",
                "--json",
            ],
        ),
        (&["checkpoints"], &["list", "show", "--root", "--json"]),
        (&["rollback"], &["CHECKPOINT", "--hunks", "--root"]),
        (&["audit", "verify"], &["--root"]),
        (&["doctor"], &["--config"]),
    ];
    for (words, needles) in expectations {
        let out = env.cmd().args(*words).arg("--help").output().unwrap();
        assert_eq!(code(&out), 0, "{words:?}");
        let help = stdout(&out);
        for n in *needles {
            assert!(help.contains(n), "{words:?} --help lacks {n}:\n{help}");
        }
    }
}

#[test]
fn the_tui_without_a_terminal_says_what_to_use_instead() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let runs: &[&[&str]] = &[&[root], &[], &["--continue"]];
    for args in runs {
        let out = env.cmd().args(*args).output().unwrap();
        assert_eq!(code(&out), 2, "{args:?}");
        let err = stderr(&out);
        assert_eq!(
            err.trim().lines().count(),
            1,
            "{args:?}: one clear line: {err}"
        );
        assert!(
            err.contains("needs a terminal") && err.contains("agent-tui exec"),
            "{args:?}: {err}"
        );
        assert!(stdout(&out).is_empty(), "{args:?} printed to stdout");
    }
}

/// A section written as an array is refused by name, never read into the
/// section's keys by position (`server = ["0.0.0.0:80"]` was a bind).
#[test]
fn an_array_for_a_section_is_a_configuration_error() {
    let env = Env::new();
    let cfg = env.home.path().join("array.toml");
    std::fs::write(&cfg, "server = [\"0.0.0.0:80\"]\n[git]\n").unwrap();
    for args in [&["doctor"][..], &["exec", "hi"]] {
        let out = env
            .cmd()
            .arg("--config")
            .arg(&cfg)
            .args(args)
            .output()
            .unwrap();
        assert_eq!(code(&out), 2, "{args:?}");
        let said = format!("{}{}", stdout(&out), stderr(&out));
        assert!(
            said.contains("server: expected a table, found an array"),
            "{args:?}: {said}"
        );
    }
}

#[test]
fn a_bad_keys_table_is_a_configuration_error() {
    let env = Env::new();
    let cfg = env.home.path().join("keys.toml");
    std::fs::write(&cfg, "[keys]\naply = \"ctrl+w\"\n").unwrap();
    let out = env
        .cmd()
        .args(["--config", cfg.to_str().unwrap(), "."])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(err.contains("[keys] aply: no such action"), "{err}");
    assert!(err.contains(&format!("{}:2:1: ", cfg.display())), "{err}");
    assert_eq!(
        err.matches(" cancel,").count(),
        1,
        "each action once: {err}"
    );
    // doctor says so too, as a mistake in the config.
    let out = env
        .cmd()
        .args(["--config", cfg.to_str().unwrap(), "doctor"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    assert!(
        stdout(&out).contains("keys        PROBLEM") && stdout(&out).contains(":2:1: [keys] aply"),
        "{}",
        stdout(&out)
    );
    std::fs::write(
        &cfg,
        "[keys]
apply = \"banana+zz\"\n",
    )
    .unwrap();
    let out = env
        .cmd()
        .args(["--config", cfg.to_str().unwrap(), "doctor"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    assert!(stdout(&out).contains("is not a key"), "{}", stdout(&out));
}

#[test]
fn usage_errors_exit_2() {
    let env = Env::new();
    let runs: &[&[&str]] = &[
        &["--bogus"],
        &["exec"],
        &["exec", "x", "--mode", "chat"],
        &["exec", "x", "--apply", "some"],
        &["exec", "x", "--session", "s", "--continue"],
        &["--continue", "--resume", "x"],
        &["tool"],
        &["rollback"],
        &["audit"],
        // Ids that name nothing, the same everywhere.
        &["sessions", "show", "s_nope"],
        &["sessions", "delete", "s_nope"],
        &["checkpoints", "show", "cp_nope"],
        &["rollback", "cp_nope"],
        &["review", "s_nope"],
    ];
    for args in runs {
        let out = env.cmd().args(*args).output().unwrap();
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn a_damaged_store_is_a_problem_store_check_finds() {
    let env = Env::new();
    let db = env.state_db();
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    std::fs::write(&db, vec![0x5a; 5000]).unwrap();
    let out = env.cmd().args(["store", "check"]).output().unwrap();
    assert_eq!(code(&out), 1, "{}{}", stdout(&out), stderr(&out));
    assert!(
        format!("{}{}", stdout(&out), stderr(&out)).contains("damaged"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
}

#[test]
fn missing_root_is_a_usage_error() {
    let env = Env::new();
    let out = env
        .cmd()
        .args(["tool", "list_files", "{}", "--root", "/definitely/not/here"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("/definitely/not/here"),
        "{}",
        stderr(&out)
    );
}

// ---------- configuration ----------

/// A tiny project and a way to observe the configured search limit.
fn results_with(
    env: &Env,
    extra: &[&str],
    setup: impl FnOnce(&mut std::process::Command),
) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..5 {
        write_files(dir.path(), &[(&format!("f{i}.txt"), "match\n")]);
    }
    let mut cmd = env.cmd();
    cmd.args(extra)
        .args(["tool", "search_project", r#"{"query": "match"}"#, "--root"])
        .arg(dir.path());
    setup(&mut cmd);
    cmd.output().unwrap()
}

fn count(out: &std::process::Output) -> usize {
    support::json_of(out)["results"].as_array().unwrap().len()
}

#[test]
fn config_lookup_order() {
    let env = Env::new();
    let cfg = |n: usize| format!("[limits]\nmax_search_results_default = {n}\n");
    let dir = env.home.path();
    std::fs::write(dir.join("flag.toml"), cfg(1)).unwrap();
    std::fs::write(dir.join("env.toml"), cfg(2)).unwrap();
    std::fs::create_dir_all(env.default_config_path().parent().unwrap()).unwrap();
    std::fs::write(env.default_config_path(), cfg(3)).unwrap();
    let flag = dir.join("flag.toml");
    let via_env = dir.join("env.toml");
    assert_eq!(
        count(&results_with(
            &env,
            &["--config", flag.to_str().unwrap()],
            |c| {
                c.env("AGENT_TUI_CONFIG", &via_env);
            }
        )),
        1,
        "--config wins"
    );
    assert_eq!(
        count(&results_with(&env, &[], |c| {
            c.env("AGENT_TUI_CONFIG", &via_env);
        })),
        2,
        "then $AGENT_TUI_CONFIG"
    );
    assert_eq!(count(&results_with(&env, &[], |_| {})), 3, "then XDG");
    std::fs::remove_file(env.default_config_path()).unwrap();
    assert_eq!(
        count(&results_with(&env, &[], |_| {})),
        5,
        "no file: defaults"
    );
}

#[test]
fn broken_config_reports_file_line_column_and_exits_2() {
    let env = Env::new();
    let path = env.home.path().join("bad.toml");
    let cases: &[(&str, &str, &str)] = &[
        (
            "[agent]\nmax_tool_calls_per_job = 3\nmax_toolcalls = 4\n",
            ":3:1:",
            "max_toolcalls",
        ),
        ("provider = \"openai\"\n[limits\n", ":2:", ""),
        (
            "[limits]\nmax_hunk_lines = \"many\"\n",
            ":2:18:",
            "max_hunk_lines",
        ),
        ("[ui]\ntheme = \"solarized\"\n", ":2:9:", "dark"),
        ("[providers.mine]\nmodel = \"x\"\n", ":1:", "kind"),
        (
            "[providers.openai]\napi_key = \"sk-live-123\"\n",
            ":2:1:",
            "api_key",
        ),
        (
            "[approvals]\nexec = \"sometimes\"\n",
            ":2:8:",
            "allowlisted-auto",
        ),
    ];
    for (text, position, needle) in cases {
        std::fs::write(&path, text).unwrap();
        let out = env
            .cmd()
            .args([
                "--config",
                path.to_str().unwrap(),
                "tool",
                "list_files",
                "{}",
            ])
            .output()
            .unwrap();
        assert_eq!(code(&out), 2, "{text}");
        let err = stderr(&out);
        let expected = format!("{}{position}", path.display());
        assert!(
            err.contains(&expected),
            "{text}: wanted {expected} in {err}"
        );
        assert!(err.contains(needle), "{text}: wanted {needle} in {err}");
        assert!(
            !err.contains("sk-live-123"),
            "a value in the file must not be echoed: {err}"
        );
        assert!(stdout(&out).is_empty());
    }
}

#[test]
fn invalid_values_name_the_key() {
    let env = Env::new();
    let path = env.home.path().join("bad.toml");
    std::fs::write(
        &path,
        "provider = \"nope\"\n[limits]\nmax_search_results_default = 80\n[providers.openai]\nbase_url = \"api.openai.com\"\n",
    )
    .unwrap();
    let out = env
        .cmd()
        .args(["doctor", "--config", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    for needle in [
        "provider = \"nope\"",
        "limits.max_search_results_default",
        "providers.openai.base_url",
    ] {
        assert!(err.contains(needle), "{needle} missing from {err}");
    }
}

#[test]
fn explicit_config_that_does_not_exist_is_an_error() {
    let env = Env::new();
    let out = env
        .cmd()
        .args(["--config", "/nope/agent.toml", "tool", "list_files", "{}"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("/nope/agent.toml"));
    let out = env
        .cmd()
        .env("AGENT_TUI_CONFIG", "/nope/env.toml")
        .args(["tool", "list_files", "{}"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("$AGENT_TUI_CONFIG"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn example_config_is_accepted_as_is() {
    let env = Env::new();
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/config.example.toml");
    let out = results_with(&env, &["--config", example], |_| {});
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

// ---------- doctor ----------

fn models_server() -> LlmServer {
    LlmServer::start_with_side(
        vec![],
        vec![Reply::Status {
            code: 200,
            headers: vec![],
            body: r#"{"object": "list", "data": [{"id": "m1"}, {"id": "m2"}]}"#.into(),
        }],
    )
}

#[test]
fn exec_without_a_provider_explains_setup() {
    let env = Env::new();
    if std::net::TcpStream::connect("127.0.0.1:11434").is_ok() {
        return; // a real Ollama here counts as a provider
    }
    let out = env.cmd().args(["exec", "hi"]).output().unwrap();
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("OPENAI_API_KEY"), "{}", stderr(&out));
}

#[test]
fn doctor_lists_models_with_the_key_and_never_prints_it() {
    let env = Env::new();
    let server = models_server();
    let secret = "sk-test-SECRET-1234567890";
    let started = Instant::now();
    let out = env
        .cmd()
        .env("OPENAI_API_KEY", secret)
        .env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
        .args(["doctor", "--root"])
        .arg(env.home.path())
        .output()
        .unwrap();
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(code(&out), 0, "{text}");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(!text.contains(secret), "key leaked: {text}");
    for needle in [
        "openai (OPENAI_API_KEY is set)",
        "model gpt-4.1",
        "$OPENAI_API_KEY is set",
        "answered (2 models listed)",
        "no file found",
    ] {
        assert!(text.contains(needle), "{needle} missing: {text}");
    }
    let state = env.home.path().join("state");
    assert!(
        text.contains(&format!("{} (from $AGENT_TUI_HOME)", state.display())),
        "{text}"
    );
    assert!(!state.exists(), "doctor must not create state");
    let req = &server.side_requests()[0];
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("GET", "/v1/models")
    );
    assert_eq!(
        req.header("authorization"),
        Some(format!("Bearer {secret}").as_str())
    );
}

#[test]
fn doctor_probes_anthropic_with_its_headers() {
    let env = Env::new();
    let server = models_server();
    let out = env
        .cmd()
        .env("ANTHROPIC_API_KEY", "ak-secret")
        .env("ANTHROPIC_BASE_URL", server.url())
        .arg("doctor")
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert!(stdout(&out).contains("anthropic (ANTHROPIC_API_KEY is set)"));
    let req = &server.side_requests()[0];
    assert_eq!(req.path, "/v1/models");
    assert_eq!(req.header("x-api-key"), Some("ak-secret"));
    assert_eq!(req.header("anthropic-version"), Some("2023-06-01"));
}

#[test]
fn doctor_flags_missing_key_bad_key_and_unreachable_server() {
    let env = Env::new();
    let cfg = env.home.path().join("c.toml");
    let write = |url: &str| {
        std::fs::write(
            &cfg,
            format!("provider = \"local\"\n[providers.local]\nkind = \"openai\"\nbase_url = \"{url}\"\napi_key_env = \"LOCAL_KEY_FOR_TEST\"\nmodel = \"m\"\n"),
        )
        .unwrap();
    };
    let doctor = |key: Option<&str>| {
        let mut cmd = env.cmd();
        if let Some(k) = key {
            cmd.env("LOCAL_KEY_FOR_TEST", k);
        }
        cmd.args(["doctor", "--config", cfg.to_str().unwrap()])
            .output()
            .unwrap()
    };
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    write(&format!("http://{closed}/v1"));
    let out = doctor(None);
    let text = stdout(&out);
    assert_eq!(code(&out), 1, "{text}");
    assert!(text.contains("$LOCAL_KEY_FOR_TEST is not set"), "{text}");
    assert!(text.contains("`provider` in the config file"), "{text}");
    let out = doctor(Some("k"));
    assert_eq!(code(&out), 1);
    assert!(stdout(&out).contains("cannot connect"), "{}", stdout(&out));
    let server = LlmServer::start_with_side(
        vec![],
        vec![Reply::Status {
            code: 401,
            headers: vec![],
            body: r#"{"error": {"message": "Incorrect API key provided"}}"#.into(),
        }],
    );
    write(&format!("{}/v1", server.url()));
    let out = doctor(Some("k"));
    assert_eq!(code(&out), 1);
    let text = stdout(&out);
    assert!(
        text.contains("401") && text.contains("Incorrect API key"),
        "{text}"
    );
}

/// `doctor` checks the providers jobs start on under `[routing]` and
/// `--routing`: `hybrid_auto` and `local` start on the local one, which is
/// down here; `remote` never uses it.
#[test]
fn doctor_checks_the_providers_the_routing_uses() {
    let env = Env::new();
    let list = || Reply::Status {
        code: 200,
        headers: vec![],
        body: r#"{"object": "list", "data": [{"id": "m1"}, {"id": "m2"}]}"#.into(),
    };
    let remote = LlmServer::start_with_side(vec![], (0..4).map(|_| list()).collect());
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let cfg = env.home.path().join("routing.toml");
    std::fs::write(
        &cfg,
        format!(
            "provider = \"remote\"\n\
             [providers.remote]\nkind = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"\"\nmodel = \"big\"\ncontext_window = 8192\ntool_protocol = \"native\"\n\
             [providers.local]\nkind = \"openai\"\nbase_url = \"http://{closed}/v1\"\napi_key_env = \"\"\nmodel = \"small\"\ncontext_window = 8192\n\
             [routing]\nmode = \"hybrid_auto\"\nlocal = \"local\"\nremote = \"remote\"\n",
            remote.url()
        ),
    )
    .unwrap();
    let doctor = |routing: Option<&str>| {
        let mut cmd = env.cmd();
        cmd.arg("--config").arg(&cfg).arg("doctor");
        if let Some(mode) = routing {
            cmd.args(["--routing", mode]);
        }
        let out = cmd.output().unwrap();
        (code(&out), format!("{}{}", stdout(&out), stderr(&out)))
    };
    let line = |text: &str, start: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with(start))
            .map(str::to_string)
            .collect()
    };
    // The config's hybrid_auto: both providers, the local one down.
    let (rc, text) = doctor(None);
    assert_eq!(rc, 1, "{text}");
    assert!(
        line(&text, "routing")[0].contains(
            "hybrid_auto (from [routing] mode): jobs start on local and fall back to remote"
        ),
        "{text}"
    );
    let providers = line(&text, "provider");
    assert_eq!(providers.len(), 2, "{text}");
    assert!(
        providers[0].contains("local ([routing] local; every job starts here): model small"),
        "{text}"
    );
    assert!(providers[1].contains("remote ([routing] remote"), "{text}");
    let reachable = line(&text, "reachable");
    assert!(
        reachable[0].contains("PROBLEM") && reachable[0].contains("cannot connect"),
        "{text}"
    );
    assert!(
        reachable[1].contains("answered (2 models listed)"),
        "{text}"
    );
    // --routing local: the local one only.
    let (rc, text) = doctor(Some("local"));
    assert_eq!(rc, 1, "{text}");
    assert!(line(&text, "routing")[0].contains("local (from --routing): jobs run on local only"));
    assert_eq!(line(&text, "provider").len(), 1, "{text}");
    assert!(
        line(&text, "provider")[0].contains("local ([routing] local)"),
        "{text}"
    );
    // --routing remote: the remote one, which answers.
    let (rc, text) = doctor(Some("remote"));
    assert_eq!(rc, 0, "{text}");
    assert!(line(&text, "routing")[0].contains("remote (from --routing): jobs run on remote only"));
    assert_eq!(line(&text, "provider").len(), 1, "{text}");
    assert!(!text.contains("PROBLEM"), "{text}");
}

#[test]
fn doctor_answers_within_five_seconds_when_the_server_stalls() {
    let env = Env::new();
    let server = LlmServer::start_with_side(vec![], vec![Reply::Stall { secs: 20 }]);
    let started = Instant::now();
    let out = env
        .cmd()
        .env("OPENAI_API_KEY", "k")
        .env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
        .arg("doctor")
        .output()
        .unwrap();
    assert_eq!(code(&out), 1);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(stdout(&out).contains("PROBLEM"), "{}", stdout(&out));
}

#[test]
fn doctor_without_any_provider_explains_setup() {
    let env = Env::new();
    let ollama_up = std::net::TcpStream::connect("127.0.0.1:11434").is_ok();
    let out = env.cmd().arg("doctor").output().unwrap();
    if ollama_up {
        assert!(stdout(&out).contains("ollama"));
    } else {
        assert_eq!(code(&out), 1);
        assert!(stdout(&out).contains("OPENAI_API_KEY"), "{}", stdout(&out));
    }
    let out = env
        .cmd()
        .args(["doctor", "--provider", "nope"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("unknown provider \"nope\""),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_reader_that_stops_early_ends_the_output_quietly() {
    let env = Env::new();
    let mut child = env
        .cmd()
        .args(["tool", "--list"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Close the reading end before anything is written (as `| head -0`).
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        matches!(out.status.code(), Some(0) | Some(141)),
        "{:?}",
        out.status
    );
}

#[test]
fn verbose_logs_into_the_state_home_never_a_secret() {
    use support::jobs::{KEY, config, exec, read_then_answer};
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    write_files(root.path(), &[("a.txt", "alpha\n")]);
    let log = env.home.path().join("state/logs/agent-tui.log");
    let run = |verbose: &[&str]| {
        let server = LlmServer::start(read_then_answer("a.txt", "It says alpha."));
        let cfg = config(&env, "openai", &server.url(), "");
        let mut args = verbose.to_vec();
        args.push("what does a.txt say?");
        let r = exec(&env, &cfg, root.path(), &args);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(
            !r.stderr.contains("model request"),
            "logs stay off the screen"
        );
    };
    run(&[]);
    assert!(!log.exists(), "nothing is logged without -v");
    run(&["-v"]);
    let text = std::fs::read_to_string(&log).unwrap();
    for needle in [
        "agent-tui started",
        "job started",
        "model request",
        "status=200",
        "tool call",
        "tool=read_file",
        "job completed",
    ] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }
    assert!(
        !text.contains("DEBUG"),
        "-v leaves per-event lines out:\n{text}"
    );
    run(&["-vv"]);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("event=tool.call.completed"), "{text}");
    assert!(!text.contains(KEY), "the API key reached the log:\n{text}");
    assert!(
        !text.contains("alpha"),
        "file text reached the log:\n{text}"
    );
}

/// `doctor` names the verify command: set, detected (and from what), or off.
#[test]
fn doctor_names_the_verify_command() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let doctor = |cfg: Option<&std::path::Path>| {
        let mut cmd = env.cmd();
        if let Some(cfg) = cfg {
            cmd.arg("--config").arg(cfg);
        }
        let out = cmd
            .args(["doctor", "--root"])
            .arg(dir.path())
            .output()
            .unwrap();
        stdout(&out)
            .lines()
            .find(|l| l.starts_with("verify"))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        doctor(None).contains("off: no [verify] command"),
        "{}",
        doctor(None)
    );
    std::fs::write(dir.path().join("go.mod"), "module x\n").unwrap();
    assert!(
        doctor(None).contains("go vet ./... && go test ./... (detected from go.mod"),
        "{}",
        doctor(None)
    );
    let cfg = env.home.path().join("verify.toml");
    std::fs::write(&cfg, "[verify]\ncommand = \"make check\"\n").unwrap();
    assert!(
        doctor(Some(&cfg)).contains("make check (from the config)"),
        "{}",
        doctor(Some(&cfg))
    );
    std::fs::write(&cfg, "[verify]\ntimeout_secs = 0\n").unwrap();
    let out = env
        .cmd()
        .arg("--config")
        .arg(&cfg)
        .args(["doctor", "--root"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        format!("{}{}", stdout(&out), stderr(&out))
            .contains("verify.timeout_secs must be at least 1"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
}

#[test]
fn doctor_names_the_folders_and_servers_the_config_grants() {
    let env = Env::new();
    let cache = tempfile::tempdir().unwrap();
    let cfg = env.home.path().join("grants.toml");
    std::fs::write(
        &cfg,
        format!(
            "[exec]\nwritable = [\"{}\", \"/no/such/folder\"]\n\
             [mcp_servers.files]\ncommand = \"npx\"\n[mcp_servers.old]\ncommand = \"x\"\nenabled = false\n",
            cache.path().display()
        ),
    )
    .unwrap();
    let out = env
        .cmd()
        .arg("--config")
        .arg(&cfg)
        .args(["doctor", "--root"])
        .arg(env.home.path())
        .output()
        .unwrap();
    let said = stdout(&out);
    assert!(
        said.contains(&format!(
            "{} (commands may write there too)",
            cache.path().display()
        )),
        "{said}"
    );
    assert!(
        said.contains("PROBLEM: /no/such/folder (in [exec] writable) does not exist"),
        "{said}"
    );
    assert!(said.contains("2 servers (files, old (disabled))"), "{said}");
}
