//! A verify's work (SPEC 17), done off the engine task: a scratch copy of
//! the root with the accepted hunks written into it, the project's check
//! run there confined like `run_command` (writes only in the copy and its
//! private TMPDIR, no network unless allowed, the same caps, timeout and
//! cancel), the copy removed; when the check fails, the same check on the
//! unmodified tree (the baseline, cached by the tree's content) tells
//! "already failing" from "broken by these hunks". The root is never
//! written.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::runner::{self, Spawn};
use crate::protocol::{Baseline, VerifyOutcome, VerifyResult};
use crate::workspace::{CopyKind, Scratch, Workspace, tree_key};

/// Lines of output a result keeps (its end).
const TAIL_LINES: usize = 60;
/// Bytes of output a result keeps at most.
const TAIL_BYTES: usize = 8 * 1024;

/// What to run and how.
#[derive(Debug, Clone)]
pub struct VerifyPlan {
    pub command: String,
    pub timeout: Duration,
    pub network: bool,
    /// Bytes kept of stdout and of stderr each.
    pub cap: usize,
    /// Variables removed from its environment.
    pub secrets: Vec<String>,
    /// Where it may write besides the copy (`[exec] writable`).
    pub writable: Vec<PathBuf>,
    /// A folder of its own that outlives the copy (Cargo's target folder),
    /// made when the check runs and writable to it.
    pub build_cache: Option<PathBuf>,
    pub env: Vec<(&'static str, String)>,
    /// Where copies are made (on the state home's filesystem: clones work
    /// there when the root is on the same one).
    pub scratch_parent: PathBuf,
    /// A tmpfs for copies when clones do not work and the files fit.
    pub scratch_memory: Option<PathBuf>,
    pub hunk_ids: Vec<String>,
    /// The review's `verify_key` it runs with.
    pub decisions: String,
}

impl VerifyPlan {
    /// The result of a verify of this plan that did not run its check
    /// (`error` says why, when known).
    pub fn could_not_run(&self, error: Option<String>) -> VerifyResult {
        VerifyResult {
            passed: false,
            outcome: VerifyOutcome::Error,
            command: self.command.clone(),
            exit_code: None,
            duration_ms: 0,
            overhead_ms: 0,
            output_tail: String::new(),
            hunk_ids: self.hunk_ids.clone(),
            decisions: self.decisions.clone(),
            baseline: None,
            confined: false,
            copy: String::new(),
            error,
            not_verified: Vec::new(),
            tree: None,
        }
    }
}

/// Baselines by tree key and command: in memory, and in a folder (the
/// state home's) so the next process finds them too.
#[derive(Debug, Default)]
pub struct Baselines {
    dir: Option<PathBuf>,
    known: Mutex<HashMap<String, Baseline>>,
}

impl Baselines {
    pub fn new(dir: Option<PathBuf>) -> Baselines {
        Baselines {
            dir,
            known: Mutex::new(HashMap::new()),
        }
    }

    fn file(&self, key: &str) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join(format!("{key}.json")))
    }

    fn get(&self, key: &str) -> Option<Baseline> {
        if let Some(b) = self.known.lock().ok()?.get(key) {
            return Some(b.clone());
        }
        let text = std::fs::read_to_string(self.file(key)?).ok()?;
        serde_json::from_str(&text).ok()
    }

    fn put(&self, key: &str, baseline: &Baseline) {
        if let Ok(mut known) = self.known.lock() {
            known.insert(key.to_string(), baseline.clone());
        }
        if let Some(file) = self.file(key)
            && let Some(dir) = file.parent()
            && std::fs::create_dir_all(dir).is_ok()
            && let Ok(text) = serde_json::to_string(baseline)
        {
            let _ = std::fs::write(file, text);
        }
    }
}

/// Runs the check on `files` (root-relative path, bytes after the
/// accepted hunks) and, if it fails, the baseline.
pub fn verify(
    ws: &Workspace,
    plan: &VerifyPlan,
    files: &[(String, Vec<u8>)],
    cancel: &CancellationToken,
    baselines: &Baselines,
) -> VerifyResult {
    let started = Instant::now();
    let mut result = plan.could_not_run(None);
    let (inside, outside): (Vec<_>, Vec<_>) = files.iter().partition(|(p, _)| !p.starts_with('@'));
    result.not_verified = outside.into_iter().map(|(p, _)| p.clone()).collect();
    let run = match check_with(ws, plan, &inside, cancel) {
        Ok(run) => run,
        Err(e) => {
            result.error = Some(e);
            result.overhead_ms = millis(started.elapsed());
            return result;
        }
    };
    result.exit_code = run.exit_code;
    result.duration_ms = run.duration_ms;
    result.overhead_ms = millis(started.elapsed()).saturating_sub(run.duration_ms);
    result.output_tail = run.tail;
    result.confined = run.confined;
    result.copy = run.copy.to_string();
    result.tree = Some(run.stamp);
    result.outcome = if run.exit_code == Some(0) {
        VerifyOutcome::Passed
    } else if cancel.is_cancelled() {
        VerifyOutcome::Cancelled
    } else if run.timed_out {
        VerifyOutcome::TimedOut
    } else {
        result.baseline = baseline(ws, plan, cancel, baselines);
        match &result.baseline {
            // The shell could not find (127) or execute (126) the
            // program, with the hunks and without: nothing was checked.
            Some(b) if !b.passed && cannot_start(run.exit_code) && cannot_start(b.exit_code) => {
                result.error = Some(not_started(plan, run.exit_code, &result.output_tail));
                VerifyOutcome::Error
            }
            Some(b) if !b.passed => VerifyOutcome::AlreadyFailing,
            _ => VerifyOutcome::Failed,
        }
    };
    result.passed = result.outcome == VerifyOutcome::Passed;
    result
}

