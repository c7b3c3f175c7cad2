//! Landlock confinement of `run_command` (SPEC section 5): the command may
//! read and run anything but write only inside the agent root, its private
//! TMPDIR and a few devices, and has no TCP unless `[exec] network = true`.
//! Our own binary is the wrapper: `agent-tui __confine NET PATHS... -- argv`
//! restricts itself, then runs the command as its child (restrictions are
//! inherited) and ends whatever the command leaves behind (`reaper`).
//! A one-time probe (`__confine --probe`) tells what the kernel enforces.

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

#[cfg(target_os = "linux")]
mod landlock;
#[cfg(target_os = "linux")]
mod no_sockets;
#[cfg(unix)]
mod reaper;
pub mod seatbelt;

/// The hidden first argument that turns the binary into the wrapper.
pub const CONFINE_ARG: &str = "__confine";

/// Where the runner names a hook's input file for the wrapper, which
/// gives it to the command as stdin (the wrapper's own stdin is the
/// lifeline).
pub const STDIN_VAR: &str = "AGENT_TUI_CONFINE_STDIN";

/// Whether this system has no confinement agent-tui can prove (Windows):
/// the status bar and `doctor` say so, and every command is asked for.
pub const NO_CONFINEMENT: bool = cfg!(windows);

/// What the kernel enforces for commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confinement {
    /// Every restriction holds (Landlock ABI given).
    Full { abi: i32 },
    /// Some hold (an older kernel: e.g. files but not the network).
    Partial { abi: i32 },
    /// macOS: Seatbelt (`sandbox-exec`) with a profile made from the
    /// same policy.
    Seatbelt,
    /// Nothing confines commands here (a kernel without Landlock,
    /// Windows): they run unconfined.
    None,
}

impl Confinement {
    /// Whether `confined` is true in results.
    pub fn holds(self) -> bool {
        matches!(self, Confinement::Full { .. } | Confinement::Seatbelt)
    }

    /// Whether every command must be asked for, whatever the rules allow:
    /// nothing here would stop one that goes wrong (Windows).
    pub fn ask_always() -> bool {
        NO_CONFINEMENT
    }

    /// One line for `doctor` and the approval dialog.
    pub fn describe(self, network: bool) -> String {
        let net = net_words(network);
        match self {
            Confinement::Full { abi } => format!(
                "confined by Landlock (ABI {abi}): writes only in the root and a private TMPDIR, {net}"
            ),
            Confinement::Partial { abi } => format!(
                "partly confined: this kernel's Landlock (ABI {abi}) lacks some restrictions \
                 ({net} requested)"
            ),
            Confinement::Seatbelt => format!(
                "confined by Seatbelt (sandbox-exec): writes only in the root and a private \
                 TMPDIR, {net} (enforcement verified on Linux only)"
            ),
            Confinement::None => unconfined().into(),
        }
    }

    /// A few words for the approval dialog.
    pub fn short(self, network: bool) -> String {
        let net = net_words(network);
        match self {
            Confinement::Full { .. } => format!("Landlock: writes in the root only, {net}"),
            Confinement::Partial { abi } => format!("partly confined (Landlock ABI {abi})"),
            Confinement::Seatbelt => format!("Seatbelt: writes in the root only, {net}"),
            Confinement::None => unconfined().into(),
        }
    }
}

/// The wrapper's entry (`args` after `__confine`): restricts itself and
/// runs the command to its end; returns the exit code to leave with.
pub fn wrapper_main(args: &[OsString]) -> i32 {
    if args.first().is_some_and(|a| a == "--probe") {
        println!("{}", probe_here());
        return 0;
    }
    let usage = || {
        eprintln!("agent-tui: {CONFINE_ARG} NETWORK WRITABLE... -- PROGRAM [ARGS...]");
        2
    };
    let Some(dashes) = args.iter().position(|a| a == "--") else {
        return usage();
    };
    let (head, argv) = (&args[..dashes], &args[dashes + 1..]);
    let [network, writable @ ..] = head else {
        return usage();
    };
    if argv.is_empty() || writable.is_empty() {
        return usage();
    }
    let writable: Vec<&Path> = writable.iter().map(Path::new).collect();
    run_confined(&writable, network == "1", argv)
}

