//! Two `agent-tui serve` hosts on one private PostgreSQL cluster (SPEC 16),
//! each with its own empty state home and the same workspace root: a
//! session made on one is continued on the other, a job's stream is
//! followed from the other, one `Idempotency-Key` makes one job on both, a
//! revoked token is refused by both, a token's rate limit holds across
//! them, and `health` lists both hosts.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use support::jobs::{config, project, sse};
use support::llm_server::{LlmServer, openai};
use support::pg::{Cluster, PASSWORD};
use support::serve::{Client, Server, add_config, rt, serve_with};
use support::{Env, code, stderr, stdout};

/// `serve` hosts on one private PostgreSQL cluster, each with its own
/// empty state home and config (`[storage] password_env` and its own extra
/// text), serving one project; and a token made on the first.
struct Hosts {
    cluster: Cluster,
    url: String,
    dir: tempfile::TempDir,
    envs: Vec<Env>,
    cfgs: Vec<PathBuf>,
    servers: Vec<Server>,
    token: String,
}

impl Hosts {
    /// `extra[i]` is host i's added config; `token` is `serve token add`'s
    /// arguments. `None` where PostgreSQL is not installed.
    fn start(model: &LlmServer, extra: &[&str], token: &[&str]) -> Option<Hosts> {
        let cluster = Cluster::start()?;
        let url = cluster.url();
        let dir = project();
        let envs: Vec<Env> = extra.iter().map(|_| Env::new()).collect();
        let cfgs: Vec<PathBuf> = envs
            .iter()
            .zip(extra)
            .map(|(env, extra)| {
                let cfg = config(env, "openai", &model.url(), "");
                let storage = "[storage]\npassword_env = \"AGENT_TUI_DB_PASSWORD\"\n";
                add_config(&cfg, &format!("{storage}{extra}"));
                cfg
            })
            .collect();
        let mut hosts = Hosts {
            cluster,
            url,
            dir,
            envs,
            cfgs,
            servers: Vec::new(),
            token: String::new(),
        };
        let out = hosts
            .cmd(0)
            .args(["serve", "token", "add"])
            .args(token)
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        hosts.token = stdout(&out).trim().to_string();
        for i in 0..extra.len() {
            let vars = hosts.vars();
            let server = serve_with(&hosts.envs[i], &hosts.cfgs[i], hosts.dir.path(), &vars);
            hosts.servers.push(server);
        }
        Some(hosts)
    }

    fn vars(&self) -> [(&str, &str); 2] {
        [
            ("AGENT_TUI_DATABASE_URL", self.url.as_str()),
            ("AGENT_TUI_DB_PASSWORD", PASSWORD),
        ]
    }

    /// `agent-tui` as host `i`'s machine runs it (its home, its config).
    fn cmd(&self, i: usize) -> Command {
        let mut cmd = self.envs[i].cmd();
        cmd.envs(self.vars()).arg("--config").arg(&self.cfgs[i]);
        cmd
    }

    fn client(&self, i: usize) -> Client {
        Client::new(&self.servers[i].base, &self.token)
    }
}

