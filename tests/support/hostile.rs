//! The sandbox's hostile path corpus: a root whose links lead out, chain,
//! loop and dangle beside a folder that must stay unreachable, and the
//! spellings that try to reach it (with the error code each must get, or
//! the path it must resolve to). `tests/sandbox.rs` runs it against the
//! workspace, `tests/serve.rs` through every file endpoint of the server.

#![allow(dead_code)]

use super::write_files;

/// `base/root` is the agent root; `base/outside` holds what must stay unreachable.
pub struct Fixture {
    pub base: tempfile::TempDir,
}

impl Fixture {
    pub fn new() -> Fixture {
        let base = tempfile::tempdir().unwrap();
        let b = base.path();
        write_files(
            b,
            &[
                ("root/src/main.rs", "fn main() {}\n"),
                ("root/src/lib.rs", "pub fn f() {}\n"),
                ("root/docs/guide.md", "# guide\n"),
                ("root/.git/config", "[core]\n"),
                ("root/.git/HEAD", "ref: refs/heads/main\n"),
                ("root/sub/keep.txt", "keep\n"),
                ("outside/secret.txt", "top secret\n"),
                ("outside/dir/deeper.txt", "deeper\n"),
                ("rootsibling/x.txt", "sibling with a common prefix\n"),
            ],
        );
        let r = b.join("root");
        // The system's own links (on Windows, file or folder links).
        let link = |target: &str, name: &str| {
            agent_tui::platform::fs::symlink(std::path::Path::new(target), &r.join(name)).unwrap()
        };
        link("src", "link_in");
        link("src/main.rs", "link_in_file");
        link("../outside", "link_out");
        link("../outside/secret.txt", "link_file_out");
        link("/etc", "link_abs_out");
        link(b.join("root/src").to_str().unwrap(), "link_abs_in");
        link("chain2", "chain1");
        link("chain3", "chain2");
        link("../outside", "chain3");
        link("chain_in2", "chain_in1");
        link("src/main.rs", "chain_in2");
        link("..", "sub/parent_link");
        link("../..", "sub/up2");
        link(".git", "gitlink");
        link(".git/config", "gitfile_link");
        link("missing-target", "dangling");
        link("loop2", "loop1");
        link("loop1", "loop2");
        link("src/../../outside", "sneaky");
        link("../rootsibling", "prefix_trick");
        link("link_out", "link_to_link_out");
        Fixture { base }
    }

    pub fn root(&self) -> std::path::PathBuf {
        self.base.path().join("root")
    }
}

