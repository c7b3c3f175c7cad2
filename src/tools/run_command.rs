//! `run_command {command, cwd?, timeout_secs?}`: one program run inside the
//! agent root, without a shell, with a timeout and capped output. In a job it
//! runs only after approval (`[approvals] exec`); API keys never reach it.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use super::runner::{self, Ran, Spawn};
use super::{Tool, ToolContext, ToolError, ToolSpec, parse_args};
use crate::workspace::{Changed, TreeStat};

/// Changed files listed in a result (`changed_files_total` counts them all).
const MAX_CHANGED_LISTED: usize = 200;
use crate::protocol::{Mode, Tier};

pub use crate::protocol::names::RUN_COMMAND;

/// Two-character shell operators (named whole in errors). The command runs
/// without a shell, so an operator would reach the program as a plain word;
/// it is refused instead.
const SHELL_OPERATORS: &[&str] = &[
    "|", "||", "&&", ";", "&", ">", ">>", "<", "<<", "2>", "2>&1",
];

pub struct RunCommand;

#[derive(Deserialize)]
struct Args {
    command: String,
    cwd: Option<String>,
    timeout_secs: Option<u64>,
}

/// The command as argv words, split like a POSIX shell would (quotes and
/// escapes), refused if it needs a real shell.
pub fn argv_of(command: &str) -> Result<Vec<String>, ToolError> {
    let argv = shell_words::split(command)
        .map_err(|e| ToolError::invalid("command", format!("cannot split it into words: {e}")))?;
    if argv.is_empty() {
        return Err(ToolError::invalid("command", "it is empty"));
    }
    if let Some(op) = shell_operator(command) {
        return Err(ToolError::invalid(
            "command",
            format!(
                "`{op}` needs a shell, and commands run without one; run each program in its \
                 own call and read or search files with the read tools"
            ),
        ));
    }
    Ok(argv)
}

/// The first shell operator outside quotes (`|`, `;`, `&`, `>`, `<`, `$(`,
/// a backtick), if any.
fn shell_operator(command: &str) -> Option<String> {
    let (mut single, mut double, mut escaped) = (false, false, false);
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '|' | ';' | '&' | '>' | '<' | '`' if !single && !double => {
                let mut op = c.to_string();
                if let Some(&next) = chars.peek()
                    && SHELL_OPERATORS.contains(&format!("{c}{next}").as_str())
                {
                    op.push(next);
                }
                return Some(op);
            }
            '$' if !single && !double && chars.peek() == Some(&'(') => return Some("$(".into()),
            _ => {}
        }
    }
    None
}

/// Whether `argv` starts with the words of one of the `allow` prefixes;
/// a program that runs another (`timeout 5 ./x.sh`, `find -exec`) is
/// allowed only if that one is too.
pub fn allowed(argv: &[String], allow: &[String]) -> bool {
    let listed = allow.iter().any(|prefix| {
        shell_words::split(prefix).is_ok_and(|words| !words.is_empty() && argv.starts_with(&words))
    });
    listed
        && match inner_command(argv) {
            Some(inner) if !inner.is_empty() => allowed(inner, allow),
            Some(_) => true,
            // A runner whose command cannot be told apart: only plain words.
            None if runs_commands(argv) => false,
            None => true,
        }
}

/// The programs that run another program given after their options.
const WRAPPERS: &[&str] = &[
    "timeout", "nice", "nohup", "setsid", "time", "env", "stdbuf", "ionice", "chrt", "taskset",
    "flock", "unbuffer",
];

/// The command a wrapper runs (`None`: `argv` is no wrapper); options,
/// `NAME=value`, a duration or a priority before it are skipped.
fn inner_command(argv: &[String]) -> Option<&[String]> {
    let name = argv.first()?.rsplit('/').next()?;
    if !WRAPPERS.contains(&name) {
        return None;
    }
    let mut i = 1;
    // Options with a value of their own, given apart.
    let takes_value = |o: &str| {
        matches!(
            o,
            "-s" | "-k"
                | "--signal"
                | "--kill-after"
                | "-n"
                | "--adjustment"
                | "-c"
                | "-p"
                | "-o"
                | "-e"
                | "-i"
                | "-u"
                | "--unset"
                | "-w"
                | "--timeout"
                | "-E"
        )
    };
    while let Some(word) = argv.get(i) {
        if word.starts_with('-') {
            i += if takes_value(word) { 2 } else { 1 };
            continue;
        }
        let numeric = word
            .chars()
            .all(|c| c.is_ascii_digit() || ".smhdx,".contains(c));
        let setting = name == "env" && word.contains('=');
        // flock's lock file, chrt's priority, taskset's mask, timeout's duration.
        let first_argument =
            matches!(name, "flock" | "chrt" | "taskset" | "timeout") && i == 1 || numeric;
        if setting || first_argument {
            i += 1;
            continue;
        }
        break;
    }
    argv.get(i..)
}

