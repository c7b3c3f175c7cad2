//! Verify commands (SPEC 17): run the project's check on a review's
//! accepted hunks off the engine task (`tools::verify`), stop it, and send
//! a failure back to the model for a corrected proposal. A verify only
//! reads the root; decisions go on while it runs (a result whose decisions
//! moved on is stale), and a newer verify of the same job supersedes one
//! still running (which then ends without a `verify.completed`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::engine::{Core, Internal, ReplyTx};
use super::job::JobKind;
use crate::config::VerifyCommand;
use crate::protocol::{EngineError, EventBody, Mode, Reply, VerifyOutcome, VerifyResult};
use crate::review::plan_apply;
use crate::tools::verify::{Baselines, VerifyPlan, verify};

/// A verify's end, sent back to the engine task.
pub(super) struct Verified {
    pub key: String,
    pub job_id: String,
    pub generation: u64,
    pub result: VerifyResult,
    pub reply: Option<ReplyTx>,
    /// The server's user who asked for it (`None`: this machine).
    pub actor: Option<String>,
}

/// The folders a verify uses under the state home (else the temp dir):
/// its copies, its baselines, the build cache it may write.
pub(super) fn verify_home() -> PathBuf {
    super::state_home()
        .map(|h| h.join("verify"))
        .unwrap_or_else(|| std::env::temp_dir().join("agent-tui-verify"))
}

/// A tmpfs folder of this user's for copies where clones do not work
/// (`/dev/shm`, if the system has it).
fn memory_dir() -> Option<PathBuf> {
    let shm = std::path::Path::new("/dev/shm");
    shm.is_dir()
        .then(|| shm.join(format!("agent-tui-{}", crate::platform::fs::user_id())))
}

/// The baselines this engine keeps (shared by its verifies).
pub(super) fn baselines() -> Arc<Baselines> {
    Arc::new(Baselines::new(Some(verify_home().join("baselines"))))
}

impl Core {
    /// The check `[verify]` names for this root, or why there is none.
    fn verify_command(&self) -> Result<String, EngineError> {
        match self
            .ctx
            .config
            .verify
            .command_for(self.ctx.workspace.root())
        {
            VerifyCommand::Set(c) | VerifyCommand::Detected { command: c, .. } => Ok(c),
            VerifyCommand::Off if self.ctx.config.verify.command.is_some() => {
                Err(EngineError::invalid(
                    "verify is off: the config sets `[verify] command = \"\"`; name a check \
                     there to verify",
                ))
            }
            VerifyCommand::Off => Err(EngineError::invalid(
                "there is no verify command: set `[verify] command` in the config (nothing \
                 was detected from Cargo.toml, package.json, pytest config or go.mod)",
            )),
        }
    }

    /// Starts a verify of job `job_id`'s accepted hunks; the reply comes
    /// when it ends (`finish_verify`).
    pub(super) fn verify(&mut self, key: &str, job_id: &str, reply: ReplyTx) {
        let Some((bundle, edits)) = self.review_of(key, job_id) else {
            let _ = reply.send(Err(EngineError::not_found(format!(
                "job {job_id} has no diff to review"
            ))));
            return;
        };
        let command = match self.verify_command() {
            Ok(c) => c,
            Err(e) => {
                let _ = reply.send(Err(e));
                return;
            }
        };
        let hunk_ids: Vec<String> = bundle.to_apply().map(|h| h.hunk_id.clone()).collect();
        if hunk_ids.is_empty() {
            let _ = reply.send(Err(EngineError::invalid(
                "no accepted hunks to verify: accept the hunks to check first",
            )));
            return;
        }
        let cancel = CancellationToken::new();
        self.verify_generation += 1;
        let generation = self.verify_generation;
        if let Some(live) = self.live(key)
            && let Some((_, older)) = live
                .verifying
                .insert(job_id.to_string(), (generation, cancel.clone()))
        {
            older.cancel();
        }
        let started = EventBody::VerifyStarted {
            hunk_ids: hunk_ids.clone(),
            command: command.clone(),
        };
        self.publish(key, job_id, started);
        self.touch(key);
        let plan = self.verify_plan(command, hunk_ids, bundle.verify_key());
        // The copy starts once the store has synced what came before: its
        // file creations would otherwise wait on that sync's journal commit.
        let written = self.ctx.state.as_ref().map(|s| s.store.barrier());
        let ws = self.ctx.workspace.clone();
        let baselines = self.baselines.clone();
        let tx = self.internal_tx.clone();
        let (key, job) = (key.to_string(), job_id.to_string());
        let actor = self.actor.clone();
        tokio::task::spawn_blocking(move || {
            if let Some(written) = written {
                let _ = written.blocking_recv();
            }
            let mut result = match plan_apply(&ws, &bundle, &edits) {
                Ok(plans) => {
                    let files: Vec<(String, Vec<u8>)> =
                        plans.into_iter().map(|p| (p.file_path, p.after)).collect();
                    verify(&ws, &plan, &files, &cancel, &baselines)
                }
                Err(e) => plan.could_not_run(Some(e.to_string())),
            };
            // Stopped (Esc, an apply) whatever step it was at: no verdict.
            if cancel.is_cancelled() && result.outcome != VerifyOutcome::Passed {
                result.outcome = VerifyOutcome::Cancelled;
                result.baseline = None;
            }
            let _ = tx.send(Internal::Verified(Box::new(Verified {
                key,
                job_id: job,
                generation,
                result,
                reply: Some(reply),
                actor,
            })));
        });
    }

