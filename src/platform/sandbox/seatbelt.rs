//! macOS: a command's Seatbelt profile, made from the same policy as
//! Linux's Landlock ruleset (read anywhere; write only in the listed
//! folders and a few devices; no socket at all without network; signals
//! only inside the sandbox), run as `sandbox-exec -p PROFILE -D...`. The
//! folders go in as parameters, never spliced into the profile's text, so
//! no path can change what the profile says. The text is tested here as
//! golden files; its enforcement is verified on Linux's counterpart only
//! until a Mac runs the suite.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The system's Seatbelt front end (an absolute path: never one on PATH).
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// What a command may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// Folders it may write under, as the system resolves them (macOS's
    /// `/tmp` is `/private/tmp`, and Seatbelt matches resolved paths).
    pub writable: Vec<PathBuf>,
    pub network: bool,
}

impl Policy {
    /// The policy for `writable` (resolved where they exist) and `network`.
    pub fn new(writable: &[&Path], network: bool) -> Policy {
        Policy {
            writable: writable
                .iter()
                .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf()))
                .collect(),
            network,
        }
    }
}

/// What every profile says, before the policy's own lines.
const BASE: &str = r#"(version 1)
; agent-tui: a command's sandbox. Everything not allowed below is denied.
(deny default)
; Start programs and their children; signal only what is inside.
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
; Read anywhere, as on Linux: the policy limits writes, not reads.
(allow file-read*)
; What programs read of the system to run at all.
(allow sysctl-read)
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.system.logger")
  (global-name "com.apple.system.notification_center")
  (global-name "com.apple.trustd.agent")
  (global-name "com.apple.SecurityServer")
  (global-name "com.apple.coreservices.launchservicesd"))
(allow ipc-posix-sem)
(allow ipc-posix-shm-read*)
(allow user-preference-read)
(allow iokit-open (iokit-registry-entry-class "RootDomainUserClient"))
; Terminals and the devices any program may write to.
(allow pseudo-tty)
(allow file-read* file-write* file-ioctl
  (literal "/dev/null")
  (literal "/dev/zero")
  (literal "/dev/tty")
  (literal "/dev/ptmx")
  (regex #"^/dev/ttys[0-9]+$"))
(allow file-write-data (literal "/dev/dtracehelper"))
"#;

/// What a command with network may do besides.
const NETWORK: &str = r#"; Network: allowed by [exec] network = true.
(allow network*)
(allow system-socket)
(allow mach-lookup
  (global-name "com.apple.dnssd.service")
  (global-name "com.apple.mDNSResponder")
  (global-name "com.apple.networkd"))
"#;

/// The profile's text for `policy`: the folders are parameters
/// `WRITABLE_0`, `WRITABLE_1` ... that `command_line` sets.
pub fn profile(policy: &Policy) -> String {
    let mut text = String::from(BASE);
    text.push_str("; Writes: only under these folders (the root, the command's TMPDIR,\n");
    text.push_str("; [exec] writable).\n(allow file-write*");
    for i in 0..policy.writable.len() {
        text.push_str(&format!("\n  (subpath (param \"WRITABLE_{i}\"))"));
    }
    text.push_str(")\n");
    if policy.network {
        text.push_str(NETWORK);
    } else {
        text.push_str("; No network: no socket of any kind (deny default covers it).\n");
    }
    text
}

/// `sandbox-exec` with the profile and its parameters, ready for the
/// command's argv to follow.
pub fn command_line(policy: &Policy) -> Vec<OsString> {
    let mut line: Vec<OsString> = vec![SANDBOX_EXEC.into(), "-p".into(), profile(policy).into()];
    for (i, dir) in policy.writable.iter().enumerate() {
        let mut define = OsString::from(format!("-DWRITABLE_{i}="));
        define.push(dir.as_os_str());
        line.push(define);
    }
    line
}

/// Whether `sandbox-exec` runs a program under a profile here.
#[cfg(target_os = "macos")]
pub fn works() -> bool {
    std::process::Command::new(SANDBOX_EXEC)
        .args(["-p", "(version 1)(allow default)", "/usr/bin/true"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Compares `text` with golden file `name` (AGENT_TUI_BLESS=1 writes it).
    fn golden(name: &str, text: &str) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/golden/seatbelt")
            .join(name);
        if std::env::var_os("AGENT_TUI_BLESS").is_some() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
        }
        let want = std::fs::read_to_string(&path)
            .unwrap()
            .replace("\r\n", "\n");
        assert_eq!(text, want, "{name} differs from its golden file");
    }

    fn policy(writable: &[&str], network: bool) -> Policy {
        Policy {
            writable: writable.iter().map(PathBuf::from).collect(),
            network,
        }
    }

    #[test]
    fn each_policy_has_its_golden_profile() {
        golden(
            "root-and-tmp.sb",
            &profile(&policy(
                &["/Users/a/proj", "/private/tmp/agent-tui-cmd-x"],
                false,
            )),
        );
        golden(
            "network.sb",
            &profile(&policy(
                &["/Users/a/proj", "/private/tmp/agent-tui-cmd-x"],
                true,
            )),
        );
        golden(
            "extra-writable.sb",
            &profile(&policy(
                &["/Users/a/proj", "/private/tmp/t", "/Users/a/.cache/cargo"],
                false,
            )),
        );
    }

    #[test]
    fn a_hostile_folder_name_stays_a_parameter() {
        let evil = "/tmp/x\"))(allow default)(\"";
        let p = policy(&[evil], false);
        let text = profile(&p);
        assert!(!text.contains("allow default"), "{text}");
        let line = command_line(&p);
        assert_eq!(line[0], SANDBOX_EXEC);
        assert_eq!(line[3], OsString::from(format!("-DWRITABLE_0={evil}")));
    }

    #[test]
    fn without_network_no_socket_is_allowed() {
        let closed = profile(&policy(&["/r"], false));
        assert!(!closed.contains("network") || !closed.contains("(allow network"));
        assert!(!closed.contains("system-socket"));
        let open = profile(&policy(&["/r"], true));
        assert!(open.contains("(allow network*)"));
        // Writes are never allowed outside the listed folders and devices.
        for text in [&closed, &open] {
            let writes: Vec<&str> = text
                .lines()
                .filter(|l| l.contains("file-write") && !l.trim_start().starts_with(';'))
                .collect();
            assert_eq!(writes.len(), 3, "{writes:?}");
            assert!(!text.contains("(subpath \"/\")"));
        }
    }
}
