//! `run_command` through the real binary: the approval policies of
//! `[approvals] exec` in a headless job (denied: nobody can be asked;
//! allow-listed: runs; never: refused), what the command sees (no API keys,
//! the agent root, no shell), timeouts that end the whole process group,
//! capped output and the audit record.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;

use serde_json::{Value, json};
use std::process::Command;
use support::jobs::{KEY, NO_RETRY, config_with, exec, of_type, one_turn, sse, tool_results};
use support::llm_server::{LlmServer, openai};
use support::{Env, code, stderr, stdout};

/// A job whose model runs `command` once, then answers.
fn run_in_job(env: &Env, root: &Path, command: &str, tables: &str) -> (Vec<Value>, LlmServer) {
    one_turn(
        env,
        root,
        &[("run_command", json!({ "command": command }))],
        tables,
    )
}

/// What the model was told about its call (the tool result it got back).
fn tool_result_sent(server: &LlmServer) -> String {
    tool_results(server).remove(0)
}

#[test]
fn individual_asks_and_a_headless_run_denies() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran.txt");
    let command = format!("touch {}", marker.display());
    let (events, server) = run_in_job(&env, dir.path(), &command, "");
    let asked = of_type(&events, "approval.requested");
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0]["data"]["arguments"]["command"], command.as_str());
    // The request says how the command would be held in.
    let sandbox = asked[0]["data"]["sandbox"].as_str().unwrap();
    assert!(
        sandbox.starts_with("Landlock") || sandbox.contains("unconfined"),
        "{sandbox}"
    );
    assert_eq!(asked[0]["data"]["cwd"], ".");
    assert_eq!(
        asked[0]["data"]["root"],
        dir.path().canonicalize().unwrap().display().to_string()
    );
    let resolved = of_type(&events, "approval.resolved");
    assert_eq!(resolved[0]["data"]["approved"], false);
    assert!(
        resolved[0]["data"]["by"]
            .as_str()
            .unwrap()
            .starts_with("no_user")
    );
    assert!(!marker.exists(), "a denied command never runs");
    let told = tool_result_sent(&server);
    assert!(
        told.contains("denied") && told.contains("nobody could be asked"),
        "{told}"
    );
    let audit = env.audit_records();
    assert!(
        audit
            .iter()
            .any(|r| r["action"] == "approval" && r["target"] == "c1" && r["approved"] == false),
        "{audit:?}"
    );
    // The job waited for the user while the question was open.
    let statuses: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let at = statuses
        .iter()
        .position(|t| *t == "approval.requested")
        .unwrap();
    assert_eq!(statuses[at + 1], "approval.resolved");
}

#[test]
fn allowlisted_auto_runs_allowed_commands_unasked() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(
        dir.path().join("probe.sh"),
        "pwd; echo key=${TEST_LLM_KEY:-none} other=${OTHER_API_KEY:-none}; echo oops >&2; exit 3\n",
    )
    .unwrap();
    let tables = "[approvals]\nexec = \"allowlisted-auto\"\n[exec]\nallow = [\"sh probe.sh\"]";
    // The command sees the agent root as its directory and no API keys.
    let (events, server) = run_in_job(&env, dir.path(), "sh probe.sh", tables);
    assert!(of_type(&events, "approval.requested").is_empty());
    let resolved = of_type(&events, "approval.resolved");
    assert_eq!(resolved[0]["data"]["by"], "allowlist");
    let done = of_type(&events, "tool.call.completed");
    let result = &done[0]["data"]["result"];
    assert_eq!(done[0]["data"]["ok"], true);
    assert_eq!(result["exit_code"], 3);
    let out = result["stdout"].as_str().unwrap();
    assert!(
        out.starts_with(&dir.path().canonicalize().unwrap().display().to_string()),
        "{out}"
    );
    assert!(out.contains("key=none other=none"), "the key leaked: {out}");
    assert!(!out.contains(KEY));
    assert_eq!(result["stderr"], "oops\n");
    assert_eq!(result["truncated"], false);
    assert!(tool_result_sent(&server).contains("\"exit_code\":3"));

    // Not on the list: asked (and so denied here).
    let (events, _server) = run_in_job(&env, dir.path(), "rm -rf sub", tables);
    assert_eq!(of_type(&events, "approval.requested").len(), 1);
    assert!(dir.path().join("sub").exists());
}

