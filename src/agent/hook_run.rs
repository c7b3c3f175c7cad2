//! Running one hook (SPEC 21): its argv confined like `run_command`
//! (writes only in its own TMPDIR, and a verify's scratch copy for
//! `apply.before`; no network unless `network = true`; no provider key in
//! its environment), the event's JSON on stdin, ended with its process
//! group at its timeout; its exit and output read by the contract. A
//! kernel without Landlock runs no hook: it fails as `on_error` says.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::config::{HookDef, OnError};
use crate::protocol::{HookAnswer, HookDecision, HookOutcome};
use crate::tools::confine::{self, Confinement};
use crate::tools::runner::{self, Spawn};

/// Bytes kept of a hook's stdout and of its stderr.
const OUTPUT_CAP: usize = 64 * 1024;

/// One run to make.
pub(crate) struct HookCall<'a> {
    pub def: &'a HookDef,
    pub def_sha256: &'a str,
    /// Trusted copies of the scripts its argv names (project hooks): the
    /// argument as written, and the bytes to run in its place.
    pub scripts: &'a [(String, Vec<u8>)],
    /// `{files}` expands to these.
    pub files: &'a [String],
    pub cwd: &'a Path,
    /// The folders of the project (the root and those beside it): no hook
    /// is granted a write in them.
    pub roots: Vec<&'a Path>,
    /// Where it may write besides its own TMPDIR.
    pub writable: Vec<PathBuf>,
    pub input: &'a Value,
    pub secrets: &'a [String],
    pub cancel: Option<&'a CancellationToken>,
}

/// Runs the hook to its end and reads what it said.
pub(crate) fn run(call: &HookCall<'_>) -> HookOutcome {
    let mut out = HookOutcome::passed(&call.def.name, call.def.on.as_str(), call.def_sha256);
    // Asked of the kernel once a process (and ahead of the first hook).
    if confine::probe() == Confinement::None {
        return failed(
            call.def,
            out,
            "hooks run only confined, and nothing confines commands here (no Landlock or \
             Seatbelt; Windows has none agent-tui can prove; or agent-tui runs inside \
             another program): it did not run"
                .into(),
        );
    }
    let started = std::time::Instant::now();
    // A folder for the trusted copies of its scripts, if it runs any.
    let dir = if call.scripts.is_empty() {
        None
    } else {
        match tempfile::Builder::new().prefix("agent-tui-hook-").tempdir() {
            Ok(dir) => Some(dir),
            Err(e) => return failed(call.def, out, format!("cannot make its folder: {e}")),
        }
    };
    let argv = match prepare(call, dir.as_ref().map(tempfile::TempDir::path)) {
        Ok(argv) => argv,
        Err(e) => return failed(call.def, out, e),
    };
    let input = match serde_json::to_vec(call.input) {
        Ok(input) => input,
        Err(e) => return failed(call.def, out, format!("cannot write its input: {e}")),
    };
    let mut writable = call.writable.clone();
    match granted(call) {
        Ok(more) => writable.extend(more),
        Err(e) => return failed(call.def, out, e),
    }
    let spawn = Spawn {
        argv: &argv,
        cwd: call.cwd,
        writable,
        network: call.def.network,
        timeout: Duration::from_secs(call.def.timeout_secs),
        cap: OUTPUT_CAP,
        secrets: call.secrets,
        env: vec![
            ("AGENT_TUI_HOOK", call.def.name.clone()),
            ("AGENT_TUI_HOOK_EVENT", call.def.on.as_str().to_string()),
        ],
        cancel: call.cancel,
        tee: None,
        tee_past_cap: false,
        stdin: Some(&input),
    };
    let ran = match runner::run(&spawn) {
        Ok(ran) => ran,
        Err(e) => return failed(call.def, out, e.to_string()),
    };
    out.exit_code = ran.exit_code;
    // All it cost the job: its folder and input too, not only the process.
    out.duration_ms =
        u64::try_from(started.elapsed().as_micros().div_ceil(1000)).unwrap_or(ran.duration_ms);
    out.timed_out = ran.timed_out;
    out.confined = ran.confined;
    read_exit(call.def, out, &ran)
}

