//! Inline code: a shell or interpreter handed its program on the command
//! line (`sh -c`, `bash -lc`, `python3 -c`, `node -e`, `perl -E`, ...) can
//! do anything, so it is asked one by one whatever the allow list says.
//! Found anywhere in argv, so wrappers (`env X=1 sh -c`, `timeout 5 bash -c`,
//! `xargs sh -c`) do not hide it; so are the other ways a common program
//! runs a command it is handed (`env -S`, `git -c alias.x=!…`, sed's `e`,
//! `make --eval`, tar's checkpoint actions, vim's `-c`, `zip -TT`, `watch`).

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
    // Programs that hand their argument to a shell.
    ("env", &["-S", "--split-string"]),
    ("script", &["-c", "--command"]),
    ("flock", &["-c", "--command"]),
    ("su", &["-c", "--command"]),
    ("runuser", &["-c", "--command"]),
    ("make", &["-E", "--eval"]),
    ("gmake", &["-E", "--eval"]),
    ("vi", &["-c", "--cmd"]),
    ("vim", &["-c", "--cmd"]),
    ("nvim", &["-c", "--cmd", "-l"]),
    ("ex", &["-c", "--cmd"]),
    ("view", &["-c", "--cmd"]),
    ("zip", &["-TT", "--unzip-command"]),
    (
        "tar",
        &[
            "--checkpoint-action",
            "--to-command",
            "--use-compress-program",
            "-I",
            "--info-script",
            "-F",
            "--new-volume-script",
            "--rsh-command",
        ],
    ),
    ("gdb", &["-ex", "--eval-command", "-iex"]),
    ("rsync", &["-e", "--rsh"]),
    ("strace", &[]),
    ("ltrace", &[]),
    ("npm", &[]),
    ("yarn", &[]),
    ("npx", &["-c", "--call"]),
    ("pnpm", &["-c"]),
];

/// Programs whose every argument is a command run by a shell.
const ALWAYS: &[&str] = &["watch", "parallel"];

/// The interpreter's name without a version suffix (`python3.11` -> `python`).
fn base(program: &str) -> &str {
    let name = program.rsplit('/').next().unwrap_or(program);
    name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.')
}

/// Whether `arg` is one of `flags`, or short flags bundled with it (`-lc`).
fn is_inline_flag(arg: &str, flags: &[&str]) -> bool {
    // GNU programs take any unambiguous start of a long option
    // (`--eva=` for `--eval=`).
    let long_prefix = |f: &str| {
        let name = arg.split('=').next().unwrap_or(arg);
        f.starts_with("--") && name.starts_with("--") && name.len() >= 5 && f.starts_with(name)
    };
    flags.iter().any(|f| {
        arg == *f
            || long_prefix(f)
            || arg.starts_with(&format!("{f}="))
            || (f.len() == 2
                && f.starts_with('-')
                && arg.starts_with('-')
                && !arg.starts_with("--")
                && arg.len() > 2
                && arg[1..].contains(&f[1..]))
    })
}

/// Inline code of a program that runs commands its own way: `watch`,
/// `git -c`/`git config` settings that name a program, vim's `+cmd`,
/// sed's `e`.
fn special(name: &str, rest: &[String]) -> Option<String> {
    match name {
        "vi" | "vim" | "nvim" | "ex" | "view" => rest
            .iter()
            .find(|a| a.starts_with('+') && a.len() > 1)
            .map(|a| format!("{name} {a}")),
        // Output "to a file" that is a pipe into a command.
        "strace" | "ltrace" => rest
            .windows(2)
            .any(|w| w[0] == "-o" && w[1].starts_with(['|', '!']))
            .then(|| format!("{name} -o |COMMAND")),
        "npm" | "yarn" => (rest.first().is_some_and(|s| s == "exec" || s == "x")
            && rest
                .iter()
                .any(|a| a == "-c" || a == "--call" || a.starts_with("--call=")))
        .then(|| format!("{name} exec -c")),
        _ => None,
    }
}