#[test]
fn inline_code_is_asked_whatever_the_allow_list_says() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran.txt");
    let tables = "[approvals]\nexec = \"allowlisted-auto\"\n[exec]\n\
                  allow = [\"sh\", \"env\", \"python3\", \"timeout\", \"git\", \"sed\"]";
    assert!(
        std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(dir.path())
            .status()
            .unwrap()
            .success()
    );
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    for command in [
        format!("timeout 5 env -S \"touch {}\"", marker.display()),
        format!("git -c alias.q='!touch {}' q", marker.display()),
        format!("sed -n '1e touch {}' a.txt", marker.display()),
        format!("sh -c 'touch {}'", marker.display()),
        format!("env A=1 sh -c 'touch {}'", marker.display()),
        format!("timeout 5 bash -lc 'touch {}'", marker.display()),
        format!("python3 -c 'open(\"{}\", \"w\")'", marker.display()),
    ] {
        let (events, server) = run_in_job(&env, dir.path(), &command, tables);
        assert_eq!(of_type(&events, "approval.requested").len(), 1, "{command}");
        assert!(!marker.exists(), "{command} ran unasked");
        assert!(tool_result_sent(&server).contains("denied"), "{command}");
    }
}

#[test]
fn never_refuses_and_shell_syntax_is_refused_before_asking() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let (events, server) = run_in_job(&env, dir.path(), "echo hi", "[approvals]\nexec = \"never\"");
    assert!(of_type(&events, "approval.requested").is_empty());
    let done = of_type(&events, "tool.call.completed");
    assert_eq!(done[0]["data"]["error"]["code"], "not_approved");
    assert!(tool_result_sent(&server).contains("approvals.exec = \\\"never\\\""));
    let offered = server.requests()[0].body["tools"].to_string();
    assert!(
        !offered.contains("run_command"),
        "switched off, so not offered"
    );

    let (events, _) = run_in_job(&env, dir.path(), "ls | wc -l", "");
    assert!(of_type(&events, "approval.requested").is_empty());
    let done = of_type(&events, "tool.call.completed");
    assert!(
        done[0]["data"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("needs a shell")
    );
}

#[test]
fn run_command_is_offered_only_in_agent_mode() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let server = LlmServer::start(vec![sse(openai::text(&["fine"]))]);
    let cfg = config_with(&env, "openai", &server.url(), "", NO_RETRY);
    let run = exec(&env, &cfg, dir.path(), &["--mode", "ask", "hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let offered = server.requests()[0].body["tools"].to_string();
    assert!(!offered.contains("run_command"), "{offered}");
}

/// `agent-tui tool run_command` runs it directly (the user typed it).
fn tool(env: &Env, root: &Path, args: Value, config: &str) -> (i32, Value) {
    let cfg = env.home.path().join("tool.toml");
    std::fs::write(&cfg, config).unwrap();
    let out = env
        .cmd()
        .env("OPENAI_API_KEY", "sk-must-not-leak")
        .arg("--config")
        .arg(&cfg)
        .args(["tool", "run_command", &args.to_string(), "--root"])
        .arg(root)
        .output()
        .unwrap();
    (code(&out), serde_json::from_str(&stdout(&out)).unwrap())
}

#[test]
fn timeouts_end_the_process_group_and_output_is_capped() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("child.pid");
    // The shell starts a grandchild that would outlive a plain kill.
    let command = format!("sh -c 'sleep 30 & echo $! > {}; wait'", pid_file.display());
    let started = std::time::Instant::now();
    let (c, result) = tool(
        &env,
        dir.path(),
        json!({"command": command, "timeout_secs": 1}),
        "",
    );
    assert_eq!(c, 0, "{result}");
    assert!(started.elapsed().as_secs_f64() < 5.0);
    assert_eq!(result["timed_out"], true);
    assert_eq!(result["exit_code"], Value::Null);
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let alive = Path::new("/proc").join(pid.trim());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    while alive.exists()
        && !std::fs::read_to_string(alive.join("stat")).is_ok_and(|s| s.contains(") Z "))
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the grandchild survived the timeout"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }

    let (_, result) = tool(
        &env,
        dir.path(),
        json!({"command": "seq 1 100000"}),
        "[exec]\nmax_output_bytes = 1000\n",
    );
    assert_eq!(result["truncated"], true);
    assert_eq!(result["stdout"].as_str().unwrap().len(), 1000);
    assert_eq!(result["exit_code"], 0);

    let (_, result) = tool(&env, dir.path(), json!({"command": "env"}), "");
    assert!(
        !result["stdout"]
            .as_str()
            .unwrap()
            .contains("sk-must-not-leak")
    );
}

/// Whether process `pid` (from a pid file) is gone or a zombie.
fn gone(pid: &str) -> bool {
    let proc = Path::new("/proc").join(pid.trim());
    !proc.exists() || std::fs::read_to_string(proc.join("stat")).is_ok_and(|s| s.contains(") Z "))
}

