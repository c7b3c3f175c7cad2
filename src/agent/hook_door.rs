//! The door's hook queries and commands (SPEC 21): the list, trusting a
//! project's hooks as they are now (the definition and each script's
//! bytes kept in the store), and a dry run of one event's hooks that
//! decides like a job would and keeps nothing.

use serde_json::{Value, json};

use super::door::Engine;
use super::hook_run::{HookCall, run};
use super::hooks::{Called, Trusted, def_sha256, matches, project_hooks, scripts_of};
use crate::config::{HookEvent, MatchOn};
use crate::protocol::{EngineError, HookDecision, HookInfo, HookSkip, HookTest};

impl Engine {
    /// Every hook of the root (the config's, the project's with their
    /// trust) and what is wrong with the project's file.
    pub fn hooks(&self) -> (Vec<HookInfo>, Vec<String>) {
        let set = self.inner.ctx.hooks.get();
        (set.list(), set.problems.clone())
    }

    /// Trusts the project's hooks (or the one named) as they are now;
    /// the names trusted.
    pub async fn trust_hooks(&self, name: Option<String>) -> Result<Vec<String>, EngineError> {
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || {
            let ctx = &inner.ctx;
            let Some(state) = &ctx.state else {
                return Err(EngineError::unavailable(
                    "trusting hooks needs the store (a state home)",
                ));
            };
            let root = ctx.workspace.root();
            let project = project_hooks(root).map_err(EngineError::invalid)?;
            if let Some(n) = &name
                && !project.run.iter().any(|h| &h.name == n)
            {
                let known: Vec<&str> = project.run.iter().map(|h| h.name.as_str()).collect();
                return Err(EngineError::not_found(format!(
                    "no project hook named {n} (the project's: {})",
                    if known.is_empty() {
                        "none".into()
                    } else {
                        known.join(", ")
                    }
                )));
            }
            let now = crate::store::session::now();
            let mut trusted = Vec::new();
            for def in project.run {
                if name.as_ref().is_some_and(|n| *n != def.name) {
                    continue;
                }
                let t = Trusted {
                    def_sha256: def_sha256(&def),
                    scripts: scripts_of(root, &def),
                    def,
                };
                let body =
                    serde_json::to_string(&t).map_err(|e| EngineError::failed(e.to_string()))?;
                state
                    .trust_hook(&t.def.name, &body, &now)
                    .map_err(|e| EngineError::failed(e.to_string()))?;
                trusted.push(t.def.name);
            }
            let pinned = super::hooks::trusted_in(Some(state));
            ctx.hooks.reload(root, &ctx.config.hooks, &pinned);
            Ok(trusted)
        })
        .await
        .map_err(|e| EngineError::failed(e.to_string()))?
    }

    /// Runs the hooks of `event` (or only `hook`) on `data` as a job's would
    /// run, in order, stopping at the first that decides; nothing is kept.
    /// `data` is an event's `data`, or the whole input a hook received
    /// (captured to be replayed: its `data` is taken). The hooks of the
    /// event whose `match` takes none of it are named, with why.
    pub async fn test_hooks(
        &self,
        event: HookEvent,
        hook: Option<String>,
        data: Value,
        who: super::HookWho,
    ) -> Result<HookTest, EngineError> {
        let data = captured_data(event, data)?;
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || {
            let ctx = &inner.ctx;
            let set = ctx.hooks.get();
            if let Some(n) = &hook
                && !set.hooks.iter().any(|h| &h.def.name == n)
            {
                return Err(EngineError::not_found(format!("no hook named {n}")));
            }
            let tool = data["tool"].as_str().unwrap_or_default().to_string();
            let arguments = data["arguments"].clone();
            let files = files_named(&data);
            let called: Option<Called<'_>> = match event.matches_on() {
                MatchOn::Calls => {
                    (!tool.is_empty()).then(|| super::hook_calls::called(&tool, &arguments))
                }
                MatchOn::Files => Some(Called::files(&files)),
                MatchOn::Nothing => None,
            };
            let secrets = ctx.secret_names();
            let mut out = HookTest::default();
            for h in set.on(event) {
                if hook.as_ref().is_some_and(|n| *n != h.def.name) {
                    continue;
                }
                let taken = match event.matches_on() {
                    MatchOn::Files => h.files_of(&files),
                    MatchOn::Calls | MatchOn::Nothing => matches(h, called.as_ref())
                        .then(|| called.as_ref().map(|c| c.paths.clone()).unwrap_or_default()),
                };
                let Some(taken) = taken else {
                    out.unmatched.push(HookSkip {
                        name: h.def.name.clone(),
                        reason: unmatched(&h.def.matcher, called.as_ref()),
                    });
                    continue;
                };
                let input = test_input(h, event, &who, ctx.workspace.root(), &data);
                let outcome = run(&HookCall {
                    def: &h.def,
                    def_sha256: &h.def_sha256,
                    scripts: &h.scripts,
                    files: &taken,
                    cwd: ctx.workspace.root(),
                    roots: ctx.workspace.scope_roots(),
                    writable: Vec::new(),
                    input: &input,
                    secrets: &secrets,
                    cancel: None,
                });
                let decides = event.is_waited() && outcome.decision != HookDecision::Pass;
                out.runs.push(outcome);
                if decides {
                    break;
                }
            }
            Ok(out)
        })
        .await
        .map_err(|e| EngineError::failed(e.to_string()))?
    }
}

/// The files a file event's `data` names.
fn files_named(data: &Value) -> Vec<String> {
    data["files"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f.as_str().map(str::to_string))
        .collect()
}

/// The input hook `h` reads when tested: no session, job or mode, the front
/// end `test`.
fn test_input(
    h: &super::hooks::Hook,
    event: HookEvent,
    who: &super::HookWho,
    root: &std::path::Path,
    data: &Value,
) -> Value {
    json!({
        "hook": {"name": h.def.name, "event": event.as_str(), "def_sha256": h.def_sha256},
        "session_id": Value::Null,
        "job_id": Value::Null,
        "front": "test",
        "user": who.user,
        "workspace_id": who.workspace_id,
        "root": root.display().to_string(),
        "mode": Value::Null,
        "data": data,
    })
}

/// The `data` of a test's input: the input itself, or, when it is the whole
/// input a hook received (`{hook: {event, …}, data, …}`), its `data`, which
/// must be of the event being tested.
fn captured_data(event: HookEvent, input: Value) -> Result<Value, EngineError> {
    let Some(captured) = input.get("hook").and_then(|h| h.get("event")) else {
        return Ok(input);
    };
    let Some(data) = input.get("data") else {
        return Ok(input);
    };
    let on = captured.as_str().unwrap_or_default();
    if on != event.as_str() {
        return Err(EngineError::invalid(format!(
            "the input was captured on {on}, not {}: test it as {on}, or give its data",
            event.as_str()
        )));
    }
    Ok(data.clone())
}

/// Why a hook's `match` takes nothing of the input.
fn unmatched(m: &crate::config::HookMatch, called: Option<&Called<'_>>) -> String {
    let mut globs = Vec::new();
    for (key, glob) in [
        ("tool", &m.tool),
        ("command", &m.command),
        ("path", &m.path),
    ] {
        if let Some(g) = glob {
            globs.push(format!("{key} = {g:?}"));
        }
    }
    let input = match called {
        Some(c) => c.describe(),
        None => "no tool call (the input names no tool)".to_string(),
    };
    format!(
        "its match {{{}}} takes none of this input: {input}",
        globs.join(", ")
    )
}
