//! Runs one program the way every command tool does: confined where the
//! system allows (Landlock on Linux, Seatbelt on macOS) (writes only where granted, no TCP unless
//! allowed), a private TMPDIR, no API keys in its environment, ended by
//! timeout or cancel with all it started (the wrapper's lifeline, then its
//! process group), stdout and stderr capped.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::ToolError;
use super::confine::{self, Confinement};
use crate::platform::process::{Pipe, Tree, can_start, nap, set_nonblocking, wait_readable};

/// What to run and what it may do.
pub struct Spawn<'a> {
    pub argv: &'a [String],
    pub cwd: &'a Path,
    /// Where it may write besides its private TMPDIR.
    pub writable: Vec<PathBuf>,
    pub network: bool,
    pub timeout: Duration,
    /// Bytes kept of stdout and of stderr each.
    pub cap: usize,
    /// Variables removed from its environment (and any `*_API_KEY`).
    pub secrets: &'a [String],
    /// Variables set for it.
    pub env: Vec<(&'static str, String)>,
    pub cancel: Option<&'a CancellationToken>,
    /// Handed each piece of output as it comes (`true`: stderr), within
    /// the cap (the server streams a command's output).
    pub tee: Option<Tee>,
    /// The tee gets all of the output, past the cap too (a verify keeps
    /// the end of it).
    pub tee_past_cap: bool,
    /// What its stdin reads (a hook's input, kept in its TMPDIR while it
    /// runs); `None`: nothing.
    pub stdin: Option<&'a [u8]>,
}

/// The file in a command's TMPDIR that holds what its stdin reads.
const INPUT_FILE: &str = ".agent-tui-input.json";

/// The variable that tells the wrapper which file the command's stdin
/// reads (its own stdin is the lifeline); never seen by the command.
pub use crate::platform::sandbox::STDIN_VAR;

/// Where a command's output goes as it comes: (`true` for stderr, bytes).
pub type Tee = std::sync::Arc<dyn Fn(bool, &[u8]) + Send + Sync>;

/// How it ended.
#[derive(Debug)]
pub struct Ran {
    /// `None`: killed (timeout, cancel, signal).
    pub exit_code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub truncated: bool,
    pub timed_out: bool,
    pub confined: bool,
    pub duration_ms: u64,
}