#[test]
fn what_a_command_leaves_behind_ends_with_it() {
    // A background job, a `setsid` child (a session of its own) and a
    // double fork: all of them would write into the root after the
    // command's checkpoint. They end when the command ends, or at its
    // timeout, and none of them holds the command open.
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    if !landlock_here(&env, dir.path()) {
        return;
    }
    let script = dir.path().join("bg.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nsleep 40 & echo $! > bg.pid\n\
         setsid sh -c 'echo $$ > sid.pid; sleep 1; echo late > late.txt' &\n\
         (sh -c 'echo $$ > orphan.pid; sleep 1; echo late > orphan.txt' &)\n\
         sleep 0.3; echo done\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let started = std::time::Instant::now();
    let (c, result) = tool(&env, dir.path(), json!({"command": "./bg.sh"}), "");
    assert_eq!(c, 0, "{result}");
    assert!(started.elapsed().as_secs_f64() < 3.0, "{result}");
    assert_eq!(result["exit_code"], 0, "{result}");
    assert_eq!(result["stdout"], "done\n");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    for pid in ["bg.pid", "sid.pid", "orphan.pid"] {
        let pid = std::fs::read_to_string(dir.path().join(pid)).unwrap();
        assert!(gone(&pid), "{pid} outlived the command");
    }
    assert!(!dir.path().join("late.txt").exists());
    assert!(!dir.path().join("orphan.txt").exists());

    // At the timeout: the escaped child goes with the command.
    let started = std::time::Instant::now();
    let (_, result) = tool(
        &env,
        dir.path(),
        json!({"command": "sh -c 'echo up; setsid sh -c \"echo $$ > t.pid; sleep 2; echo late > t.txt\" & sleep 30'", "timeout_secs": 1}),
        "",
    );
    assert!(started.elapsed().as_secs_f64() < 4.0, "{result}");
    assert_eq!(result["timed_out"], true, "{result}");
    assert_eq!(result["stdout"], "up\n");
    let pid = std::fs::read_to_string(dir.path().join("t.pid")).unwrap();
    assert!(gone(&pid), "the escaped child outlived the timeout");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(!dir.path().join("t.txt").exists());
}

#[test]
fn a_killed_agent_takes_its_command_along() {
    // The runner's end of the lifeline closes when it dies, however it
    // dies: the wrapper ends the command and what it started.
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    if !landlock_here(&env, dir.path()) {
        return;
    }
    let cfg = env.home.path().join("tool.toml");
    std::fs::write(&cfg, "").unwrap();
    let command = "sh -c 'setsid sh -c \"echo $$ > k.pid; sleep 30\" & sleep 30'";
    let mut agent = env
        .cmd()
        .arg("--config")
        .arg(&cfg)
        .args([
            "tool",
            "run_command",
            &json!({"command": command}).to_string(),
            "--root",
        ])
        .arg(dir.path())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid_file = dir.path().join("k.pid");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !pid_file.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the command never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(100));
    agent.kill().unwrap();
    agent.wait().unwrap();
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    while !gone(&pid) {
        assert!(
            std::time::Instant::now() < deadline,
            "the command outlived the agent"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn bad_commands_and_directories_get_clear_errors() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    for (args, needle) in [
        (
            json!({"command": "no-such-program-xyz"}),
            "cannot start `no-such-program-xyz`",
        ),
        (
            json!({"command": "ls", "cwd": "../"}),
            "climbs out of the agent root",
        ),
        (
            json!({"command": "ls", "cwd": "missing"}),
            "not a directory",
        ),
        (json!({"command": "echo 'open"}), "cannot split"),
    ] {
        let (c, result) = tool(&env, dir.path(), args.clone(), "");
        assert_eq!(c, 1, "{args}: {result}");
        let message = result["error"]["message"].as_str().unwrap();
        assert!(message.contains(needle), "{args}: {message}");
    }
}

/// What the job's one command printed.
fn command_stdout(events: &[Value]) -> String {
    of_type(events, "tool.call.completed")[0]["data"]["result"]["stdout"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Whether `doctor` says commands are confined here; says why not (one
/// line) where the kernel has no Landlock.
fn landlock_here(env: &Env, root: &Path) -> bool {
    let doctor = env
        .cmd()
        .args(["doctor", "--root"])
        .arg(root)
        .output()
        .unwrap();
    let said = stdout(&doctor);
    if said.contains("unconfined") {
        eprintln!("this kernel has no Landlock: skipping ({said})");
        return false;
    }
    assert!(said.contains("confined by Landlock"), "{said}");
    true
}

#[test]
fn commands_write_only_in_the_root_and_reach_no_network() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    if !landlock_here(&env, dir.path()) {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // A UDP datagram (a DNS query carries data out) and a Unix socket (the
    // way to local daemons) count as network too.
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_read_timeout(Some(std::time::Duration::from_millis(500)))
        .unwrap();
    let udp_port = udp.local_addr().unwrap().port();
    let unix_path = outside.path().join("daemon.sock");
    let unix = std::os::unix::net::UnixListener::bind(&unix_path).unwrap();
    unix.set_nonblocking(true).unwrap();
    std::fs::write(
        dir.path().join("probe.sh"),
        format!(
            "touch inside.txt && echo inside-ok\n\
             touch \"$TMPDIR/t\" && echo tmp-ok\n\
             touch {}/escaped.txt 2>/dev/null || echo outside-denied\n\
             python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 2)' \
             2>/dev/null && echo net-ok || echo net-denied\n\
             python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b\"out\", (\"127.0.0.1\", {udp_port}))' \
             2>/dev/null && echo udp-ok || echo udp-denied\n\
             python3 -c 'import socket; socket.socket(socket.AF_UNIX).connect(\"{}\")' \
             2>/dev/null && echo unix-ok || echo unix-denied\n\
             python3 -c 'import socket; a, b = socket.socketpair(); a.send(b\"x\"); b.recv(1)' \
             && echo pair-ok\n\
             python3 -c 'import ctypes; l = ctypes.CDLL(None); print(\"uring-ok\" if l.syscall(425, 4, ctypes.create_string_buffer(120)) >= 0 else \"uring-denied\")'\n",
            outside.path().display(),
            unix_path.display()
        ),
    )
    .unwrap();
    let tables = "[approvals]\nexec = \"allowlisted-auto\"\n[exec]\nallow = [\"sh probe.sh\"]";
    let (events, _server) = run_in_job(&env, dir.path(), "sh probe.sh", tables);
    let done = of_type(&events, "tool.call.completed");
    let result = &done[0]["data"]["result"];
    let out = result["stdout"].as_str().unwrap();
    assert_eq!(result["confined"], true, "{result}");
    assert!(out.contains("inside-ok") && out.contains("tmp-ok"), "{out}");
    assert!(
        out.contains("outside-denied") && out.contains("net-denied"),
        "{out}"
    );
    assert!(
        out.contains("udp-denied") && out.contains("unix-denied") && out.contains("uring-denied"),
        "{out}"
    );
    assert!(out.contains("pair-ok"), "{out}");
    assert!(udp.recv(&mut [0u8; 8]).is_err(), "a datagram got out");
    assert!(unix.accept().is_err(), "a Unix connection got through");
    assert!(!outside.path().join("escaped.txt").exists());
    assert!(dir.path().join("inside.txt").exists());
    // [exec] network = true lets it connect; writes stay confined.
    let tables = format!("{tables}\nnetwork = true");
    let (events, _server) = run_in_job(&env, dir.path(), "sh probe.sh", &tables);
    let out = command_stdout(&events);
    assert!(
        out.contains("net-ok") && out.contains("outside-denied"),
        "{out}"
    );
    assert!(out.contains("udp-ok") && out.contains("unix-ok"), "{out}");
    drop(listener);
}

#[test]
fn exec_writable_opens_one_more_folder() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    if !landlock_here(&env, dir.path()) {
        return;
    }
    std::fs::write(
        dir.path().join("probe.sh"),
        format!(
            "touch {}/c && echo cache-ok\ntouch {}/o 2>/dev/null || echo other-denied\n",
            cache.path().display(),
            other.path().display()
        ),
    )
    .unwrap();
    let tables = format!(
        "[approvals]\nexec = \"allowlisted-auto\"\n[exec]\nallow = [\"sh probe.sh\"]\n\
         writable = [\"{}\"]",
        cache.path().display()
    );
    let (events, _server) = run_in_job(&env, dir.path(), "sh probe.sh", &tables);
    let out = command_stdout(&events);
    assert!(
        out.contains("cache-ok") && out.contains("other-denied"),
        "{out}"
    );
}

#[test]
fn a_command_reports_the_files_it_changed() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".gitignore"), "build/\n").unwrap();
    std::fs::write(dir.path().join("keep.txt"), "keep\n").unwrap();
    std::fs::write(dir.path().join("edit.txt"), "old\n").unwrap();
    std::fs::write(dir.path().join("gone.txt"), "bye\n").unwrap();
    std::fs::write(
        dir.path().join("gen.sh"),
        "echo new > edit.txt\nrm gone.txt\nmkdir -p out build\necho x > out/made.txt\n\
         echo o > build/ignored.o\n",
    )
    .unwrap();
    let tables = "[approvals]\nexec = \"allowlisted-auto\"\n[exec]\nallow = [\"sh gen.sh\"]";
    let (events, server) = run_in_job(&env, dir.path(), "sh gen.sh", tables);
    let result = &of_type(&events, "tool.call.completed")[0]["data"]["result"];
    assert_eq!(
        result["changed_files"],
        json!([
            {"path": "edit.txt", "change": "modified"},
            {"path": "gone.txt", "change": "deleted"},
            {"path": "out/made.txt", "change": "created"},
        ]),
        "{result}"
    );
    assert_eq!(result["changed_files_total"], 3);
    // The model is told too.
    assert!(tool_result_sent(&server).contains("out/made.txt"));
}

/// `agent-tui ARGS --root ROOT`: exit code and stderr.
fn cli(env: &Env, root: &Path, args: &[&str]) -> (i32, String) {
    let (code, out, err) = env.run_in(root, args);
    (code, format!("{out}{err}"))
}

fn text(root: &Path, p: &str) -> Option<String> {
    std::fs::read_to_string(root.join(p)).ok()
}

#[test]
fn a_commands_changes_are_a_checkpoint_that_rolls_back() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
    std::fs::write(root.join("edit.txt"), "old\n").unwrap();
    std::fs::write(root.join("gone.txt"), "bye\n").unwrap();
    std::fs::write(
        root.join("gen.sh"),
        "echo new > edit.txt\nrm gone.txt\nmkdir -p out build\necho x > out/made.txt\n\
         echo o > build/ignored.o\n",
    )
    .unwrap();
    std::fs::write(root.join("again.sh"), "echo model > edit.txt\n").unwrap();
    let tables = "[approvals]\nexec = \"auto\"";
    let (events, server) = run_in_job(&env, root, "sh gen.sh", tables);
    // Run unasked by the policy itself, not by the allow list.
    assert_eq!(
        of_type(&events, "approval.resolved")[0]["data"]["by"],
        "auto"
    );
    let result = &of_type(&events, "tool.call.completed")[0]["data"]["result"];
    let id = result["checkpoint_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{result}"));
    let created = of_type(&events, "checkpoint.created");
    assert_eq!(created.len(), 1);
    assert_eq!(created[0]["data"]["kind"], "exec");
    assert_eq!(created[0]["data"]["checkpoint_id"], id);
    assert_eq!(
        created[0]["data"]["files"],
        json!(["edit.txt", "gone.txt", "out/made.txt"])
    );
    assert!(tool_result_sent(&server).contains(id), "the model knows it");
    let (c, listed) = cli(&env, root, &["checkpoints", "--json"]);
    assert_eq!(c, 0, "{listed}");
    assert!(
        listed.contains(id) && listed.contains("\"exec\""),
        "{listed}"
    );

    // Scoped by file: only the created file goes.
    let (c, out) = cli(&env, root, &["rollback", id, "--files", "out/made.txt"]);
    assert_eq!(c, 0, "{out}");
    assert_eq!(text(root, "out/made.txt"), None);
    assert_eq!(text(root, "edit.txt").as_deref(), Some("new\n"));
    let (c, out) = cli(&env, root, &["rollback", id, "--files", "nope.txt"]);
    assert_eq!(c, 2, "a file the command did not change: {out}");
    assert!(out.contains("nope.txt"), "{out}");
    // Whole: every file back; ignored build output is not the checkpoint's.
    let (c, out) = cli(&env, root, &["rollback", id]);
    assert_eq!(c, 0, "{out}");
    assert_eq!(text(root, "edit.txt").as_deref(), Some("old\n"));
    assert_eq!(text(root, "gone.txt").as_deref(), Some("bye\n"));
    assert_eq!(text(root, "build/ignored.o").as_deref(), Some("o\n"));

    // A change the user made between jobs is what a rollback returns to.
    std::fs::write(root.join("edit.txt"), "user\n").unwrap();
    let (events, _server) = run_in_job(&env, root, "sh again.sh", tables);
    let result = &of_type(&events, "tool.call.completed")[0]["data"]["result"];
    assert_eq!(text(root, "edit.txt").as_deref(), Some("model\n"));
    let id = result["checkpoint_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{result}"));
    let (c, out) = cli(&env, root, &["rollback", id]);
    assert_eq!(c, 0, "{out}");
    assert_eq!(text(root, "edit.txt").as_deref(), Some("user\n"));
    // A command that changes nothing makes no checkpoint.
    let (events, _server) = run_in_job(&env, root, "true", tables);
    assert!(of_type(&events, "checkpoint.created").is_empty());
}

