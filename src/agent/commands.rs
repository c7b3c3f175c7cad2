//! Custom commands (SPEC 19): `/NAME ARGS` expands a prompt file kept in
//! the project (`.agent-tui/commands/`, and as other agents keep them:
//! `.claude/commands/`, `.codex/prompts/`, `.opencode/command/`,
//! `.gemini/commands/*.toml`) or the user's config folder; the project's
//! wins. `$ARGUMENTS` (Gemini's `{{args}}`) is the argument text, `$1`…`$9`
//! its words; front matter may set `description`, `mode`, `provider` and
//! `model` (Claude Code's `model:` works as it is). Files are read
//! beneath the root only (a link out of it is not followed).

use std::path::{Path, PathBuf};

use crate::protocol::{Mode, ModelChoice};
use crate::workspace::Workspace;

/// Where commands are looked for under the root, in order of precedence.
const PROJECT: [(&str, Format); 5] = [
    (".agent-tui/commands", Format::Markdown),
    (".claude/commands", Format::Markdown),
    (".codex/prompts", Format::Markdown),
    (".opencode/command", Format::Markdown),
    (".gemini/commands", Format::Toml),
];
/// A prompt file larger than this is refused.
const MAX_BYTES: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    Markdown,
    Toml,
}

/// One command as found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomCommand {
    pub name: String,
    pub description: String,
    /// The mode its jobs run in (`None`: the session's).
    pub mode: Option<Mode>,
    /// The provider and model its jobs run on (empty: the session's).
    pub choice: ModelChoice,
    /// Where it was read from (`.claude/commands/explain.md`, `~/…`).
    pub source: String,
    pub(super) template: String,
}

/// What a prompt is, as a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    /// Not a `/name` (or `//…`, which sends the text with one `/` less).
    Text(String),
    Expanded {
        prompt: String,
        mode: Option<Mode>,
        choice: ModelChoice,
    },
    /// No command of that name (the closest names, best first), or one
    /// that cannot be read (the reason).
    Refused(String),
}

/// The user's commands folder (`<config dir>/agent-tui/commands`).
pub fn user_folder() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "agent-tui").map(|d| d.config_dir().join("commands"))
}

/// Every command, the project's first; a name found twice keeps the first.
pub fn list(ws: &Workspace, user: Option<&Path>) -> Vec<CustomCommand> {
    let mut out: Vec<CustomCommand> = Vec::new();
    for (folder, format) in PROJECT {
        for (name, text) in project_files(ws, folder, format) {
            add(
                &mut out,
                parse(&name, &text, format, &format!("{folder}/{name}")),
            );
        }
    }
    if let Some(dir) = user {
        for (name, text) in user_files(dir) {
            let shown = format!("{}/{name}", dir.display());
            add(&mut out, parse(&name, &text, Format::Markdown, &shown));
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

fn add(out: &mut Vec<CustomCommand>, found: Option<CustomCommand>) {
    if let Some(c) = found
        && !out.iter().any(|o| o.name == c.name)
    {
        out.push(c);
    }
}

/// `(file name, text)` of the prompt files in `folder` under the root,
/// read beneath it.
fn project_files(ws: &Workspace, folder: &str, format: Format) -> Vec<(String, String)> {
    let ext = match format {
        Format::Markdown => ".md",
        Format::Toml => ".toml",
    };
    let Ok(entries) = std::fs::read_dir(ws.root().join(folder)) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(ext) && !n.starts_with('.'))
        .collect();
    names.sort();
    names
        .into_iter()
        .filter_map(|name| {
            let rel = PathBuf::from(folder).join(&name);
            let bytes = ws.scope_dir(0).read_opt(&rel).ok()??;
            (bytes.len() <= MAX_BYTES).then(|| (name, String::from_utf8_lossy(&bytes).into_owned()))
        })
        .collect()
}

fn user_files(dir: &Path) -> Vec<(String, String)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, String)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| Some((e.file_name().into_string().ok()?, e.path())))
        .filter(|(n, _)| n.ends_with(".md") && !n.starts_with('.'))
        .filter_map(|(n, p)| {
            let text = std::fs::read_to_string(p).ok()?;
            (text.len() <= MAX_BYTES).then_some((n, text))
        })
        .collect();
    out.sort();
    out
}