/// Programs that run commands handed to them in ways not read here
/// (`find -exec`, `xargs`): allowed only when none of their words names
/// a program file (`./x.sh`).
fn runs_commands(argv: &[String]) -> bool {
    let Some(name) = argv.first().and_then(|a| a.rsplit('/').next()) else {
        return false;
    };
    match name {
        "find" => argv
            .iter()
            .any(|a| a.starts_with("-exec") || a.starts_with("-ok")),
        "xargs" | "parallel" | "watch" => argv[1..].iter().any(|a| !a.starts_with('-')),
        _ => false,
    }
}

/// Whether an environment variable holds a secret the child must not see:
/// a provider's key variable, or any `*_API_KEY`.
impl Tool for RunCommand {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: RUN_COMMAND,
            description: "Run one program in the project (no shell: no pipes, redirects or \
                `&&`), e.g. \"cargo test -p core\". The user approves each command unless it is \
                on their allow list. cwd is relative to the agent root. Returns exit_code (null \
                if it was killed), stdout, stderr, duration_ms and whether output was truncated \
                or the command timed out, and changed_files: the files it created, modified or \
                deleted in the project.",
            schema: json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "minLength": 1, "description": "The command line, split into words like a shell would."},
                    "cwd": {"type": "string", "description": "Directory to run in, relative to the agent root. Default: the root."},
                    "timeout_secs": {"type": "integer", "minimum": 1, "description": "Stop it after this many seconds (capped by the configuration)."}
                },
                "required": ["command"],
                "additionalProperties": false
            }),
            tier: Tier::Exec,
            modes: vec![Mode::Agent],
        }
    }

    fn run(&self, ctx: &ToolContext<'_>, args: Value) -> Result<Value, ToolError> {
        let args: Args = parse_args(args)?;
        // A configured shell takes the line whole; else it is split here.
        let argv = match ctx.exec.shell.wrap(&args.command) {
            Some(argv) => argv,
            None => argv_of(&args.command)?,
        };
        let dir = ctx.workspace.resolve(args.cwd.as_deref().unwrap_or(""))?;
        if !dir.abs.is_dir() {
            return Err(ToolError::invalid(
                "cwd",
                format!("`{}` is not a directory of the project", dir.display()),
            ));
        }
        let limit = ctx.exec.timeout_secs.max(1);
        let timeout = Duration::from_secs(args.timeout_secs.unwrap_or(limit).clamp(1, limit));
        let mut writable = vec![ctx.workspace.root().to_path_buf()];
        writable.extend(ctx.exec.writable_paths());
        let spawn = Spawn {
            argv: &argv,
            cwd: &dir.abs,
            writable,
            network: ctx.exec.network,
            timeout,
            cap: usize::try_from(ctx.exec.max_output_bytes).unwrap_or(usize::MAX),
            secrets: &ctx.secrets,
            env: Vec::new(),
            cancel: ctx.cancel.as_ref(),
            tee: ctx.tee.clone(),
            tee_past_cap: false,
            stdin: None,
        };
        let (ran, tracked) = tracked(ctx, || runner::run(&spawn))?;
        let mut changed = tracked.changed;
        let changed_total = changed.len();
        changed.truncate(MAX_CHANGED_LISTED);
        let mut result = json!({
            "exit_code": ran.exit_code,
            "stdout": ran.stdout_text(),
            "stderr": ran.stderr_text(),
            "duration_ms": ran.duration_ms,
            "truncated": ran.truncated,
            "timed_out": ran.timed_out,
            "confined": ran.confined,
            "changed_files": changed,
            "changed_files_total": changed_total,
        });
        match tracked.checkpoint {
            Ok(Some(id)) => result["checkpoint_id"] = json!(id),
            Ok(None) => {}
            Err(error) => result["checkpoint_error"] = json!(error),
        }
        if !tracked.not_recorded.is_empty() {
            result["not_recorded"] = json!(tracked.not_recorded);
        }
        Ok(result)
    }
}