/// `Some("sh -c")` when `argv` runs code given inline.
pub fn inline_code(argv: &[String]) -> Option<String> {
    for (i, word) in argv.iter().enumerate() {
        let program = base(word);
        if ALWAYS.contains(&program) && argv.len() > i + 1 {
            return Some(format!("{program} COMMAND"));
        }
        if program == "git"
            && let Some(found) = git_setting(&argv[i + 1..])
        {
            return Some(found);
        }
        if program == "sed"
            && let Some(found) = sed_execute(&argv[i + 1..])
        {
            return Some(found);
        }
        let Some((name, flags)) = INLINE.iter().find(|(n, _)| *n == program) else {
            continue;
        };
        if let Some(found) = special(name, &argv[i + 1..]) {
            return Some(found);
        }
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

/// Git settings that only say how output looks or who commits: anything
/// else set on the command line or with `git config` may name a program
/// git runs (`alias.x=!cmd`, `core.fsmonitor`, `core.pager`, hooks ...).
const GIT_HARMLESS: &[&str] = &[
    "color.",
    "user.",
    "advice.",
    "log.",
    "init.",
    "core.quotepath",
];

/// `git -c KEY=VALUE`, `--config-env`, or `git config KEY VALUE` setting
/// something that may run a program.
fn git_setting(rest: &[String]) -> Option<String> {
    let harmless = |key: &str| {
        let key = key.to_ascii_lowercase();
        GIT_HARMLESS.iter().any(|h| key.starts_with(h))
    };
    let mut args = rest.iter().peekable();
    while let Some(a) = args.next() {
        let setting = match a.as_str() {
            "-c" => args.next().map(String::as_str),
            // Options that take a value before the subcommand.
            "-C" | "--git-dir" | "--work-tree" | "--namespace" => {
                args.next();
                continue;
            }
            // Where git looks for its own programs.
            _ if a.starts_with("--exec-path") => return Some("git --exec-path".into()),
            "--config-env" => return Some("git --config-env".into()),
            _ if a.starts_with("--config-env=") => return Some("git --config-env".into()),
            "config" => {
                // A value after the key (or --add/--replace-all) sets it.
                let words: Vec<&String> = args.by_ref().collect();
                let positional: Vec<&&String> =
                    words.iter().filter(|w| !w.starts_with('-')).collect();
                let sets = positional.len() >= 2
                    || words
                        .iter()
                        .any(|w| *w == "--add" || *w == "--replace-all" || *w == "set");
                let key = positional
                    .iter()
                    .map(|w| w.as_str())
                    .find(|w| *w != "set")
                    .unwrap_or("");
                return (sets && !harmless(key)).then(|| format!("git config {key}"));
            }
            _ if !a.starts_with('-') => return None,
            _ => continue,
        };
        if let Some(setting) = setting {
            let key = setting.split('=').next().unwrap_or_default();
            if !harmless(key) {
                return Some(format!("git -c {key}"));
            }
        }
    }
    None
}

/// sed scripts that run a command: the `e` command, or `s///e`.
fn sed_execute(rest: &[String]) -> Option<String> {
    let mut scripts = Vec::new();
    let mut args = rest.iter();
    let mut explicit = false;
    while let Some(a) = args.next() {
        if a == "-e" || a == "--expression" {
            explicit = true;
            scripts.extend(args.next().cloned());
        } else if let Some(s) = a.strip_prefix("--expression=") {
            explicit = true;
            scripts.push(s.to_string());
        } else if !a.starts_with('-') && !explicit && scripts.is_empty() {
            scripts.push(a.clone());
        }
    }
    scripts
        .iter()
        .any(|s| runs_command(s))
        .then(|| "sed e".into())
}

/// Whether a sed script holds an `e` command or an `s` command with the
/// `e` flag (read loosely: a false alarm only asks).
fn runs_command(script: &str) -> bool {
    script.split([';', '\n', '{', '}']).any(|command| {
        let command = command.trim_start();
        // An address: line numbers, `$`, `/regex/`, ranges.
        let command = command.trim_start_matches(|c: char| {
            c.is_ascii_digit() || matches!(c, '$' | ',' | '!' | '~' | ' ')
        });
        let command = match command.strip_prefix('/') {
            Some(rest) => rest
                .split_once('/')
                .map_or("", |(_, after)| after.trim_start()),
            None => command,
        };
        // No other sed command starts with `e`: `1etouch x` runs `touch x`.
        if command.starts_with('e') {
            return true;
        }
        let Some(rest) = command.strip_prefix('s') else {
            return false;
        };
        let Some(delim) = rest
            .chars()
            .next()
            .filter(|c| !c.is_alphanumeric() && *c != ' ')
        else {
            return false;
        };
        let parts: Vec<&str> = rest[delim.len_utf8()..].splitn(3, delim).collect();
        parts.len() == 3
            && parts[2]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .any(|c| c == 'e')
    })
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
            "env -S \"python3 -c 'open(1)'\"",
            "timeout 5 env -S 'sh x'",
            "git -c alias.q='!touch e4' q",
            "git -c core.fsmonitor='touch x' status",
            "git --config-env=core.pager=X log",
            "git config alias.x '!touch y'",
            "git config --add core.hooksPath hooks",
            "sed -n '1e touch a10' a.txt",
            "sed 's/a/touch b/e' a.txt",
            "sed -e 'p' -e '$ e date' a.txt",
            "make --eval='x:\n\ttouch a11' x",
            "make -E 'x: ; touch y' x",
            "tar cf /dev/null a.txt --checkpoint=1 --checkpoint-action=exec='touch a14'",
            "tar -I 'sh x.sh' -cf a.tar a.txt",
            "vi -es -c '!touch a33' -c q",
            "vim +'!touch x' +q",
            "zip -T -TT 'touch a39' z.zip a.txt",
            "watch -n1 'touch x'",
            "flock lock -c 'touch x'",
            "script -q -c 'touch x' /dev/null",
            "git -C . -c alias.q='!touch x' q",
            "git --exec-path=./bin status",
            "sed \"1etouch x\" a.txt",
            "make --eva='x: ; touch y' x",
            "tar cf /dev/null a.txt --checkpoint-act=exec='touch x'",
            "tar xf a.tar --to-com='sh x'",
            "zip -T --unzip-comm 'touch x' z.zip",
            "strace -o '|touch x' true",
            "npx -c 'touch x'",
            "npm exec -c 'touch x'",
            "rsync -e 'sh x' a b",
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
            "git -c color.ui=never log --oneline",
            "git -c user.name=A commit -m x",
            "git config user.email a@b",
            "git config --get alias.x",
            "git config core.pager",
            "sed -n '1,5p' a.txt",
            "sed 's/apple/pear/g' a.txt",
            "sed -i -e 's/x/y/' -e '/end/d' a.txt",
            "make -j4 test",
            "tar czf out.tgz src",
            "zip -r z.zip src",
            "env FOO=1 cargo test",
            "git -C sub status",
            "strace -o trace.txt true",
            "npm test",
            "npx prettier --check .",
        ] {
            assert_eq!(inline_code(&argv(line)), None, "{line}");
        }
        assert_eq!(inline_code(&argv("bash -lc true")).unwrap(), "bash -lc");
    }
}