/// What this process can enforce, as the probe prints it.
fn probe_here() -> String {
    #[cfg(target_os = "linux")]
    {
        let tmp = std::env::temp_dir();
        match landlock::restrict(&[tmp.as_path()], false) {
            Ok(Confinement::Full { abi }) => format!("full {abi}"),
            Ok(Confinement::Partial { abi }) => format!("partial {abi}"),
            _ => "none 0".into(),
        }
    }
    #[cfg(target_os = "macos")]
    {
        if seatbelt::works() {
            "seatbelt 0"
        } else {
            "none 0"
        }
        .into()
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        "none 0".into()
    }
}

/// Confines and runs `argv` to its end: the exit code to leave with.
fn run_confined(writable: &[&Path], network: bool, argv: &[OsString]) -> i32 {
    #[cfg(target_os = "linux")]
    {
        landlock::confine_and_run(writable, network, argv)
    }
    #[cfg(target_os = "macos")]
    {
        let policy = seatbelt::Policy::new(writable, network);
        let mut wrapped = seatbelt::command_line(&policy);
        wrapped.extend(argv.iter().cloned());
        reaper::supervise(&wrapped, || Ok(()))
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        let _ = (writable, network, argv);
        eprintln!("agent-tui: commands cannot be confined on this system");
        126
    }
}

/// What a command may do on the network, in words.
fn net_words(network: bool) -> &'static str {
    if network {
        "network allowed"
    } else {
        "no network"
    }
}

/// Unconfined, in words that say why.
fn unconfined() -> &'static str {
    if cfg!(windows) {
        "unconfined: Windows has no confinement agent-tui can prove; every command is asked for"
    } else if cfg!(target_os = "linux") {
        "unconfined: this kernel has no Landlock"
    } else {
        "unconfined: this system has no sandbox agent-tui knows"
    }
}

/// Makes this process non-dumpable where the system has the notion
/// (Linux): its `/proc/PID/environ`, `mem` and the like belong to root,
/// and no process of the same user may ptrace it (a command would
/// otherwise read the API keys in our environment).
pub fn keep_to_ourselves() {
    #[cfg(target_os = "linux")]
    landlock::keep_to_ourselves();
}

/// The binary that wraps commands: set by `main` (the real `agent-tui`);
/// unset (commands unconfined) where the engine runs inside another
/// program, such as a test harness.
static WRAPPER: OnceLock<std::path::PathBuf> = OnceLock::new();

/// Names the binary that confines commands (`main` calls it first).
pub fn install_wrapper(exe: std::path::PathBuf) {
    let _ = WRAPPER.set(exe);
}

/// What this kernel enforces, probed once per process (a child restricts
/// itself and says).
pub fn probe() -> Confinement {
    static PROBED: OnceLock<Confinement> = OnceLock::new();
    *PROBED.get_or_init(|| {
        let Some(exe) = WRAPPER.get() else {
            return Confinement::None;
        };
        let out = Command::new(exe).args([CONFINE_ARG, "--probe"]).output();
        let text = out
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
            .unwrap_or_default();
        let mut words = text.split_whitespace();
        let kind = words.next().unwrap_or("none");
        let abi = words.next().and_then(|a| a.parse().ok()).unwrap_or(0);
        match kind {
            "full" => Confinement::Full { abi },
            "seatbelt" => Confinement::Seatbelt,
            "partial" => Confinement::Partial { abi },
            _ => Confinement::None,
        }
    })
}

/// The wrapper's command line for `argv`, which may write in `writable`
/// (the root, its TMPDIR, `[exec] writable`) and use TCP with `network`.
pub fn wrapped(argv: &[String], writable: &[&Path], network: bool) -> Option<Command> {
    let mut command = Command::new(WRAPPER.get()?);
    command
        .arg(CONFINE_ARG)
        .arg(if network { "1" } else { "0" })
        .args(writable.iter().filter(|p| p.exists()))
        .arg("--")
        .args(argv);
    Some(command)
}
