//! MCP servers through the real binary, against real servers: the
//! reference servers from the npm registry (filesystem and everything, over
//! stdio and streamable HTTP; installed by `.ci/run` into
//! tests/mcp-servers) and a small misbehaving server of our own
//! (tests/fixtures/mcp/fake_server.py) for what the reference servers never
//! do: die mid-call, flood stdout, hang, answer garbage.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};
use support::jobs::{KEY, NO_RETRY, config_with, exec, one_turn, sse, tool_results};
use support::llm_server::{LlmServer, openai};
use support::{Env, code, stdout};

/// The installed reference servers, or `None` (with the reason printed)
/// where they are not installed; CI sets AGENT_TUI_REQUIRE_MCP=1.
fn reference() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp-servers/node_modules/@modelcontextprotocol");
    let node = Command::new("node").arg("--version").output().is_ok();
    if dir.join("server-everything/dist/index.js").exists() && node {
        return Some(dir);
    }
    let why = "the reference MCP servers are not installed (npm ci --prefix tests/mcp-servers)";
    assert!(
        std::env::var("AGENT_TUI_REQUIRE_MCP").as_deref() != Ok("1"),
        "{why}"
    );
    eprintln!("skipped: {why}");
    None
}

fn fake() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/mcp/fake_server.py")
        .display()
        .to_string()
}

fn stdio_server(name: &str, command: &str, args: &[&str], extra: &str) -> String {
    format!(
        "[mcp_servers.{name}]\ncommand = {}\nargs = {}\n{extra}\n",
        json!(command),
        json!(args)
    )
}

fn write_config(env: &Env, servers: &str) -> PathBuf {
    let path = env.home.path().join("mcp.toml");
    std::fs::write(&path, servers).unwrap();
    path
}

fn mcp_list(env: &Env, cfg: &Path, root: &Path) -> (i32, Value) {
    let out = env
        .cmd()
        .arg("--config")
        .arg(cfg)
        .args(["mcp", "list", "--json", "--root"])
        .arg(root)
        .output()
        .unwrap();
    let text = stdout(&out);
    (
        code(&out),
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}")),
    )
}

fn server<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("{name} in {list}"))
}