/// A command from its file; `None` if the name cannot be typed.
pub(super) fn parse(file: &str, text: &str, format: Format, source: &str) -> Option<CustomCommand> {
    let name = file.rsplit_once('.').map_or(file, |(n, _)| n).to_string();
    let typable = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':'));
    if !typable {
        return None;
    }
    let (meta, template) = match format {
        Format::Markdown => front_matter(text),
        Format::Toml => gemini(text)?,
    };
    let field = |key: &str| meta.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
    let mode = field("mode").and_then(|m| match m.to_ascii_lowercase().as_str() {
        "ask" => Some(Mode::Ask),
        "plan" => Some(Mode::Plan),
        "agent" => Some(Mode::Agent),
        _ => None,
    });
    let description = field("description").unwrap_or_else(|| {
        template
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default()
            .trim()
            .trim_start_matches('#')
            .trim()
            .chars()
            .take(80)
            .collect()
    });
    let choice = ModelChoice {
        provider: field("provider").filter(|p| !p.is_empty()),
        model: field("model").filter(|m| !m.is_empty()),
    };
    Some(CustomCommand {
        name,
        description,
        mode,
        choice,
        source: source.to_string(),
        template,
    })
}

/// `key: value` pairs of a leading `---` block, and the text after it.
fn front_matter(text: &str) -> (Vec<(String, String)>, String) {
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = body
        .strip_prefix("---\n")
        .or_else(|| body.strip_prefix("---\r\n"))
    else {
        return (Vec::new(), body.to_string());
    };
    let Some(end) = rest.find("\n---") else {
        return (Vec::new(), body.to_string());
    };
    let meta = rest[..end]
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| {
            let v = v.trim();
            let v = v
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(v);
            (k.trim().to_string(), v.to_string())
        })
        .collect();
    let after = &rest[end + 4..];
    let after = after.split_once('\n').map_or("", |(_, t)| t);
    (meta, after.to_string())
}

/// Gemini CLI's `prompt = "…"` (and `description`).
fn gemini(text: &str) -> Option<(Vec<(String, String)>, String)> {
    let table: toml::Table = toml::from_str(text).ok()?;
    let prompt = table.get("prompt")?.as_str()?.to_string();
    let meta = table
        .iter()
        .filter(|(k, _)| *k != "prompt")
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect();
    Some((meta, prompt))
}

/// The command's text with `args` put in.
pub fn expand(command: &CustomCommand, args: &str) -> String {
    let args = args.trim();
    let words: Vec<&str> = args.split_whitespace().collect();
    // One pass over the template: what the arguments hold (a `$2` of
    // their own) is never read as a placeholder.
    let mut out = String::with_capacity(command.template.len() + args.len());
    let mut has_place = false;
    let mut rest = command.template.as_str();
    while let Some(i) = rest.find(['$', '{']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        let digit = tail
            .as_bytes()
            .get(1)
            .filter(|b| (b'1'..=b'9').contains(*b))
            .map(|b| usize::from(b - b'0'));
        let (put, skip) = if tail.starts_with("$ARGUMENTS") {
            (args, "$ARGUMENTS".len())
        } else if tail.starts_with("{{args}}") {
            (args, "{{args}}".len())
        } else if let (true, Some(n)) = (tail.starts_with('$'), digit) {
            (words.get(n - 1).copied().unwrap_or_default(), 2)
        } else {
            out.push_str(&tail[..1]);
            rest = &tail[1..];
            continue;
        };
        has_place = true;
        out.push_str(put);
        rest = &tail[skip..];
    }
    out.push_str(rest);
    let mut out = out.trim_end().to_string();
    if !has_place && !args.is_empty() {
        out.push_str("\n\n");
        out.push_str(args);
    }
    out
}

/// What a job runs: its instruction, mode and model choice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    pub prompt: String,
    pub mode: Mode,
    /// The job's own choice, with the command's front matter over it.
    pub choice: ModelChoice,
}

/// The instruction a job runs for `prompt`: a `/NAME ARGS` expanded from
/// the root's and the user's commands (in the command's mode, provider and
/// model where it sets them), other text as it is; an unknown name refused.
pub fn instruction(
    ws: &Workspace,
    prompt: String,
    mode: Mode,
    choice: ModelChoice,
) -> Result<Instruction, crate::protocol::EngineError> {
    if !prompt.trim_start().starts_with('/') {
        return Ok(Instruction {
            prompt,
            mode,
            choice,
        });
    }
    let user = user_folder();
    match invocation(&list(ws, user.as_deref()), &prompt) {
        Invocation::Text(prompt) => Ok(Instruction {
            prompt,
            mode,
            choice,
        }),
        Invocation::Expanded {
            prompt,
            mode: own,
            choice: theirs,
        } => Ok(Instruction {
            prompt,
            mode: own.unwrap_or(mode),
            // A command naming a provider takes its model (or the
            // provider's own); one naming only a model keeps the provider.
            choice: match theirs.provider {
                Some(_) => theirs,
                None => ModelChoice {
                    provider: choice.provider,
                    model: theirs.model.or(choice.model),
                },
            },
        }),
        Invocation::Refused(why) => Err(crate::protocol::EngineError::invalid(why)),
    }
}

