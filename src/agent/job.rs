//! The agent loop of one job: ask the model, run the tools it calls (within
//! the mode's tools and the job's budget), feed results back, until it
//! answers, fails or is cancelled. Every request is first fitted into the
//! context window (`compaction.rs`); when the budget is spent the model gets
//! one last request without tools.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

use super::EngineContext;
use super::emit::{Emitter, JobMsg};
use super::lean_context::Repeats;
use super::prompt::system_prompt;
use super::routing::Route;
use crate::config::{ApprovalPolicy, SETUP_HINT};
use crate::context::{ContextWindow, Conversation, TokenCounter};
use crate::llm::{Message, ToolCall, ToolDef, Turn};
use crate::protocol::{EventBody, FallbackReason, JobFailure, JobStatus, Mode, Tier, Usage};
use crate::review::{DiffBundle, ProposedEdit};

/// The answer given to `clarify_user` when nobody answers.
pub const NO_USER_ANSWER: &str = "no_user_answer";
pub(super) const MAX_RETRY_DELAY: Duration = Duration::from_secs(30);

/// What the front end says to a waiting job.
#[derive(Debug, Clone)]
pub enum UserReply {
    Answer(String),
    /// More words for the model, taken at the next step boundary.
    Steer(String),
    Approval {
        tool_call_id: String,
        approved: bool,
        /// Who decided, when it was not the user.
        reason: Option<String>,
        /// The server's user who decided (`None`: this machine).
        user: Option<String>,
    },
}

/// How an approval was settled: allowed or not, by whom (`user`,
/// `allowlist`, a reason) and the server's user who decided, if one did.
#[derive(Debug, Clone)]
pub struct Decision {
    pub approved: bool,
    pub by: String,
    pub user: Option<String>,
}

/// What a job does.
#[derive(Debug, Clone, PartialEq)]
pub enum JobKind {
    /// Carry out the user's instruction.
    Instruction,
    /// Only summarize the conversation (`/compact`).
    Compact,
}

pub struct JobSpec {
    pub kind: JobKind,
    pub prompt: String,
    pub mode: Mode,
    pub max_tool_calls: u32,
    /// The session's whole conversation so far, oldest first.
    pub history: Vec<Message>,
    /// The provider's window as the session knows it; `None`: find it out.
    pub window: Option<ContextWindow>,
    /// Provider tokens per counted token, learned earlier in the session.
    pub factor: Option<f64>,
    pub session_id: Option<String>,
    /// Records what commands change as checkpoints (`None`: no store).
    pub tracker: Option<Arc<crate::checkpoint::ExecTracker>>,
    pub mcp: Option<Arc<crate::mcp::McpHub>>,
    /// The job's own provider (`/model`; no fallback, nothing learned kept).
    pub chosen: Option<Arc<dyn crate::llm::Provider>>,
    /// Images that go with the prompt.
    pub images: Vec<super::images::Attached>,
    /// Whose it is, as hooks are told.
    pub who: super::hook_calls::HookWho,
}

pub(super) use super::outcome::Outcome;

/// Runs the job to its end; the last event is always `job.completed`,
/// `job.failed` or `job.cancelled`.
pub async fn run(
    ctx: Arc<EngineContext>,
    spec: JobSpec,
    mut emit: Emitter,
    cancel: CancellationToken,
    mut answers: UnboundedReceiver<UserReply>,
) {
    // `job.started` was published by the engine as it spawned this task.
    let model = Route::Single
        .provider(&ctx, &spec)
        .map_or_else(String::new, |p| p.model().to_string());
    let mut job = Job::new(ctx, &spec, &mut emit, &mut answers, cancel.clone(), &model);
    // Dropping the loop's future on cancel closes the model stream at once;
    // a blocking tool keeps its thread but is no longer waited for.
    let outcome = tokio::select! {
        biased;
        () = cancel.cancelled() => None,
        outcome = job.drive() => Some(outcome),
    };
    let usage = job.usage;
    let answered_by = job
        .provider()
        .map_or(String::new(), |p| p.name().to_string());
    let fallback_reason = job.route.reason();
    let factor = job.conv.factor();
    if spec.factor.is_none_or(|f| (f - factor).abs() > 0.01)
        && factor != 1.0
        && spec.chosen.is_none()
    {
        emit.send(JobMsg::Calibrated(factor));
    }
    emit.emit(match outcome {
        None => EventBody::JobCancelled {},
        Some(Outcome::Completed {
            answer,
            status,
            budget_exhausted,
        }) => EventBody::JobCompleted {
            answer,
            usage,
            status,
            budget_exhausted,
            provider: answered_by,
            fallback_reason,
        },
        Some(Outcome::Failed { error, code }) => EventBody::JobFailed { error, code },
    });
}