fn tool_names(server: &Value) -> Vec<String> {
    server["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

/// Processes whose command line holds `marker`.
fn running(marker: &str) -> usize {
    let out = Command::new("pgrep").args(["-f", marker]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).lines().count()
}

#[test]
fn mcp_list_starts_each_server_and_says_how_it_went() {
    let Some(npm) = reference() else { return };
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    let fs_js = npm.join("server-filesystem/dist/index.js");
    let root_arg = root.path().to_str().unwrap().to_string();
    let servers = [
        stdio_server("files", "node", &[fs_js.to_str().unwrap(), &root_arg], ""),
        stdio_server("exits", "false", &[], ""),
        stdio_server("silent", "sleep", &["37"], "startup_timeout_secs = 1"),
        stdio_server(
            "garbage",
            "python3",
            &[&fake(), "garbage"],
            "startup_timeout_secs = 2",
        ),
        stdio_server("off", "false", &[], "enabled = false"),
    ]
    .concat();
    let cfg = write_config(&env, &servers);
    let (c, list) = mcp_list(&env, &cfg, root.path());
    assert_eq!(c, 1, "one failed: exit 1; {list}");
    let files = server(&list, "files");
    assert_eq!(
        (&files["state"], &files["transport"]),
        (&json!("running"), &json!("stdio"))
    );
    let names = tool_names(files);
    assert!(
        names.contains(&"mcp__files__read_text_file".to_string()),
        "{names:?}"
    );
    assert_eq!(files["tool_count"], names.len());
    assert_eq!(server(&list, "exits")["state"], "failed");
    let silent = &server(&list, "silent")["error"];
    assert!(silent.as_str().unwrap().contains("within 1 s"), "{silent}");
    let garbage = &server(&list, "garbage")["error"];
    assert!(
        garbage.as_str().unwrap().contains("fake server: started"),
        "stderr tail: {garbage}"
    );
    assert_eq!(server(&list, "off")["state"], "disabled");
    assert_eq!(running("sleep 37"), 0, "a server that hung is gone");
    assert_eq!(running(&root_arg), 0, "servers are stopped afterwards");

    // Bad configuration is refused before anything starts.
    let cfg = write_config(
        &env,
        "[mcp_servers.\"a__b\"]\ncommand = \"x\"\n[mcp_servers.both]\ncommand = \"x\"\nurl = \"http://127.0.0.1:1/mcp\"\n",
    );
    let out = env
        .cmd()
        .arg("--config")
        .arg(&cfg)
        .args(["mcp", "list"])
        .output()
        .unwrap();
    let err = support::stderr(&out);
    assert_eq!(code(&out), 2, "{err}");
    assert!(
        err.contains("mcp_servers.a__b") && err.contains("mcp_servers.both"),
        "{err}"
    );
}

/// One job whose model calls `calls` in one turn, with `servers` and
/// `approvals` configured.
fn job_calling(
    env: &Env,
    root: &Path,
    servers: &str,
    approvals: &str,
    calls: &[(&str, Value)],
) -> (Vec<Value>, LlmServer) {
    one_turn(env, root, calls, &format!("{approvals}\n{servers}"))
}

#[test]
fn a_job_offers_server_tools_asks_before_calling_and_keeps_keys_away() {
    let Some(npm) = reference() else { return };
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("notes.txt"), "from the project\n").unwrap();
    let every = npm.join("server-everything/dist/index.js");
    let fs_js = npm.join("server-filesystem/dist/index.js");
    let root_arg = root.path().canonicalize().unwrap().display().to_string();
    let servers = [
        stdio_server(
            "every",
            "node",
            &[every.to_str().unwrap(), "stdio"],
            "env = { FROM_CONFIG = \"yes\" }",
        ),
        stdio_server("files", "node", &[fs_js.to_str().unwrap(), &root_arg], ""),
    ]
    .concat();
    let echo = ("mcp__every__echo", json!({"message": "hello there"}));
    // individual (the default): asked, and headless means denied.
    let (events, llm) = job_calling(&env, root.path(), &servers, "", std::slice::from_ref(&echo));
    let offered: Vec<String> = llm.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(
        offered.contains(&"mcp__every__echo".to_string()),
        "{offered:?}"
    );
    assert!(offered.contains(&"mcp__files__read_text_file".to_string()));
    let asked: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "approval.requested")
        .collect();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0]["data"]["name"], "mcp__every__echo");
    assert_eq!(asked[0]["data"]["arguments"]["message"], "hello there");
    assert!(
        tool_results(&llm)[0].contains("did not allow")
            || tool_results(&llm)[0].contains("nobody could be asked")
    );
    let states: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "mcp.servers")
        .collect();
    assert_eq!(
        states[0]["data"]["servers"][0]["state"], "running",
        "{}",
        states[0]
    );

    // auto: the calls run; what the server says reaches the model.
    let read = (
        "mcp__files__read_text_file",
        json!({"path": format!("{root_arg}/notes.txt")}),
    );
    let env_call = ("mcp__every__get-env", json!({}));
    let (_, llm) = job_calling(
        &env,
        root.path(),
        &servers,
        "[approvals]\nmcp = \"auto\"",
        &[echo, read, env_call],
    );
    let results = tool_results(&llm);
    assert!(results[0].contains("Echo: hello there"), "{}", results[0]);
    assert!(results[1].contains("from the project"), "{}", results[1]);
    // The server's environment has its own setting, never our API key.
    assert!(results[2].contains("FROM_CONFIG"), "{}", results[2]);
    assert!(
        !results[2].contains(KEY) && !results[2].contains("TEST_LLM_KEY"),
        "{}",
        results[2]
    );
    assert_eq!(running(&root_arg), 0, "servers end with the run");

    // Ask mode offers no MCP tools and starts no server.
    let llm = LlmServer::start(vec![sse(openai::text(&["ok"]))]);
    let cfg = config_with(
        &env,
        "openai",
        &llm.url(),
        "",
        &format!("{NO_RETRY}\n{servers}"),
    );
    let run = exec(
        &env,
        &cfg,
        root.path(),
        &["--json", "--mode", "ask", "what is here?"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.events().iter().all(|e| e["type"] != "mcp.servers"));
    let offered = llm.requests()[0].body["tools"].to_string();
    assert!(!offered.contains("mcp__"), "{offered}");
}

