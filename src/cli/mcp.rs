//! `agent-tui mcp list [--json]`: starts each configured MCP server the way
//! a job would, shows its state and tools, then stops them.

use serde_json::json;

use super::Exit;
use super::args::{GlobalArgs, McpAction, McpArgs};
use super::context::runtime;
use super::load_config;
use crate::mcp::{McpHub, ServerState};
use crate::store::StateDirs;

pub fn run(global: &GlobalArgs, args: &McpArgs) -> Exit {
    let McpAction::List { json, root } = &args.action;
    let config = match load_config(global) {
        Ok(c) => c.config,
        Err(exit) => return exit,
    };
    let workspace = match super::context::open_workspace(global, &config, root) {
        Ok(w) => w,
        Err(exit) => return exit,
    };
    let runtime = match runtime() {
        Ok(r) => r,
        Err(exit) => return exit,
    };
    let logs = StateDirs::locate(&|k| std::env::var(k).ok()).map(|d| d.home.join("logs"));
    let hub = McpHub::new(&config, workspace.root().to_path_buf(), logs);
    let (states, tools) = runtime.block_on(async {
        let states = hub.start_all().await;
        let tools = hub.tools().await;
        hub.shutdown().await;
        (states, tools)
    });
    let failed = states
        .values()
        .any(|s| matches!(s, ServerState::Failed { .. }));
    if *json {
        let servers: Vec<_> = states
            .iter()
            .map(|(name, state)| {
                let http = config
                    .mcp_servers
                    .get(name)
                    .is_some_and(|c| c.url.is_some());
                let mine: Vec<_> = tools
                    .iter()
                    .filter(|t| &t.server == name)
                    .map(|t| json!({"name": t.name, "tool": t.tool, "description": t.description}))
                    .collect();
                let mut server = json!({
                    "name": name,
                    "transport": if http { "http" } else { "stdio" },
                    "tools": mine,
                });
                if let (Some(obj), Ok(serde_json::Value::Object(st))) =
                    (server.as_object_mut(), serde_json::to_value(state))
                {
                    obj.extend(st);
                }
                server
            })
            .collect();
        println!("{}", json!({ "servers": servers }));
    } else if states.is_empty() {
        println!("no MCP servers are configured ([mcp_servers.NAME] in the config)");
    } else {
        for (name, state) in &states {
            println!("{name}: {}", state.label());
            for t in tools.iter().filter(|t| &t.server == name) {
                let first = t.description.lines().next().unwrap_or_default();
                println!("  {}  {}", t.name, first);
            }
        }
    }
    if failed { Exit::Failed } else { Exit::Ok }
}