/// What a command changed and, in a job, the checkpoint that undoes it.
struct Tracked {
    changed: Vec<Changed>,
    /// `Ok(None)`: nothing to record (no change, or no job).
    checkpoint: Result<Option<String>, String>,
    not_recorded: Vec<String>,
}

/// Runs `run` between two looks at the tree: plain stat scans, or in a
/// job the file index, so the changes become a checkpoint.
fn tracked(
    ctx: &ToolContext<'_>,
    run: impl FnOnce() -> Result<Ran, ToolError>,
) -> Result<(Ran, Tracked), ToolError> {
    let root = ctx.workspace.root();
    let plain = |before: &TreeStat, checkpoint| Tracked {
        changed: TreeStat::scan(root).changes_since(before),
        checkpoint,
        not_recorded: Vec::new(),
    };
    let Some(record) = &ctx.record else {
        let before = TreeStat::scan(root);
        let ran = run()?;
        return Ok((ran, plain(&before, Ok(None))));
    };
    // Nothing runs that could not be undone: without the files' prior
    // bytes kept, the command's changes could not be rolled back.
    let before = record
        .tracker
        .before()
        .map_err(|e| ToolError::NotUndoable(e.to_string()))?;
    let ran = run()?;
    let after = record
        .tracker
        .after(&before, record.session_id.as_deref(), &record.job_id);
    Ok(match after {
        Ok(rec) => (
            ran,
            Tracked {
                changed: rec.changed,
                checkpoint: Ok(rec.checkpoint.map(|c| c.checkpoint_id)),
                not_recorded: rec.not_recorded,
            },
        ),
        Err(e) => (ran, plain(&before, Err(e.to_string()))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::runner::is_secret;

    fn words(s: &str) -> Vec<String> {
        argv_of(s).unwrap()
    }

    #[test]
    fn splits_like_a_shell_and_refuses_shell_operators() {
        assert_eq!(
            words("cargo test -p 'my crate' \"a b\""),
            ["cargo", "test", "-p", "my crate", "a b"]
        );
        for bad in [
            "ls | wc",
            "ls|wc",
            "a;b",
            "sleep 1 &",
            "echo `id`",
            "make && rm -rf x",
            "echo hi > f",
            "a; b",
            "echo $(id)",
        ] {
            let e = argv_of(bad).unwrap_err().to_string();
            assert!(e.contains("needs a shell"), "{bad}: {e}");
        }
        assert!(argv_of("   ").is_err());
        assert!(argv_of("echo 'unclosed").is_err());
        // Quoted operators are plain words.
        assert_eq!(words("grep '|' f"), ["grep", "|", "f"]);
    }

    #[test]
    fn a_wrapper_is_allowed_only_with_what_it_runs() {
        let allow: Vec<String> = [
            "timeout",
            "nice",
            "find",
            "cargo test",
            "xargs",
            "flock",
            "env",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let ok = |line: &str| allowed(&shell_words::split(line).unwrap(), &allow);
        assert!(ok("timeout 5 cargo test"));
        assert!(ok("timeout -s KILL 5m cargo test -q"));
        assert!(ok("nice -n 5 cargo test"));
        assert!(ok("env RUST_LOG=debug cargo test"));
        assert!(ok("find . -name '*.rs'"));
        assert!(!ok("timeout 5 ./x.sh"));
        assert!(!ok("nice ./x.sh"));
        assert!(!ok("flock lock ./x.sh"));
        assert!(!ok("timeout 5 rm -rf src"));
        assert!(!ok("find . -exec ./x.sh {} +"));
        assert!(!ok("xargs ./x.sh"));
        assert!(!ok("env ./x.sh"));
    }

    #[test]
    fn allow_list_matches_whole_leading_words() {
        let allow = vec!["cargo test".to_string(), "git status".to_string()];
        assert!(allowed(&words("cargo test -p x"), &allow));
        assert!(allowed(&words("git status"), &allow));
        assert!(!allowed(&words("cargo testify"), &allow));
        assert!(!allowed(&words("cargo"), &allow));
        assert!(!allowed(&words("git push"), &allow));
        assert!(!allowed(&words("rm -rf /"), &[String::new()]));
    }

    #[test]
    fn secrets_are_the_configured_variables_and_any_api_key() {
        let secrets = vec!["MY_LLM_TOKEN".to_string()];
        assert!(is_secret("MY_LLM_TOKEN", &secrets));
        assert!(is_secret("OPENAI_API_KEY", &secrets));
        assert!(is_secret("custom_api_key", &secrets));
        assert!(!is_secret("PATH", &secrets));
    }
}