impl Ran {
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

/// Whether `name` holds a secret a command must not see.
pub fn is_secret(name: &str, secrets: &[String]) -> bool {
    secrets.iter().any(|s| s == name) || name.to_ascii_uppercase().ends_with("_API_KEY")
}

/// How long the output pipes may stay open once the command ended (or was
/// killed): a child that left its process group keeps them open.
const PIPE_GRACE: Duration = Duration::from_millis(200);

/// Starts `spawn.argv` and waits for it. Fails only if it cannot start.
pub fn run(spawn: &Spawn<'_>) -> Result<Ran, ToolError> {
    let program = &spawn.argv[0];
    // The wrapper would only fail later with exit 127: say it now.
    if !can_start(program, spawn.cwd) {
        return Err(ToolError::invalid(
            "command",
            format!("cannot start `{program}`: no such program on PATH or in the project"),
        ));
    }
    // A private TMPDIR, writable under confinement, gone afterwards.
    let tmp = crate::platform::fs::private_tempdir("agent-tui-cmd-")
        .map_err(|e| ToolError::Internal(format!("cannot make its TMPDIR: {e}")))?;
    let input = match spawn.stdin {
        Some(bytes) => {
            let path = tmp.path().join(INPUT_FILE);
            std::fs::write(&path, bytes)
                .map_err(|e| ToolError::Internal(format!("cannot write its input: {e}")))?;
            Some(path)
        }
        None => None,
    };
    let confinement = confine::probe();
    let mut writable: Vec<&Path> = vec![tmp.path()];
    writable.extend(spawn.writable.iter().map(PathBuf::as_path));
    let wrapped = confine::wrapped(spawn.argv, &writable, spawn.network)
        .filter(|_| confinement != Confinement::None);
    let confined = wrapped.is_some() && confinement.holds();
    // The wrapper's stdin: while we hold the other end the command may
    // run; letting go (or dying) ends it and all it started.
    let lifeline = if wrapped.is_some() {
        let pipe = std::io::pipe();
        Some(pipe.map_err(|e| ToolError::Internal(format!("cannot make its lifeline: {e}")))?)
    } else {
        None
    };
    let mut command = wrapped.unwrap_or_else(|| {
        let mut plain = Command::new(program);
        plain.args(&spawn.argv[1..]);
        plain
    });
    command
        .current_dir(spawn.cwd)
        .env("TMPDIR", tmp.path())
        .env("TMP", tmp.path())
        .env("TEMP", tmp.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let lifeline = match lifeline {
        Some((reader, writer)) => {
            command.stdin(reader);
            if let Some(input) = &input {
                command.env(STDIN_VAR, input);
            }
            Some(writer)
        }
        None => {
            match input.as_deref().map(std::fs::File::open) {
                Some(Ok(file)) => command.stdin(file),
                Some(Err(e)) => {
                    return Err(ToolError::Internal(format!("cannot open its input: {e}")));
                }
                None => command.stdin(Stdio::null()),
            };
            None
        }
    };
    for (name, value) in &spawn.env {
        command.env(name, value);
    }
    for (name, _) in std::env::vars_os() {
        if is_secret(&name.to_string_lossy(), spawn.secrets) {
            command.env_remove(&name);
        }
    }
    // Its own tree (a process group, a Job Object), so a timeout or
    // cancel ends its children too.
    let started = Instant::now();
    let mut child = Tree::spawn(command)
        .map_err(|e| ToolError::invalid("command", format!("cannot start `{program}`: {e}")))?;
    let tee = |err: bool| spawn.tee.clone().map(|t| (t, err, spawn.tee_past_cap));
    let stop = Arc::new(AtomicBool::new(false));
    let stdout = child
        .take_stdout()
        .map(|s| capture(s, spawn.cap, tee(false), stop.clone()));
    let stderr = child
        .take_stderr()
        .map(|s| capture(s, spawn.cap, tee(true), stop.clone()));
    let (status, timed_out) = wait(&mut child, spawn, started, lifeline)?;
    let ((stdout, out_cut), (stderr, err_cut)) = collect(stdout, stderr, &stop);
    Ok(Ran {
        exit_code: status.and_then(|s| s.code()),
        stdout,
        stderr,
        truncated: out_cut || err_cut,
        timed_out,
        confined,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    })
}

/// How long the wrapper may take to end a command and all it started
/// once the lifeline is cut, before its process group is killed.
const SWEEP_GRACE: Duration = Duration::from_secs(3);

/// Waits for the command to end; at the timeout or on cancel, cuts the
/// wrapper's lifeline (it ends the command and everything it started) and
/// kills the process group: its exit status (`None`: killed) and whether
/// it timed out.
fn wait(
    child: &mut Tree,
    spawn: &Spawn<'_>,
    started: Instant,
    lifeline: Option<std::io::PipeWriter>,
) -> Result<(Option<std::process::ExitStatus>, bool), ToolError> {
    // Woken the moment it ends (its pidfd), else looking often at first.
    let exit = child.exit_signal();
    let mut pause = Duration::from_micros(500);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                // What it left behind ends with it (the wrapper sweeps on
                // Unix; a Job Object is ended here).
                if cfg!(windows) {
                    child.kill();
                }
                return Ok((Some(status), false));
            }
            Ok(None) => {}
            Err(e) => return Err(ToolError::Internal(format!("waiting for it: {e}"))),
        }
        let cancelled = spawn.cancel.is_some_and(CancellationToken::is_cancelled);
        if cancelled || started.elapsed() >= spawn.timeout {
            if let Some(lifeline) = lifeline {
                drop(lifeline);
                let grace = Instant::now() + SWEEP_GRACE;
                while matches!(child.try_wait(), Ok(None)) && Instant::now() < grace {
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
            child.kill();
            let _ = child.wait();
            return Ok((None, !cancelled));
        }
        // Cancel is looked at every 20 ms at least.
        let left = spawn.timeout.saturating_sub(started.elapsed());
        nap(&exit, left.min(Duration::from_millis(20)), &mut pause);
    }
}

/// What was read of stdout and stderr (and whether each was cut). A child
/// that left the group (`setsid`, a daemon) may hold the pipes open for as
/// long as it lives: what came within a short grace is kept, and nobody
/// waits for the rest.
fn collect(stdout: Option<Reader>, stderr: Option<Reader>, stop: &AtomicBool) -> (Output, Output) {
    let grace = Instant::now() + PIPE_GRACE;
    let open = |h: &Option<Reader>| h.as_ref().is_some_and(|h| !h.is_finished());
    // Readers end as soon as the pipes close: look often.
    let mut pause = Duration::from_micros(50);
    while (open(&stdout) || open(&stderr)) && Instant::now() < grace {
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(5));
    }
    stop.store(true, Ordering::Relaxed);
    let join = |h: Option<Reader>| h.and_then(|h| h.join().ok()).unwrap_or_default();
    (join(stdout), join(stderr))
}

