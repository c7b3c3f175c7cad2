//! What differs by operating system, in one room: confining a command,
//! watching a tree, ending a process tree, file identity and permission
//! bits, a process's host facts and the terminal's end-of-session signal.
//! Everything above asks these modules and never names an OS itself;
//! Linux keeps Landlock, seccomp and inotify, macOS confines with
//! Seatbelt (`sandbox-exec`), Windows has no confinement this crate can
//! prove and says so. `platform` imports nothing of ours.

pub mod fs;
pub mod paths;
pub mod process;
pub mod sandbox;
pub mod signal;
pub mod watch;
