//! `agent-tui tool NAME JSON [--root PATH]`: one tool call, JSON out.

use std::io::Read;

use serde_json::{Value, json};

use super::Exit;
use super::args::{GlobalArgs, ToolArgs};
use super::context::{builder, run, start};
use crate::agent::Recording;
use crate::protocol::{Command, EngineError, Reply};

pub fn run_tool(global: &GlobalArgs, args: ToolArgs) -> Exit {
    // A tool called by hand has no session; what a command changes is a
    // checkpoint and the call is audited, as a job's are (so the store is
    // opened unless only the list is asked for).
    let recording = if args.list {
        Recording::Off
    } else {
        Recording::Home
    };
    let (rt, engine) = match start(builder(global, &args.root).recording(recording)) {
        Ok(started) => started,
        Err(exit) => return exit,
    };
    if args.list {
        let tools = engine.tools();
        return run(rt, engine, |_| async move {
            print_json(&json!({ "tools": tools }), Exit::Ok)
        });
    }
    let name = args.name.unwrap_or_default();
    let arguments = read_arguments(args.json.as_deref());
    run(rt, engine, |engine| async move {
        let arguments = match arguments {
            Ok(a) => a,
            Err(error) => return print_json(&error, Exit::Failed),
        };
        match engine.command(Command::CallTool { name, arguments }).await {
            Ok(Reply::Tool { result }) => print_json(&result, Exit::Ok),
            Ok(_) => print_json(&Value::Null, Exit::Ok),
            Err(EngineError::Failed {
                detail: Some(error),
                ..
            }) => print_json(&error, Exit::Failed),
            Err(e) => print_json(
                &json!({"error": {"code": e.code(), "message": e.to_string()}}),
                Exit::Failed,
            ),
        }
    })
}

/// The JSON argument text: given, from stdin for "-", or `{}` when absent;
/// a tool error's JSON when it is not JSON.
fn read_arguments(text: Option<&str>) -> Result<Value, Value> {
    let not_json = |message: String| json!({"error": {"code": "invalid_arguments", "message": format!("invalid arguments: {message}")}});
    let owned;
    let text = match text {
        None => "{}",
        Some("-") => {
            let mut buf = String::new();
            std::io::stdin()
                .read_to_string(&mut buf)
                .map_err(|e| not_json(format!("cannot read stdin: {e}")))?;
            owned = buf;
            &owned
        }
        Some(text) => text,
    };
    serde_json::from_str(text).map_err(|e| {
        not_json(format!(
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
