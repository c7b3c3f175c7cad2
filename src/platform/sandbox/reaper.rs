//! The command wrapper's watch over a command: it runs the command as its
//! child, adopts whatever the command leaves behind (a child subreaper:
//! `cmd &`, `setsid`, double forks) and ends all of it when the command
//! ends, when the runner lets go of the lifeline (timeout, cancel) or when
//! the runner itself dies, so nothing a command started goes on writing
//! after its checkpoint was taken.

use std::ffi::OsString;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;

/// How long the wrapper keeps ending processes that keep forking.
const SWEEP_LIMIT: Duration = Duration::from_secs(2);

/// Runs `argv` (stdin: nothing), with `enter` run in its process just
/// before its program starts, and returns the exit code to leave with. The
/// wrapper's own stdin is the lifeline: its end (the runner closed it or
/// died) ends the command.
pub fn supervise(
    argv: &[OsString],
    enter: impl FnMut() -> std::io::Result<()> + Send + Sync + 'static,
) -> i32 {
    // Best effort: without it, orphans go to init as before.
    #[cfg(target_os = "linux")]
    let _ = nix::sys::prctl::set_child_subreaper(true);
    let mut lifeline = std::io::stdin().lock();
    let watching = is_pipe(&lifeline)
        && rustix::fs::fcntl_getfl(&lifeline)
            .and_then(|f| rustix::fs::fcntl_setfl(&lifeline, f | rustix::fs::OFlags::NONBLOCK))
            .is_ok();
    // A hook's input, when the runner named one; else nothing.
    let input = std::env::var_os(super::STDIN_VAR)
        .and_then(|path| std::fs::File::open(path).ok())
        .map_or_else(Stdio::null, Stdio::from);
    let mut command = Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .env_remove(super::STDIN_VAR)
        .stdin(input);
    in_child(&mut command, enter);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            eprintln!(
                "agent-tui: cannot start `{}`: {e}",
                argv[0].to_string_lossy()
            );
            return if e.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                126
            };
        }
    };
    // Woken when it ends or the lifeline is cut (else looking often).
    let exit = crate::platform::process::exit_signal(&child);
    let mut pause = Duration::from_micros(500);
    let code = loop {
        match child.try_wait() {
            Ok(Some(status)) => break crate::platform::process::shell_code(status),
            Ok(None) => {}
            Err(_) => break 125,
        }
        if watching && cut(&mut lifeline) {
            let _ = child.kill();
            let _ = child.wait();
            break 137;
        }
        match (&exit.0, watching) {
            #[cfg(target_os = "linux")]
            (Some(exit), true) => {
                use rustix::event::{PollFd, PollFlags};
                let mut fds = [
                    PollFd::new(exit, PollFlags::IN),
                    PollFd::new(&lifeline, PollFlags::IN | PollFlags::HUP),
                ];
                let _ = rustix::event::poll(&mut fds, None);
            }
            _ => crate::platform::process::nap(&exit, Duration::from_millis(10), &mut pause),
        }
    };
    sweep();
    code
}

/// Has `command`'s process run `enter` between its fork and its exec.
/// The one `unsafe` of the crate (`tests/layers.rs` keeps it so): a
/// closure run after `fork` may only do what is safe in a child of a
/// multi-threaded process, and the wrapper, the only caller, has a single
/// thread, so anything is; `enter` makes two system calls (no new
/// privileges, then the Landlock layer), each on its own memory.
#[allow(unsafe_code)]
fn in_child(
    command: &mut Command,
    enter: impl FnMut() -> std::io::Result<()> + Send + Sync + 'static,
) {
    // SAFETY: see above: the process that forks has one thread.
    unsafe { std::os::unix::process::CommandExt::pre_exec(command, enter) };
}

/// Whether stdin is the runner's pipe (anything else, such as a terminal
/// or `/dev/null`, is no lifeline and is left as it is).
fn is_pipe(fd: &impl std::os::fd::AsFd) -> bool {
    rustix::fs::fstat(fd).is_ok_and(|st| {
        rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Fifo
    })
}

/// Whether the runner let go of the lifeline (end of file or an error;
/// nothing to read yet means it still holds it).
fn cut(lifeline: &mut impl Read) -> bool {
    let mut byte = [0u8; 1];
    match lifeline.read(&mut byte) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
        ),
    }
}

/// Ends every process left under the wrapper: each one killed is reaped,
/// and what it had started comes to the wrapper in turn, until none is
/// left (or the limit passes: something forking faster than it dies).
fn sweep() {
    let me = std::process::id();
    let started = Instant::now();
    loop {
        // No child at all (the common case: the command left nothing)
        // means nothing under the wrapper, since every orphan comes to
        // it: no need to read `/proc`.
        let (reaped, none_left) = reap();
        if none_left {
            return;
        }
        let left = children_of(me);
        for pid in &left {
            let _ = kill(Pid::from_raw(*pid), Signal::SIGKILL);
        }
        let (reaped_now, _) = reap();
        if left.is_empty() && !reaped && !reaped_now {
            return;
        }
        if started.elapsed() > SWEEP_LIMIT {
            return;
        }
        if !reaped && !reaped_now {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// Reaps every child that has ended: whether any was, and whether the
/// wrapper has no child left at all.
fn reap() -> (bool, bool) {
    let mut reaped = false;
    loop {
        match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) => return (reaped, false),
            Ok(_) => reaped = true,
            Err(nix::errno::Errno::ECHILD) => return (reaped, true),
            Err(_) => return (reaped, false),
        }
    }
}

/// The processes whose parent is `parent`, from `/proc`.
fn children_of(parent: u32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| parent_of(*pid) == Some(parent))
        .collect()
}

/// A process's parent, from `/proc/PID/stat` (its name, in parentheses,
/// may hold spaces and parentheses: the fields after the last `)` count).
fn parent_of(pid: i32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parent_is_read_past_a_name_with_parentheses() {
        let me = std::process::id();
        let parent = parent_of(i32::try_from(me).unwrap()).unwrap();
        assert_eq!(parent, std::os::unix::process::parent_id());
    }

    #[test]
    fn the_lifeline_is_cut_at_its_end_and_held_while_open() {
        let (mut reader, writer) = std::io::pipe().unwrap();
        assert!(is_pipe(&reader));
        assert!(!is_pipe(&std::fs::File::open("/dev/null").unwrap()));
        rustix::fs::fcntl_setfl(&reader, rustix::fs::OFlags::NONBLOCK).unwrap();
        assert!(!cut(&mut reader));
        drop(writer);
        assert!(cut(&mut reader));
    }
}