pub enum Want {
    /// Resolves, to this normalized relative path.
    Ok(&'static str),
    /// Refused with this error code.
    Err(&'static str),
}

/// The fixture's links, by name.
const LINKS: &[&str] = &[
    "link_in",
    "link_in_file",
    "link_out",
    "link_file_out",
    "link_abs_out",
    "link_abs_in",
    "chain1",
    "chain2",
    "chain3",
    "chain_in1",
    "chain_in2",
    "parent_link",
    "up2",
    "gitlink",
    "gitfile_link",
    "dangling",
    "loop1",
    "loop2",
    "sneaky",
    "prefix_trick",
    "link_to_link_out",
];

/// Whether this system shows a link as a link. Wine 8.0 makes links but
/// reports them as what they point at (it has no reparse points before
/// Wine 9), so what depends on seeing one cannot be proven under it.
pub fn links_are_seen() -> bool {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t"), "t").unwrap();
    let link = dir.path().join("l");
    agent_tui::platform::fs::symlink(std::path::Path::new("t"), &link).is_ok()
        && std::fs::symlink_metadata(&link).is_ok_and(|m| m.file_type().is_symlink())
}

/// `hostile_cases` as this system must answer them: on Windows a name
/// ending in a dot or a space is refused (Windows would drop it and reach
/// another file), and where links are not seen their cases are left out
/// (said once on stderr).
pub fn hostile_cases() -> Vec<(String, Want)> {
    let mut cases = all_cases();
    if cfg!(windows) {
        let drops = |p: &str| {
            p.split(['/', '\\'])
                .any(|c| !matches!(c, "" | "." | "..") && (c.ends_with('.') || c.ends_with(' ')))
        };
        for (input, want) in &mut cases {
            if drops(input) {
                *want = Want::Err("invalid_path");
            }
        }
        cases.extend(
            windows_cases()
                .into_iter()
                .map(|(input, code)| (input.to_string(), Want::Err(code))),
        );
        if !links_are_seen() {
            let before = cases.len();
            cases.retain(|(input, _)| !input.split(['/', '\\']).any(|c| LINKS.contains(&c)));
            eprintln!(
                "hostile paths: links are not seen on this system (Wine 8.0): {} link cases left out",
                before - cases.len()
            );
        }
    }
    cases
}

/// Spellings Windows reads as something else, with the code each gets
/// there (elsewhere most are legal names that may simply not exist).
pub fn windows_cases() -> Vec<(&'static str, &'static str)> {
    const OUT: &str = "outside_root";
    const BAD: &str = "invalid_path";
    const GIT: &str = "forbidden_path";
    vec![
        // Drives, UNC, device and long-path prefixes.
        ("C:\\Windows\\win.ini", OUT),
        ("C:/Windows/win.ini", OUT),
        ("c:secret.txt", OUT),
        ("Z:..\\outside\\secret.txt", OUT),
        ("\\\\server\\share\\secret.txt", OUT),
        ("\\\\?\\C:\\outside\\secret.txt", OUT),
        ("\\\\.\\C:\\outside\\secret.txt", OUT),
        ("\\\\?\\UNC\\localhost\\c$\\secret.txt", OUT),
        ("//?/C:/outside/secret.txt", OUT),
        ("\\\\localhost\\c$\\outside\\secret.txt", OUT),
        ("\\outside\\secret.txt", OUT),
        // Climbing with either separator.
        ("..\\outside\\secret.txt", OUT),
        ("src\\..\\..\\outside\\secret.txt", OUT),
        (".\\..\\outside\\secret.txt", OUT),
        ("SRC\\..\\..\\outside\\secret.txt", OUT),
        ("src/..\\../outside/secret.txt", OUT),
        // Device names, with and without extensions or folders.
        ("CON", BAD),
        ("nul", BAD),
        ("NUL.txt", BAD),
        ("src/CON", BAD),
        ("src\\aux.rs", BAD),
        ("COM1", BAD),
        ("com9.log", BAD),
        ("LPT1", BAD),
        ("lpt3.md", BAD),
        ("PRN.md", BAD),
        ("CONIN$", BAD),
        ("CONOUT$", BAD),
        ("COM\u{b9}", BAD),
        // Alternate data streams.
        ("src/main.rs:secret", BAD),
        ("src/main.rs::$DATA", BAD),
        ("src/main.rs:$DATA", BAD),
        ("notes.txt:Zone.Identifier", BAD),
        ("src:stream", BAD),
        ("src\\main.rs:hidden:$DATA", BAD),
        // Trailing dots and spaces, which Windows drops.
        (".git.", BAD),
        (".git ", BAD),
        (".git./config", BAD),
        ("src/main.rs ", BAD),
        ("src./main.rs", BAD),
        ("notes.txt...", BAD),
        // `.git` in any case is the repository's own.
        (".GIT/config", GIT),
        (".Git\\config", GIT),
        // 8.3 short names, which can alias another file.
        ("GIT~1/config", BAD),
        ("SRC~1/main.rs", BAD),
        ("PROGRA~1", BAD),
        ("NOTES~1.TXT", BAD),
        // Characters Windows does not allow in names.
        ("src/*.rs", BAD),
        ("a?b", BAD),
        ("a|b", BAD),
        ("a<b>", BAD),
    ]
}

fn all_cases() -> Vec<(String, Want)> {
    let long_component = "a".repeat(300);
    let long_path = "ab/".repeat(1400);
    let s = |x: &str| x.to_string();
    vec![
        // Absolute paths in every spelling.
        (s("/etc/passwd"), Want::Err("outside_root")),
        (s("//etc/passwd"), Want::Err("outside_root")),
        (s("/"), Want::Err("outside_root")),
        (s("\\etc\\passwd"), Want::Err("outside_root")),
        (s("C:\\Windows\\system32"), Want::Err("outside_root")),
        (s("c:/windows/win.ini"), Want::Err("outside_root")),
        (s("\\\\server\\share\\x"), Want::Err("outside_root")),
        // Parent traversal.
        (s(".."), Want::Err("outside_root")),
        (s("../"), Want::Err("outside_root")),
        (s("../outside/secret.txt"), Want::Err("outside_root")),
        (s("./../outside"), Want::Err("outside_root")),
        (s("src/../../outside/secret.txt"), Want::Err("outside_root")),
        (s("src/./../.."), Want::Err("outside_root")),
        (s("a/b/c/../../../../x"), Want::Err("outside_root")),
        (s("..//outside"), Want::Err("outside_root")),
        (s("..\\outside\\secret.txt"), Want::Err("outside_root")),
        (s("src\\..\\..\\outside"), Want::Err("outside_root")),
        (s("sub/../../outside"), Want::Err("outside_root")),
        (s("link_in/../../outside"), Want::Err("outside_root")),
        (s("../root/src/main.rs"), Want::Err("outside_root")),
        // Symlinks that leave the root, directly, chained or as a parent dir.
        (s("link_out"), Want::Err("outside_root")),
        (s("link_out/secret.txt"), Want::Err("outside_root")),
        (s("link_out/dir/deeper.txt"), Want::Err("outside_root")),
        (s("link_out/new_file.rs"), Want::Err("outside_root")),
        (s("link_file_out"), Want::Err("outside_root")),
        (s("link_abs_out/passwd"), Want::Err("outside_root")),
        (s("chain1"), Want::Err("outside_root")),
        (s("chain1/secret.txt"), Want::Err("outside_root")),
        (s("chain2/secret.txt"), Want::Err("outside_root")),
        (s("sub/up2/outside/secret.txt"), Want::Err("outside_root")),
        (s("sneaky/secret.txt"), Want::Err("outside_root")),
        (s("prefix_trick/x.txt"), Want::Err("outside_root")),
        (s("link_to_link_out/secret.txt"), Want::Err("outside_root")),
        (s("sub/../link_out/secret.txt"), Want::Err("outside_root")),
        (s("./link_out/./secret.txt"), Want::Err("outside_root")),
        // `.git` internals, directly or through links, in any case.
        (s(".git"), Want::Err("forbidden_path")),
        (s(".git/config"), Want::Err("forbidden_path")),
        (s("./.git/"), Want::Err("forbidden_path")),
        (s(".GIT/config"), Want::Err("forbidden_path")),
        (s("src/../.git/HEAD"), Want::Err("forbidden_path")),
        (s("gitlink/config"), Want::Err("forbidden_path")),
        (s("gitfile_link"), Want::Err("forbidden_path")),
        (s("sub/.git/hooks/pre-commit"), Want::Err("forbidden_path")),
        // Malformed spellings.
        (s("src/main.rs\0.txt"), Want::Err("invalid_path")),
        (s("\0"), Want::Err("invalid_path")),
        (s("src/main.rs\n"), Want::Err("invalid_path")),
        (s("\u{1b}[31mred"), Want::Err("invalid_path")),
        (s("src/\rmain.rs"), Want::Err("invalid_path")),
        (long_component, Want::Err("invalid_path")),
        (long_path, Want::Err("invalid_path")),
        (s("~/.ssh/id_rsa"), Want::Err("invalid_path")),
        (s("~"), Want::Err("invalid_path")),
        (s("file:///etc/passwd"), Want::Err("invalid_path")),
        // Links that cannot be followed.
        (s("dangling"), Want::Err("broken_symlink")),
        (s("loop1"), Want::Err("broken_symlink")),
        (s("loop2/x"), Want::Err("broken_symlink")),
        // Look-alikes are literal names that stay inside the root.
        (
            s("%2e%2e/%2e%2e/etc/passwd"),
            Want::Ok("%2e%2e/%2e%2e/etc/passwd"),
        ),
        (s("\u{2025}/etc/passwd"), Want::Ok("\u{2025}/etc/passwd")),
        (
            s("\u{ff0e}\u{ff0e}/\u{ff0e}\u{ff0e}/etc"),
            Want::Ok("\u{ff0e}\u{ff0e}/\u{ff0e}\u{ff0e}/etc"),
        ),
        (s("..\u{2215}etc"), Want::Ok("..\u{2215}etc")),
        (s("..\u{ff0f}etc"), Want::Ok("..\u{ff0f}etc")),
        (s("...."), Want::Ok("....")),
        (s("..;/etc"), Want::Ok("..;/etc")),
        (s(" ../etc"), Want::Ok(" ../etc")),
        (s("src/..."), Want::Ok("src/...")),
        (s(".gitignore"), Want::Ok(".gitignore")),
        (
            s(".github/workflows/ci.yml"),
            Want::Ok(".github/workflows/ci.yml"),
        ),
        (s("git/config"), Want::Ok("git/config")),
        // Trailing slashes and dots, redundant separators.
        (s("src/main.rs/"), Want::Ok("src/main.rs")),
        (s("src/"), Want::Ok("src")),
        (s("src/."), Want::Ok("src")),
        (s("src/main.rs."), Want::Ok("src/main.rs.")),
        (s("./src/main.rs"), Want::Ok("src/main.rs")),
        (s("src//main.rs"), Want::Ok("src/main.rs")),
        (s("src/../src/main.rs"), Want::Ok("src/main.rs")),
        (s("src\\main.rs"), Want::Ok("src/main.rs")),
        (s("."), Want::Ok("")),
        (s(""), Want::Ok("")),
        // Links that stay inside work.
        (s("link_in/main.rs"), Want::Ok("link_in/main.rs")),
        (s("link_in_file"), Want::Ok("link_in_file")),
        (s("link_abs_in/lib.rs"), Want::Ok("link_abs_in/lib.rs")),
        (s("chain_in1"), Want::Ok("chain_in1")),
        (
            s("sub/parent_link/src/main.rs"),
            Want::Ok("sub/parent_link/src/main.rs"),
        ),
        (s("sub/parent_link"), Want::Ok("sub/parent_link")),
        (s("link_in/new_file.rs"), Want::Ok("link_in/new_file.rs")),
        (s("new_dir/new_file.rs"), Want::Ok("new_dir/new_file.rs")),
        (
            s("src/main.rs/below_a_file"),
            Want::Ok("src/main.rs/below_a_file"),
        ),
    ]
}
