//! A job's hooks (SPEC 21): the gates it waits for (`prompt.submit`,
//! `tool.before`; `job.end`, which may send it on) run one after another in
//! the order written and the first block wins; observers (`session.start`,
//! `tool.after`, `approval.requested`) run detached and never delay it.
//! Each run is `hook.started` / `hook.completed` (and so an audit record).

use std::sync::Arc;

use serde_json::{Value, json};

use super::EngineContext;
use super::emit::Emitter;
use super::hook_run::{HookCall, run};
use super::hooks::{Called, Hook};
use super::job::Job;
use crate::config::HookEvent;
use crate::protocol::{EventBody, HookDecision, HookOutcome};

/// What the gates of an event decided.
pub(super) enum Gated {
    /// Go on; what the hooks added for the model.
    Pass { context: Vec<String> },
    /// Stop: which hook, and why.
    Block { hook: String, reason: String },
    /// Ask the user first (a `tool.before`): which hook, and why.
    Ask { hook: String, reason: String },
    /// `job.end`: go on with this instruction.
    Continue { hook: String, message: String },
}

/// Whose work a hook runs for, as its input says: the user who asked
/// (the server's; `null` in the TUI and `exec`) and the server's workspace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookWho {
    pub user: Option<String>,
    pub workspace_id: Option<String>,
}

impl super::engine::Core {
    /// Whose work session `key` is: the one acting now (an apply's asker)
    /// in the workspace of its jobs.
    pub(super) fn who(&self, key: &str) -> HookWho {
        let known = self
            .sessions
            .get(key)
            .map(|l| l.who.clone())
            .unwrap_or_default();
        HookWho {
            user: self.actor.clone().or(known.user),
            workspace_id: known.workspace_id,
        }
    }

    /// The files an observed event is about: what an apply wrote or a
    /// rollback restored, the files of the hunks a verify ran with.
    pub(super) fn event_files(&self, key: &str, job_id: &str, body: &EventBody) -> Vec<String> {
        match body {
            EventBody::ApplyCompleted { files, .. }
            | EventBody::RollbackCompleted { files, .. } => files.clone(),
            EventBody::VerifyCompleted(result) => self
                .sessions
                .get(key)
                .and_then(|l| l.state.job(job_id))
                .and_then(|j| j.bundle.as_ref())
                .map(|b| {
                    b.files
                        .iter()
                        .filter(|f| f.hunks.iter().any(|h| result.hunk_ids.contains(&h.hunk_id)))
                        .map(|f| f.file_path.clone())
                        .collect()
                })
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }
}

/// The JSON a hook reads on stdin.
fn input(ctx: &EngineContext, job: &Job<'_>, hook: &Hook, data: Value) -> Value {
    let mode = Some(job.spec.mode.as_str());
    input_for(
        ctx,
        (job.spec.session_id.as_deref(), job.emit.job_id()),
        &job.spec.who,
        mode,
        hook,
        data,
    )
}

/// The JSON a hook reads on stdin, for a job (its session and id), whose
/// it is and its mode.
pub(super) fn input_for(
    ctx: &EngineContext,
    (session_id, job_id): (Option<&str>, &str),
    who: &HookWho,
    mode: Option<&str>,
    hook: &Hook,
    data: Value,
) -> Value {
    json!({
        "hook": {"name": hook.def.name, "event": hook.def.on.as_str(), "def_sha256": hook.def_sha256},
        "session_id": session_id,
        "job_id": job_id,
        "front": ctx.front_name,
        "user": who.user,
        "workspace_id": who.workspace_id,
        "root": ctx.workspace.root().display().to_string(),
        "mode": mode,
        "data": data,
    })
}

/// Runs an observer apart, counted so that shutting down waits for it.
fn detach(
    ctx: &Arc<EngineContext>,
    run: impl std::future::Future<Output = HookOutcome> + Send + 'static,
) {
    use std::sync::atomic::Ordering;
    let count = ctx.observers.clone();
    count.fetch_add(1, Ordering::SeqCst);
    tokio::spawn(async move {
        run.await;
        count.fetch_sub(1, Ordering::SeqCst);
    });
}

/// What an engine event starts: `apply.after`, `rollback.after` and
/// `verify.completed` observers, detached, their events the job's. `files`:
/// what the apply wrote or the verify ran with (their `match.path` and
/// `{files}`; a verify's are also its input's `files`).
pub(super) fn observe_event(
    ctx: &Arc<EngineContext>,
    session_id: Option<&str>,
    who: &HookWho,
    emit: &Emitter,
    (body, files): (&EventBody, Vec<String>),
) {
    let (event, data) = match body {
        EventBody::ApplyCompleted { .. } => (HookEvent::ApplyAfter, json!(body)),
        EventBody::RollbackCompleted { .. } => (HookEvent::RollbackAfter, json!(body)),
        EventBody::VerifyCompleted(_) => {
            let mut data = json!(body);
            data["files"] = json!(files);
            (HookEvent::VerifyCompleted, data)
        }
        _ => return,
    };
    let set = ctx.hooks.get();
    if !set.any(event) {
        return;
    }
    for hook in set.on(event).cloned().collect::<Vec<_>>() {
        let Some(taken) = hook.files_of(&files) else {
            continue;
        };
        let at = (session_id, emit.job_id());
        let input = input_for(ctx, at, who, None, &hook, data.clone());
        let run = run_one(ctx.clone(), hook, input, taken, emit.fork(), None);
        detach(ctx, run);
    }
}

/// Runs one hook off the task, saying so before and after.
async fn run_one(
    ctx: Arc<EngineContext>,
    hook: Hook,
    input: Value,
    files: Vec<String>,
    mut emit: Emitter,
    cancel: Option<tokio_util::sync::CancellationToken>,
) -> HookOutcome {
    let (name, event) = (hook.def.name.clone(), hook.def.on.as_str().to_string());
    let sha = hook.def_sha256.clone();
    emit.emit(EventBody::HookStarted {
        name: name.clone(),
        event: event.clone(),
    });
    let outcome = tokio::task::spawn_blocking(move || {
        let secrets = ctx.secret_names();
        run(&HookCall {
            def: &hook.def,
            def_sha256: &hook.def_sha256,
            scripts: &hook.scripts,
            files: &files,
            cwd: ctx.workspace.root(),
            roots: ctx.workspace.scope_roots(),
            writable: Vec::new(),
            input: &input,
            secrets: &secrets,
            cancel: cancel.as_ref(),
        })
    })
    .await;
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(e) => HookOutcome {
            error: Some(e.to_string()),
            ..HookOutcome::passed(&name, &event, &sha)
        },
    };
    emit.emit(EventBody::HookCompleted(Box::new(outcome.clone())));
    outcome
}