#[test]
fn a_file_too_large_to_keep_is_named_and_left_out_of_the_checkpoint() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("big.bin"), vec![b'x'; 17 * 1024 * 1024]).unwrap();
    std::fs::write(root.join("small.txt"), "before\n").unwrap();
    std::fs::write(
        root.join("gen.sh"),
        "echo more >> big.bin\necho after > small.txt\n",
    )
    .unwrap();
    let (events, _server) = run_in_job(&env, root, "sh gen.sh", "[approvals]\nexec = \"auto\"");
    let result = &of_type(&events, "tool.call.completed")[0]["data"]["result"];
    assert_eq!(result["not_recorded"], json!(["big.bin"]), "{result}");
    assert_eq!(result["changed_files_total"], 2);
    let id = result["checkpoint_id"].as_str().unwrap();
    let (c, out) = cli(&env, root, &["rollback", id]);
    assert_eq!(c, 0, "{out}");
    assert_eq!(text(root, "small.txt").as_deref(), Some("before\n"));
    let big = std::fs::metadata(root.join("big.bin")).unwrap().len();
    assert_eq!(big, 17 * 1024 * 1024 + 5, "left as the command made it");
}

#[test]
fn a_command_run_directly_is_a_checkpoint_and_audited() {
    // `agent-tui tool run_command` is a user's own command: what it
    // changes rolls back like the model's, and the call is in the log.
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("keep.txt"), "keep\n").unwrap();
    let records = |env: &Env| {
        let (c, out) = cli(env, root, &["audit", "verify"]);
        assert_eq!(c, 0, "{out}");
        out.split_whitespace()
            .find_map(|w| w.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let before = records(&env);
    let (c, result) = tool(&env, root, json!({ "command": "rm keep.txt" }), "");
    assert_eq!(c, 0, "{result}");
    assert_eq!(text(root, "keep.txt"), None);
    let id = result["checkpoint_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no checkpoint: {result}"));
    assert_eq!(records(&env), before + 1, "the call is audited");
    let (c, out) = cli(&env, root, &["rollback", id]);
    assert_eq!(c, 0, "{out}");
    assert_eq!(text(root, "keep.txt").as_deref(), Some("keep\n"));
    // A read leaves no checkpoint and no record.
    let before = records(&env);
    let out = env
        .cmd()
        .args(["tool", "list_files", "{}", "--root"])
        .arg(root)
        .output()
        .unwrap();
    assert_eq!(code(&out), 0);
    assert_eq!(records(&env), before);
}