#[test]
fn two_hosts_share_sessions_streams_keys_and_tokens() {
    let words: Vec<String> = (0..40).map(|i| format!("w{i} ")).collect();
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    let model = LlmServer::start(vec![
        support::llm_server::Reply::Slow {
            events: openai::text(&refs),
            delay_ms: 30,
        },
        sse(openai::text(&["second"])),
        sse(openai::text(&["keyed"])),
    ]);
    let Some(h) = Hosts::start(
        &model,
        &["[server]\nrate_limit_per_minute = 40\n"; 2],
        &["erin", "--role", "user"],
    ) else {
        return;
    };
    let (ca, cb) = (h.client(0), h.client(1));
    let a = &h.servers[0];
    rt().block_on(async {
        // Both hosts are listed by either.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let health: serde_json::Value = reqwest::get(format!("{}/api/v1/health", a.base))
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            if health["hosts"].as_array().unwrap().len() == 2 {
                break;
            }
            assert!(Instant::now() < deadline, "{health}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        // A session made on A; its job started on A, followed from B.
        let (status, s) = ca
            .post("/api/v1/agent/sessions", json!({"workspace_id": "default"}))
            .await;
        assert_eq!(status, 201, "{s}");
        let session = s["session_id"].as_str().unwrap().to_string();
        let (status, run) = ca
            .post(
                "/api/v1/agent/run",
                json!({"session_id": session, "instruction": "first", "mode": "ask"}),
            )
            .await;
        assert_eq!(status, 202, "{run}");
        let job = run["job_id"].as_str().unwrap().to_string();
        let text = cb.stream_text(&job, None).await;
        // Its text streams on B too (relayed through the store's notices).
        assert!(text.contains("event: llm.delta"), "{text}");
        let on_b = support::serve::frames(&text);
        let ids: Vec<u64> = on_b.iter().map(|f| f.0).collect();
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "each event once: {ids:?}"
        );
        assert_eq!(on_b.first().unwrap().1, "job.started");
        let done = on_b.last().unwrap();
        assert_eq!(done.1, "job.completed");
        assert!(done.2["data"]["answer"].as_str().unwrap().contains("w39"));
        // The same session continued on B at once: A let it go as the job
        // ended (it was 409 "in use" for up to 4 s).
        let (status, run) = cb
            .post(
                "/api/v1/agent/run",
                json!({"session_id": session, "instruction": "second", "mode": "ask"}),
            )
            .await;
        assert_eq!(status, 202, "the next job runs on any host: {run}");
        let second = run["job_id"].as_str().unwrap().to_string();
        let frames = cb.stream(&second, None).await;
        assert_eq!(frames.last().unwrap().1, "job.completed");
        let (_, s) = ca.get(&format!("/api/v1/agent/sessions/{session}")).await;
        assert_eq!(s["jobs"].as_array().unwrap().len(), 2, "{s}");
        // One Idempotency-Key on both hosts: one job.
        let body = json!({"session_id": session, "instruction": "keyed", "mode": "ask"});
        let (status, first) = cb
            .post_with("/api/v1/agent/run", body.clone(), Some("k-9"))
            .await;
        assert_eq!(status, 202, "{first}");
        let (status, again) = ca.post_with("/api/v1/agent/run", body, Some("k-9")).await;
        assert_eq!(status, 202, "{again}");
        assert_eq!(first["job_id"], again["job_id"]);
        // The rate limit counts requests on both hosts together.
        let mut limited = false;
        for i in 0..60 {
            let c = if i % 2 == 0 { &ca } else { &cb };
            let (status, _) = c.get("/api/v1/agent/workspaces").await;
            if status == 429 {
                limited = true;
                break;
            }
        }
        assert!(limited, "40 a minute across both hosts");
    });
    // Revoked on the command line: refused by both at once.
    let out = h
        .cmd(1)
        .args(["serve", "token", "revoke", "erin"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    rt().block_on(async {
        for c in [&ca, &cb] {
            let (status, _) = c.get("/api/v1/agent/workspaces").await;
            assert_eq!(status, 401);
        }
    });
    assert_eq!(
        model
            .requests()
            .iter()
            .filter(|r| r.is_model_call())
            .count(),
        3
    );
}

/// A host killed mid-job: another host ends the job as `host_lost` within
/// 15 s, the session goes on there, and the store is sound.
#[test]
fn a_killed_host_loses_its_jobs_and_the_session_goes_on() {
    let words: Vec<String> = (0..600).map(|i| format!("w{i} ")).collect();
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    let model = LlmServer::start(vec![
        support::llm_server::Reply::Slow {
            events: openai::text(&refs),
            delay_ms: 50,
        },
        sse(openai::text(&["still", " here"])),
    ]);
    let Some(mut h) = Hosts::start(&model, &["", ""], &["fay"]) else {
        return;
    };
    let (ca, cb) = (h.client(0), h.client(1));
    let (session, job) = rt().block_on(async {
        let (session, job) = ca.session_and_run("long", "ask").await;
        // Running on A (its start is stored), and health says so (within a beat).
        cb.wait_event(&job, 10, |_| true).await;
        let deadline = Instant::now() + Duration::from_secs(6);
        loop {
            let (_, health) = cb.get("/api/v1/health").await;
            let listed = health["hosts"].as_array().unwrap().iter().any(|h| {
                h["running_jobs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|j| *j == job)
            });
            if listed {
                break;
            }
            assert!(Instant::now() < deadline, "{health}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        (session, job)
    });
    rt().block_on(async {
        // Followed on B while A streams its text, then A is killed.
        let server = &mut h.servers[0];
        let kill = async {
            tokio::time::sleep(Duration::from_millis(1500)).await;
            server.child.kill().unwrap();
            server.child.wait().unwrap();
            Instant::now()
        };
        let (text, killed) = tokio::join!(cb.stream_text(&job, None), kill);
        let all = support::serve::frames_all(&text);
        let (kind, last) = all.last().unwrap();
        assert_eq!(kind, "job.failed", "{last}");
        assert_eq!(last["data"]["code"], "host_lost");
        assert!(
            killed.elapsed() < Duration::from_secs(15),
            "lost after {:?}",
            killed.elapsed()
        );
        // Its end comes after the text B saw streamed (cursors only rise).
        assert!(all.iter().any(|(k, _)| k == "llm.delta"), "{text}");
        let cursors: Vec<u64> = all
            .iter()
            .map(|(_, e)| e["cursor"].as_u64().unwrap())
            .collect();
        assert!(cursors.windows(2).all(|w| w[0] < w[1]), "{cursors:?}");
        let (_, snap) = cb.get(&format!("/api/v1/agent/jobs/{job}")).await;
        assert_eq!(snap["status"], "failed", "{snap}");
        // The session goes on on B.
        let (status, run) = cb
            .post(
                "/api/v1/agent/run",
                json!({"session_id": session, "instruction": "again", "mode": "ask"}),
            )
            .await;
        assert_eq!(status, 202, "{run}");
        let frames = cb.stream(run["job_id"].as_str().unwrap(), None).await;
        assert_eq!(frames.last().unwrap().1, "job.completed");
        let (_, health) = cb.get("/api/v1/health").await;
        assert_eq!(health["hosts"].as_array().unwrap().len(), 1, "{health}");
    });
    let out = h.cmd(1).args(["store", "check"]).output().unwrap();
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
}

/// An approval sent to both hosts at once, for a job running on one: the
/// first answer wins (one 200, one 409), every client sees one
/// `approval.resolved`; a cancel sent to the other host stops a job.
#[test]
fn answers_reach_the_jobs_host_and_the_first_wins() {
    let call = json!({"command": "echo across"}).to_string();
    let words: Vec<String> = (0..600).map(|i| format!("w{i} ")).collect();
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    let model = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "run_command", &call)])),
        sse(openai::text(&["ran"])),
        support::llm_server::Reply::Slow {
            events: openai::text(&refs),
            delay_ms: 50,
        },
    ]);
    let Some(h) = Hosts::start(&model, &["", ""], &["gus"]) else {
        return;
    };
    let (ca, cb) = (h.client(0), h.client(1));
    rt().block_on(async {
        // B must know A is alive before it relays to it.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let (_, h) = cb.get("/api/v1/health").await;
            if h["hosts"].as_array().is_some_and(|l| l.len() == 2) {
                break;
            }
            assert!(Instant::now() < deadline);
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let (session, job) = ca.session_and_run("run it", "agent").await;
        let asked = cb
            .wait_event(&job, 15, |e| e["type"] == "approval.requested")
            .await;
        let id = asked["data"]["tool_call_id"].as_str().unwrap().to_string();
        let (on_a, on_b) =
            tokio::join!(ca.decide(&job, &id, "allow"), cb.decide(&job, &id, "deny"),);
        let mut statuses = [on_a.0.as_u16(), on_b.0.as_u16()];
        statuses.sort_unstable();
        assert_eq!(statuses, [200, 409], "{on_a:?} {on_b:?}");
        let frames = cb.stream(&job, None).await;
        let resolved = frames.iter().filter(|f| f.1 == "approval.resolved").count();
        assert_eq!(resolved, 1);
        assert_eq!(frames.last().unwrap().1, "job.completed");
        // A long job on A, cancelled through B.
        let deadline = Instant::now() + Duration::from_secs(15);
        let long = loop {
            let (status, run) = ca
                .post(
                    "/api/v1/agent/run",
                    json!({"session_id": session, "instruction": "long", "mode": "ask"}),
                )
                .await;
            if status == 202 {
                break run["job_id"].as_str().unwrap().to_string();
            }
            assert!(Instant::now() < deadline, "{run}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let (status, body) = cb
                .post(&format!("/api/v1/agent/jobs/{long}/cancel"), json!({}))
                .await;
            if status == 200 {
                break;
            }
            // Not started on A yet: it is not running there.
            assert!(Instant::now() < deadline, "{status} {body}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let frames = cb.stream(&long, None).await;
        assert_eq!(frames.last().unwrap().1, "job.cancelled");
    });
}

/// An answer posted to a host in its first seconds, for a job another
/// host runs, reaches the job: the host asks the store whether the job's
/// host is live instead of trusting the heartbeats it has seen (host A
/// starts, then B; until A's next beat 2 s later A's own list knows only
/// itself, and an approval posted there used to get 404 "not running").
#[test]
fn an_answer_posted_in_a_hosts_first_seconds_reaches_the_job() {
    let call = json!({"command": "echo early"}).to_string();
    let model = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "run_command", &call)])),
        sse(openai::text(&["ran"])),
    ]);
    let Some(h) = Hosts::start(&model, &["", ""], &["gus"]) else {
        return;
    };
    let (ca, cb) = (h.client(0), h.client(1));
    rt().block_on(async {
        let (_, job) = cb.session_and_run("run it", "agent").await;
        let asked = cb
            .wait_event(&job, 15, |e| e["type"] == "approval.requested")
            .await;
        let id = asked["data"]["tool_call_id"].as_str().unwrap().to_string();
        let (_, health) = ca.get("/api/v1/health").await;
        let seen = health["hosts"].as_array().map_or(0, Vec::len);
        eprintln!("host A had seen {seen} live host(s) when the answer came");
        let (status, body) = ca.decide(&job, &id, "allow").await;
        assert_eq!(status, 200, "{body}");
        let frames = cb.stream(&job, None).await;
        assert_eq!(frames.last().unwrap().1, "job.completed", "{frames:?}");
        // A job that no longer runs anywhere is a conflict, never 404.
        let (status, body) = ca.decide(&job, &id, "deny").await;
        assert_eq!(status, 409, "{body}");
        let (status, body) = ca
            .post(&format!("/api/v1/agent/jobs/{job}/cancel"), json!({}))
            .await;
        assert_eq!(status, 409, "{body}");
    });
}