impl Job<'_> {
    /// Runs the waited hooks of `event` in order: the first block (or ask,
    /// or continue) decides; passes add their context.
    pub(super) async fn gate(
        &mut self,
        event: HookEvent,
        called: Option<&Called<'_>>,
        data: Value,
    ) -> Gated {
        let ctx = self.ctx.clone();
        let hooks: Vec<Hook> = ctx.hooks.get().at(event, called).cloned().collect();
        let files = called.map(|c| c.paths.clone()).unwrap_or_default();
        let mut context = Vec::new();
        for hook in hooks {
            let input = input(&ctx, self, &hook, data.clone());
            let emit = self.emit.fork();
            let outcome = run_one(
                ctx.clone(),
                hook,
                input,
                files.clone(),
                emit,
                Some(self.cancel.clone()),
            )
            .await;
            let name = outcome.name.clone();
            let reason = outcome.reason.clone().unwrap_or_default();
            match outcome.decision {
                HookDecision::Block => return Gated::Block { hook: name, reason },
                HookDecision::Ask if event == HookEvent::ToolBefore => {
                    return Gated::Ask { hook: name, reason };
                }
                HookDecision::Continue if event == HookEvent::JobEnd => {
                    let message = outcome.message.clone().unwrap_or(reason);
                    return Gated::Continue {
                        hook: name,
                        message,
                    };
                }
                HookDecision::Pass | HookDecision::Ask | HookDecision::Continue => {
                    context.extend(outcome.context);
                }
            }
        }
        Gated::Pass { context }
    }

    /// Starts the hooks of an observed `event`; the job goes on at once.
    pub(super) fn observe(&mut self, event: HookEvent, called: Option<&Called<'_>>, data: Value) {
        let ctx = self.ctx.clone();
        let files = called.map(|c| c.paths.clone()).unwrap_or_default();
        let hooks: Vec<Hook> = ctx.hooks.get().at(event, called).cloned().collect();
        for hook in hooks {
            let input = input(&ctx, self, &hook, data.clone());
            let emit = self.emit.fork();
            detach(
                &ctx,
                run_one(ctx.clone(), hook, input, files.clone(), emit, None),
            );
        }
    }
}