    /// How this root's verify runs: `[verify]`'s timeout and network,
    /// `[exec]`'s caps and writable folders, the providers' keys kept
    /// out, and a build cache of its own (Cargo's target folder) so a
    /// verify does not build everything from nothing each time.
    fn verify_plan(&self, command: String, hunk_ids: Vec<String>, decisions: String) -> VerifyPlan {
        let config = &self.ctx.config;
        let home = verify_home();
        let root_key = {
            use sha2::Digest;
            let d = sha2::Sha256::digest(self.ctx.workspace.root().as_os_str().as_encoded_bytes());
            d.iter()
                .take(6)
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        };
        let target = home.join("target").join(root_key);
        VerifyPlan {
            command,
            timeout: Duration::from_secs(config.verify.timeout_secs.max(1)),
            network: config.verify.network,
            cap: usize::try_from(config.exec.max_output_bytes).unwrap_or(usize::MAX),
            secrets: config.secret_env_names(),
            writable: config.exec.writable_paths(),
            env: vec![("CARGO_TARGET_DIR", target.to_string_lossy().into_owned())],
            build_cache: Some(target),
            scratch_parent: home.join("scratch"),
            scratch_memory: memory_dir(),
            hunk_ids,
            decisions,
        }
    }

    /// A verify ended: said (unless a newer one superseded it), audited,
    /// answered.
    pub(super) fn finish_verify(&mut self, done: Verified) {
        let Verified {
            key,
            job_id,
            generation,
            result,
            reply,
            actor,
        } = done;
        self.actor = actor;
        let current = self.live(&key).is_some_and(|live| {
            let mine = live
                .verifying
                .get(&job_id)
                .is_some_and(|(g, _)| *g == generation);
            if mine {
                live.verifying.remove(&job_id);
            }
            mine
        });
        if current {
            let outcome = match &result.error {
                Some(e) => format!("{}: {e}", result.outcome.as_str()),
                None => result.summary(),
            };
            let target = result.hunk_ids.join(",");
            self.audit(&key, &job_id, "verify", &target, None, &outcome);
            self.publish(&key, &job_id, EventBody::VerifyCompleted(result.clone()));
            self.touch(&key);
        }
        self.actor = None;
        if let Some(reply) = reply {
            let _ = reply.send(Ok(Reply::Verified {
                result: Box::new(result),
            }));
        }
    }

    /// `[verify] auto`: a verify after each change of the decisions, when
    /// there are accepted hunks and a command (nobody waits for its reply:
    /// its result is the event). Only a lasting front end's engine has
    /// `auto` on (`FrontEnd`): a one-shot command's would cancel it at once.
    pub(super) fn auto_verify(&mut self, key: &str, job_id: &str) {
        let config = &self.ctx.config.verify;
        let accepted = self
            .sessions
            .get(key)
            .and_then(|l| l.state.job(job_id))
            .and_then(|j| j.bundle.as_ref())
            .is_some_and(|b| b.to_apply().next().is_some());
        if config.auto && accepted && self.verify_command().is_ok() {
            let (reply, _) = tokio::sync::oneshot::channel();
            self.verify(key, job_id, reply);
        }
    }

    /// Stops job `job_id`'s running verify, if any.
    pub(super) fn cancel_verify(&mut self, key: &str, job_id: &str) -> Result<Reply, EngineError> {
        if let Some(live) = self.live(key)
            && let Some((_, cancel)) = live.verifying.get(job_id)
        {
            cancel.cancel();
        }
        Ok(Reply::Done)
    }

    /// Sends job `job_id`'s last failed verify to the model: a new job
    /// asking for a corrected proposal.
    pub(super) fn verify_feedback(
        &mut self,
        key: &str,
        job_id: &str,
        new_job_id: String,
    ) -> Result<Reply, EngineError> {
        let last = self
            .sessions
            .get(key)
            .and_then(|l| l.state.job(job_id))
            .and_then(|j| j.verify.clone());
        let Some(result) = last.filter(|r| !r.passed && r.outcome != VerifyOutcome::Cancelled)
        else {
            return Err(EngineError::invalid(format!(
                "job {job_id} has no failed verify to send back (run a verify first)"
            )));
        };
        let prompt = feedback_prompt(&result);
        self.audit(key, job_id, "verify.feedback", &new_job_id, None, "sent");
        let job = super::live::NewJob {
            job_id: new_job_id,
            prompt,
            mode: Mode::Agent,
            max_tool_calls: None,
            choice: crate::protocol::ModelChoice::default(),
            images: Vec::new(),
        };
        self.start_job(key, JobKind::Instruction, job)
    }
}

/// What the model is told of a failed verify.
pub(super) fn feedback_prompt(result: &VerifyResult) -> String {
    let how = match result.outcome {
        VerifyOutcome::AlreadyFailing => {
            "failed; it fails on the unmodified files as well, so part of the failure was \
             there before your edits"
                .to_string()
        }
        VerifyOutcome::TimedOut => "did not finish in time".to_string(),
        VerifyOutcome::Error => format!(
            "could not run: {}",
            result.error.as_deref().unwrap_or("unknown error")
        ),
        _ => match result.exit_code {
            Some(code) => format!("failed (exit code {code})"),
            None => "failed".to_string(),
        },
    };
    format!(
        "[agent-tui: verify] The project's check `{}` {how} with the hunks the user accepted \
         from your proposal ({}) applied to a scratch copy of the project. Nothing was written \
         to the project: its files are still as they were before your proposal. The end of \
         the check's output:\n```text\n{}\n```\nFind the cause and propose corrected edits \
         with propose_edits (read the files again first); keep what the accepted hunks were \
         meant to do.",
        result.command,
        result.hunk_ids.join(", "),
        result.output_tail.trim_end()
    )
}