/// Counted tokens of what a request carries besides the conversation.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Extra {
    pub system: u64,
    pub tools: u64,
}

impl Extra {
    /// The system prompt, and the tool definitions when they are offered.
    pub fn of(self, with_tools: bool) -> u64 {
        self.system + if with_tools { self.tools } else { 0 }
    }
}

pub(super) struct Job<'a> {
    pub ctx: Arc<EngineContext>,
    pub spec: &'a JobSpec,
    pub emit: &'a mut Emitter,
    pub answers: &'a mut UnboundedReceiver<UserReply>,
    pub cancel: CancellationToken,
    /// Tool calls that ran (or were refused for the mode): the budget counter.
    pub calls_made: u32,
    /// Unusable calls: bad JSON, unknown tools, invalid arguments.
    pub malformed: u32,
    pub edits: Vec<ProposedEdit>,
    pub bundle: Option<DiffBundle>,
    pub next_edit: u32,
    pub next_hunk: u32,
    /// What the next request sends, with its token counts.
    pub conv: Conversation,
    pub window: ContextWindow,
    /// Where the job's instruction is in `conv`.
    pub instruction_at: Option<usize>,
    pub usage: Usage,
    pub extra: Extra,
    /// The system prompt and the tool definitions as counted in `extra`.
    pub texts: (String, String),
    /// The server stated its window in an overflow (not only refused a
    /// request of some size).
    pub window_stated: bool,
    /// The server setting named by the last overflow error.
    pub overflowed: Option<&'static str>,
    /// The server's tokenizer was asked this job (its streams gave no usage).
    pub server_counted: bool,
    /// The provider the job is on (`hybrid_auto`: local, then maybe remote).
    pub route: Route,
    /// Time probes of the local server spent since its last request
    /// (`routing.rs`: it counts against the next one's timeout).
    pub probed: Duration,
    /// The calls of the model turn being run (for batch approvals).
    pub turn_calls: Vec<ToolCall>,
    /// Batch calls the user already decided with an earlier call of their
    /// turn: tool_call_id -> (approved, by).
    pub decided: HashMap<String, Decision>,
    /// The MCP tools this job offers (agent mode, servers started).
    pub mcp_tools: Vec<crate::mcp::McpTool>,
    /// Restarts of each MCP server in this job.
    pub mcp_restarts: BTreeMap<String, u32>,
    /// A lean job's calls repeated with the same result.
    pub repeats: Repeats,
    /// The model was asked to go on after a turn with nothing in it.
    pub nudged: bool,
    /// Steers that came while the job waited for the user: given with the
    /// next request.
    pub steers: Vec<String>,
    /// Subfolders whose memory file the model was given (or that have none).
    pub memory_given: Vec<String>,
    /// Times `job.end` hooks sent it on.
    pub continuations: u32,
}

