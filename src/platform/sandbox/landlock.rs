//! Linux: a command is confined with the kernel's Landlock (read
//! anywhere, write only in the listed folders, no TCP without network, no
//! signal outside), seccomp for the sockets Landlock does not cover, and
//! no power over other processes.

use std::path::Path;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, LandlockStatus, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope, path_beneath_rules,
};

use super::Confinement;

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

/// The ruleset of a command: read anywhere, write in `writable`, TCP only
/// with `network`.
pub(super) fn restrict(writable: &[&Path], network: bool) -> Result<Confinement, String> {
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

/// Confines this process for `writable` and `network`, then runs `argv`
/// under the reaper, its signals kept in one layer further in.
pub(super) fn confine_and_run(
    writable: &[&Path],
    network: bool,
    argv: &[std::ffi::OsString],
) -> i32 {
    drop_powers();
    if let Err(e) = restrict(writable, network) {
        eprintln!("agent-tui: cannot confine the command: {e}");
        return 126;
    }
    if !network && let Err(e) = super::no_sockets::refuse_sockets() {
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

/// Makes this process non-dumpable (see `super::keep_to_ourselves`).
pub(super) fn keep_to_ourselves() {
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