/// A pipe's reader: the bytes kept, and whether some were cut.
type Reader = std::thread::JoinHandle<Output>;
type Output = (Vec<u8>, bool);

/// Reads a pipe on a thread, keeping the first `cap` bytes, until its end
/// or until `stop` is set (the pipe is read without blocking, so a pipe a
/// stray child holds open never keeps the thread).
fn capture<P>(
    mut pipe: P,
    cap: usize,
    tee: Option<(Tee, bool, bool)>,
    stop: Arc<AtomicBool>,
) -> Reader
where
    P: Read + Pipe + Send + 'static,
{
    let nonblocking = set_nonblocking(&pipe);
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut cut = false;
        let mut buf = [0u8; 8192];
        loop {
            match pipe.read(&mut buf) {
                Ok(0) => break,
                Err(e) if nonblocking && e.kind() == std::io::ErrorKind::WouldBlock => {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    // Woken by output or the pipe's end (not a fixed
                    // sleep, which every command's end used to wait out);
                    // `stop` is looked at every 5 ms.
                    wait_readable(&pipe, Duration::from_millis(5));
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
                Ok(n) => {
                    let room = cap.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                    match &tee {
                        Some((tee, err, true)) => tee(*err, &buf[..n]),
                        Some((tee, err, false)) if room > 0 => tee(*err, &buf[..n.min(room)]),
                        _ => {}
                    }
                    cut |= n > room;
                }
            }
        }
        (kept, cut)
    })
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;

    fn spawn(argv: &[String], timeout: Duration) -> Ran {
        let cwd = tempfile::tempdir().unwrap();
        run(&Spawn {
            argv,
            cwd: cwd.path(),
            writable: Vec::new(),
            network: false,
            timeout,
            cap: 1 << 16,
            secrets: &[],
            env: Vec::new(),
            cancel: None,
            tee: None,
            tee_past_cap: false,
            stdin: None,
        })
        .unwrap()
    }

    fn sh(command: &str) -> Vec<String> {
        vec!["sh".into(), "-c".into(), command.into()]
    }

    #[test]
    fn a_child_that_left_the_group_holds_neither_the_timeout_nor_the_end() {
        // Killed at the timeout; the escaped sleep keeps the pipes open.
        let started = Instant::now();
        let ran = spawn(
            &sh("echo before; setsid sleep 6 & sleep 20"),
            Duration::from_secs(1),
        );
        assert!(started.elapsed() < Duration::from_secs(3), "{ran:?}");
        assert!(ran.timed_out && ran.exit_code.is_none(), "{ran:?}");
        assert_eq!(ran.stdout_text(), "before\n");
        // Ended on its own while the escaped child lives on.
        let started = Instant::now();
        let ran = spawn(&sh("echo done; setsid sleep 6 &"), Duration::from_secs(30));
        assert!(started.elapsed() < Duration::from_secs(2), "{ran:?}");
        assert_eq!(ran.exit_code, Some(0));
        assert!(!ran.timed_out);
        assert_eq!(ran.stdout_text(), "done\n");
        // Output that comes after the command ended is still read to its end.
        let ran = spawn(&sh("seq 1 10000"), Duration::from_secs(30));
        assert_eq!(ran.stdout.len(), 48_894, "{}", ran.stdout.len());
    }
}
