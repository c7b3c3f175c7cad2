//! The hooks an engine runs (SPEC 21): the config's, as written, and the
//! project's `.agent-tui/hooks.toml`, trusted ones only (a project hook
//! changed since it was trusted runs its trusted copy: the definition and
//! the scripts it names, as they were). One set for every front end.

use std::path::Path;

use sha2::{Digest, Sha256};

use crate::config::{HookDef, HookEvent, HooksConfig, HooksFile, PROJECT_FILE, glob_matches};
use crate::protocol::{HookInfo, HookScript, HookTrust};

/// A project hook as trusted: its definition and its scripts' bytes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Trusted {
    pub def: HookDef,
    pub def_sha256: String,
    /// (the argument as written, the bytes it named).
    pub scripts: Vec<(String, Vec<u8>)>,
}

/// One hook as the engine knows it.
#[derive(Debug, Clone)]
pub(crate) struct Hook {
    /// What runs: the config's as written, a project hook's trusted copy.
    pub def: HookDef,
    pub def_sha256: String,
    pub scripts: Vec<(String, Vec<u8>)>,
    pub trust: HookTrust,
    /// A project hook as written now.
    pub written: Option<(HookDef, Vec<HookScript>)>,
}

impl Hook {
    /// Whether it runs at all.
    pub fn runs(&self) -> bool {
        self.trust != HookTrust::Untrusted
    }
}

/// The hooks of one root.
#[derive(Debug, Clone, Default)]
pub(crate) struct HookSet {
    pub hooks: Vec<Hook>,
    pub max_continuations: u32,
    /// What was wrong with the project's file (it runs nothing then).
    pub problems: Vec<String>,
}

/// The engine's hooks: read again when a project's hooks are trusted.
#[derive(Debug, Default)]
pub(crate) struct Hooks(std::sync::RwLock<std::sync::Arc<HookSet>>);

impl Hooks {
    pub fn new(set: HookSet) -> Hooks {
        Hooks(std::sync::RwLock::new(std::sync::Arc::new(set)))
    }

    /// The hooks as they are now.
    pub fn get(&self) -> std::sync::Arc<HookSet> {
        self.0
            .read()
            .map_or_else(|e| e.into_inner().clone(), |s| s.clone())
    }

    /// Read again: the config's and the project's, `trusted` as stored.
    pub fn reload(&self, root: &Path, config: &HooksConfig, trusted: &[Trusted]) {
        let set = std::sync::Arc::new(HookSet::load(root, config, trusted));
        match self.0.write() {
            Ok(mut s) => *s = set,
            Err(e) => *e.into_inner() = set,
        }
    }
}

/// The trusted hooks a root's store keeps.
pub(crate) fn trusted_in(state: Option<&crate::store::RootStore>) -> Vec<Trusted> {
    state
        .and_then(|s| s.trusted_hooks().ok())
        .unwrap_or_default()
        .iter()
        .filter_map(|(_, body)| serde_json::from_str(body).ok())
        .collect()
}

/// A call a `tool.before` / `tool.after` hook may match.
pub(crate) struct Called<'a> {
    pub tool: &'a str,
    pub command: Option<&'a str>,
    pub paths: Vec<String>,
}

/// sha256 of a definition (its JSON).
pub fn def_sha256(def: &HookDef) -> String {
    let text = serde_json::to_vec(def).unwrap_or_default();
    hex(&Sha256::digest(text))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The project's hooks as written (none if it has no file), or what is
/// wrong with its file.
pub fn project_hooks(root: &Path) -> Result<HooksConfig, String> {
    let path = root.join(PROJECT_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HooksConfig::default()),
        Err(e) => return Err(format!("{PROJECT_FILE}: {e}")),
    };
    let file: HooksFile = toml::from_str(&text).map_err(|e| format!("{PROJECT_FILE}: {e}"))?;
    let mut problems = crate::config::shape_problems(&text, &file);
    problems.extend(file.hooks.problems("hooks"));
    if !problems.is_empty() {
        return Err(format!("{PROJECT_FILE}: {}", problems.join("; ")));
    }
    Ok(file.hooks)
}

/// The files of the root a definition's argv names (its scripts): each
/// argument that is a relative path to a file there.
pub fn scripts_of(root: &Path, def: &HookDef) -> Vec<(String, Vec<u8>)> {
    def.command
        .iter()
        .filter(|a| !a.starts_with('/') && !a.starts_with('-') && *a != "{files}")
        .filter_map(|a| {
            let path = root.join(a);
            let inside = path
                .canonicalize()
                .ok()
                .zip(root.canonicalize().ok())
                .is_some_and(|(p, r)| p.starts_with(r));
            (inside && path.is_file())
                .then(|| std::fs::read(&path).ok().map(|b| (a.clone(), b)))
                .flatten()
        })
        .collect()
}

