//! The tool registry: looks tools up by name, lists them per mode, and
//! validates arguments against each tool's JSON Schema before it runs.

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

struct Registered {
    spec: ToolSpec,
    validator: Validator,
    tool: Box<dyn Tool>,
}

pub struct Registry {
    tools: Vec<Registered>,
}

impl Registry {
    /// The built-in tools. Fails only if a built-in schema is itself invalid.
    pub fn builtin() -> Result<Registry, String> {
        let mut registry = Registry { tools: Vec::new() };
        registry.register(Box::new(super::list_files::ListFiles))?;
        registry.register(Box::new(super::read_file::ReadFile))?;
        registry.register(Box::new(super::search_project::SearchProject))?;
        Ok(registry)
    }

    pub fn register(&mut self, tool: Box<dyn Tool>) -> Result<(), String> {
        let spec = tool.spec();
        if self.get(spec.name).is_some() {
            return Err(format!("tool `{}` is registered twice", spec.name));
        }
        let validator = jsonschema::validator_for(&spec.schema)
            .map_err(|e| format!("schema of tool `{}` is invalid: {e}", spec.name))?;
        self.tools.push(Registered {
            spec,
            validator,
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
        let Some(entry) = self.tools.iter().find(|t| t.spec.name == name) else {
            return Err(self.unknown(name));
        };
        if let Some(error) = entry.validator.iter_errors(&args).next() {
            return Err(describe(&error, &entry.spec.schema));
        }
        entry.tool.run(ctx, args)
    }

    fn unknown(&self, name: &str) -> ToolError {
        let known: Vec<String> = self.specs().map(|s| s.name.to_string()).collect();
        let suggestion = known
            .iter()
            .map(|k| (strsim::jaro_winkler(name, k), k))
            .filter(|(score, _)| *score > 0.8)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, k)| k.clone());
        ToolError::UnknownTool {
            name: name.to_string(),
            known,
            suggestion,
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
