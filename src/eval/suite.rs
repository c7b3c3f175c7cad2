//! An eval suite as SPEC section 12 describes it: `tasks/<name>/task.toml`
//! and `tasks/<name>/files/`. Parsed whole before anything runs; a problem
//! names the file, the field and why.

use std::path::{Path, PathBuf};

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::protocol::Mode;

/// A suite or task that cannot be used: exit 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {field}: {why}", file.display())]
pub struct SuiteError {
    pub file: PathBuf,
    pub field: String,
    pub why: String,
}

fn problem(file: &Path, field: &str, why: impl Into<String>) -> SuiteError {
    SuiteError {
        file: file.to_path_buf(),
        field: field.to_string(),
        why: why.into(),
    }
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskFile {
    prompt: String,
    #[serde(default = "agent_mode")]
    mode: Mode,
    max_tool_calls: Option<u32>,
    #[serde(default)]
    answers: Vec<String>,
    #[serde(default)]
    reject_paths: Vec<String>,
    #[serde(default)]
    drift: Vec<Drift>,
    #[serde(default)]
    checks: Vec<CheckFile>,
    /// The project's own check for `eval --verify` (`""`: none); unset:
    /// detected from the task's files as `[verify]` does.
    verify: Option<String>,
}

fn agent_mode() -> Mode {
    Mode::Agent
}

/// Text appended to a file after the proposal, before apply (forces a conflict).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Drift {
    pub file: String,
    pub append: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckFile {
    file: Option<String>,
    contains: Option<String>,
    equals: Option<String>,
    exists: Option<bool>,
    unchanged: Option<bool>,
    answer_matches: Option<String>,
    command: Option<Vec<String>>,
}

/// One thing a task's outcome must show.
#[derive(Debug, Clone)]
pub enum Check {
    Contains { file: String, text: String },
    Equals { file: String, text: String },
    Exists { file: String, exists: bool },
    Unchanged { file: String },
    AnswerMatches(Regex),
    Command(Vec<String>),
}

impl Check {
    /// How a failed check is named in the report.
    pub fn describe(&self) -> String {
        match self {
            Check::Contains { file, text } => format!("{file} contains {text:?}"),
            Check::Equals { file, .. } => format!("{file} equals the expected text"),
            Check::Exists { file, exists: true } => format!("{file} exists"),
            Check::Exists {
                file,
                exists: false,
            } => format!("{file} does not exist"),
            Check::Unchanged { file } => format!("{file} unchanged"),
            Check::AnswerMatches(re) => format!("answer matches /{}/", re.as_str()),
            Check::Command(argv) => format!("`{}` exits 0", argv.join(" ")),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Task {
    pub name: String,
    /// `tasks/<name>/files`: copied fresh for every run.
    pub files: PathBuf,
    pub prompt: String,
    pub mode: Mode,
    pub max_tool_calls: Option<u32>,
    pub answers: Vec<String>,
    pub reject_paths: Vec<String>,
    pub drift: Vec<Drift>,
    pub checks: Vec<Check>,
    /// `[verify] command` for this task (`eval --verify`).
    pub verify: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Suite {
    pub name: String,
    pub tasks: Vec<Task>,
}

/// Reads the suite at `dir`, every task of it.
pub fn load(dir: &Path) -> Result<Suite, SuiteError> {
    let tasks_dir = dir.join("tasks");
    let entries = std::fs::read_dir(&tasks_dir).map_err(|e| {
        problem(
            &tasks_dir,
            "tasks",
            format!("cannot read the suite's tasks folder: {e}"),
        )
    })?;
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    if names.is_empty() {
        return Err(problem(
            &tasks_dir,
            "tasks",
            "the suite has no task folders",
        ));
    }
    let tasks = names
        .iter()
        .map(|name| load_task(&tasks_dir.join(name), name))
        .collect::<Result<Vec<_>, _>>()?;
    let name = dir
        .canonicalize()
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| dir.display().to_string());
    Ok(Suite { name, tasks })
}

fn load_task(dir: &Path, name: &str) -> Result<Task, SuiteError> {
    let path = dir.join("task.toml");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| problem(&path, "task.toml", format!("cannot read it: {e}")))?;
    let file: TaskFile = toml::from_str(&text).map_err(|e| {
        let (line, column) = e.span().map_or((1, 1), |s| line_column(&text, s.start));
        problem(
            &path,
            &format!("line {line}, column {column}"),
            e.message().trim(),
        )
    })?;
    // A [[checks]] or [[drift]] written as an array, read by position else.
    if let Some(key) = crate::config::misshapen(&text, &file).into_iter().next() {
        return Err(problem(&path, &key, crate::config::MISSHAPEN));
    }
    if file.prompt.trim().is_empty() {
        return Err(problem(&path, "prompt", "must not be empty"));
    }
    if file.checks.is_empty() {
        return Err(problem(
            &path,
            "checks",
            "a task needs at least one [[checks]] table",
        ));
    }
    let files = dir.join("files");
    for (i, d) in file.drift.iter().enumerate() {
        if !files.join(&d.file).is_file() {
            return Err(problem(
                &path,
                &format!("drift[{i}].file"),
                format!("{} is not a file of the task's files/", d.file),
            ));
        }
    }
    let checks = file
        .checks
        .into_iter()
        .enumerate()
        .map(|(i, c)| check(c).map_err(|why| problem(&path, &format!("checks[{i}]"), why)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Task {
        name: name.to_string(),
        files,
        prompt: file.prompt,
        mode: file.mode,
        max_tool_calls: file.max_tool_calls,
        answers: file.answers,
        reject_paths: file.reject_paths,
        drift: file.drift,
        checks,
        verify: file.verify,
    })
}

fn check(c: CheckFile) -> Result<Check, String> {
    const SHAPES: &str = "give `file` with one of `contains`, `equals`, `exists`, `unchanged`; \
                          or `answer_matches`; or `command`";
    let file_tests = [
        c.contains.is_some(),
        c.equals.is_some(),
        c.exists.is_some(),
        c.unchanged.is_some(),
    ]
    .iter()
    .filter(|b| **b)
    .count();
    // A file check reads a file of the task's copy: a relative path that
    // stays in it (one out of it is no file the task could have made).
    if let Some(file) = &c.file {
        let path = std::path::Path::new(file);
        // A root (`/x`, `\\x`) or a prefix (`C:`) leaves it on every system.
        let leaves = path.has_root()
            || path
                .components()
                .any(|p| matches!(p, std::path::Component::Prefix(_)))
            || path
                .components()
                .any(|p| matches!(p, std::path::Component::ParentDir));
        if leaves || file.trim().is_empty() {
            return Err(format!(
                "file {file:?} must be a path inside the task's copy (relative, no `..`)"
            ));
        }
    }
    match (c.file, c.answer_matches, c.command) {
        (Some(file), None, None) if file_tests == 1 => Ok(match (c.contains, c.equals, c.exists) {
            (Some(text), _, _) => Check::Contains { file, text },
            (_, Some(text), _) => Check::Equals { file, text },
            (_, _, Some(exists)) => Check::Exists { file, exists },
            (None, None, None) => Check::Unchanged { file },
        }),
        (None, Some(pattern), None) if file_tests == 0 => Regex::new(&pattern)
            .map(Check::AnswerMatches)
            .map_err(|e| format!("answer_matches is not a valid regular expression: {e}")),
        (None, None, Some(argv)) if file_tests == 0 => {
            if argv.is_empty() || argv[0].trim().is_empty() {
                Err("command must name a program".into())
            } else {
                Ok(Check::Command(argv))
            }
        }
        _ => Err(SHAPES.into()),
    }
}

fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suite_with(task: &str) -> (tempfile::TempDir, Result<Suite, SuiteError>) {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let t = dir.path().join("tasks/one");
        std::fs::create_dir_all(t.join("files")).unwrap_or_default();
        std::fs::write(t.join("files/a.txt"), "a\n").unwrap_or_default();
        std::fs::write(t.join("task.toml"), task).unwrap_or_default();
        let suite = load(dir.path());
        (dir, suite)
    }

    #[test]
    fn a_good_task_and_each_kind_of_mistake() {
        let (_d, s) = suite_with(
            "prompt = \"p\"\nmode = \"ask\"\n[[checks]]\nanswer_matches = \"(?i)yes\"\n[[checks]]\nfile = \"a.txt\"\nunchanged = true\n",
        );
        let s = s.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.tasks[0].checks.len(), 2);
        assert_eq!(s.tasks[0].mode, Mode::Ask);
        let why = |task: &str| {
            suite_with(task)
                .1
                .err()
                .map(|e| (e.field, e.why))
                .unwrap_or_default()
        };
        assert_eq!(why("prompt = \"p\"\n").0, "checks");
        assert_eq!(
            why("prompt = \" \"\n[[checks]]\ncommand = [\"true\"]\n").0,
            "prompt"
        );
        let (field, message) = why("prompt = \"p\"\ncheckz = 1\n");
        assert_eq!(field, "line 2, column 1");
        assert!(message.contains("unknown field `checkz`"), "{message}");
        let (field, message) =
            why("prompt = \"p\"\n[[checks]]\nfile = \"a\"\ncontains = \"x\"\nequals = \"y\"\n");
        assert_eq!(field, "checks[0]");
        for outside in ["../../outside.txt", "/tmp/outside.txt"] {
            let (field, message) = why(&format!(
                "prompt = \"x\"\n[[checks]]\nfile = \"{outside}\"\nexists = false\n"
            ));
            assert_eq!(field, "checks[0]", "{outside}");
            assert!(message.contains("inside the task's copy"), "{message}");
        }
        assert!(message.starts_with("give `file`"), "{message}");
        assert!(
            why("prompt = \"p\"\n[[checks]]\nanswer_matches = \"(\"\n")
                .1
                .contains("regular expression")
        );
        assert_eq!(
            why("prompt = \"p\"\ndrift = [{file = \"nope.txt\", append = \"x\"}]\n[[checks]]\ncommand = [\"true\"]\n").0,
            "drift[0].file"
        );
    }
}