/// A host that is full leaves new runs in the store's queue; another host
/// with a free slot takes and runs them.
#[test]
fn a_full_host_queues_jobs_that_another_host_runs() {
    let slow = || {
        let words: Vec<String> = (0..30).map(|i| format!("w{i} ")).collect();
        let refs: Vec<&str> = words.iter().map(String::as_str).collect();
        support::llm_server::Reply::Slow {
            events: openai::text(&refs),
            delay_ms: 50,
        }
    };
    let model = LlmServer::start(vec![slow(), slow(), slow()]);
    let Some(h) = Hosts::start(&model, &["[server]\nmax_jobs_per_host = 1\n", ""], &["hal"]) else {
        return;
    };
    let (ca, cb) = (h.client(0), h.client(1));
    let b = &h.servers[1];
    rt().block_on(async {
        let mut sessions = Vec::new();
        for _ in 0..3 {
            let (_, s) = ca
                .post("/api/v1/agent/sessions", json!({"workspace_id": "default"}))
                .await;
            sessions.push(s["session_id"].clone());
        }
        // A lets the new sessions go once idle (2 s): any host may drive them.
        tokio::time::sleep(Duration::from_millis(3000)).await;
        let mut jobs = Vec::new();
        for s in sessions {
            let (status, run) = ca
                .post(
                    "/api/v1/agent/run",
                    json!({"session_id": s, "instruction": "q", "mode": "ask"}),
                )
                .await;
            assert_eq!(status, 202, "{run}");
            assert_eq!(run["status"], "queued");
            jobs.push(run["job_id"].as_str().unwrap().to_string());
        }
        let mut hosts = Vec::new();
        for job in &jobs {
            let frames = cb.stream(job, None).await;
            assert_eq!(frames.last().unwrap().1, "job.completed", "{job}");
            let (_, snap) = ca.get(&format!("/api/v1/agent/jobs/{job}")).await;
            hosts.push(snap["host"].as_str().unwrap().to_string());
        }
        let on_b = hosts
            .iter()
            .filter(|h| h.ends_with(&b.base[b.base.rfind(':').unwrap()..]))
            .count();
        assert!(on_b >= 1, "B ({}) took queued jobs: {hosts:?}", b.base);
        let on_a = hosts.len() - on_b;
        assert!(on_a <= 1 || hosts.len() == 3, "{hosts:?}");
    });
}

