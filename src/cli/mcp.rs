//! `agent-tui mcp list [--json]`: starts each configured MCP server the way
//! a job would, shows its state and tools, then stops them.

use serde_json::json;

use super::Exit;
use super::args::{GlobalArgs, McpAction, McpArgs};
use super::context::{builder, run, start};
use crate::agent::Recording;

pub fn run_mcp(global: &GlobalArgs, args: &McpArgs) -> Exit {
    let McpAction::List { json, root } = &args.action;
    // Listing servers records nothing.
    let (rt, engine) = match start(builder(global, root).recording(Recording::Off)) {
        Ok(started) => started,
        Err(exit) => return exit,
    };
    let json = *json;
    run(rt, engine, |engine| async move {
        let servers = engine.mcp_servers().await;
        let failed = servers.iter().any(|s| s.state["state"] == "failed");
        if json {
            let servers: Vec<_> = servers
                .iter()
                .map(|s| {
                    let tools: Vec<_> = s
                        .tools
                        .iter()
                        .map(|t| json!({"name": t.name, "tool": t.tool, "description": t.description}))
                        .collect();
                    let mut server = json!({
                        "name": s.name,
                        "transport": s.transport,
                        "tools": tools,
                    });
                    if let (Some(obj), Some(state)) = (server.as_object_mut(), s.state.as_object()) {
                        obj.extend(state.clone());
                    }
                    server
                })
                .collect();
            println!("{}", json!({ "servers": servers }));
        } else if servers.is_empty() {
            println!("no MCP servers are configured ([mcp_servers.NAME] in the config)");
        } else {
            for s in &servers {
                println!("{}: {}", s.name, s.label);
                for t in &s.tools {
                    let first = t.description.lines().next().unwrap_or_default();
                    println!("  {}  {}", t.name, first);
                }
            }
        }
        if failed { Exit::Failed } else { Exit::Ok }
    })
}