impl Job<'_> {
    /// `tool.before`: the gates of `call`; what they add for the model, or
    /// the error the model reads (a block, or the user's no after `ask`).
    pub(super) async fn tool_gate(
        &mut self,
        call: &crate::llm::ToolCall,
    ) -> Result<Vec<String>, Value> {
        let c = called(&call.name, &call.arguments);
        let data = json!({"tool": call.name, "arguments": call.arguments});
        match self.gate(HookEvent::ToolBefore, Some(&c), data).await {
            Gated::Pass { context } => Ok(context),
            Gated::Block { hook, reason }
            | Gated::Continue {
                hook,
                message: reason,
            } => Err(super::tool_calls::error_value(
                "blocked_by_hook",
                format!("hook {hook} blocked this call: {reason}"),
            )),
            Gated::Ask { hook, reason } => {
                let decision = self.ask_user(call, &[]).await;
                self.resolved(call, &decision);
                if decision.approved {
                    Ok(Vec::new())
                } else {
                    Err(super::tool_calls::error_value(
                        "denied",
                        format!("hook {hook} asked the user, who said no ({reason})"),
                    ))
                }
            }
        }
    }

    /// `tool.after`: the call's observers, with how it ended.
    pub(super) fn tool_observed(
        &mut self,
        call: &crate::llm::ToolCall,
        outcome: &Result<Value, Value>,
    ) {
        if !self.ctx.hooks.get().any(HookEvent::ToolAfter) {
            return;
        }
        let c = called(&call.name, &call.arguments);
        let data = match outcome {
            Ok(result) => {
                json!({"tool": call.name, "arguments": call.arguments, "ok": true, "result": result})
            }
            Err(error) => {
                json!({"tool": call.name, "arguments": call.arguments, "ok": false, "error": error})
            }
        };
        self.observe(HookEvent::ToolAfter, Some(&c), data);
    }

    /// `session.start` (a session's first job) and `prompt.submit`: a
    /// block ends the job before any request; what passing gates add
    /// follows the instruction.
    pub(super) async fn prompt_gate(&mut self) -> Option<super::job::Outcome> {
        if self.spec.history.is_empty() {
            self.observe(HookEvent::SessionStart, None, json!({}));
        }
        if !self.ctx.hooks.get().any(HookEvent::PromptSubmit) {
            return None;
        }
        let data = json!({"prompt": self.spec.prompt, "mode": self.spec.mode.as_str()});
        match self.gate(HookEvent::PromptSubmit, None, data).await {
            Gated::Block { hook, reason } => Some(super::job::Outcome::failed(
                format!("hook {hook} blocked the instruction: {reason}"),
                crate::protocol::JobFailure::BlockedByHook,
            )),
            Gated::Pass { context } if !context.is_empty() => {
                let note = format!("[Added by the user's hooks]\n{}", context.join("\n"));
                self.add(crate::llm::Message::User(note));
                None
            }
            Gated::Pass { .. } | Gated::Ask { .. } | Gated::Continue { .. } => None,
        }
    }

    /// `job.end`: a hook may send the job on with a message, at most
    /// `[hooks] max_continuations` times.
    pub(super) async fn job_end(&mut self, outcome: &super::job::Outcome) -> Option<String> {
        let super::job::Outcome::Completed { answer, status, .. } = outcome else {
            return None;
        };
        if !self.ctx.hooks.get().any(HookEvent::JobEnd)
            || self.continuations >= self.ctx.hooks.get().max_continuations
        {
            return None;
        }
        let data = json!({"answer": answer, "status": status, "continuations": self.continuations});
        match self.gate(HookEvent::JobEnd, None, data).await {
            Gated::Continue { hook, message } => {
                self.continuations += 1;
                Some(format!("[hook {hook}] {message}"))
            }
            Gated::Pass { .. } | Gated::Block { .. } | Gated::Ask { .. } => None,
        }
    }
}

/// What a tool call offers a hook's `match`: its name, a command's line,
/// the paths it names.
pub(super) fn called<'a>(name: &'a str, arguments: &'a Value) -> Called<'a> {
    let mut paths = Vec::new();
    for key in ["path", "file"] {
        if let Some(p) = arguments[key].as_str() {
            paths.push(p.to_string());
        }
    }
    for edit in arguments["edits"].as_array().into_iter().flatten() {
        if let Some(p) = edit["path"].as_str() {
            paths.push(p.to_string());
        }
    }
    Called {
        tool: name,
        command: arguments["command"].as_str(),
        paths,
    }
}