/// One run of the check in a fresh copy.
struct CheckRun {
    exit_code: Option<i32>,
    duration_ms: u64,
    timed_out: bool,
    confined: bool,
    tail: String,
    copy: &'static str,
    stamp: String,
}

/// Copies the root, writes `files` into the copy, runs the check there
/// and removes the copy (also when the check could not start).
fn check_with(
    ws: &Workspace,
    plan: &VerifyPlan,
    files: &[&(String, Vec<u8>)],
    cancel: &CancellationToken,
) -> Result<CheckRun, String> {
    let scratch = Scratch::placed(ws, &plan.scratch_parent, plan.scratch_memory.as_deref())
        .map_err(|e| format!("cannot make the scratch copy of the root: {e}"))?;
    for (path, bytes) in files {
        scratch
            .write_applied(ws, path, bytes)
            .map_err(|e| format!("cannot write `{path}` into the scratch copy: {e}"))?;
    }
    let copy = match scratch.kind {
        CopyKind::Reflink => "reflink",
        CopyKind::Plain => "copy",
        CopyKind::Memory => "memory",
    };
    let ran = run_in(plan, scratch.path(), cancel);
    let stamp = scratch.stamp.clone();
    let _ = scratch.remove();
    let (ran, tail) = ran?;
    Ok(CheckRun {
        stamp,
        exit_code: ran.exit_code,
        duration_ms: ran.duration_ms,
        timed_out: ran.timed_out,
        confined: ran.confined,
        tail,
        copy,
    })
}

/// Runs the command with `sh -c` in `dir`, keeping its output's end as it
/// came (stdout and stderr interleaved).
fn run_in(
    plan: &VerifyPlan,
    dir: &Path,
    cancel: &CancellationToken,
) -> Result<(runner::Ran, String), String> {
    let argv = vec!["sh".to_string(), "-c".to_string(), plan.command.clone()];
    let output = Arc::new(Mutex::new(Vec::<u8>::new()));
    let sink = output.clone();
    let tee: runner::Tee = Arc::new(move |_, bytes: &[u8]| {
        if let Ok(mut out) = sink.lock() {
            out.extend_from_slice(bytes);
            // Keep a window twice the tail's size, trimmed from the front.
            if out.len() > 4 * TAIL_BYTES {
                let cut = out.len() - 2 * TAIL_BYTES;
                out.drain(..cut);
            }
        }
    });
    let mut writable = vec![dir.to_path_buf()];
    writable.extend(plan.writable.iter().cloned());
    if let Some(cache) = &plan.build_cache
        && std::fs::create_dir_all(cache).is_ok()
    {
        writable.push(cache.clone());
    }
    let spawn = Spawn {
        argv: &argv,
        cwd: dir,
        writable,
        network: plan.network,
        timeout: plan.timeout,
        cap: plan.cap,
        secrets: &plan.secrets,
        env: plan.env.clone(),
        cancel: Some(cancel),
        tee: Some(tee),
        tee_past_cap: true,
        stdin: None,
    };
    let ran = runner::run(&spawn).map_err(|e| e.to_string())?;
    let bytes = output.lock().map(|o| o.clone()).unwrap_or_default();
    Ok((ran, tail_of(&String::from_utf8_lossy(&bytes))))
}