/// What `prompt` asks for: plain text, a command expanded, or a refusal
/// that names the commands closest to an unknown one.
pub fn invocation(commands: &[CustomCommand], prompt: &str) -> Invocation {
    let trimmed = prompt.trim_start();
    if let Some(rest) = trimmed.strip_prefix("//") {
        return Invocation::Text(format!("/{rest}"));
    }
    let Some(rest) = trimmed.strip_prefix('/') else {
        return Invocation::Text(prompt.to_string());
    };
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    // `/usr/bin …`: a path, not a command.
    if name.is_empty() || name.contains('/') {
        return Invocation::Text(prompt.to_string());
    }
    if let Some(command) = commands.iter().find(|c| c.name == name) {
        return Invocation::Expanded {
            prompt: expand(command, args),
            mode: command.mode,
            choice: command.choice.clone(),
        };
    }
    let mut close: Vec<(f64, &str)> = commands
        .iter()
        .map(|c| (strsim::jaro_winkler(name, &c.name), c.name.as_str()))
        .filter(|(s, _)| *s > 0.7)
        .collect();
    close.sort_by(|a, b| b.0.total_cmp(&a.0));
    let hint = match close.len() {
        0 if commands.is_empty() => {
            "no custom commands are defined (.agent-tui/commands/NAME.md)".to_string()
        }
        0 => format!(
            "the commands are {}",
            commands
                .iter()
                .map(|c| format!("/{}", c.name))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => format!(
            "did you mean {}?",
            close
                .iter()
                .take(3)
                .map(|(_, n)| format!("/{n}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Invocation::Refused(format!(
        "no command /{name}: {hint} (to send text that starts with /, write // instead)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(template: &str) -> CustomCommand {
        CustomCommand {
            name: "explain".into(),
            description: String::new(),
            mode: None,
            choice: ModelChoice::default(),
            source: String::new(),
            template: template.into(),
        }
    }

    #[test]
    fn arguments_go_where_the_file_says() {
        let c = command("Explain $ARGUMENTS, then $2 first.\n");
        assert_eq!(
            expand(&c, " a.rs b.rs "),
            "Explain a.rs b.rs, then b.rs first."
        );
        assert_eq!(expand(&command("Look at {{args}}"), "x"), "Look at x");
        assert_eq!(
            expand(&command("Review it."), "src/lib.rs"),
            "Review it.\n\nsrc/lib.rs"
        );
        assert_eq!(expand(&command("$1 and $9"), "one"), "one and");
        // What the arguments hold is never read as a placeholder.
        assert_eq!(
            expand(&command("Fix $ARGUMENTS ($1)"), "$2 costs {{args}}"),
            "Fix $2 costs {{args}} ($2)"
        );
    }

    #[test]
    fn front_matter_sets_description_and_mode() {
        let text = "---\ndescription: \"Explain a file\"\nmode: ask\nallowed-tools: Read\n---\nExplain $ARGUMENTS.\n";
        let c = parse("explain.md", text, Format::Markdown, "x").unwrap();
        assert_eq!(c.description, "Explain a file");
        assert_eq!(c.mode, Some(Mode::Ask));
        assert_eq!(c.template, "Explain $ARGUMENTS.\n");
        assert!(c.choice.is_empty());
        let m = "---\nmodel: haiku-small\nprovider: local\n---\nGo.\n";
        let c = parse("quick.md", m, Format::Markdown, "x").unwrap();
        assert_eq!(
            (c.choice.provider.as_deref(), c.choice.model.as_deref()),
            (Some("local"), Some("haiku-small"))
        );
        let g = parse(
            "fix.toml",
            "description = \"Fix\"\nprompt = \"Fix {{args}}\"\n",
            Format::Toml,
            "x",
        )
        .unwrap();
        assert_eq!(
            (g.description.as_str(), g.template.as_str()),
            ("Fix", "Fix {{args}}")
        );
        assert!(parse("bad name.md", "x", Format::Markdown, "x").is_none());
    }

    #[test]
    fn unknown_names_are_refused_with_the_closest() {
        let cs = vec![command("E $ARGUMENTS")];
        assert_eq!(
            invocation(&cs, "/explain a"),
            Invocation::Expanded {
                prompt: "E a".into(),
                mode: None,
                choice: ModelChoice::default(),
            }
        );
        match invocation(&cs, "/explian a") {
            Invocation::Refused(why) => assert!(why.contains("did you mean /explain?"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            invocation(&cs, "//explain"),
            Invocation::Text("/explain".into())
        );
        assert_eq!(
            invocation(&cs, "/usr/bin is gone"),
            Invocation::Text("/usr/bin is gone".into())
        );
        assert_eq!(invocation(&cs, "plain"), Invocation::Text("plain".into()));
    }
}
