//! Streaming overhead: CPU time the engine spends forwarding a 20,000-token
//! streamed answer (one SSE event per token, each its own HTTP chunk) from a
//! loopback OpenAI-compatible server to its event consumer. Budget: 0.3 s.
//! Bursts of tokens that arrive together reach the consumer as one delta.
//!
//! The engine and the consumer run on this thread (a current-thread tokio
//! runtime), the server on its own thread, so this thread's CPU time is the
//! engine's cost. Run with `cargo bench --bench stream`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/support/llm_server.rs"]
mod llm_server;

use std::time::{Duration, Instant};

use agent_tui::agent::{EngineBuilder, Filter, Providers, Recording};
use agent_tui::config::{Config, ProviderConfig, ProviderKind, ToolProtocol};
use agent_tui::llm::build_provider;
use agent_tui::protocol::{Command, EventBody, Mode, SessionRef};
use cpu_time::ThreadTime;
use llm_server::{LlmServer, Reply, openai};

const TOKENS: usize = 20_000;
const RUNS: usize = 5;
const BUDGET: Duration = Duration::from_millis(300);

fn main() {
    let tokens: Vec<String> = (0..TOKENS).map(|i| format!(" tok{}", i % 1000)).collect();
    let refs: Vec<&str> = tokens.iter().map(String::as_str).collect();
    let events = openai::text(&refs);
    let root = tempfile::tempdir().unwrap();
    let mut cpu = Vec::new();
    let mut wall = Vec::new();
    let mut last_deltas = 0;
    for _ in 0..RUNS {
        let server = LlmServer::start(vec![Reply::Slow {
            events: events.clone(),
            delay_ms: 0,
        }]);
        let (c, w, text, deltas) = run_once(&server, root.path());
        assert_eq!(text, tokens.concat(), "every token arrives, in order");
        last_deltas = deltas;
        cpu.push(c);
        wall.push(w);
    }
    cpu.sort();
    wall.sort();
    let median_cpu = cpu[RUNS / 2];
    println!("{TOKENS} tokens arrived as {last_deltas} llm.delta events (bursts coalesced)");
    println!(
        "stream {TOKENS} tokens: engine CPU median {:.1} ms (min {:.1}, max {:.1}), wall median {:.1} ms, budget {} ms",
        ms(median_cpu),
        ms(cpu[0]),
        ms(cpu[RUNS - 1]),
        ms(wall[RUNS / 2]),
        BUDGET.as_millis()
    );
    if median_cpu > BUDGET {
        eprintln!("over budget");
        std::process::exit(1);
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn run_once(server: &LlmServer, root: &std::path::Path) -> (Duration, Duration, String, usize) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let provider = ProviderConfig {
            kind: ProviderKind::Openai,
            base_url: format!("{}/v1", server.url()),
            api_key_env: None,
            model: "m".into(),
            tool_protocol: ToolProtocol::Native,
            context_window: None,
            max_output_tokens: None,
            price_input_per_mtok: None,
            price_output_per_mtok: None,
            vision: agent_tui::config::Vision::Auto,
        };
        let provider =
            build_provider("bench", &provider, Duration::from_secs(30), &|_| None).unwrap();
        let cpu_start = ThreadTime::now();
        let wall_start = Instant::now();
        let engine = EngineBuilder::new(root)
            .config(Config::default())
            .providers(Providers::Given(provider, None))
            .recording(Recording::Off)
            .build()
            .unwrap();
        let mut events = engine.subscribe(Filter::All);
        engine
            .command(Command::StartJob {
                session: SessionRef::New,
                job_id: "b".into(),
                prompt: "stream".into(),
                mode: Mode::Ask,
                max_tool_calls: None,
                choice: None,
                images: Vec::new(),
                workspace: None,
            })
            .await
            .unwrap();
        let mut deltas = 0;
        let mut streamed = String::new();
        while let Some(event) = events.next().await {
            match &event.body {
                EventBody::LlmDelta { text, .. } => {
                    deltas += 1;
                    streamed.push_str(text);
                }
                EventBody::JobCompleted { .. } => break,
                other => assert!(!other.is_terminal(), "job ended badly: {other:?}"),
            }
        }
        (cpu_start.elapsed(), wall_start.elapsed(), streamed, deltas)
    })
}