impl HookSet {
    /// The config's hooks and the project's, with what is trusted of them.
    pub fn load(root: &Path, config: &HooksConfig, trusted: &[Trusted]) -> HookSet {
        let mut set = HookSet {
            max_continuations: config.max_continuations,
            ..HookSet::default()
        };
        for def in &config.run {
            set.hooks.push(Hook {
                def_sha256: def_sha256(def),
                def: def.clone(),
                scripts: Vec::new(),
                trust: HookTrust::Config,
                written: None,
            });
        }
        let project = match project_hooks(root) {
            Ok(p) => p,
            Err(e) => {
                set.problems.push(e);
                HooksConfig::default()
            }
        };
        for def in project.run {
            let scripts = scripts_of(root, &def);
            let sha = def_sha256(&def);
            let shown: Vec<HookScript> = scripts
                .iter()
                .map(|(path, bytes)| HookScript {
                    path: path.clone(),
                    sha256: hex(&Sha256::digest(bytes)),
                    changed: false,
                })
                .collect();
            let pinned = trusted.iter().find(|t| t.def.name == def.name);
            let hook = match pinned {
                Some(t) => {
                    let same = t.def_sha256 == sha && t.scripts == scripts;
                    let shown = shown
                        .into_iter()
                        .map(|mut s| {
                            s.changed = !t
                                .scripts
                                .iter()
                                .any(|(p, b)| *p == s.path && hex(&Sha256::digest(b)) == s.sha256);
                            s
                        })
                        .collect();
                    Hook {
                        def: t.def.clone(),
                        def_sha256: t.def_sha256.clone(),
                        scripts: t.scripts.clone(),
                        trust: if same {
                            HookTrust::Trusted
                        } else {
                            HookTrust::Changed
                        },
                        written: Some((def, shown)),
                    }
                }
                None => Hook {
                    def: def.clone(),
                    def_sha256: sha,
                    scripts,
                    trust: HookTrust::Untrusted,
                    written: Some((def, shown)),
                },
            };
            set.hooks.push(hook);
        }
        set
    }

    /// The hooks that run at `event` (for `called`, if it is a call), in
    /// the order written: the config's first.
    pub fn at<'a>(
        &'a self,
        event: HookEvent,
        called: Option<&'a Called<'a>>,
    ) -> impl Iterator<Item = &'a Hook> + 'a {
        self.hooks
            .iter()
            .filter(move |h| h.runs() && h.def.on == event && matches(h, called))
    }

    /// The hooks that run at `event` whatever their `match` (a file event's
    /// hooks, matched per file by `Hook::files_of`), in the order written.
    pub fn on(&self, event: HookEvent) -> impl Iterator<Item = &Hook> + '_ {
        self.hooks
            .iter()
            .filter(move |h| h.runs() && h.def.on == event)
    }

    /// Whether any hook runs at `event`.
    pub fn any(&self, event: HookEvent) -> bool {
        self.hooks.iter().any(|h| h.runs() && h.def.on == event)
    }

    /// Why the model may not propose an edit to one of `paths`: the
    /// project's hooks file, its hooks folder, or a script a hook names.
    pub fn guarded<'a>(&self, mut paths: impl Iterator<Item = &'a str>) -> Option<String> {
        let named = |p: &str| {
            let p = p.trim_start_matches("./");
            p == PROJECT_FILE
                || p.starts_with(".agent-tui/hooks/")
                || self.hooks.iter().any(|h| {
                    h.scripts
                        .iter()
                        .any(|(arg, _)| arg.trim_start_matches("./") == p)
                })
        };
        paths.find(|p| named(p)).map(|p| {
            format!(
                "{p} is a hook file: hooks run the user's commands, so only the user edits \
                 them; nothing from this call was proposed"
            )
        })
    }

    /// `hooks list`.
    pub fn list(&self) -> Vec<HookInfo> {
        self.hooks
            .iter()
            .map(|h| {
                let (def, scripts) = match &h.written {
                    Some((def, scripts)) => (def, scripts.clone()),
                    None => (&h.def, Vec::new()),
                };
                HookInfo {
                    name: def.name.clone(),
                    event: def.on.as_str().into(),
                    source: if h.trust == HookTrust::Config {
                        "config".into()
                    } else {
                        PROJECT_FILE.into()
                    },
                    trust: h.trust,
                    def_sha256: def_sha256(def),
                    command: def.command.clone(),
                    timeout_secs: def.timeout_secs,
                    on_error: match def.on_error() {
                        crate::config::OnError::Block => "block".into(),
                        crate::config::OnError::Pass => "pass".into(),
                    },
                    network: def.network,
                    scripts,
                }
            })
            .collect()
    }
}

impl Called<'_> {
    /// What a file event (`apply.before`, `apply.after`,
    /// `verify.completed`) offers a `match`: the files it is about.
    pub fn files(paths: &[String]) -> Called<'static> {
        Called {
            tool: "",
            command: None,
            paths: paths.to_vec(),
        }
    }

    /// The input as a `match` sees it, for "it matched nothing".
    pub fn describe(&self) -> String {
        let paths = if self.paths.is_empty() {
            "no paths".to_string()
        } else {
            format!("paths {}", self.paths.join(", "))
        };
        match (self.tool, self.command) {
            ("", _) => paths,
            (tool, None) => format!("tool {tool}, {paths}"),
            (tool, Some(line)) => format!("tool {tool}, command {line:?}, {paths}"),
        }
    }
}

impl Hook {
    /// The files of a file event this hook is given (its `{files}`): those
    /// its `match.path` takes, every one without it; `None` when it takes
    /// none of them (it does not run).
    pub fn files_of(&self, files: &[String]) -> Option<Vec<String>> {
        let Some(glob) = self.def.matcher.path.as_deref() else {
            return Some(files.to_vec());
        };
        let taken: Vec<String> = files
            .iter()
            .filter(|f| glob_matches(glob, f))
            .cloned()
            .collect();
        (!taken.is_empty()).then_some(taken)
    }
}

/// Whether hook `h`'s `match` takes `called` (no match: every call; not a
/// call: hooks without a match only).
pub(crate) fn matches(h: &Hook, called: Option<&Called<'_>>) -> bool {
    let m = &h.def.matcher;
    if m.is_any() {
        return true;
    }
    let Some(c) = called else { return false };
    let tool = m.tool.as_deref().is_none_or(|g| glob_matches(g, c.tool));
    let command = m
        .command
        .as_deref()
        .is_none_or(|g| c.command.is_some_and(|line| glob_matches(g, line)));
    let path = m
        .path
        .as_deref()
        .is_none_or(|g| c.paths.iter().any(|p| glob_matches(g, p)));
    tool && command && path
}
