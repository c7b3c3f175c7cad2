//! `apply.before` (SPEC 21): the hooks run in a scratch copy of the root
//! with the accepted hunks written in, one after another (the first block
//! wins and nothing is written). What they change in the files being
//! applied goes into the same apply and the same checkpoint: a formatter's
//! work is written with the model's, and one rollback takes both back.

use std::path::PathBuf;

use std::sync::Arc;

use serde_json::json;

use super::EngineContext;
use super::hook_calls::{HookWho, input_for};
use super::hook_run::{HookCall, run};
use super::hooks::Hook;
use crate::config::HookEvent;
use crate::protocol::{HookDecision, HookOutcome};
use crate::review::FilePlan;
use crate::workspace::{Scratch, Workspace};

/// What the apply's hooks need off the engine task.
pub(super) struct ApplyHooks {
    ctx: Arc<EngineContext>,
    hooks: Vec<Hook>,
    session_id: Option<String>,
    job_id: String,
    who: HookWho,
    scratch_parent: PathBuf,
}

impl ApplyHooks {
    /// The `apply.before` hooks of job `job_id`, if any run here.
    pub fn of(
        ctx: &Arc<EngineContext>,
        session_id: Option<&str>,
        job_id: &str,
        who: HookWho,
    ) -> Option<ApplyHooks> {
        let hooks: Vec<Hook> = ctx
            .hooks
            .get()
            .on(HookEvent::ApplyBefore)
            .cloned()
            .collect();
        (!hooks.is_empty()).then(|| ApplyHooks {
            ctx: ctx.clone(),
            hooks,
            session_id: session_id.map(str::to_string),
            job_id: job_id.to_string(),
            who,
            scratch_parent: super::verify_ops::verify_home().join("scratch"),
        })
    }

    /// Runs the hooks over `plans` (each file's bytes after the apply):
    /// what they left in the copy replaces those bytes. Their runs, and
    /// why nothing may be written if one blocked.
    pub fn run(
        &self,
        ws: &Workspace,
        plans: &mut [FilePlan],
    ) -> (Vec<HookOutcome>, Option<String>) {
        let scratch = match Scratch::placed(ws, &self.scratch_parent, None) {
            Ok(s) => s,
            Err(e) => {
                return (
                    Vec::new(),
                    Some(format!(
                        "apply.before: cannot make the scratch copy of the root: {e}"
                    )),
                );
            }
        };
        let outcome = self.run_in(ws, &scratch, plans);
        let _ = scratch.remove();
        outcome
    }

    fn run_in(
        &self,
        ws: &Workspace,
        scratch: &Scratch,
        plans: &mut [FilePlan],
    ) -> (Vec<HookOutcome>, Option<String>) {
        for plan in plans.iter() {
            if let Err(e) = scratch.write_applied(ws, &plan.file_path, &plan.after) {
                let why = format!(
                    "apply.before: cannot write `{}` into the copy: {e}",
                    plan.file_path
                );
                return (Vec::new(), Some(why));
            }
        }
        let files: Vec<String> = plans.iter().map(|p| p.file_path.clone()).collect();
        let data = json!({"files": files});
        let secrets = self.ctx.secret_names();
        let mut runs = Vec::new();
        for hook in &self.hooks {
            // A formatter for one language sees its files only.
            let Some(files) = hook.files_of(&files) else {
                continue;
            };
            let at = (self.session_id.as_deref(), self.job_id.as_str());
            let input = input_for(&self.ctx, at, &self.who, None, hook, data.clone());
            let mut outcome = run(&HookCall {
                def: &hook.def,
                def_sha256: &hook.def_sha256,
                scripts: &hook.scripts,
                files: &files,
                cwd: scratch.path(),
                roots: ws.scope_roots(),
                writable: vec![scratch.path().to_path_buf()],
                input: &input,
                secrets: &secrets,
                cancel: None,
            });
            outcome.changed_files = take_changes(&hook.def.name, scratch, plans);
            let blocked = (outcome.decision == HookDecision::Block).then(|| {
                let why = outcome.reason.clone().unwrap_or_default();
                format!("hook {} blocked the apply: {why}", hook.def.name)
            });
            runs.push(outcome);
            if blocked.is_some() {
                return (runs, blocked);
            }
        }
        (runs, None)
    }
}

/// The files hook `name` changed in the copy: their bytes become the
/// apply's, and the changes its hunks (`origin: "hook:NAME"`).
fn take_changes(name: &str, scratch: &Scratch, plans: &mut [FilePlan]) -> Vec<String> {
    let mut changed = Vec::new();
    for plan in plans.iter_mut() {
        let Ok(now) = std::fs::read(scratch.path().join(&plan.file_path)) else {
            continue;
        };
        if now != plan.after {
            plan.hooked(name, now);
            changed.push(plan.file_path.clone());
        }
    }
    changed
}
