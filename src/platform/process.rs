//! Processes as each system runs them: a command's whole tree started so
//! it can be ended at once (a process group on Unix, a Job Object on
//! Windows), waking when a child ends (a pidfd on Linux), pipes read
//! without blocking, finding a program, and this host's facts.

use std::io;
use std::path::Path;
use std::process::{Child, ChildStderr, ChildStdout, Command, ExitStatus};
use std::time::Duration;

/// A started command and everything it starts: `kill` ends all of them.
pub struct Tree {
    #[cfg(unix)]
    child: Child,
    #[cfg(not(unix))]
    child: Box<dyn process_wrap::std::ChildWrapper>,
}

impl Tree {
    /// Starts `command` as the head of its own tree.
    pub fn spawn(command: Command) -> io::Result<Tree> {
        #[cfg(unix)]
        {
            let mut command = command;
            std::os::unix::process::CommandExt::process_group(&mut command, 0);
            Ok(Tree {
                child: command.spawn()?,
            })
        }
        #[cfg(not(unix))]
        {
            let mut wrap = process_wrap::std::CommandWrap::from(command);
            wrap.wrap(process_wrap::std::JobObject);
            Ok(Tree {
                child: wrap.spawn()?,
            })
        }
    }

    pub fn id(&self) -> u32 {
        self.child.id()
    }

    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        #[cfg(unix)]
        return self.child.stdout.take();
        #[cfg(not(unix))]
        return self.child.stdout().take();
    }

    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        #[cfg(unix)]
        return self.child.stderr.take();
        #[cfg(not(unix))]
        return self.child.stderr().take();
    }

    /// The head's status once it ended (what it started may live on
    /// until `kill`).
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.child.try_wait()
    }

    /// Waits for the head to be reaped.
    pub fn wait(&mut self) -> io::Result<ExitStatus> {
        self.child.wait()
    }

    /// Ends the whole tree at once (SIGKILL to the group; the Job Object
    /// terminated).
    pub fn kill(&mut self) {
        #[cfg(unix)]
        kill_group(self.child.id());
        #[cfg(not(unix))]
        let _ = self.child.start_kill();
    }

    /// What wakes a wait the moment the head ends.
    pub fn exit_signal(&self) -> ExitSignal {
        #[cfg(unix)]
        return exit_signal(&self.child);
        #[cfg(not(unix))]
        return ExitSignal(None);
    }
}

/// Sends SIGKILL to process group `pgid` (Unix; nothing elsewhere, where
/// a tree is a Job Object its owner ends).
pub fn kill_group(pgid: u32) {
    #[cfg(unix)]
    if let Ok(pid) = i32::try_from(pgid) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    #[cfg(not(unix))]
    let _ = pgid;
}

/// A descriptor readable once a child ended (Linux 5.3+), or nothing.
pub struct ExitSignal(
    #[cfg(target_os = "linux")] pub(crate) Option<rustix::fd::OwnedFd>,
    #[cfg(not(target_os = "linux"))] pub(crate) Option<std::convert::Infallible>,
);

/// What wakes a wait the moment `child` ends.
pub fn exit_signal(child: &Child) -> ExitSignal {
    #[cfg(target_os = "linux")]
    {
        let pid = rustix::process::Pid::from_child(child);
        ExitSignal(rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = child;
        ExitSignal(None)
    }
}

/// Waits at most `most` for the child to end; without a signal, a sleep
/// that grows from `pause` to 10 ms.
pub fn nap(exit: &ExitSignal, most: Duration, pause: &mut Duration) {
    #[cfg(target_os = "linux")]
    if let Some(fd) = &exit.0 {
        let mut fds = [rustix::event::PollFd::new(fd, rustix::event::PollFlags::IN)];
        let _ = rustix::event::poll(&mut fds, Some(&timespec(most)));
        return;
    }
    #[cfg(not(target_os = "linux"))]
    let _ = exit;
    std::thread::sleep((*pause).min(most));
    *pause = (*pause * 2).min(Duration::from_millis(10));
}

#[cfg(unix)]
pub(crate) fn timespec(d: Duration) -> rustix::event::Timespec {
    rustix::event::Timespec {
        tv_sec: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        tv_nsec: i64::from(d.subsec_nanos()) as _,
    }
}

/// A pipe this system can read without blocking and wait on.
#[cfg(unix)]
pub trait Pipe: std::os::fd::AsFd {}
#[cfg(unix)]
impl<T: std::os::fd::AsFd> Pipe for T {}
/// A pipe this system can read without blocking and wait on.
#[cfg(not(unix))]
pub trait Pipe {}
#[cfg(not(unix))]
impl<T> Pipe for T {}

/// Makes `pipe` non-blocking; false where it stays blocking (Windows:
/// its reader ends when the tree is ended and the pipe closes).
pub fn set_nonblocking(pipe: &impl Pipe) -> bool {
    #[cfg(unix)]
    {
        use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
        fcntl_getfl(pipe)
            .and_then(|flags| fcntl_setfl(pipe, flags | OFlags::NONBLOCK))
            .is_ok()
    }
    #[cfg(not(unix))]
    {
        let _ = pipe;
        false
    }
}

/// Waits at most `most` for `pipe` to have something to read (or end).
pub fn wait_readable(pipe: &impl Pipe, most: Duration) {
    #[cfg(unix)]
    {
        let mut fds = [rustix::event::PollFd::new(
            pipe,
            rustix::event::PollFlags::IN,
        )];
        let _ = rustix::event::poll(&mut fds, Some(&timespec(most)));
    }
    #[cfg(not(unix))]
    {
        let _ = pipe;
        std::thread::sleep(most);
    }
}

/// Whether `program` names something that can be started: a path
/// (relative to `cwd`) or a name found on `PATH` (on Windows also with
/// each of `PATHEXT`'s extensions, as `cmd` finds `git` as `git.exe`).
pub fn can_start(program: &str, cwd: &Path) -> bool {
    let runnable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && super::fs::is_executable(p, &m))
    };
    let with_exts =
        |p: &Path| runnable(p) || cfg!(windows) && windows_exts(p).any(|p| runnable(&p));
    if program.contains('/') || (cfg!(windows) && program.contains('\\')) {
        return with_exts(&cwd.join(program));
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| with_exts(&dir.join(program))))
}

