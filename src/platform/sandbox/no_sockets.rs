//! The rest of "no network" for a command without it: Landlock stops TCP,
//! and this seccomp filter stops the command from making any other
//! Internet socket (UDP, raw: a DNS query carries data out) or a Unix
//! socket (the way to local daemons: Docker, an SSH agent, D-Bus), nor a
//! vsock or XDP one, nor set up io_uring (which makes sockets without the
//! socket call). A `socketpair` stays allowed (programs talk to their own
//! children so).

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// Address families a command without network may not open sockets of.
const REFUSED: &[u64] = &[
    libc::AF_INET as u64,
    libc::AF_INET6 as u64,
    libc::AF_UNIX as u64,
    libc::AF_PACKET as u64,
    libc::AF_VSOCK as u64,
    libc::AF_XDP as u64,
];

/// Installs the filter on this thread (inherited by what it starts);
/// `no_new_privs` must be set (Landlock's restriction set it).
pub fn refuse_sockets() -> Result<(), String> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| e.to_string())?;
    let rules = REFUSED
        .iter()
        .map(|family| {
            SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, *family)
                .and_then(|c| SeccompRule::new(vec![c]))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    // io_uring makes sockets (IORING_OP_SOCKET) without the socket call:
    // no io_uring at all (programs fall back to plain calls).
    let filter = SeccompFilter::new(
        [
            (libc::SYS_socket, rules),
            (libc::SYS_io_uring_setup, Vec::new()),
        ]
        .into_iter()
        .collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EACCES as u32),
        arch,
    )
    .map_err(|e| e.to_string())?;
    let program: BpfProgram = filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())?;
    seccompiler::apply_filter(&program).map_err(|e| e.to_string())
}
