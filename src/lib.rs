//! agent-tui: a Cursor-style coding agent for the terminal. This crate is the
//! engine (config, sandboxed workspace, tools, storage) plus its front ends.

pub mod agent; // the engine: jobs, the agent loop, prompts, events
pub mod checkpoint; // checkpoints before every apply or rollback; hard and scoped rollback
pub mod cli; // headless front ends: argument parsing and one module per subcommand
pub mod config; // config file types, lookup order, validation, provider detection
pub mod context; // the context window: token counts, tool-result caps, compaction planning
pub mod eval; // `agent-tui eval`: suites, tasks run through the engine, metrics, reports
pub mod index; // the code index: ranked search, tree-sitter symbols, a file graph, in the state home
pub mod llm; // language model providers behind one trait, one adapter per wire protocol
pub mod mcp; // MCP servers: started at the first job that offers them, tools mcp__s__t
pub mod platform; // what differs by OS: confinement, watching, process trees, file modes
pub mod protocol; // shared vocabulary between front ends and engine (serde types only)
pub mod review; // proposed edits -> diff bundle -> decisions -> hash-checked apply
pub mod server; // `agent-tui serve`: the agent over HTTP + SSE, a front end on the door
pub mod store; // everything the tool keeps on disk outside the project
pub mod tools; // tool registry (name, schema, tier, modes) and one file per tool
pub mod tui; // the terminal front end: app state, keymap, tree, rendering (ratatui)
pub mod web; // web pages for the model: public addresses only, HTML made Markdown here
pub mod workspace; // the agent root: sandboxed paths, walking, search, text decoding
