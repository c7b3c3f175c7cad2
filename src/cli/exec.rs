//! `agent-tui exec`: one job, headless. Starts the engine, prints its events
//! (JSON lines with `--json`, else the streamed answer on stdout and progress
//! on stderr), answers clarifications, and turns the outcome into an exit code.

use std::io::{Read, Write};
use std::time::Duration;

use super::args::{ExecArgs, GlobalArgs};
use super::{Exit, load_config, process_env};
use crate::agent::{self, EngineContext, NO_USER_ANSWER};
use crate::config::{SETUP_HINT, ollama_answers};
use crate::llm::build_provider;
use crate::protocol::{Event, EventBody, Op};
use crate::tools::Registry;
use crate::workspace::Workspace;

pub fn run(global: &GlobalArgs, args: ExecArgs) -> Exit {
    if args.session.is_some() || args.continue_session {
        return super::not_yet("`exec --session/--continue`", "the sessions work");
    }
    match prepare(global, &args) {
        Ok((ctx, prompt)) => {
            let runtime = match tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    eprintln!("agent-tui: cannot start the async runtime: {e}");
                    return Exit::Failed;
                }
            };
            runtime.block_on(drive(ctx, prompt, &args))
        }
        Err(exit) => exit,
    }
}

/// Everything that can be wrong before the job starts: exit 2 with a reason.
fn prepare(global: &GlobalArgs, args: &ExecArgs) -> Result<(EngineContext, String), Exit> {
    let usage = |message: String| {
        eprintln!("agent-tui: {message}");
        Exit::Usage
    };
    let loaded = load_config(global)?;
    let config = loaded.config;
    let workspace = Workspace::open(&args.root).map_err(|e| usage(e.to_string()))?;
    let prompt = if args.prompt == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| usage(format!("cannot read the prompt from stdin: {e}")))?;
        text
    } else {
        args.prompt.clone()
    };
    if prompt.trim().is_empty() {
        return Err(usage("the prompt is empty".into()));
    }
    let choice = config
        .choose_provider(
            global.provider.as_deref(),
            global.model.as_deref(),
            &process_env,
            ollama_answers,
        )
        .map_err(|e| usage(e.to_string()))?
        .ok_or_else(|| usage(SETUP_HINT.to_string()))?;
    let provider = build_provider(
        &choice.name,
        &choice.provider,
        Duration::from_secs(config.agent.request_timeout_secs),
        &process_env,
    )
    .map_err(|e| usage(e.to_string()))?;
    let registry = Registry::builtin().map_err(|e| usage(format!("internal error: {e}")))?;
    Ok((
        EngineContext {
            workspace,
            config,
            registry,
            provider,
        },
        prompt,
    ))
}

async fn drive(ctx: EngineContext, prompt: String, args: &ExecArgs) -> Exit {
    let mut engine = agent::spawn(ctx);
    let job_id = format!("job_{:016x}", fastrand::u64(..));
    let start = Op::StartJob {
        job_id: job_id.clone(),
        prompt,
        mode: args.mode,
        max_tool_calls: args.max_tool_calls,
    };
    if engine.ops.send(start).is_err() {
        eprintln!("agent-tui: the engine stopped before the job started");
        return Exit::Failed;
    }
    let mut printer = Printer::new(args.json);
    let mut interrupt = std::pin::pin!(tokio::signal::ctrl_c());
    let mut cancelling = false;
    loop {
        tokio::select! {
            event = engine.events.recv() => {
                let Some(event) = event else {
                    eprintln!("agent-tui: the engine stopped unexpectedly");
                    return Exit::Failed;
                };
                printer.print(&event);
                match &event.body {
                    EventBody::ClarificationRequested { .. } => {
                        let text = args.answer.clone().unwrap_or_else(|| NO_USER_ANSWER.to_string());
                        let _ = engine.ops.send(Op::Answer { job_id: job_id.clone(), text });
                    }
                    EventBody::JobCompleted { .. } => return Exit::Ok,
                    EventBody::JobFailed { .. } => return Exit::Failed,
                    EventBody::JobCancelled {} => return Exit::Interrupted,
                    EventBody::JobStarted { .. }
                    | EventBody::LlmDelta { .. }
                    | EventBody::ToolCallRequested { .. }
                    | EventBody::ToolCallCompleted { .. }
                    | EventBody::ClarificationReceived { .. } => {}
                }
            }
            _ = &mut interrupt, if !cancelling => {
                cancelling = true;
                let _ = engine.ops.send(Op::Cancel { job_id: job_id.clone() });
            }
        }
    }
}

/// Turns events into output: JSON lines, or text for people.
struct Printer {
    json: bool,
    /// Whether stdout's last byte was a newline (or nothing was printed).
    at_line_start: bool,
    printed_answer: bool,
    attempt: u32,
}

impl Printer {
    fn new(json: bool) -> Printer {
        Printer {
            json,
            at_line_start: true,
            printed_answer: false,
            attempt: 1,
        }
    }

    fn print(&mut self, event: &Event) {
        if self.json {
            if let Ok(line) = serde_json::to_string(event) {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{line}");
                let _ = out.flush();
            }
            return;
        }
        match &event.body {
            EventBody::LlmDelta { text, attempt } => {
                if *attempt != self.attempt {
                    self.attempt = *attempt;
                    if *attempt > 1 {
                        self.end_line();
                        eprintln!(
                            "[the model request failed and is being retried; attempt {attempt}]"
                        );
                    }
                }
                self.out(text);
                self.printed_answer = true;
            }
            EventBody::ToolCallRequested {
                name, arguments, ..
            } => {
                self.end_line();
                eprintln!("· {name} {}", shorten(&arguments.to_string(), 160));
            }
            EventBody::ToolCallCompleted {
                ok: false, error, ..
            } => {
                let message = error
                    .as_ref()
                    .and_then(|e| e["message"].as_str())
                    .unwrap_or("failed");
                eprintln!("  ✗ {}", shorten(message, 300));
            }
            EventBody::ClarificationRequested { question, .. } => {
                self.end_line();
                eprintln!("? {question}");
            }
            EventBody::ClarificationReceived { answer, .. } => eprintln!("  → {answer}"),
            EventBody::JobCompleted { answer, .. } => {
                if !self.printed_answer {
                    self.out(answer);
                }
                self.end_line();
            }
            EventBody::JobFailed { error, .. } => {
                self.end_line();
                eprintln!("agent-tui: {error}");
            }
            EventBody::JobCancelled {} => {
                self.end_line();
                eprintln!("agent-tui: cancelled");
            }
            EventBody::JobStarted { .. } | EventBody::ToolCallCompleted { ok: true, .. } => {}
        }
    }

    fn out(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
        self.at_line_start = text.ends_with('\n');
    }

    fn end_line(&mut self) {
        if !self.at_line_start {
            self.out("\n");
        }
    }
}

fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}
