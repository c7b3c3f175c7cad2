//! `agent-tui tool NAME JSON [--root PATH]`: one tool call, JSON out.

use std::io::Read;

use serde_json::Value;

use super::args::{GlobalArgs, ToolArgs};
use super::{Exit, load_config};
use crate::tools::{Registry, ToolContext, ToolError};

pub fn run(global: &GlobalArgs, args: ToolArgs) -> Exit {
    let loaded = match load_config(global) {
        Ok(c) => c,
        Err(exit) => return exit,
    };
    let workspace = match super::context::open_workspace(global, &loaded.config, &args.root) {
        Ok(w) => w,
        Err(exit) => return exit,
    };
    // The tools this root offers: the git tools only inside a work tree.
    let registry = match Registry::for_root(workspace.root(), &loaded.config) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("agent-tui: internal error: {e}");
            return Exit::Failed;
        }
    };
    if args.list {
        let specs: Vec<_> = registry.specs().collect();
        return print_json(&serde_json::json!({ "tools": specs }), Exit::Ok);
    }
    let name = args.name.unwrap_or_default();
    let result = read_arguments(args.json.as_deref()).and_then(|value| {
        let ctx = ToolContext::new(&workspace, &loaded.config);
        registry.call(&name, value, &ctx)
    });
    match result {
        Ok(value) => print_json(&value, Exit::Ok),
        Err(e) => print_json(&e.to_json(), Exit::Failed),
    }
}

/// The JSON argument text: given, from stdin for "-", or `{}` when absent.
fn read_arguments(text: Option<&str>) -> Result<Value, ToolError> {
    let owned;
    let text = match text {
        None => "{}",
        Some("-") => {
            let mut buf = String::new();
            std::io::stdin()
                .read_to_string(&mut buf)
                .map_err(|e| ToolError::ArgumentsNotJson(format!("cannot read stdin: {e}")))?;
            owned = buf;
            &owned
        }
        Some(text) => text,
    };
    serde_json::from_str(text).map_err(|e| {
        ToolError::ArgumentsNotJson(format!(
            "not valid JSON ({e}); pass one JSON object, e.g. '{{\"file_path\": \"README.md\"}}'"
        ))
    })
}

fn print_json(value: &Value, exit: Exit) -> Exit {
    match serde_json::to_string(value) {
        Ok(text) => {
            println!("{text}");
            exit
        }
        Err(e) => {
            eprintln!("agent-tui: cannot encode result: {e}");
            Exit::Failed
        }
    }
}