/// The store goes away: requests get 503 `unavailable` (never a wrong
/// 401), and the server answers again once it is back.
#[test]
fn a_store_that_goes_away_is_503_then_recovers() {
    let model = LlmServer::start(vec![]);
    let Some(h) = Hosts::start(&model, &[""], &["ivy"]) else {
        return;
    };
    let c = h.client(0);
    rt().block_on(async {
        let (status, _) = c.get("/api/v1/agent/workspaces").await;
        assert_eq!(status, 200);
        h.cluster.stop();
        let (status, body) = c.get("/api/v1/agent/sessions").await;
        assert_eq!(status, 503, "{body}");
        assert_eq!(body["error"]["code"], "unavailable");
        assert!(!body.to_string().contains(PASSWORD), "{body}");
        h.cluster.restart();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let (status, _) = c.get("/api/v1/agent/sessions").await;
            if status == 200 {
                break;
            }
            assert!(Instant::now() < deadline, "no recovery: {status}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
}

/// Host names are unique among live hosts: a second host under a live
/// host's name waits for it to go silent, and is refused (exit 2, naming
/// the setting) when it goes on beating; `health` lists
/// each live host with the jobs it runs.
#[test]
fn a_live_hosts_name_is_not_taken_twice() {
    let model = LlmServer::start(vec![]);
    let Some(h) = Hosts::start(&model, &["[server]\nhost_name = \"alpha\"\n"], &["jo"]) else {
        return;
    };
    let other = Env::new();
    let mut child = other
        .cmd()
        .envs(h.vars())
        .arg("--config")
        .arg(&h.cfgs[0])
        .args(["serve", "--bind", "127.0.0.1:0", "--root"])
        .arg(h.dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the second alpha kept running");
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = child.wait_with_output().unwrap();
    assert_eq!(status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("alpha") && err.contains("host_name"), "{err}");
    rt().block_on(async {
        let (_, health) = h.client(0).get("/api/v1/health").await;
        let hosts = health["hosts"].as_array().unwrap();
        assert_eq!(hosts.len(), 1, "{health}");
        assert_eq!(hosts[0]["host"], "alpha");
        assert!(hosts[0]["running_jobs"].is_array(), "{health}");
        // Both times are RFC 3339, like every other time in the API.
        let time = |key: &str| {
            let text = hosts[0][key]
                .as_str()
                .unwrap_or_else(|| panic!("{key}: {health}"));
            humantime::parse_rfc3339(text).unwrap_or_else(|e| panic!("{key} {text}: {e}"))
        };
        assert!(time("last_seen") >= time("started_at"), "{health}");
    });
}

/// On a shared store every stored event is committed before a client sees
/// it: while another program holds the events table, the stream waits;
/// each frame read can be read back by cursor at once, by any host.
#[test]
fn events_are_committed_before_a_client_sees_them() {
    use sqlx::Connection;
    let call = json!({"command": "echo go"}).to_string();
    let model = LlmServer::start(vec![
        sse(openai::tool_calls(&[("c1", "run_command", &call)])),
        sse(openai::text(&["ran ", "it"])),
    ]);
    let Some(h) = Hosts::start(&model, &[""], &["ivy", "--role", "admin"]) else {
        return;
    };
    let c = h.client(0);
    let url = h.url.replace("agent@", &format!("agent:{PASSWORD}@"));
    rt().block_on(async {
        let (_, job) = c.session_and_run("run it", "agent").await;
        let asked = c
            .wait_event(&job, 20, |e| e["type"] == "approval.requested")
            .await;
        let mut r = c
            .http
            .get(format!("{}/api/v1/agent/jobs/{job}/stream", c.base))
            .bearer_auth(&c.token)
            .send()
            .await
            .unwrap();
        // The events' table, held by another program for a while.
        let mut lock = sqlx::PgConnection::connect(&url).await.unwrap();
        let mut reader = sqlx::PgConnection::connect(&url).await.unwrap();
        sqlx::query("BEGIN").execute(&mut lock).await.unwrap();
        sqlx::query("LOCK TABLE session_records IN EXCLUSIVE MODE")
            .execute(&mut lock)
            .await
            .unwrap();
        let id = asked["data"]["tool_call_id"].as_str().unwrap();
        let (status, _) = c.decide(&job, id, "allow").await;
        assert_eq!(status, 200);
        let release = async {
            tokio::time::sleep(Duration::from_millis(1500)).await;
            sqlx::query("COMMIT").execute(&mut lock).await.unwrap();
        };
        let read = async {
            let (mut text, mut checked, mut missing) = (String::new(), 0, Vec::new());
            while let Some(chunk) = r.chunk().await.unwrap() {
                text.push_str(&String::from_utf8_lossy(&chunk));
                let Some(end) = text.rfind("\n\n") else {
                    continue;
                };
                let ready: String = text.drain(..end + 2).collect();
                for (id, kind, _) in support::serve::frames(&ready) {
                    // Read as any other program would: committed rows only.
                    let stored: i64 = sqlx::query_scalar(
                        "SELECT count(*) FROM session_records WHERE job_id = $1 AND cursor = $2",
                    )
                    .bind(&job)
                    .bind(i64::try_from(id).unwrap())
                    .fetch_one(&mut reader)
                    .await
                    .unwrap();
                    checked += 1;
                    if stored != 1 {
                        missing.push(format!("{id} {kind}"));
                    }
                }
            }
            (checked, missing)
        };
        let ((checked, missing), ()) = tokio::join!(read, release);
        assert!(checked > 5, "{checked} events streamed");
        assert!(missing.is_empty(), "streamed before stored: {missing:?}");
    });
}
