//! The agent loop of one job: ask the model, run the tools it calls (within
//! the mode's tools and the job's budget), feed results back, until it
//! answers, fails or is cancelled.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

use super::EngineContext;
use super::approval::{self, Gate};
use super::emit::Emitter;
use super::prompt::system_prompt;
use crate::config::SETUP_HINT;
use crate::llm::{LlmError, Message, Request, RetryPolicy, ToolCall, ToolDef, ToolResult, Turn};
use crate::protocol::{EventBody, JobStatus, Mode, Tier, Usage};
use crate::review::{DiffBundle, EditRequest, ProposedEdit, build_bundle, validate_edits};
use crate::tools::{CLARIFY_USER, PROPOSE_EDITS, ToolContext, ToolError};

/// The answer given to `clarify_user` when nobody answers.
pub const NO_USER_ANSWER: &str = "no_user_answer";
const MAX_RETRY_DELAY: Duration = Duration::from_secs(30);

/// What the front end says to a waiting job.
#[derive(Debug, Clone)]
pub enum UserReply {
    Answer(String),
    Approval {
        tool_call_id: String,
        approved: bool,
        /// Who decided, when it was not the user.
        reason: Option<String>,
    },
}

pub struct JobSpec {
    pub prompt: String,
    pub mode: Mode,
    pub max_tool_calls: u32,
    /// Earlier prompts and answers of the session, oldest first.
    pub history: Vec<Message>,
}

enum Outcome {
    Completed {
        answer: String,
        usage: Usage,
        status: JobStatus,
    },
    Failed {
        error: String,
        code: String,
    },
}

impl Outcome {
    fn failed(error: impl Into<String>, code: &str) -> Outcome {
        Outcome::Failed {
            error: error.into(),
            code: code.to_string(),
        }
    }
}

impl From<LlmError> for Outcome {
    fn from(e: LlmError) -> Outcome {
        Outcome::failed(e.to_string(), e.code())
    }
}

/// Runs the job to its end; the last event is always `job.completed`,
/// `job.failed` or `job.cancelled`.
pub async fn run(
    ctx: Arc<EngineContext>,
    spec: JobSpec,
    mut emit: Emitter,
    cancel: CancellationToken,
    mut answers: UnboundedReceiver<UserReply>,
) {
    let (provider, model) = match &ctx.provider {
        Some(p) => (p.name().to_string(), p.model().to_string()),
        None => (String::new(), String::new()),
    };
    emit.emit(EventBody::JobStarted {
        prompt: spec.prompt.clone(),
        mode: spec.mode,
        root: ctx.workspace.root().display().to_string(),
        provider,
        model,
    });
    let mut job = Job {
        ctx: ctx.clone(),
        spec: &spec,
        emit: &mut emit,
        answers: &mut answers,
        cancel: cancel.clone(),
        calls_made: 0,
        malformed: 0,
        edits: Vec::new(),
        bundle: None,
        next_edit: 1,
        next_hunk: 1,
    };
    // Dropping the loop's future on cancel closes the model stream at once;
    // a blocking tool keeps its thread but is no longer waited for.
    let outcome = tokio::select! {
        biased;
        () = cancel.cancelled() => None,
        outcome = job.drive() => Some(outcome),
    };
    emit.emit(match outcome {
        None => EventBody::JobCancelled {},
        Some(Outcome::Completed {
            answer,
            usage,
            status,
        }) => EventBody::JobCompleted {
            answer,
            usage,
            status,
        },
        Some(Outcome::Failed { error, code }) => EventBody::JobFailed { error, code },
    });
}

struct Job<'a> {
    ctx: Arc<EngineContext>,
    spec: &'a JobSpec,
    emit: &'a mut Emitter,
    answers: &'a mut UnboundedReceiver<UserReply>,
    cancel: CancellationToken,
    /// Tool calls that ran (or were refused for the mode): the budget counter.
    calls_made: u32,
    /// Unusable calls: bad JSON, unknown tools, invalid arguments.
    malformed: u32,
    edits: Vec<ProposedEdit>,
    bundle: Option<DiffBundle>,
    next_edit: u32,
    next_hunk: u32,
}