#[test]
fn streamable_http_servers_work_like_stdio_ones() {
    let Some(npm) = reference() else { return };
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut node: Child = Command::new("node")
        .arg(npm.join("server-everything/dist/index.js"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(node.stderr.take().unwrap()).lines();
    loop {
        let line = lines.next().expect("server ended").unwrap();
        if line.contains("listening on port") {
            break;
        }
    }
    let servers = format!("[mcp_servers.web]\nurl = \"http://127.0.0.1:{port}/mcp\"\n");
    let cfg = write_config(&env, &servers);
    let (c, list) = mcp_list(&env, &cfg, root.path());
    assert_eq!(c, 0, "{list}");
    assert_eq!(server(&list, "web")["transport"], "http");
    assert!(tool_names(server(&list, "web")).contains(&"mcp__web__get-sum".to_string()));
    let sum = ("mcp__web__get-sum", json!({"a": 2, "b": 3}));
    let (_, llm) = job_calling(
        &env,
        root.path(),
        &servers,
        "[approvals]\nmcp = \"auto\"",
        &[sum],
    );
    assert!(
        tool_results(&llm)[0].contains("is 5"),
        "{:?}",
        tool_results(&llm)
    );
    let _ = node.kill();
    let _ = node.wait();
    // The server gone: a clear failure that names it.
    let (c, list) = mcp_list(&env, &cfg, root.path());
    assert_eq!(c, 1);
    assert!(
        server(&list, "web")["error"]
            .as_str()
            .unwrap()
            .contains(&format!("127.0.0.1:{port}"))
    );
}

#[test]
fn a_server_that_dies_floods_or_fails_is_named_and_restarted() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    let servers = stdio_server("fake", "python3", &[&fake()], "tool_timeout_secs = 2");
    let call = |name: &str, args: Value| (format!("mcp__fake__{name}"), args);
    let calls = [
        call("echo", json!({"text": "one"})),
        call("die", json!({})),
        call("echo", json!({"text": "after a restart"})),
        call("flood", json!({})),
        call("echo", json!({"text": "after the flood"})),
        call("fail", json!({})),
        call("nosuch", json!({})),
        call("echo", json!({"wrong": 1})),
        call("garbled", json!({})),
        ("mcp__elsewhere__echo".to_string(), json!({})),
        call("echo", json!({"text": "still here"})),
    ];
    let refs: Vec<(&str, Value)> = calls.iter().map(|(n, a)| (n.as_str(), a.clone())).collect();
    let (events, llm) = job_calling(
        &env,
        root.path(),
        &servers,
        "[approvals]\nmcp = \"auto\"",
        &refs,
    );
    let r = tool_results(&llm);
    assert!(r[0].contains("echo: one"), "{}", r[0]);
    assert!(
        r[1].contains("mcp_server_failed") && r[1].contains("`fake`"),
        "{}",
        r[1]
    );
    assert!(
        r[1].contains("dying on purpose"),
        "the tail of its stderr: {}",
        r[1]
    );
    assert!(r[2].contains("echo: after a restart"), "{}", r[2]);
    assert!(r[3].contains("within 2 s"), "{}", r[3]);
    assert!(
        !r[3].contains("dying on purpose"),
        "an earlier process's stderr: {}",
        r[3]
    );
    assert!(r[4].contains("echo: after the flood"), "{}", r[4]);
    assert!(
        r[5].contains("mcp_tool_error") && r[5].contains("it went wrong"),
        "{}",
        r[5]
    );
    assert!(r[6].contains("unknown_tool"), "{}", r[6]);
    assert!(
        r[7].contains("invalid_arguments") && r[7].contains("text"),
        "{}",
        r[7]
    );
    // The front end heard about the failures.
    let failed = events
        .iter()
        .filter(|e| e["type"] == "mcp.servers" && e["data"]["servers"][0]["state"] == "failed")
        .count();
    assert!(failed >= 2, "{failed}");
    assert_eq!(running(&fake()), 0);
    // Its stderr went to a log, never to the screen.
    let log = std::fs::read_to_string(env.home.path().join("state/logs/mcp-fake.log")).unwrap();
    assert!(log.contains("dying on purpose"), "{log}");
}

#[test]
fn a_call_of_a_server_that_failed_to_start_names_it_its_exit_and_its_stderr() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    let servers = format!(
        "{}{}",
        stdio_server("crashing", "python3", &[&fake(), "crash"], ""),
        stdio_server("fine", "python3", &[&fake()], "")
    );
    let calls = [
        ("mcp__crashing__echo", json!({"text": "hi"})),
        ("mcp__fine__echo", json!({"text": "hi"})),
        ("mcp__nowhere__echo", json!({"text": "hi"})),
    ];
    let (events, llm) = job_calling(
        &env,
        root.path(),
        &servers,
        "[approvals]\nmcp = \"auto\"",
        &calls,
    );
    // The model hears which server, how it ended and what it said: no
    // "unknown tool" list for it to guess from.
    let r = tool_results(&llm);
    for what in [
        "mcp_server_failed",
        "`crashing`",
        "exited with status 3",
        "cannot open its database",
    ] {
        assert!(r[0].contains(what), "{what} in {}", r[0]);
    }
    assert!(!r[0].contains("unknown_tool"), "{}", r[0]);
    assert!(r[1].contains("echo: hi"), "{}", r[1]);
    // A server that is not configured at all is still an unknown tool.
    assert!(r[2].contains("unknown_tool"), "{}", r[2]);
    // `exec --json` carries the same error in the call's completion.
    let done = events
        .iter()
        .find(|e| e["type"] == "tool.call.completed" && e["data"]["name"] == "mcp__crashing__echo")
        .unwrap_or_else(|| panic!("{events:?}"));
    let text = done.to_string();
    assert!(
        text.contains("mcp_server_failed") && text.contains("exited with status 3"),
        "{text}"
    );
    assert_eq!(running(&format!("{} crash", fake())), 0);
}

