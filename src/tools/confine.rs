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

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, LandlockStatus, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope, path_beneath_rules,
};

/// The hidden first argument that turns the binary into the wrapper.
pub const CONFINE_ARG: &str = "__confine";

/// The newest Landlock ABI this build asks for (older kernels: best effort).
const ABI_WANTED: ABI = ABI::V6;

/// Devices any program may write to.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/pts",
];

/// What the kernel enforces for commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confinement {
    /// Every restriction holds (Landlock ABI given).
    Full { abi: i32 },
    /// Some hold (an older kernel: e.g. files but not the network).
    Partial { abi: i32 },
    /// The kernel has no Landlock: commands run unconfined.
    None,
}

impl Confinement {
    /// Whether `confined` is true in results.
    pub fn holds(self) -> bool {
        matches!(self, Confinement::Full { .. })
    }

    /// One line for `doctor` and the approval dialog.
    pub fn describe(self, network: bool) -> String {
        let net = if network {
            "network allowed"
        } else {
            "no network"
        };
        match self {
            Confinement::Full { abi } => format!(
                "confined by Landlock (ABI {abi}): writes only in the root and a private TMPDIR, {net}"
            ),
            Confinement::Partial { abi } => format!(
                "partly confined: this kernel's Landlock (ABI {abi}) lacks some restrictions \
                 ({net} requested)"
            ),
            Confinement::None => "unconfined: this kernel has no Landlock".into(),
        }
    }

    /// A few words for the approval dialog.
    pub fn short(self, network: bool) -> String {
        let net = if network {
            "network allowed"
        } else {
            "no network"
        };
        match self {
            Confinement::Full { .. } => format!("Landlock: writes in the root only, {net}"),
            Confinement::Partial { abi } => format!("partly confined (Landlock ABI {abi})"),
            Confinement::None => "unconfined: this kernel has no Landlock".into(),
        }
    }
}

/// The ruleset of a command: read anywhere, write in `writable`, TCP only
/// with `network`.
fn restrict(writable: &[&Path], network: bool) -> Result<Confinement, String> {
    let abi = ABI_WANTED;
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(|e| e.to_string())?;
    // No signal to a process outside the command (the user's editor, the
    // agent); without network, no abstract socket outside it either.
    ruleset = ruleset.scope(Scope::Signal).map_err(|e| e.to_string())?;
    if !network {
        ruleset = ruleset
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(|e| e.to_string())?
            .scope(Scope::AbstractUnixSocket)
            .map_err(|e| e.to_string())?;
    }
    let status = ruleset
        .create()
        .map_err(|e| e.to_string())?
        .add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi)))
        .map_err(|e| e.to_string())?
        .add_rules(path_beneath_rules(writable, AccessFs::from_all(abi)))
        .map_err(|e| e.to_string())?
        .add_rules(path_beneath_rules(
            DEVICES.iter().filter(|d| Path::new(d).exists()),
            AccessFs::from_all(abi),
        ))
        .map_err(|e| e.to_string())?
        .restrict_self()
        .map_err(|e| e.to_string())?;
    let abi = match status.landlock {
        LandlockStatus::Available { effective_abi, .. } => effective_abi as i32,
        _ => 0,
    };
    Ok(match status.ruleset {
        RulesetStatus::FullyEnforced => Confinement::Full { abi },
        RulesetStatus::PartiallyEnforced => Confinement::Partial { abi },
        RulesetStatus::NotEnforced => Confinement::None,
    })
}

/// The wrapper's entry (`args` after `__confine`): restricts itself and
/// runs the command to its end; returns the exit code to leave with.
pub fn wrapper_main(args: &[OsString]) -> i32 {
    if args.first().is_some_and(|a| a == "--probe") {
        let tmp = std::env::temp_dir();
        return match restrict(&[tmp.as_path()], false) {
            Ok(Confinement::Full { abi }) => {
                println!("full {abi}");
                0
            }
            Ok(Confinement::Partial { abi }) => {
                println!("partial {abi}");
                0
            }
            Ok(Confinement::None) | Err(_) => {
                println!("none 0");
                0
            }
        };
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
    drop_powers();
    if let Err(e) = restrict(&writable, network == "1") {
        eprintln!("agent-tui: cannot confine the command: {e}");
        return 126;
    }
    if network != "1"
        && let Err(e) = super::no_sockets::refuse_sockets()
    {
        eprintln!("agent-tui: cannot keep the command off the network: {e}");
        return 126;
    }
    // The command itself runs one domain further in: it may signal what
    // it starts, never this wrapper (killing it would leave what the
    // command left behind unwatched). The layer is made here and entered
    // by the command's own process between its fork and its exec, so no
    // second program starts for it.
    let mut scope = match signal_scope() {
        Ok(created) => Some(created),
        Err(e) => {
            eprintln!("agent-tui: cannot confine the command: {e}");
            return 126;
        }
    };
    let enter = move || match scope.take() {
        Some(created) => created
            .restrict_self()
            .map(drop)
            .map_err(std::io::Error::other),
        None => Ok(()),
    };
    super::reaper::supervise(argv, enter)
}

/// One more Landlock layer that only keeps signals in: files are the
/// outer domain's business, so it grants them all (a layer that handles
/// none would refuse every rename across folders, EXDEV).
fn signal_scope() -> Result<landlock::RulesetCreated, landlock::RulesetError> {
    let abi = ABI_WANTED;
    Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .and_then(|r| r.scope(Scope::Signal))
        .and_then(|r| r.create())
        .and_then(|r| r.add_rules(path_beneath_rules(["/"], AccessFs::from_all(abi))))
}

/// Makes this process non-dumpable: its `/proc/PID/environ`, `mem` and
/// the like belong to root, and no process of the same user may ptrace
/// it (a command would otherwise read the API keys in our environment).
pub fn keep_to_ourselves() {
    let _ = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable);
}

/// A command run as root keeps no power over other processes: without
/// `CAP_SYS_PTRACE` it cannot read the agent's environment or memory,
/// without `CAP_KILL` signal another user's processes (best effort: a
/// user without `CAP_SETPCAP` has neither anyway).
fn drop_powers() {
    use rustix::thread::{CapabilitySet, remove_capability_from_bounding_set};
    for cap in [CapabilitySet::SYS_PTRACE, CapabilitySet::KILL] {
        let _ = remove_capability_from_bounding_set(cap);
    }
    if let Ok(mut sets) = rustix::thread::capabilities(None) {
        let gone = CapabilitySet::SYS_PTRACE | CapabilitySet::KILL;
        sets.effective -= gone;
        sets.permitted -= gone;
        sets.inheritable -= gone;
        let _ = rustix::thread::set_capabilities(None, sets);
    }
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
