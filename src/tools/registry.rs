//! The tool registry: looks tools up by name, lists them per mode, and
//! validates arguments against each tool's JSON Schema before it runs.

use std::sync::OnceLock;

use jsonschema::Validator;
use jsonschema::error::ValidationErrorKind;
use serde::Serialize;
use serde_json::Value;

use super::{Tool, ToolContext, ToolError};
use crate::protocol::{Mode, Tier};

/// What the model (and `agent-tui tool --list`) is told about a tool.
#[derive(Debug, Clone, Serialize)]
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    /// JSON Schema of the arguments object.
    pub schema: Value,
    pub tier: Tier,
    pub modes: Vec<Mode>,
}

impl ToolSpec {
    /// A read-tier tool, offered in every mode.
    pub fn read(name: &'static str, description: &'static str, schema: Value) -> ToolSpec {
        ToolSpec {
            name,
            description,
            schema,
            tier: Tier::Read,
            modes: Mode::ALL.to_vec(),
        }
    }
}

struct Registered {
    spec: ToolSpec,
    /// Compiled on the first call: an engine that only browses never pays
    /// for the schema compiler (a test compiles every built-in one).
    validator: OnceLock<Result<Validator, String>>,
    tool: Box<dyn Tool>,
}

impl Registered {
    fn validator(&self) -> Result<&Validator, String> {
        self.validator
            .get_or_init(|| {
                jsonschema::validator_for(&self.spec.schema)
                    .map_err(|e| format!("schema of tool `{}` is invalid: {e}", self.spec.name))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    fn check(&self, args: &Value) -> Result<(), ToolError> {
        let validator = self
            .validator()
            .map_err(|e| ToolError::invalid("(schema)", e))?;
        match validator.iter_errors(args).next() {
            Some(error) => Err(describe(&error, &self.spec.schema)),
            None => Ok(()),
        }
    }
}

pub struct Registry {
    tools: Vec<Registered>,
}

impl Registry {
    /// The built-in tools. Fails only if a name is registered twice.
    pub fn builtin() -> Result<Registry, String> {
        let mut registry = Registry { tools: Vec::new() };
        registry.register(Box::new(super::list_files::ListFiles))?;
        registry.register(Box::new(super::read_file::ReadFile))?;
        registry.register(Box::new(super::search_project::SearchProject))?;
        registry.register(Box::new(super::list_scopes::ListScopes))?;
        registry.register(Box::new(super::clarify_user::ClarifyUser))?;
        registry.register(Box::new(super::propose_edits::ProposeEdits))?;
        registry.register(Box::new(super::run_command::RunCommand))?;
        Ok(registry)
    }

    /// The built-in tools plus those that depend on the agent root and the
    /// configuration: the code index's tools unless it is off, the git
    /// tools inside a git work tree.
    pub fn for_root(
        root: &std::path::Path,
        config: &crate::config::Config,
    ) -> Result<Registry, String> {
        let mut registry = Registry::builtin()?;
        if config.index.enabled {
            registry.register(Box::new(super::code_search::CodeSearch))?;
            registry.register(Box::new(super::find_symbol::FindSymbol))?;
            registry.register(Box::new(super::find_references::FindReferences))?;
            registry.register(Box::new(super::file_outline::FileOutline))?;
            registry.register(Box::new(super::repo_map::RepoMap))?;
        }
        super::git::register(&mut registry, root, config.git.allow_push)?;
        registry.register(Box::new(super::web_fetch::WebFetch))?;
        if config.web.search_url.is_some() {
            registry.register(Box::new(super::web_search::WebSearch))?;
        }
        Ok(registry)
    }

    pub fn register(&mut self, tool: Box<dyn Tool>) -> Result<(), String> {
        let spec = tool.spec();
        if self.get(spec.name).is_some() {
            return Err(format!("tool `{}` is registered twice", spec.name));
        }
        self.tools.push(Registered {
            spec,
            validator: OnceLock::new(),
            tool,
        });
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&ToolSpec> {
        self.tools.iter().map(|t| &t.spec).find(|s| s.name == name)
    }

    pub fn specs(&self) -> impl Iterator<Item = &ToolSpec> {
        self.tools.iter().map(|t| &t.spec)
    }

    /// The tools offered to the model in `mode`.
    pub fn specs_for(&self, mode: Mode) -> impl Iterator<Item = &ToolSpec> {
        self.specs().filter(move |s| s.modes.contains(&mode))
    }

    /// Validates `args` against the tool's schema, then runs it.
    pub fn call(&self, name: &str, args: Value, ctx: &ToolContext<'_>) -> Result<Value, ToolError> {
        let entry = self.entry(name)?;
        entry.check(&args)?;
        entry.tool.run(ctx, args)
    }

    /// Checks `args` against the schema of tool `name` without running it.
    pub fn validate(&self, name: &str, args: &Value) -> Result<(), ToolError> {
        self.entry(name)?.check(args)
    }

    fn entry(&self, name: &str) -> Result<&Registered, ToolError> {
        self.tools
            .iter()
            .find(|t| t.spec.name == name)
            .ok_or_else(|| self.unknown_tool(name))
    }

    /// The error for a tool name nobody registered, with the closest name.
    pub fn unknown_tool(&self, name: &str) -> ToolError {
        let known: Vec<String> = self.specs().map(|s| s.name.to_string()).collect();
        let suggestion = known
            .iter()
            .map(|k| (strsim::jaro_winkler(name, k), k))
            .filter(|(score, _)| *score > 0.8)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, k)| k.clone());
        let git_offered = known.iter().any(|k| k.starts_with("git_"));
        let why = (name.starts_with("git_") && !git_offered).then_some(
            "the git tools are offered only in a git work tree, and this root is in none",
        );
        ToolError::UnknownTool {
            name: name.to_string(),
            known,
            suggestion,
            why,
        }
    }
}

/// Turns a schema violation into an error that names the offending field.
fn describe(error: &jsonschema::ValidationError<'_>, schema: &Value) -> ToolError {
    let at = error.instance_path().to_string();
    let at = at.trim_start_matches('/').replace('/', ".");
    match error.kind() {
        ValidationErrorKind::Required { property } => {
            let field = property.as_str().unwrap_or_default();
            ToolError::invalid(field, "is required but missing")
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let field = unexpected.join(", ");
            let known: Vec<&str> = schema["properties"]
                .as_object()
                .map(|props| props.keys().map(String::as_str).collect())
                .unwrap_or_default();
            ToolError::invalid(
                &field,
                format!(
                    "is not an argument of this tool; its arguments are: {}",
                    known.join(", ")
                ),
            )
        }
        ValidationErrorKind::Type { .. } if at.is_empty() => ToolError::ArgumentsNotJson(
            "arguments must be a JSON object, e.g. {\"file_path\": \"src/main.rs\"}".into(),
        ),
        _ => ToolError::invalid(
            if at.is_empty() { "(arguments)" } else { &at },
            error.to_string(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::Workspace;
    use serde_json::json;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    struct Probe(Arc<AtomicBool>);

    impl Tool for Probe {
        fn spec(&self) -> ToolSpec {
            ToolSpec {
                name: "probe",
                description: "test tool",
                schema: json!({
                    "type": "object",
                    "properties": {"n": {"type": "integer", "minimum": 1}, "s": {"type": "string"}},
                    "required": ["s"],
                    "additionalProperties": false
                }),
                tier: Tier::Write,
                modes: vec![Mode::Agent],
            }
        }

        fn run(&self, _: &ToolContext<'_>, _: Value) -> Result<Value, ToolError> {
            self.0.store(true, Ordering::SeqCst);
            Ok(json!({"ran": true}))
        }
    }

    fn field_of(e: ToolError) -> String {
        match e {
            ToolError::InvalidArgument { field, .. } => field,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    #[cfg(unix)]
    fn every_built_in_schema_compiles() {
        let dir = tempfile::tempdir().unwrap();
        std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(dir.path())
            .status()
            .unwrap();
        let mut registry = Registry::builtin().unwrap();
        crate::tools::git::register(&mut registry, dir.path(), true).unwrap();
        assert!(registry.tools.len() > 10, "the git tools are in");
        for tool in &registry.tools {
            tool.validator().unwrap();
        }
    }

    #[test]
    fn a_broken_schema_is_a_clear_error_on_call() {
        struct Broken;
        impl Tool for Broken {
            fn spec(&self) -> ToolSpec {
                ToolSpec::read("broken", "test tool", json!({"type": 12}))
            }
            fn run(&self, _: &ToolContext<'_>, _: Value) -> Result<Value, ToolError> {
                Ok(json!({}))
            }
        }
        let mut registry = Registry { tools: Vec::new() };
        registry.register(Box::new(Broken)).unwrap();
        let err = registry.validate("broken", &json!({})).unwrap_err();
        assert!(
            err.to_string()
                .contains("schema of tool `broken` is invalid"),
            "{err}"
        );
    }

    #[test]
    fn arguments_are_validated_before_the_tool_runs() {
        let ran = Arc::new(AtomicBool::new(false));
        let mut registry = Registry::builtin().unwrap();
        registry.register(Box::new(Probe(ran.clone()))).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let config = crate::config::Config::default();
        let ctx = ToolContext::new(&ws, &config);
        let call = |args: Value| registry.call("probe", args, &ctx);
        assert_eq!(field_of(call(json!({})).unwrap_err()), "s");
        assert_eq!(field_of(call(json!({"s": 1})).unwrap_err()), "s");
        assert_eq!(field_of(call(json!({"s": "x", "n": 0})).unwrap_err()), "n");
        assert_eq!(
            field_of(call(json!({"s": "x", "zz": 0})).unwrap_err()),
            "zz"
        );
        assert!(matches!(
            call(json!("s")).unwrap_err(),
            ToolError::ArgumentsNotJson(_)
        ));
        assert!(
            !ran.load(Ordering::SeqCst),
            "the tool must not run on bad arguments"
        );
        assert_eq!(
            call(json!({"s": "x", "n": 2})).unwrap(),
            json!({"ran": true})
        );
        assert!(ran.load(Ordering::SeqCst));
    }

    #[test]
    fn modes_and_tiers_are_declared() {
        let ran = Arc::new(AtomicBool::new(false));
        let mut registry = Registry::builtin().unwrap();
        registry.register(Box::new(Probe(ran))).unwrap();
        let ask: Vec<_> = registry.specs_for(Mode::Ask).map(|s| s.name).collect();
        assert_eq!(
            ask,
            [
                "list_files",
                "read_file",
                "search_project",
                "list_scopes",
                "clarify_user"
            ]
        );
        let agent: Vec<_> = registry.specs_for(Mode::Agent).map(|s| s.name).collect();
        assert!(agent.contains(&"probe"));
        assert_eq!(registry.get("probe").map(|s| s.tier), Some(Tier::Write));
        assert!(
            registry.register(Box::new(Probe(Arc::default()))).is_err(),
            "duplicate name"
        );
    }
}