#[test]
fn a_server_is_restarted_at_most_three_times_a_job() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    let servers = stdio_server("fake", "python3", &[&fake()], "");
    let die = ("mcp__fake__die", json!({}));
    let calls = vec![die.clone(); 5];
    let (_, llm) = job_calling(
        &env,
        root.path(),
        &servers,
        "[approvals]\nmcp = \"auto\"",
        &calls,
    );
    let r = tool_results(&llm);
    assert_eq!(r.len(), 5);
    assert!(
        r[3].contains("dying on purpose"),
        "the third restart still ran: {}",
        r[3]
    );
    assert!(r[4].contains("restarted 3 times"), "{}", r[4]);
}

#[test]
fn a_restarted_server_is_not_blamed_for_the_last_ones_words() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    let servers = stdio_server("fake", "python3", &[&fake()], "tool_timeout_secs = 2");
    let calls = [
        ("mcp__fake__die", json!({})),
        ("mcp__fake__hang", json!({})),
    ];
    let (_, llm) = job_calling(
        &env,
        root.path(),
        &servers,
        "[approvals]\nmcp = \"auto\"",
        &calls,
    );
    let r = tool_results(&llm);
    assert!(r[0].contains("dying on purpose"), "{}", r[0]);
    assert!(r[1].contains("within 2 s"), "{}", r[1]);
    assert!(!r[1].contains("dying on purpose"), "{}", r[1]);
}

#[test]
fn a_window_too_small_for_a_servers_tools_names_the_server() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    let server = LlmServer::start(vec![]);
    let cfg = support::jobs::config(&env, "openai", &server.url(), "context_window = 8192");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str(&stdio_server(
        "lots",
        "python3",
        &[&fake(), "--many", "200"],
        "",
    ));
    std::fs::write(&cfg, text).unwrap();
    let run = support::jobs::exec(&env, &cfg, root.path(), &["--json", "do it"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let failed = run.events().last().cloned().unwrap();
    let error = failed["data"]["error"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(failed["data"]["code"], "context_overflow", "{failed}");
    assert!(
        error.contains("Most of it is the tools' definitions") && error.contains("(lots)"),
        "{error}"
    );
    assert!(server.requests().is_empty(), "nothing was sent");
}
