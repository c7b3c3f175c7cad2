//! Inline code: a shell or interpreter handed its program on the command
//! line (`sh -c`, `bash -lc`, `python3 -c`, `node -e`, `perl -E`, ...) can
//! do anything, so it is asked one by one whatever the allow list says.
//! Found anywhere in argv, so wrappers (`env X=1 sh -c`, `timeout 5 bash -c`,
//! `xargs sh -c`) do not hide it.

/// Interpreters and the flags that hand them code inline.
const INLINE: &[(&str, &[&str])] = &[
    ("sh", &["-c"]),
    ("bash", &["-c"]),
    ("dash", &["-c"]),
    ("zsh", &["-c"]),
    ("ksh", &["-c"]),
    ("mksh", &["-c"]),
    ("fish", &["-c", "--command"]),
    ("busybox", &["-c"]),
    ("python", &["-c"]),
    ("pypy", &["-c"]),
    ("node", &["-e", "--eval", "-p", "--print"]),
    ("nodejs", &["-e", "--eval", "-p", "--print"]),
    ("bun", &["-e", "--eval", "-p", "--print"]),
    ("deno", &["eval"]),
    ("perl", &["-e", "-E"]),
    ("ruby", &["-e"]),
    ("php", &["-r"]),
    ("lua", &["-e"]),
    ("luajit", &["-e"]),
    ("Rscript", &["-e"]),
    ("pwsh", &["-c", "-command", "-Command"]),
    ("osascript", &["-e"]),
    ("awk", &["BEGIN"]),
];

/// The interpreter's name without a version suffix (`python3.11` -> `python`).
fn base(program: &str) -> &str {
    let name = program.rsplit('/').next().unwrap_or(program);
    name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.')
}

/// Whether `arg` is one of `flags`, or short flags bundled with it (`-lc`).
fn is_inline_flag(arg: &str, flags: &[&str]) -> bool {
    flags.iter().any(|f| {
        arg == *f
            || arg.starts_with(&format!("{f}="))
            || (f.len() == 2
                && f.starts_with('-')
                && arg.starts_with('-')
                && !arg.starts_with("--")
                && arg.len() > 2
                && arg[1..].contains(&f[1..]))
    })
}

/// `Some("sh -c")` when `argv` runs code given inline.
pub fn inline_code(argv: &[String]) -> Option<String> {
    for (i, word) in argv.iter().enumerate() {
        let program = base(word);
        let Some((name, flags)) = INLINE.iter().find(|(n, _)| *n == program) else {
            continue;
        };
        if *name == "awk" {
            // awk's program is always inline; only a file (-f) is not.
            if !argv[i + 1..].iter().any(|a| a == "-f") {
                return Some("awk PROGRAM".into());
            }
            continue;
        }
        if let Some(flag) = argv[i + 1..].iter().find(|a| is_inline_flag(a, flags)) {
            return Some(format!("{name} {flag}"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(line: &str) -> Vec<String> {
        shell_words::split(line).unwrap()
    }

    #[test]
    fn inline_code_is_found_behind_wrappers_and_versions() {
        for line in [
            "sh -c 'touch /tmp/x'",
            "bash -lc 'echo hi'",
            "/bin/bash -c true",
            "env FOO=1 sh -c true",
            "timeout 5 bash -c true",
            "xargs sh -c 'echo'",
            "python3 -c 'import os'",
            "python3.11 -c 1",
            "node -e 1",
            "node --eval=1",
            "perl -E 'say 1'",
            "ruby -e 1",
            "php -r 'echo 1;'",
            "deno eval 1",
            "awk 'BEGIN { system(\"id\") }'",
        ] {
            assert!(inline_code(&argv(line)).is_some(), "{line}");
        }
        for line in [
            "cargo test -q",
            "bash scripts/build.sh",
            "python3 -m pytest",
            "node scripts/gen.js --check",
            "awk -f prog.awk data.txt",
            "git commit -c HEAD",
            "sh",
        ] {
            assert_eq!(inline_code(&argv(line)), None, "{line}");
        }
        assert_eq!(inline_code(&argv("bash -lc true")).unwrap(), "bash -lc");
    }
}