impl Job<'_> {
    async fn drive(&mut self) -> Outcome {
        if self.ctx.provider.is_none() {
            return Outcome::failed(SETUP_HINT, "no_provider");
        }
        let agent = &self.ctx.config.agent;
        let budget = self.spec.max_tool_calls;
        let tools: Vec<ToolDef> = self
            .ctx
            .registry
            .specs_for(self.spec.mode)
            // Commands switched off are not offered at all.
            .filter(|s| {
                s.tier != Tier::Exec
                    || self.ctx.config.approvals.exec != crate::config::ApprovalPolicy::Never
            })
            .map(|s| ToolDef {
                name: s.name.to_string(),
                description: s.description.to_string(),
                parameters: s.schema.clone(),
            })
            .collect();
        let system = system_prompt(&self.ctx.workspace, self.spec.mode);
        let mut messages = self.spec.history.clone();
        messages.push(Message::User(self.spec.prompt.clone()));
        let mut usage = Usage::default();
        let max_requests = budget + agent.max_schema_retries + 3;
        for _ in 0..max_requests {
            let offered: &[ToolDef] = if self.calls_made >= budget {
                &[]
            } else {
                &tools
            };
            let turn = match self.request(&system, &messages, offered).await {
                Ok(turn) => turn,
                Err(e) => return e.into(),
            };
            usage.add(turn.usage);
            if let Some(correction) = turn.invalid_action {
                self.malformed += 1;
                if let Some(fail) = self.too_many_malformed() {
                    return fail;
                }
                messages.push(Message::Assistant {
                    text: turn.text,
                    tool_calls: Vec::new(),
                });
                messages.push(Message::User(correction));
                continue;
            }
            if turn.tool_calls.is_empty() {
                if turn.text.trim().is_empty() {
                    return Outcome::failed(
                        "the model ended its turn without an answer; try again or rephrase",
                        "empty_answer",
                    );
                }
                let status = if self
                    .bundle
                    .as_ref()
                    .is_some_and(|b| b.hunks().next().is_some())
                {
                    JobStatus::AwaitingReview
                } else {
                    JobStatus::Completed
                };
                return Outcome::Completed {
                    answer: turn.text,
                    usage,
                    status,
                };
            }
            let had_budget = self.calls_made < budget;
            messages.push(Message::Assistant {
                text: turn.text,
                tool_calls: turn.tool_calls.clone(),
            });
            for call in turn.tool_calls {
                let result = self.call_tool(call).await;
                messages.push(Message::Tool(result));
            }
            if let Some(fail) = self.too_many_malformed() {
                return fail;
            }
            if had_budget && self.calls_made >= budget {
                messages.push(Message::User(format!(
                    "[agent-tui] You have used all {budget} tool calls this job allows. Answer now \
                     with what you have found; no more tools are available."
                )));
            }
        }
        Outcome::failed(
            format!("the job did not finish within {max_requests} model requests"),
            "request_limit",
        )
    }

    fn too_many_malformed(&self) -> Option<Outcome> {
        let max = self.ctx.config.agent.max_schema_retries;
        (self.malformed > max).then(|| {
            Outcome::failed(
                format!(
                    "the model made {} unusable tool calls (limit agent.max_schema_retries = {max}); \
                     try again, or use a model with better tool support",
                    self.malformed
                ),
                "malformed_tool_calls",
            )
        })
    }

    /// One model request, retried per policy; streamed text becomes `llm.delta`.
    async fn request(
        &mut self,
        system: &str,
        messages: &[Message],
        tools: &[ToolDef],
    ) -> Result<Turn, LlmError> {
        let agent = &self.ctx.config.agent;
        let policy = RetryPolicy {
            max_retries: agent.max_retries,
            base_delay: Duration::from_millis(agent.retry_base_delay_ms),
            max_delay: MAX_RETRY_DELAY,
        };
        let mut attempt = 1;
        loop {
            let emit = &mut *self.emit;
            let mut sink = |text: &str| {
                emit.emit(EventBody::LlmDelta {
                    text: text.to_string(),
                    attempt,
                });
            };
            let request = Request {
                system,
                messages,
                tools,
            };
            let Some(provider) = &self.ctx.provider else {
                return Err(LlmError::Client(SETUP_HINT.to_string()));
            };
            match provider.step(request, &mut sink).await {
                Ok(turn) => return Ok(turn),
                Err(error) => match policy.delay(attempt, &error) {
                    Some(wait) => {
                        tokio::time::sleep(wait).await;
                        attempt += 1;
                    }
                    None => return Err(error),
                },
            }
        }
    }

    /// Runs one call and reports it; every failure becomes an error result
    /// the model can read.
    async fn call_tool(&mut self, call: ToolCall) -> ToolResult {
        self.emit.emit(EventBody::ToolCallRequested {
            tool_call_id: call.tool_call_id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
        });
        let started = Instant::now();
        let outcome = self.execute(&call).await;
        let (ok, result, error) = match outcome {
            Ok(value) => (true, Some(value), None),
            Err(e) => (false, None, Some(e)),
        };
        self.emit.emit(EventBody::ToolCallCompleted {
            tool_call_id: call.tool_call_id.clone(),
            name: call.name.clone(),
            ok,
            result: result.clone(),
            error: error.clone(),
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        });
        ToolResult {
            tool_call_id: call.tool_call_id,
            name: call.name,
            ok,
            result,
            error,
        }
    }

    async fn execute(&mut self, call: &ToolCall) -> Result<Value, Value> {
        let registry = &self.ctx.registry;
        if let Value::String(raw) = &call.arguments {
            self.malformed += 1;
            let detail = serde_json::from_str::<Value>(raw)
                .err()
                .map_or_else(|| "not a JSON object".to_string(), |e| e.to_string());
            return Err(error_value(
                "invalid_arguments",
                format!(
                    "the arguments of `{}` are not valid JSON ({detail}); send one JSON object \
                     that matches the tool's schema",
                    call.name
                ),
            ));
        }
        let Some(spec) = registry.get(&call.name) else {
            self.malformed += 1;
            return Err(registry.unknown_tool(&call.name).to_json()["error"].clone());
        };
        if !spec.modes.contains(&self.spec.mode) {
            self.malformed += 1;
            return Err(error_value(
                "not_allowed_in_mode",
                format!(
                    "`{}` is not available in {} mode: it can change files or run commands. \
                     Use only the tools you were offered.",
                    call.name,
                    self.spec.mode.as_str()
                ),
            ));
        }
        if let Err(e) = registry.validate(&call.name, &call.arguments) {
            self.malformed += 1;
            return Err(e.to_json()["error"].clone());
        }
        if self.calls_made >= self.spec.max_tool_calls {
            return Err(error_value(
                "budget_exhausted",
                format!(
                    "the tool budget of {} calls is used up; answer with what you have",
                    self.spec.max_tool_calls
                ),
            ));
        }
        self.calls_made += 1;
        if call.name == CLARIFY_USER {
            return Ok(self.clarify(call).await);
        }
        if call.name == PROPOSE_EDITS {
            return self.propose(call).await;
        }
        if spec.tier == Tier::Exec {
            self.approve(call).await?;
        }
        let ctx = self.ctx.clone();
        let name = call.name.clone();
        let args = call.arguments.clone();
        let cancel = self.cancel.clone();
        let ran = tokio::task::spawn_blocking(move || {
            let mut tool_ctx = ToolContext::new(&ctx.workspace, &ctx.config);
            tool_ctx.cancel = Some(cancel);
            ctx.registry.call(&name, args, &tool_ctx)
        })
        .await;
        match ran {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(e.to_json()["error"].clone()),
            Err(join) => Err(ToolError::Internal(join.to_string()).to_json()["error"].clone()),
        }
    }

    /// Validates proposed edits and rebuilds the job's diff bundle; nothing
    /// is written. Invalid edits go back to the model with the reasons.
    async fn propose(&mut self, call: &ToolCall) -> Result<Value, Value> {
        let requests: Vec<EditRequest> =
            match serde_json::from_value(call.arguments["edits"].clone()) {
                Ok(r) => r,
                Err(e) => {
                    self.malformed += 1;
                    return Err(error_value("invalid_arguments", format!("edits: {e}")));
                }
            };
        let ctx = self.ctx.clone();
        let existing = self.edits.clone();
        let previous = self.bundle.clone();
        let (mut next_edit, mut next_hunk) = (self.next_edit, self.next_hunk);
        let job_id = self.emit.job_id().to_string();
        let work = tokio::task::spawn_blocking(move || {
            let new = validate_edits(&ctx.workspace, &requests, &existing, &mut next_edit)
                .map_err(|errors| {
                    errors
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("\n")
                })?;
            let all: Vec<ProposedEdit> = existing.iter().chain(&new).cloned().collect();
            let bundle = build_bundle(
                &ctx.workspace,
                &job_id,
                &all,
                &ctx.config.limits,
                previous.as_ref(),
                &mut next_hunk,
            )
            .map_err(|e| e.to_string())?;
            Ok::<_, String>((new, bundle, next_edit, next_hunk))
        })
        .await;
        let (new, bundle, next_edit, next_hunk) = match work {
            Ok(Ok(done)) => done,
            Ok(Err(reasons)) => {
                self.malformed += 1;
                return Err(error_value(
                    "invalid_edits",
                    format!(
                        "nothing from this call was proposed; fix these edits and send them all again:\n{reasons}"
                    ),
                ));
            }
            Err(join) => {
                return Err(ToolError::Internal(join.to_string()).to_json()["error"].clone());
            }
        };
        self.next_edit = next_edit;
        self.next_hunk = next_hunk;
        self.edits.extend(new.iter().cloned());
        let new_ids: Vec<&String> = new.iter().map(|e| &e.edit_id).collect();
        let hunk_ids: Vec<String> = bundle
            .hunks()
            .filter(|h| h.edit_ids.iter().any(|id| new_ids.contains(&id)))
            .map(|h| h.hunk_id.clone())
            .collect();
        self.emit
            .emit(EventBody::EditsProposed { edits: new.clone() });
        self.emit.emit(EventBody::DiffGenerated {
            bundle: bundle.clone(),
        });
        self.bundle = Some(bundle);
        Ok(json!({
            "edit_ids": new.iter().map(|e| e.edit_id.clone()).collect::<Vec<_>>(),
            "hunk_ids": hunk_ids,
            "status": "proposed; the user reviews each hunk before anything is written",
        }))
    }

    /// Asks the front end and waits (status `waiting_for_user`).
    async fn clarify(&mut self, call: &ToolCall) -> Value {
        let question = call.arguments["question"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        self.emit.emit(EventBody::ClarificationRequested {
            tool_call_id: call.tool_call_id.clone(),
            question,
        });
        let answer = loop {
            match self.answers.recv().await {
                Some(UserReply::Answer(text)) => break text,
                Some(UserReply::Approval { .. }) => continue,
                None => break NO_USER_ANSWER.to_string(),
            }
        };
        self.emit.emit(EventBody::ClarificationReceived {
            tool_call_id: call.tool_call_id.clone(),
            answer: answer.clone(),
        });
        json!({ "answer": answer })
    }

    /// The `[approvals]` gate of an `individual` call: refused, run at once,
    /// or the user is asked and the job waits (`waiting_for_user`).
    async fn approve(&mut self, call: &ToolCall) -> Result<(), Value> {
        let (approved, by) = match approval::gate(&self.ctx.config, call) {
            Gate::Refuse(error) => return Err(error),
            Gate::Auto => (true, "allowlist".to_string()),
            Gate::Ask => {
                self.emit.emit(EventBody::ApprovalRequested {
                    tool_call_id: call.tool_call_id.clone(),
                    name: call.name.clone(),
                    arguments: call.arguments.clone(),
                    root: self.ctx.workspace.root().display().to_string(),
                    cwd: call.arguments["cwd"].as_str().unwrap_or(".").to_string(),
                });
                self.await_approval(&call.tool_call_id).await
            }
        };
        self.emit.emit(EventBody::ApprovalResolved {
            tool_call_id: call.tool_call_id.clone(),
            approved,
            by: by.clone(),
        });
        if approved {
            Ok(())
        } else {
            Err(approval::denied(call, &by))
        }
    }

    /// The front end's decision on `tool_call_id`: (approved, who decided).
    async fn await_approval(&mut self, tool_call_id: &str) -> (bool, String) {
        loop {
            match self.answers.recv().await {
                Some(UserReply::Approval {
                    tool_call_id: id,
                    approved,
                    reason,
                }) if id == tool_call_id => {
                    return (approved, reason.unwrap_or_else(|| "user".into()));
                }
                Some(_) => continue,
                None => return (false, "no_user".into()),
            }
        }
    }
}

fn error_value(code: &str, message: String) -> Value {
    json!({ "code": code, "message": message })
}