/// `p` with each extension of `PATHEXT` added.
fn windows_exts(p: &Path) -> impl Iterator<Item = std::path::PathBuf> + '_ {
    let exts = std::env::var("PATHEXT").unwrap_or_else(|_| ".COM;.EXE;.BAT;.CMD".into());
    exts.split(';')
        .filter(|e| !e.is_empty())
        .map(|e| {
            let mut s = p.as_os_str().to_os_string();
            s.push(e.to_ascii_lowercase());
            std::path::PathBuf::from(s)
        })
        .collect::<Vec<_>>()
        .into_iter()
}

/// This host's name ("localhost" when it has none to give).
pub fn hostname() -> String {
    #[cfg(unix)]
    let name = nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok());
    #[cfg(not(unix))]
    let name = std::env::var("COMPUTERNAME").ok();
    name.filter(|n| !n.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// Whether process `pid` of this host has ended (`Some(true)`), still
/// runs (`Some(false)`) or cannot be told (`None`: Windows, where a lease
/// then waits out its time).
pub fn ended(pid: i32) -> Option<bool> {
    #[cfg(unix)]
    match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) {
        Err(nix::errno::Errno::ESRCH) => Some(true),
        // Killed, but not yet reaped (its parent died with it, and the
        // process that inherits it is slow to reap): gone all the same.
        Ok(()) => Some(zombie(pid)),
        Err(_) => None,
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        None
    }
}

/// Whether process `pid` has ended and only waits to be reaped (Linux's
/// /proc; false where there is none).
#[cfg(unix)]
fn zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let (_, rest) = stat.rsplit_once(')')?;
            Some(rest.trim_start().starts_with(['Z', 'X']))
        })
        .unwrap_or(false)
}

/// How a process ended, in words: "it exited with status 3", "it was
/// killed by signal 11 (SIGSEGV)".
pub fn describe_exit(status: ExitStatus) -> Option<String> {
    if let Some(code) = status.code() {
        return Some(format!("it exited with status {code}"));
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        let signal = status.signal()?;
        let name = nix::sys::signal::Signal::try_from(signal)
            .map(|s| format!(" ({})", s.as_str()))
            .unwrap_or_default();
        Some(format!("it was killed by signal {signal}{name}"))
    }
    #[cfg(not(unix))]
    None
}

/// The exit code a shell gives `status` (128 + signal when killed).
pub fn shell_code(status: ExitStatus) -> i32 {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        status
            .code()
            .or_else(|| status.signal().map(|s| 128 + s))
            .unwrap_or(125)
    }
    #[cfg(not(unix))]
    status.code().unwrap_or(125)
}

/// Makes a tokio command the head of its own tree: a process group on
/// Unix (ended by `kill_group`), a Job Object on Windows (ended when its
/// handle is dropped).
pub fn as_tree(wrap: &mut process_wrap::tokio::CommandWrap) {
    #[cfg(unix)]
    wrap.wrap(process_wrap::tokio::ProcessGroup::leader());
    #[cfg(not(unix))]
    {
        wrap.wrap(process_wrap::tokio::JobObject);
        wrap.wrap(process_wrap::tokio::KillOnDrop);
    }
}

/// Starts a tokio command in a process group of its own (`kill_group`
/// ends it with what it started); on Windows a new console process group.
pub fn own_group(command: &mut tokio::process::Command) -> &mut tokio::process::Command {
    #[cfg(unix)]
    {
        command.process_group(0)
    }
    #[cfg(windows)]
    {
        // CREATE_NEW_PROCESS_GROUP
        command.creation_flags(0x0000_0200)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Not a test of its own: the long-running child `a_tree_is_ended_at_once` starts.
    #[test]
    #[ignore]
    fn sleeper() {
        std::thread::sleep(Duration::from_secs(60));
    }

    /// On every system: a started tree ends at once when killed (a
    /// process group on Unix, a Job Object on Windows); the child is this
    /// test binary running the sleeper above.
    #[test]
    fn a_tree_is_ended_at_once() {
        let mut command = Command::new(std::env::current_exe().unwrap());
        command
            .args(["--ignored", "--exact", "platform::process::tests::sleeper"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null());
        let mut tree = Tree::spawn(command).unwrap();
        let _out = tree.take_stdout();
        std::thread::sleep(Duration::from_millis(300));
        assert!(tree.try_wait().unwrap().is_none(), "it runs");
        let asked = std::time::Instant::now();
        tree.kill();
        let mut pause = Duration::from_millis(1);
        while tree.try_wait().unwrap().is_none() {
            assert!(asked.elapsed() < Duration::from_secs(10), "still running");
            nap(&tree.exit_signal(), Duration::from_millis(50), &mut pause);
        }
        assert!(asked.elapsed() < Duration::from_secs(10));
    }
}