/// The baseline of the unmodified tree: from the cache, else run now
/// (`None`: it could not run to its end).
fn baseline(
    ws: &Workspace,
    plan: &VerifyPlan,
    cancel: &CancellationToken,
    baselines: &Baselines,
) -> Option<Baseline> {
    let key = {
        use sha2::Digest;
        let tree = tree_key(ws).ok()?;
        let digest = sha2::Sha256::digest(format!("{tree}\n{}", plan.command).as_bytes());
        digest
            .iter()
            .take(16)
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    if let Some(mut b) = baselines.get(&key) {
        b.cached = true;
        return Some(b);
    }
    let run = check_with(ws, plan, &[], cancel).ok()?;
    if cancel.is_cancelled() || run.timed_out {
        return None;
    }
    let b = Baseline {
        passed: run.exit_code == Some(0),
        exit_code: run.exit_code,
        cached: false,
    };
    baselines.put(&key, &b);
    Some(b)
}

/// Whether a shell's exit code says its program could not start: 127
/// not found, 126 not executable.
fn cannot_start(exit_code: Option<i32>) -> bool {
    matches!(exit_code, Some(126 | 127))
}

/// Why the check could not start, naming the program (from the shell's
/// complaint at the end of `tail`, else the command's first word).
fn not_started(plan: &VerifyPlan, exit_code: Option<i32>, tail: &str) -> String {
    let complaint = tail.lines().rev().find_map(|line| {
        let parts: Vec<&str> = line.split(": ").collect();
        let last = parts.last()?.trim();
        let known = ["not found", "command not found", "Permission denied"];
        (parts.len() >= 2 && known.contains(&last)).then(|| parts[parts.len() - 2].trim())
    });
    let program = complaint
        .map(str::to_string)
        .or_else(|| first_program(&plan.command).map(str::to_string))
        .unwrap_or_else(|| plan.command.clone());
    let code = exit_code.unwrap_or_default();
    let why = if code == 126 {
        "cannot be executed (exit 126: check its permissions)"
    } else {
        "was not found (exit 127: is it installed and on PATH?)"
    };
    format!(
        "`{program}` {why}, with the accepted hunks and without them alike; \
         install it or set `[verify] command`"
    )
}

/// Shell words that are no program on PATH.
const SHELL_WORDS: &[&str] = &[
    "!", ".", ":", "[", "{", "(", "case", "cd", "command", "eval", "exec", "export", "for", "if",
    "set", "source", "test", "true", "false", "ulimit", "umask", "unset", "until", "while", "echo",
    "printf", "exit",
];

/// The program a shell command starts with (past `NAME=value`
/// assignments); `None` when it starts with a shell word.
fn first_program(command: &str) -> Option<&str> {
    let word = command
        .split_whitespace()
        .find(|w| !w.contains('=') || w.starts_with('='))?;
    let word = word.trim_end_matches(';');
    (!word.is_empty() && !SHELL_WORDS.contains(&word)).then_some(word)
}

/// The first program of `command` when it is neither on PATH nor a path
/// to an existing file (`doctor` warns: the verify could not run).
pub fn missing_program(command: &str) -> Option<String> {
    let program = first_program(command)?;
    if program.contains('/') {
        return None;
    }
    let on_path = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()));
    (!on_path).then(|| program.to_string())
}

/// The last `TAIL_LINES` lines (within `TAIL_BYTES`) of `text`.
pub fn tail_of(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let from = lines.len().saturating_sub(TAIL_LINES);
    let mut tail = lines[from..].join("\n");
    if tail.len() > TAIL_BYTES {
        let mut cut = tail.len() - TAIL_BYTES;
        while !tail.is_char_boundary(cut) {
            cut += 1;
        }
        tail = tail[cut..].to_string();
    }
    tail
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(unix)]
    fn scoped_files_are_named_not_verified_and_the_rest_runs_in_the_copy() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("a.txt"), "old\n").unwrap();
        let ws = Workspace::open(root.path()).unwrap();
        let parent = tempfile::tempdir().unwrap();
        let plan = VerifyPlan {
            command: "grep -q new a.txt".into(),
            timeout: Duration::from_secs(30),
            network: false,
            cap: 1 << 16,
            secrets: Vec::new(),
            writable: Vec::new(),
            build_cache: None,
            env: Vec::new(),
            scratch_parent: parent.path().to_path_buf(),
            scratch_memory: None,
            hunk_ids: vec!["h_1".into(), "h_2".into()],
            decisions: "k".into(),
        };
        let files = vec![
            ("a.txt".to_string(), b"new\n".to_vec()),
            ("@lib/b.txt".to_string(), b"x\n".to_vec()),
        ];
        let result = verify(
            &ws,
            &plan,
            &files,
            &CancellationToken::new(),
            &Baselines::default(),
        );
        assert!(result.passed, "{result:?}");
        assert_eq!(result.not_verified, ["@lib/b.txt"]);
        assert_eq!(
            std::fs::read_to_string(root.path().join("a.txt")).unwrap(),
            "old\n"
        );
        // The copy removed (the list of the files it wrote stays).
        let left: Vec<_> = std::fs::read_dir(parent.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert!(left.iter().all(|p| p.is_file()), "{left:?}");
    }

    #[test]
    fn the_tail_keeps_the_last_lines_within_the_byte_cap() {
        let text: String = (0..200).map(|i| format!("line {i}\n")).collect();
        let tail = tail_of(&text);
        assert!(tail.starts_with("line 140") && tail.ends_with("line 199"));
        let long = "é".repeat(10_000);
        assert!(tail_of(&long).len() <= TAIL_BYTES);
    }
}