/// The folders its `writable` names, made when missing; none may hold a
/// project folder or lie in one (a hook changes the project only through
/// `apply.before`, reviewed and checkpointed), nor agent-tui's own state
/// (its store, audit log and checkpoints).
fn granted(call: &HookCall<'_>) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for named in &call.def.writable {
        let folder = crate::workspace::expand_home(named);
        let folder = std::fs::create_dir_all(&folder)
            .and_then(|()| folder.canonicalize())
            .map_err(|e| format!("writable {named:?}: cannot make it: {e}"))?;
        let clash = |other: &Path| {
            let other = other.canonicalize().unwrap_or_else(|_| other.to_path_buf());
            (folder.starts_with(&other) || other.starts_with(&folder)).then_some(other)
        };
        if let Some(root) = call.roots.iter().find_map(|r| clash(r)) {
            return Err(format!(
                "writable {named:?} would let it write in the project ({}): a hook changes \
                 project files only as apply.before, in the review",
                root.display()
            ));
        }
        if let Some(state) = super::state_home().as_deref().and_then(clash) {
            return Err(format!(
                "writable {named:?} would let it write in agent-tui's own state ({})",
                state.display()
            ));
        }
        out.push(folder);
    }
    Ok(out)
}

/// What its exit says: 0 (and what it printed), 2 (a block), the rest.
fn read_exit(def: &HookDef, mut out: HookOutcome, ran: &runner::Ran) -> HookOutcome {
    let stderr = ran.stderr_text().trim().to_string();
    match ran.exit_code {
        _ if ran.timed_out => {
            let why = format!("did not finish within {} s", def.timeout_secs);
            failed(def, out, why)
        }
        Some(0) => answered(def, out, ran.stdout_text().trim()),
        Some(2) => {
            out.decision = HookDecision::Block;
            out.reason = Some(if stderr.is_empty() {
                format!("blocked by hook {}", def.name)
            } else {
                stderr
            });
            out
        }
        Some(code) => {
            let why = if stderr.is_empty() {
                format!("exited with {code}")
            } else {
                format!("exited with {code}: {}", first_lines(&stderr))
            };
            failed(def, out, why)
        }
        None => failed(def, out, "was ended by a signal".into()),
    }
}

/// The argv to run: `{files}` expanded, trusted script copies (laid out
/// in `dir`) in place of the project's files.
fn prepare(call: &HookCall<'_>, dir: Option<&Path>) -> Result<Vec<String>, String> {
    let mut argv = Vec::with_capacity(call.def.command.len());
    for arg in &call.def.command {
        if arg == "{files}" {
            argv.extend(call.files.iter().cloned());
            continue;
        }
        match (call.scripts.iter().position(|(named, _)| named == arg), dir) {
            (Some(i), Some(dir)) => {
                let copy = dir.join(format!("script-{i}"));
                std::fs::write(&copy, &call.scripts[i].1)
                    .and_then(|()| crate::platform::fs::set_mode(&copy, 0o500))
                    .map_err(|e| format!("cannot lay out its trusted script: {e}"))?;
                argv.push(copy.display().to_string());
            }
            (Some(_), None) | (None, _) => argv.push(arg.clone()),
        }
    }
    Ok(argv)
}

/// Exit 0: nothing said is a pass; else one JSON object by the contract.
fn answered(def: &HookDef, mut out: HookOutcome, stdout: &str) -> HookOutcome {
    if stdout.is_empty() {
        return out;
    }
    match crate::protocol::object::from_object::<HookAnswer>(stdout.as_bytes()) {
        Ok(answer) => {
            out.decision = answer.decision.unwrap_or(HookDecision::Pass);
            out.reason = answer.reason;
            out.context = answer.context;
            out.message = answer.message;
            out
        }
        Err(e) => failed(
            def,
            out,
            format!(
                "its output is not the hook contract ({e}); print nothing, or one JSON object \
                 with decision, reason, context or message"
            ),
        ),
    }
}

/// A hook that failed: `on_error` decides, and the error is kept.
fn failed(def: &HookDef, mut out: HookOutcome, error: String) -> HookOutcome {
    out.decision = match def.on_error() {
        OnError::Block => HookDecision::Block,
        OnError::Pass => HookDecision::Pass,
    };
    if out.decision == HookDecision::Block {
        out.reason = Some(format!("hook {} failed: {error}", def.name));
    }
    out.error = Some(error);
    out
}

fn first_lines(text: &str) -> String {
    text.lines().take(5).collect::<Vec<_>>().join("\n")
}