impl<'a> Job<'a> {
    /// A job about to start, its conversation empty (the history comes in
    /// `open_context`) and the window as the session knows it.
    fn new(
        ctx: Arc<EngineContext>,
        spec: &'a JobSpec,
        emit: &'a mut Emitter,
        answers: &'a mut UnboundedReceiver<UserReply>,
        cancel: CancellationToken,
        model: &str,
    ) -> Job<'a> {
        let counter = TokenCounter::for_model(model);
        let window = spec
            .window
            .clone()
            .unwrap_or_else(|| ContextWindow::resolve(None, None, ""));
        let cap = window.tool_output_cap(ctx.config.context.max_tool_output_tokens);
        Job {
            route: Route::start(&ctx, spec),
            ctx,
            spec,
            emit,
            answers,
            cancel,
            calls_made: 0,
            malformed: 0,
            edits: Vec::new(),
            bundle: None,
            next_edit: 1,
            next_hunk: 1,
            conv: Conversation::new(Vec::new(), counter, cap),
            window,
            instruction_at: None,
            usage: Usage::default(),
            extra: Extra::default(),
            texts: (String::new(), String::new()),
            overflowed: None,
            window_stated: false,
            server_counted: false,
            probed: Duration::ZERO,
            turn_calls: Vec::new(),
            decided: HashMap::new(),
            mcp_tools: Vec::new(),
            mcp_restarts: BTreeMap::new(),
            repeats: Repeats::default(),
            nudged: false,
            steers: Vec::new(),
            memory_given: super::memory::given_in(&spec.history),
            continuations: 0,
        }
    }

    async fn drive(&mut self) -> Outcome {
        if self.provider().is_none() {
            return Outcome::failed(SETUP_HINT, JobFailure::NoProvider);
        }
        self.open_context().await;
        if self.spec.kind == JobKind::Compact {
            return self.compact_on_request().await;
        }
        if let Some(failed) = self.check_sight().await {
            return failed;
        }
        let (mut system, mut tools) = self.prepare().await;
        if let Some(blocked) = self.prompt_gate().await {
            return blocked;
        }
        let max_requests = self.spec.max_tool_calls + self.ctx.config.agent.max_schema_retries + 3;
        for _ in 0..max_requests {
            let was_lean = self.lean();
            let outcome = self.turn(&system, &tools).await;
            // The window turned out small (the server said how small): the
            // lean request from here on, and the request once more.
            if !was_lean
                && self.lean()
                && self.window_stated
                && matches!(
                    &outcome,
                    Some(Outcome::Failed {
                        code: JobFailure::ContextOverflow,
                        ..
                    })
                )
            {
                (system, tools, _) = self.request_form().await;
                continue;
            }
            if let Some(outcome) = outcome {
                if let Some(next) = self.job_end(&outcome).await {
                    // Sent on by a hook: the answer stays as a message.
                    let said = self.conv.messages().last().cloned();
                    self.emit.send(JobMsg::Append(said.into_iter().collect()));
                    self.add(Message::User(next));
                    continue;
                }
                if matches!(outcome, Outcome::Completed { .. }) {
                    self.emit.send(JobMsg::Answer);
                }
                return outcome;
            }
        }
        Outcome::failed(
            format!("the job did not finish within {max_requests} model requests"),
            JobFailure::RequestLimit,
        )
    }

    /// The system prompt and the tools (MCP servers started), counted; the
    /// instruction joins the conversation.
    async fn prepare(&mut self) -> (String, Vec<ToolDef>) {
        let (system, tools, listing) = self.request_form().await;
        let mut images = self.image_messages();
        super::images::fill(&self.ctx, &mut images).await;
        for image in images {
            self.add(image);
        }
        self.add(Message::User(self.spec.prompt.clone()));
        self.instruction_at = Some(self.conv.len() - 1);
        if self.lean() {
            self.attach_named(&listing).await;
        }
        (system, tools)
    }

    /// The system prompt and the tools for the job's window (lean in a
    /// small one, with the project's outline), counted.
    async fn request_form(&mut self) -> (String, Vec<ToolDef>, super::lean_context::Listing) {
        let mut tools = self.offered_tools();
        tools.extend(self.start_mcp().await);
        // A small window gets the lean request (the same tools, in brief),
        // the project's outline and the files the instruction names.
        let lean = self.lean();
        let mut listing = super::lean_context::Listing::default();
        let system = if lean {
            let (offered, more) = super::lean::lean_tools(tools);
            tools = offered;
            listing = self.project_listing().await;
            super::prompt::lean_system_prompt(&self.ctx.workspace, self.spec.mode)
                + &listing.outline()
                + &more
        } else {
            system_prompt(&self.ctx.workspace, self.spec.mode)
        };
        self.texts = (system.clone(), super::counting::tool_text(&tools));
        self.extra = Extra {
            system: u64::from(self.conv.counter().count(&self.texts.0)),
            tools: u64::from(self.conv.counter().count(&self.texts.1)),
        };
        (system, tools, listing)
    }

    /// One model request and what follows from it; `Some` when the job ends.
    async fn turn(&mut self, system: &str, tools: &[ToolDef]) -> Option<Outcome> {
        self.take_steers();
        let budget = self.spec.max_tool_calls;
        // Once the budget is spent, one last request without tools (or,
        // hybrid and no edit yet, the remote model takes over).
        if self.calls_made >= budget && self.triggers(FallbackReason::BudgetExhaustedWithoutEdits) {
            self.fall_back(FallbackReason::BudgetExhaustedWithoutEdits)
                .await;
            self.add(Message::User(
                "[agent-tui] Tools are available again: go on with the task.".into(),
            ));
        }
        let last = self.calls_made >= budget || self.repeats.withdrawn();
        let offered: &[ToolDef] = if last { &[] } else { tools };
        let turn = match self.ask(system, offered).await {
            Ok(turn) => turn,
            Err(outcome) => match self.failure_trigger(&outcome) {
                Some(reason) => {
                    self.fall_back(reason).await;
                    return None;
                }
                None => return Some(outcome),
            },
        };
        if last {
            self.propose_from_answer(&turn.text).await;
            return Some(self.budget_answer(turn));
        }
        if let Some(correction) = turn.invalid_action {
            self.malformed += 1;
            if self.triggers(FallbackReason::SchemaFailures) {
                self.fall_back(FallbackReason::SchemaFailures).await;
            } else if let Some(fail) = self.too_many_malformed() {
                return Some(fail);
            }
            self.add(Message::Assistant {
                text: turn.text,
                tool_calls: Vec::new(),
            });
            self.add(Message::User(correction));
            return None;
        }
        if turn.tool_calls.is_empty() {
            if turn.text.trim().is_empty() {
                if !self.nudged {
                    // Small models sometimes end a turn at once; asked once to go on.
                    self.nudged = true;
                    self.add(Message::User(
                        "[agent-tui] Your reply was empty. Go on with the task: call a tool \
                         or answer."
                            .into(),
                    ));
                    return None;
                }
                return Some(Outcome::failed(
                    "the model ended its turn without an answer; try again or rephrase",
                    JobFailure::EmptyAnswer,
                ));
            }
            self.propose_from_answer(&turn.text).await;
            if self.steer_pending() {
                // The user added to the task while the model answered: the
                // answer stays and the model goes on with the steer.
                self.add(Message::Assistant {
                    text: turn.text,
                    tool_calls: Vec::new(),
                });
                return None;
            }
            return Some(self.answer(turn.text, false));
        }
        self.run_calls(turn).await
    }

    /// Whether steers wait (collected from the front end's replies; a stale
    /// answer or approval is dropped, as the waits drop it).
    fn steer_pending(&mut self) -> bool {
        while let Ok(reply) = self.answers.try_recv() {
            if let UserReply::Steer(text) = reply {
                self.steers.push(text);
            }
        }
        !self.steers.is_empty()
    }

    /// The steers sent since the last request join the conversation, each
    /// a `user.steer`.
    fn take_steers(&mut self) {
        if !self.steer_pending() {
            return;
        }
        for text in std::mem::take(&mut self.steers) {
            self.emit.emit(EventBody::UserSteer { text: text.clone() });
            self.add(Message::User(text));
        }
    }

    /// The calls of a model turn, each run and its result added; `Some`
    /// when the job ends on them.
    async fn run_calls(&mut self, turn: Turn) -> Option<Outcome> {
        self.add(Message::Assistant {
            text: turn.text,
            tool_calls: turn.tool_calls.clone(),
        });
        // A lean request's `more_tools` call runs the tool it names.
        let calls: Vec<ToolCall> = turn.tool_calls.iter().map(super::lean::unwrap).collect();
        self.turn_calls = calls.clone();
        self.decided.clear();
        let mut repeated = Vec::new();
        for call in calls {
            let mut result = self.call_tool(call.clone()).await;
            if self.lean() {
                result = super::lean_context::lean_result(result);
                if self.repeats.repeated(&call, &result) {
                    repeated.push(call.name.clone());
                }
            }
            self.add(Message::Tool(result));
        }
        if !repeated.is_empty() {
            let note = self.repeats.note(&repeated, self.spec.mode == Mode::Agent);
            self.add(Message::User(note));
        }
        if self.triggers(FallbackReason::SchemaFailures) {
            self.fall_back(FallbackReason::SchemaFailures).await;
        } else if let Some(fail) = self.too_many_malformed() {
            return Some(fail);
        }
        let budget = self.spec.max_tool_calls;
        if self.calls_made >= budget {
            self.add(Message::User(format!(
                "[agent-tui] You have used all {budget} tool calls this job allows. Answer now \
                 with what you have found; no more tools are available."
            )));
        }
        None
    }

    /// The tools this job's mode offers (commands switched off are not;
    /// `list_scopes` only when there are folders beside the agent root).
    fn offered_tools(&self) -> Vec<ToolDef> {
        let scoped = self.ctx.workspace.scopes().len() > 1;
        self.ctx
            .registry
            .specs_for(self.spec.mode)
            .filter(|s| {
                s.tier != Tier::Exec
                    || super::approval::policy_of(&self.ctx.config, s.name).0
                        != ApprovalPolicy::Never
            })
            .filter(|s| scoped || s.name != crate::tools::LIST_SCOPES)
            .map(|s| ToolDef {
                name: s.name.to_string(),
                description: s.description.to_string(),
                parameters: s.schema.clone(),
            })
            .collect()
    }

    /// Whether the job gets the lean request (a small window).
    pub(super) fn lean(&self) -> bool {
        super::lean::is_lean(self.window.tokens)
    }

    /// The answer of the request that followed the spent budget (or the
    /// repeated calls).
    fn budget_answer(&mut self, turn: Turn) -> Outcome {
        if self.repeats.withdrawn() {
            let answer = if turn.text.trim().is_empty() {
                "(The model repeated the same calls with the same results and gave no answer; \
                 rephrase the request, name the files, or use a larger model.)"
                    .to_string()
            } else {
                turn.text
            };
            return self.answer(answer, false);
        }
        let answer = if turn.text.trim().is_empty() {
            format!(
                "(The tool budget of {} calls is spent and the model gave no final answer; \
                 continue the session to let it go on, or raise --max-tool-calls.)",
                self.spec.max_tool_calls
            )
        } else {
            turn.text
        };
        self.answer(answer, true)
    }

    /// Ends the job with `answer`, which joins the conversation.
    fn answer(&mut self, answer: String, budget_exhausted: bool) -> Outcome {
        let message = Message::Assistant {
            text: answer.clone(),
            tool_calls: Vec::new(),
        };
        // Recorded as the answer once the job ends here (`drive`).
        self.conv.push(message);
        Outcome::Completed {
            answer,
            status: self.final_status(),
            budget_exhausted,
        }
    }

    fn final_status(&self) -> JobStatus {
        if self
            .bundle
            .as_ref()
            .is_some_and(|b| b.hunks().next().is_some())
        {
            JobStatus::AwaitingReview
        } else {
            JobStatus::Completed
        }
    }

    /// Adds a message to the conversation and to the session's record.
    pub(super) fn add(&mut self, message: Message) {
        let stored = self.conv.push(message).clone();
        self.emit.send(JobMsg::Append(vec![stored]));
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
                JobFailure::MalformedToolCalls,
            )
        })
    }
}
