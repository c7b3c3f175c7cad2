//! The tool calls of a job: each one checked (arguments, mode, budget),
//! then run: read tools on a blocking thread, `clarify_user` by asking the
//! front end, `propose_edits` by validating into the job's diff bundle, and
//! exec-tier tools behind the `[approvals]` gate.

use std::time::Instant;

use serde_json::{Value, json};

use super::approval::{self, Gate};
use super::job::{Decision, Job, NO_USER_ANSWER, UserReply};
use crate::llm::{ToolCall, ToolResult};
use crate::protocol::{BatchedCall, EventBody, Tier};
use crate::review::{EditRequest, ProposedEdit, build_bundle, validate_edits};
use crate::tools::{CLARIFY_USER, ExecRecord, PROPOSE_EDITS, ToolError};

impl Job<'_> {
    /// Runs one call and reports it; every failure becomes an error result
    /// the model can read.
    pub(super) async fn call_tool(&mut self, call: ToolCall) -> ToolResult {
        self.announce(&call);
        let started = Instant::now();
        let mut outcome = self.gated(&call).await;
        self.tool_observed(&call, &outcome);
        // A first read or edit under a folder with its own AGENTS.md brings it.
        if let Ok(Value::Object(result)) = &mut outcome {
            let paths = super::memory::touched(&call.arguments);
            if let Some(found) =
                super::memory::nested_for(&self.ctx.workspace, &paths, &mut self.memory_given)
            {
                result.insert("instructions".into(), found);
            }
        }
        self.reported(call, started, outcome)
    }

    /// Says that the model's `call` is about to run.
    pub(super) fn announce(&mut self, call: &ToolCall) {
        self.emit.emit(EventBody::ToolCallRequested {
            tool_call_id: call.tool_call_id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            attached: false,
        });
    }

    /// Says how `call` (run since `started`) ended; its result.
    pub(super) fn reported(
        &mut self,
        call: ToolCall,
        started: Instant,
        outcome: Result<Value, Value>,
    ) -> ToolResult {
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
        let outcome = match (result, error) {
            (_, Some(e)) => Err(e),
            (result, None) => Ok(result.unwrap_or(Value::Null)),
        };
        ToolResult::new(call.tool_call_id, call.name, outcome)
    }

    /// The call through its `tool.before` hooks; what they add for the
    /// model goes with its result.
    async fn gated(&mut self, call: &ToolCall) -> Result<Value, Value> {
        let valid = !matches!(call.arguments, Value::String(_));
        if !valid
            || !self
                .ctx
                .hooks
                .get()
                .any(crate::config::HookEvent::ToolBefore)
        {
            return self.execute(call).await;
        }
        let context = self.tool_gate(call).await?;
        let mut outcome = self.execute(call).await;
        if let (false, Ok(Value::Object(result))) = (context.is_empty(), &mut outcome) {
            result.insert("hook_context".into(), Value::String(context.join("\n")));
        }
        outcome
    }

    async fn execute(&mut self, call: &ToolCall) -> Result<Value, Value> {
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
        if call.name.starts_with(crate::mcp::PREFIX) {
            return self.execute_mcp(call).await;
        }
        let tier = self.check_call(call)?;
        if self.calls_made >= self.spec.max_tool_calls {
            return Err(budget_spent(self.spec.max_tool_calls));
        }
        self.calls_made += 1;
        if call.name == CLARIFY_USER {
            return Ok(self.clarify(call).await);
        }
        if call.name == PROPOSE_EDITS {
            return self.propose(call).await;
        }
        if tier == Tier::Exec {
            self.approve(call).await?;
        }
        self.run_registered(call).await
    }

    /// An MCP server's tool: checked against its schema, approved, called.
    async fn execute_mcp(&mut self, call: &ToolCall) -> Result<Value, Value> {
        if !self.is_mcp(&call.name) {
            self.revive_mcp(call).await?;
        }
        let hub = self.spec.mcp.clone().filter(|_| self.is_mcp(&call.name));
        let Some(hub) = hub else {
            self.malformed += 1;
            let offered: Vec<&str> = self.mcp_tools.iter().map(|t| t.name.as_str()).collect();
            let offered = if offered.is_empty() {
                "(none)".to_string()
            } else {
                offered.join(", ")
            };
            return Err(error_value(
                "unknown_tool",
                format!(
                    "no MCP server offers `{}` in this job; the MCP tools offered are: {offered}",
                    call.name
                ),
            ));
        };
        if let Err(e) = self.check_mcp(call) {
            self.malformed += 1;
            return Err(e);
        }
        if self.calls_made >= self.spec.max_tool_calls {
            return Err(budget_spent(self.spec.max_tool_calls));
        }
        self.calls_made += 1;
        self.approve(call).await?;
        self.call_mcp(&hub, call).await
    }

    /// A registered tool's call checked: known, offered in this mode, its
    /// arguments valid; its tier.
    fn check_call(&mut self, call: &ToolCall) -> Result<Tier, Value> {
        let registry = &self.ctx.registry;
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
        Ok(spec.tier)
    }

    /// Runs a registered tool on a blocking thread; a command's changes are
    /// said as a checkpoint, like an apply's.
    pub(super) async fn run_registered(&mut self, call: &ToolCall) -> Result<Value, Value> {
        let ctx = self.ctx.clone();
        let (name, args) = (call.name.clone(), call.arguments.clone());
        let cancel = self.cancel.clone();
        let tracker = self.spec.tracker.clone();
        let (session_id, job_id) = (self.spec.session_id.clone(), self.emit.job_id().to_string());
        let started = std::time::Instant::now();
        let ran = tokio::task::spawn_blocking(move || {
            let mut tool_ctx = ctx.tool_context();
            tool_ctx.cancel = Some(cancel);
            tool_ctx.record = tracker.as_deref().map(|tracker| ExecRecord {
                tracker,
                session_id,
                job_id,
            });
            ctx.registry.call(&name, args, &tool_ctx)
        })
        .await;
        tracing::info!(
            tool = %call.name,
            ok = matches!(ran, Ok(Ok(_))),
            ms = started.elapsed().as_millis() as u64,
            "tool call"
        );
        let value = match ran {
            Ok(Ok(value)) => value,
            Ok(Err(e)) => return Err(e.to_json()["error"].clone()),
            Err(join) => {
                return Err(ToolError::Internal(join.to_string()).to_json()["error"].clone());
            }
        };
        if let Some(id) = value["checkpoint_id"].as_str() {
            let files = value["changed_files"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|f| f["path"].as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            self.emit.emit(EventBody::CheckpointCreated {
                checkpoint_id: id.to_string(),
                kind: crate::checkpoint::CheckpointKind::Exec,
                files,
            });
        }
        Ok(value)
    }

    /// Validates proposed edits and rebuilds the job's diff bundle; nothing
    /// is written. Invalid edits go back to the model with the reasons.
    pub(super) async fn propose(&mut self, call: &ToolCall) -> Result<Value, Value> {
        let requests: Vec<EditRequest> =
            match serde_json::from_value(call.arguments["edits"].clone()) {
                Ok(r) => r,
                Err(e) => {
                    self.malformed += 1;
                    return Err(error_value("invalid_arguments", format!("edits: {e}")));
                }
            };
        if let Some(refused) = self
            .ctx
            .hooks
            .get()
            .guarded(requests.iter().map(|r| r.file_path.as_str()))
        {
            self.malformed += 1;
            return Err(error_value("hook_file", refused));
        }
        let ctx = self.ctx.clone();
        let (existing, previous) = (self.edits.clone(), self.bundle.clone());
        let counters = (self.next_edit, self.next_hunk);
        let job_id = self.emit.job_id().to_string();
        let work = tokio::task::spawn_blocking(move || {
            validated(
                &ctx,
                &job_id,
                &requests,
                &existing,
                previous.as_ref(),
                counters,
            )
        })
        .await;
        let (new, bundle, next_edit, next_hunk) = match work {
            Ok(Ok(done)) => done,
            Ok(Err((code, reasons))) => {
                self.malformed += 1;
                return Err(error_value(
                    code,
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
        // A proposal must outlive a crash of this process: stored before
        // the model is asked anything more.
        self.emit.durable().await;
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
                Some(UserReply::Steer(text)) => self.steers.push(text),
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

    /// The `[approvals]` gate of an exec-tier call: refused, run at once,
    /// or the user is asked (alone, or with the other batch calls of its
    /// turn) and the job waits (`waiting_for_user`).
    async fn approve(&mut self, call: &ToolCall) -> Result<(), Value> {
        let policy = |by: &str| Decision {
            approved: true,
            by: by.to_string(),
            user: None,
        };
        let decision = match approval::gate(&self.ctx.config, call) {
            Gate::Refuse(error) => return Err(error),
            // A page the user pinned (`/web URL`) is theirs to have read.
            _ if call.name == crate::tools::WEB_FETCH
                && call.arguments["url"].as_str().is_some_and(|u| {
                    crate::protocol::pins::pinned_pages(&self.spec.prompt)
                        .iter()
                        .any(|p| p == u)
                }) =>
            {
                policy("pinned")
            }
            // Who let it run: the policy itself, or the `[exec] allow` list.
            Gate::Auto => match approval::policy_of(&self.ctx.config, &call.name).0 {
                crate::config::ApprovalPolicy::Auto => policy("auto"),
                _ => policy("allowlist"),
            },
            Gate::AskBatch if self.decided.contains_key(&call.tool_call_id) => {
                self.decided.remove(&call.tool_call_id).unwrap_or(Decision {
                    approved: false,
                    by: "user".into(),
                    user: None,
                })
            }
            Gate::AskBatch => {
                let others = self.batch_after(call);
                let decision = self.ask_user(call, &others).await;
                for other in others {
                    self.decided.insert(other.tool_call_id, decision.clone());
                }
                decision
            }
            Gate::Ask => self.ask_user(call, &[]).await,
        };
        self.resolved(call, &decision);
        if decision.approved {
            Ok(())
        } else {
            Err(approval::denied(call, &decision.by))
        }
    }

    /// Says how the question about `call` was decided.
    pub(super) fn resolved(&mut self, call: &ToolCall, decision: &Decision) {
        self.emit.emit(EventBody::ApprovalResolved {
            tool_call_id: call.tool_call_id.clone(),
            approved: decision.approved,
            by: decision.by.clone(),
            user: decision.user.clone(),
        });
    }

    /// The later calls of this turn that would be asked in the same batch
    /// (valid, offered in this mode).
    fn batch_after(&self, call: &ToolCall) -> Vec<ToolCall> {
        let registry = &self.ctx.registry;
        self.turn_calls
            .iter()
            .skip_while(|c| c.tool_call_id != call.tool_call_id)
            .skip(1)
            .filter(|c| {
                let valid = if self.is_mcp(&c.name) {
                    self.check_mcp(c).is_ok()
                } else {
                    registry
                        .get(&c.name)
                        .is_some_and(|s| s.tier == Tier::Exec && s.modes.contains(&self.spec.mode))
                        && registry.validate(&c.name, &c.arguments).is_ok()
                };
                valid && approval::gate(&self.ctx.config, c) == Gate::AskBatch
            })
            .cloned()
            .collect()
    }

    /// Asks the front end about `call` (and `also`, decided with it).
    pub(super) async fn ask_user(&mut self, call: &ToolCall, also: &[ToolCall]) -> Decision {
        if self
            .ctx
            .hooks
            .get()
            .any(crate::config::HookEvent::ApprovalRequested)
        {
            let c = super::hook_calls::called(&call.name, &call.arguments);
            let data = serde_json::json!({"tool": call.name, "arguments": call.arguments});
            self.observe(crate::config::HookEvent::ApprovalRequested, Some(&c), data);
        }
        self.emit.emit(EventBody::ApprovalRequested {
            tool_call_id: call.tool_call_id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            root: self.ctx.workspace.root().display().to_string(),
            cwd: call.arguments["cwd"].as_str().unwrap_or(".").to_string(),
            sandbox: if call.name == crate::tools::RUN_COMMAND {
                crate::tools::confine::probe().short(self.ctx.config.exec.network)
            } else {
                String::new()
            },
            batch: also
                .iter()
                .map(|c| BatchedCall {
                    tool_call_id: c.tool_call_id.clone(),
                    name: c.name.clone(),
                    arguments: c.arguments.clone(),
                })
                .collect(),
        });
        self.await_approval(&call.tool_call_id).await
    }

    /// The front end's decision on `tool_call_id`.
    async fn await_approval(&mut self, tool_call_id: &str) -> Decision {
        loop {
            match self.answers.recv().await {
                Some(UserReply::Approval {
                    tool_call_id: id,
                    approved,
                    reason,
                    user,
                }) if id == tool_call_id => {
                    return Decision {
                        approved,
                        by: reason.unwrap_or_else(|| "user".into()),
                        user,
                    };
                }
                Some(UserReply::Steer(text)) => self.steers.push(text),
                Some(_) => continue,
                None => {
                    return Decision {
                        approved: false,
                        by: "no_user".into(),
                        user: None,
                    };
                }
            }
        }
    }
}

fn budget_spent(max: u32) -> Value {
    error_value(
        "budget_exhausted",
        format!("the tool budget of {max} calls is used up; answer with what you have"),
    )
}

/// Proposed edits checked against the disk and the job's bundle rebuilt
/// with them (blocking): the new edits, the bundle, the next edit and hunk
/// numbers; or the error code and reasons.
#[allow(clippy::type_complexity)]
fn validated(
    ctx: &crate::agent::EngineContext,
    job_id: &str,
    requests: &[EditRequest],
    existing: &[ProposedEdit],
    previous: Option<&crate::review::DiffBundle>,
    (mut next_edit, mut next_hunk): (u32, u32),
) -> Result<(Vec<ProposedEdit>, crate::review::DiffBundle, u32, u32), (&'static str, String)> {
    let new =
        validate_edits(&ctx.workspace, requests, existing, &mut next_edit).map_err(|errors| {
            // One code for the call: the errors' own when they agree.
            let code = match errors.first() {
                Some(first) if errors.iter().all(|e| e.code == first.code) => first.code,
                _ => "invalid_edits",
            };
            let text = errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n");
            (code, text)
        })?;
    let all: Vec<ProposedEdit> = existing.iter().chain(&new).cloned().collect();
    let bundle = build_bundle(
        &ctx.workspace,
        job_id,
        &all,
        &ctx.config.limits,
        previous,
        &mut next_hunk,
    )
    .map_err(|e| ("invalid_edits", e.to_string()))?;
    Ok((new, bundle, next_edit, next_hunk))
}

pub(super) fn error_value(code: &str, message: String) -> Value {
    json!({ "code": code, "message": message })
}