/// `agent-tui` as an ordinary user: `nobody` when the tests run as root
/// (root reads any process's environment whatever is done).
fn as_user(env: &Env) -> Command {
    let cmd = env.cmd();
    if !rustix::process::geteuid().is_root() {
        return cmd;
    }
    let mut as_user = Command::new("runuser");
    as_user.args(["-u", "nobody", "--", env!("CARGO_BIN_EXE_agent-tui")]);
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => as_user.env(k, v),
            None => as_user.env_remove(k),
        };
    }
    as_user.stdin(std::process::Stdio::null());
    as_user
}

/// Reads `/proc/PID/environ` as the user `as_user` runs as.
fn read_environ(pid: u32) -> Option<String> {
    let path = format!("/proc/{pid}/environ");
    let out = if rustix::process::geteuid().is_root() {
        Command::new("runuser")
            .args(["-u", "nobody", "--", "cat", &path])
            .output()
    } else {
        Command::new("cat").arg(&path).output()
    }
    .unwrap();
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn the_agents_environment_is_closed_to_its_commands_and_other_programs() {
    // The key is out of a command's environment; the agent's own
    // (/proc/PID/environ) is closed to the command (Landlock keeps it
    // from the agent's process) and to any other program of the user,
    // such as an MCP server (the agent is not dumpable).
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    if !landlock_here(&env, dir.path()) {
        return;
    }
    let open = |p: &Path| {
        std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap()
    };
    std::fs::write(
        dir.path().join("peek.py"),
        "import os, time\n\
         pp = int(open('/proc/%d/stat' % os.getppid()).read().rsplit(')', 1)[1].split()[1])\n\
         for pid in (os.getppid(), pp):\n\
         \x20   try:\n\
         \x20       print(open('/proc/%d/environ' % pid, 'rb').read().decode('latin-1'))\n\
         \x20   except OSError as e:\n\
         \x20       print('refused', pid, e.errno)\n\
         time.sleep(2)\n",
    )
    .unwrap();
    let cfg = env.home.path().join("tool.toml");
    std::fs::write(&cfg, "").unwrap();
    for p in [env.home.path(), dir.path(), &cfg] {
        open(p);
    }
    let agent = as_user(&env)
        .env("MYCORP_API_KEY", "sk-must-not-leak-via-proc")
        .arg("--config")
        .arg(&cfg)
        .args([
            "tool",
            "run_command",
            r#"{"command": "python3 peek.py"}"#,
            "--root",
        ])
        .arg(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The agent (runuser's child when the tests run as root).
    std::thread::sleep(std::time::Duration::from_millis(700));
    let agent_pid = (0..50)
        .find_map(|_| {
            let found = std::fs::read_dir("/proc")
                .unwrap()
                .filter_map(Result::ok)
                .find_map(|e| {
                    let pid: u32 = e.file_name().to_str()?.parse().ok()?;
                    let line = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).ok()?;
                    (line.contains("peek.py")
                        && line.contains("tool\0run_command")
                        && !line.starts_with("runuser"))
                    .then_some(pid)
                });
            if found.is_none() {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            found
        })
        .expect("the agent runs");
    let other = read_environ(agent_pid);
    let out = agent.wait_with_output().unwrap();
    let said = stdout(&out);
    assert!(said.contains("\"exit_code\":0"), "{said}{}", stderr(&out));
    assert!(said.contains("refused"), "{said}");
    assert!(!said.contains("sk-must-not-leak-via-proc"), "{said}");
    assert_eq!(
        other, None,
        "another program of the user read the agent's environment"
    );
}

#[test]
fn a_command_signals_no_process_outside_it_and_sees_no_store_password() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    if !landlock_here(&env, dir.path()) {
        return;
    }
    let mut victim = Command::new("sleep").arg("30").spawn().unwrap();
    let command = format!("kill -TERM {}", victim.id());
    let (_, result) = tool(&env, dir.path(), json!({"command": command}), "");
    assert_ne!(result["exit_code"], 0, "{result}");
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert!(victim.try_wait().unwrap().is_none(), "the sleep was killed");
    victim.kill().unwrap();
    victim.wait().unwrap();
    // Its private TMPDIR is its user's alone.
    let (_, result) = tool(
        &env,
        dir.path(),
        json!({"command": "sh -c 'stat -c %a \"$TMPDIR\"'"}),
        "",
    );
    assert_eq!(result["stdout"], "700\n", "{result}");
    // Nor the wrapper that watches it (what it left would run on).
    let (_, result) = tool(
        &env,
        dir.path(),
        json!({"command": "sh -c 'kill -9 $PPID && echo killed'"}),
        "",
    );
    assert_ne!(result["exit_code"], 0, "{result}");
    assert!(
        !result["stdout"].as_str().unwrap().contains("killed"),
        "{result}"
    );
    // Its files it may move from folder to folder (a compiler's temp file
    // renamed into place).
    let (_, result) = tool(
        &env,
        dir.path(),
        json!({"command": "sh -c 'mkdir -p m1 m2 && echo x > m1/f && mv m1/f m2/f'"}),
        "",
    );
    assert_eq!(result["exit_code"], 0, "{result}");
    assert!(dir.path().join("m2/f").exists());
    // Its own children it may signal.
    let (_, result) = tool(
        &env,
        dir.path(),
        json!({"command": "sh -c 'sleep 30 & kill $!'"}),
        "",
    );
    assert_eq!(result["exit_code"], 0, "{result}");
    // The store's password (and PostgreSQL's own variable) stay out.
    let out = env
        .cmd()
        .env("QA_DB_PASSWORD", "pw-must-not-leak")
        .env("PGPASSWORD", "pg-must-not-leak")
        .arg("--config")
        .arg({
            let cfg = env.home.path().join("pw.toml");
            std::fs::write(&cfg, "[storage]\npassword_env = \"QA_DB_PASSWORD\"\n").unwrap();
            cfg
        })
        .args(["tool", "run_command", r#"{"command": "env"}"#, "--root"])
        .arg(dir.path())
        .output()
        .unwrap();
    let said = stdout(&out);
    assert!(said.contains("\"exit_code\":0"), "{said}{}", stderr(&out));
    assert!(!said.contains("must-not-leak"), "{said}");
}

/// Runs `command` directly; the checkpoint it made.
fn checkpoint_of(env: &Env, root: &Path, command: &str) -> String {
    let (c, result) = tool(env, root, json!({ "command": command }), "");
    assert_eq!(c, 0, "{result}");
    result["checkpoint_id"].as_str().unwrap().to_string()
}

/// `agent-tui rollback CP`, which must succeed; what it said.
fn roll_back(env: &Env, root: &Path, cp: &str) -> String {
    let (c, out) = cli(env, root, &["rollback", cp]);
    assert_eq!(c, 0, "{out}");
    out
}

#[test]
fn rolling_back_a_link_a_command_made_touches_only_the_link() {
    // `ln -s a.txt lnk` undone removes the link, not a.txt; `ln -sf b.txt
    // a.txt` undone puts a.txt back as a file and leaves b.txt alone; a
    // link out of the root is replaced too (its target is never touched).
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("a.txt"), "precious\n").unwrap();
    std::fs::write(root.join("b.txt"), "BBB\n").unwrap();
    std::fs::write(outside.path().join("victim.txt"), "outside\n").unwrap();
    let checkpoint = |command: &str| checkpoint_of(&env, root, command);
    let undo = |cp: &str| roll_back(&env, root, cp);
    let cp = checkpoint("ln -s a.txt lnk");
    undo(&cp);
    assert!(std::fs::symlink_metadata(root.join("lnk")).is_err());
    assert_eq!(text(root, "a.txt").as_deref(), Some("precious\n"));

    let cp = checkpoint("ln -sf b.txt a.txt");
    undo(&cp);
    assert!(
        !std::fs::symlink_metadata(root.join("a.txt"))
            .unwrap()
            .is_symlink()
    );
    assert_eq!(text(root, "a.txt").as_deref(), Some("precious\n"));
    assert_eq!(text(root, "b.txt").as_deref(), Some("BBB\n"));

    // A folder replaced by a link to another folder of the root: the
    // rollback refuses (it would write d/inner.txt into e/inner.txt).
    std::fs::create_dir_all(root.join("d")).unwrap();
    std::fs::create_dir_all(root.join("e")).unwrap();
    std::fs::write(root.join("d/inner.txt"), "d's\n").unwrap();
    std::fs::write(root.join("e/inner.txt"), "e's\n").unwrap();
    let cp = checkpoint("sh -c 'rm -r d && ln -s e d'");
    let (c, out) = cli(&env, root, &["rollback", &cp]);
    assert_eq!(c, 3, "{out}");
    assert!(out.contains("`d` is a symbolic link now"), "{out}");
    assert_eq!(text(root, "e/inner.txt").as_deref(), Some("e's\n"));
    std::fs::remove_file(root.join("d")).unwrap();
    roll_back(&env, root, &cp);
    assert_eq!(text(root, "d/inner.txt").as_deref(), Some("d's\n"));

    // A deleted link comes back as a file with its target's bytes (not yet
    // as a link), never world-writable.
    std::os::unix::fs::symlink("a.txt", root.join("l2")).unwrap();
    let cp = checkpoint("rm l2");
    undo(&cp);
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(root.join("l2")).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o644, "{mode:o}");
    std::fs::remove_file(root.join("l2")).unwrap();

    let victim = outside.path().join("victim.txt");
    let cp = checkpoint(&format!("ln -sf {} a.txt", victim.display()));
    undo(&cp);
    assert_eq!(text(root, "a.txt").as_deref(), Some("precious\n"));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "outside\n");
}

#[test]
fn a_command_whose_changes_could_not_be_undone_does_not_run() {
    // The state home's disk is full: the files' bytes before the command
    // cannot be kept, so it is not run (it used to run, unrecorded).
    if !rustix::process::geteuid().is_root() {
        eprintln!("mounting a tiny tmpfs needs root: skipping");
        return;
    }
    let env = Env::new();
    let full = env.home.path().join("full");
    std::fs::create_dir_all(&full).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=400k", "tmpfs"])
        .arg(&full)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("cannot mount a tmpfs here: skipping");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut big = vec![0u8; 600_000];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom").unwrap(), &mut big).unwrap();
    std::fs::write(dir.path().join("big.bin"), &big).unwrap();
    let out = env
        .cmd()
        .env("AGENT_TUI_HOME", full.join("state"))
        .args([
            "tool",
            "run_command",
            r#"{"command": "rm big.bin"}"#,
            "--root",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    let _ = Command::new("umount").arg(&full).status();
    let said = stdout(&out);
    assert_eq!(code(&out), 1, "{said}{}", stderr(&out));
    assert!(said.contains("\"code\":\"not_undoable\""), "{said}");
    assert!(said.contains("full"), "{said}");
    assert_eq!(
        std::fs::read(dir.path().join("big.bin")).unwrap(),
        big,
        "not run"
    );
}

#[test]
fn a_rollback_gives_files_back_their_modes() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mode = |p: &str| {
        std::fs::metadata(root.join(p))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    };
    std::fs::write(root.join("a.txt"), "a\n").unwrap();
    std::fs::write(root.join("run.sh"), "#!/bin/sh\necho hi\n").unwrap();
    std::fs::set_permissions(root.join("a.txt"), PermissionsExt::from_mode(0o644)).unwrap();
    std::fs::set_permissions(root.join("run.sh"), PermissionsExt::from_mode(0o750)).unwrap();
    let checkpoint = |command: &str| checkpoint_of(&env, root, command);
    let undo = |cp: &str| roll_back(&env, root, cp);
    // A chmod alone is a change a rollback undoes.
    let cp = checkpoint("chmod 600 a.txt");
    let said = undo(&cp);
    assert_eq!(mode("a.txt"), 0o644, "{said}");
    assert!(said.contains("Rolled back 1 file"), "{said}");
    // A deleted script comes back runnable.
    let cp = checkpoint("rm run.sh");
    undo(&cp);
    assert_eq!(mode("run.sh"), 0o750);
    assert_eq!(
        text(root, "run.sh").as_deref(),
        Some("#!/bin/sh\necho hi\n")
    );
}

#[test]
fn a_fifo_in_the_project_does_not_hold_a_command() {
    // The file index reads each file before a command: a FIFO would wait
    // for a writer for ever.
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    assert!(
        Command::new("mkfifo")
            .arg(dir.path().join("pipe"))
            .status()
            .unwrap()
            .success()
    );
    let started = std::time::Instant::now();
    let (c, result) = tool(&env, dir.path(), json!({"command": "touch b.txt"}), "");
    assert_eq!(c, 0, "{result}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "it waited"
    );
    assert_eq!(result["changed_files"][0]["path"], "b.txt", "{result}");
}
