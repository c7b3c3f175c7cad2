//! The command line of SPEC section 2, declared with clap.

use std::path::PathBuf;

use clap::builder::PossibleValue;
use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};

use crate::protocol::Mode;

#[derive(Debug, Parser)]
#[command(
    name = "agent-tui",
    version,
    about = "A coding agent for the terminal: chat in Ask/Plan/Agent mode, review proposed edits hunk by hunk, roll back any apply.",
    long_about = None,
    after_help = "Run `agent-tui PATH` to open the TUI on a project folder (the agent root). \
                  Tools can never read or write outside it."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    #[command(subcommand)]
    pub command: Option<Command>,

    /// Project folder to open; it becomes the agent root
    #[arg(value_name = "PATH")]
    pub path: Option<PathBuf>,

    /// Reopen the latest session of this agent root
    #[arg(long = "continue", conflicts_with = "resume")]
    pub continue_session: bool,

    /// Resume a session: by ID, or pick one from a list when ID is omitted
    #[arg(long, value_name = "ID", num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Config file to use (else $AGENT_TUI_CONFIG, else ~/.config/agent-tui/config.toml)
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Provider to use, by name from the config's [providers.*] tables
    #[arg(long, global = true, value_name = "NAME")]
    pub provider: Option<String>,

    /// Model to use instead of the provider's configured one
    #[arg(long, global = true, value_name = "NAME")]
    pub model: Option<String>,

    /// Routing: remote, local or hybrid_auto (overrides [routing] mode)
    #[arg(long, global = true, value_name = "MODE")]
    pub routing: Option<String>,

    /// Another folder beside the agent root, reached as @<folder name>/...;
    /// read-only unless DIR:rw (repeatable; adds to [workspace] extra_roots)
    #[arg(long = "add-dir", global = true, value_name = "DIR[:rw]")]
    pub add_dir: Vec<String>,

    /// Log detail into <state home>/logs/agent-tui.log (-v, -vv, -vvv)
    #[arg(short, long, global = true, action = ArgAction::Count)]
    pub verbose: u8,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one job headless; PROMPT "-" reads it from stdin
    Exec(ExecArgs),
    /// Run an eval suite once per routing mode (--routing remote,local,hybrid_auto)
    Eval(EvalArgs),
    /// Call one tool directly and print its JSON result
    Tool(ToolArgs),
    /// The code index: status (default), build, rebuild, clear
    Index(IndexArgs),
    /// List or show the sessions of an agent root
    Sessions(SessionsArgs),
    /// Show the pending diff bundle, record hunk decisions, apply
    Review(ReviewArgs),
    /// List or show the checkpoints of an agent root
    Checkpoints(ListShowArgs),
    /// Roll back a checkpoint, whole (hard) or only some hunks (scoped)
    Rollback(RollbackArgs),
    /// Audit log tools
    Audit(AuditArgs),
    /// Check configuration, provider reachability and paths
    Doctor(DoctorArgs),
    /// The store: check its integrity, back it up
    Store(StoreArgs),
    /// The configured MCP servers: each started, its state and tools
    Mcp(McpArgs),
    /// Hooks, your own commands at the agent's named points: list them, trust a project's, test one event's
    Hooks(HooksArgs),
    /// Serve the agent over HTTP + SSE to a team or a web page; `serve token` manages its tokens
    Serve(ServeArgs),
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(subcommand)]
    pub action: Option<ServeAction>,
    /// Address and port to listen on (default: [server] bind, 127.0.0.1:8787;
    /// port 0 picks a free one)
    #[arg(long, value_name = "ADDR:PORT")]
    pub bind: Option<String>,
    /// Write the port listened on to FILE (with --bind ...:0)
    #[arg(long, value_name = "FILE")]
    pub port_file: Option<PathBuf>,
    /// The folder served as workspace "default" when [server] lists none
    #[arg(long, default_value = ".", value_name = "PATH")]
    pub root: PathBuf,
}

#[derive(Debug, Subcommand)]
pub enum ServeAction {
    /// The server's bearer tokens (stored as sha256 only)
    Token {
        #[command(subcommand)]
        action: TokenAction,
    },
}

#[derive(Debug, Subcommand)]
pub enum TokenAction {
    /// Make a token for NAME and print it once
    Add {
        name: String,
        /// admin sees every session; user only their own
        #[arg(long, default_value = "user", value_parser = ["admin", "user"])]
        role: String,
    },
    /// The tokens by name, with their role and whether they are revoked
    List {
        /// JSON output
        #[arg(long)]
        json: bool,
    },
    /// Revoke NAME's token (refused at once by every host sharing the store)
    Revoke { name: String },
}

impl ValueEnum for Mode {
    fn value_variants<'a>() -> &'a [Self] {
        &Mode::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.as_str()))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ApplyPolicy {
    /// Leave proposed edits pending for `agent-tui review`
    None,
    /// Accept and apply every proposed hunk
    All,
}

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// The instruction; "-" reads it from stdin
    pub prompt: String,
    /// Agent root
    #[arg(long, default_value = ".", value_name = "PATH")]
    pub root: PathBuf,
    #[arg(long, value_enum, default_value_t = Mode::Agent)]
    pub mode: Mode,
    /// Print events as JSON lines on stdout
    #[arg(long)]
    pub json: bool,
    /// What to do with proposed edits
    #[arg(long, value_enum, default_value_t = ApplyPolicy::None)]
    pub apply: ApplyPolicy,
    /// With --apply all: run the project's check ([verify]) on the hunks
    /// in a scratch copy first, and apply only if it passes (exit 1 if not)
    #[arg(long)]
    pub verify: bool,
    /// Add the job to this session
    #[arg(long, value_name = "ID", conflicts_with = "continue_session")]
    pub session: Option<String>,
    /// Add the job to the latest session of the root
    #[arg(long = "continue")]
    pub continue_session: bool,
    /// Tool-call budget for this job (overrides agent.max_tool_calls_per_job)
    #[arg(long, value_name = "N")]
    pub max_tool_calls: Option<u32>,
    /// Answer to give if the model asks a clarifying question
    #[arg(long, value_name = "TEXT")]
    pub answer: Option<String>,
    /// An image to send with the prompt (PNG, JPEG, GIF or WebP, at most
    /// 5 MB); repeatable
    #[arg(long = "image", value_name = "FILE")]
    pub images: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The suite folder (tasks/<name>/task.toml and files/)
    pub suite: PathBuf,
    /// Tasks run at once
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub jobs: u32,
    /// Where report.json and report.md go (default eval-out/<timestamp>)
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also print report.json on stdout
    #[arg(long)]
    pub json: bool,
    /// Also run every task with verify-and-repair (the project's check on
    /// the accepted hunks, a failure sent back to the model up to twice,
    /// then the apply): the report shows both side by side
    #[arg(long)]
    pub verify: bool,
    /// Longest a task's job (and each of its command checks) may take before it counts as failed
    #[arg(long, default_value_t = 600, value_name = "SECS")]
    pub task_timeout: u64,
}

#[derive(Debug, Args)]
pub struct ToolArgs {
    /// Tool name, e.g. read_file
    #[arg(required_unless_present = "list")]
    pub name: Option<String>,
    /// Arguments as a JSON object; "-" reads them from stdin (default "{}")
    pub json: Option<String>,
    /// Agent root
    #[arg(long, default_value = ".", value_name = "PATH")]
    pub root: PathBuf,
    /// Print every registered tool (name, tier, modes, schema) as JSON
    #[arg(long, conflicts_with_all = ["name", "json"])]
    pub list: bool,
}

#[derive(Debug, Args)]
pub struct IndexArgs {
    #[command(subcommand)]
    pub action: Option<IndexAction>,
    /// Agent root
    #[arg(long, default_value = ".", value_name = "PATH", global = true)]
    pub root: PathBuf,
    /// JSON output
    #[arg(long, global = true)]
    pub json: bool,
    /// While building: `{"done": N, "total": M}` on stderr every quarter second
    #[arg(long, global = true, hide = true)]
    pub progress: bool,
}

#[derive(Debug, Clone, Copy, Subcommand)]
pub enum IndexAction {
    /// What is stored, and whether the tree changed since (the default)
    Status,
    /// Build the index if it is missing or out of date
    Build,
    /// Build the index again from nothing
    Rebuild,
    /// Remove the stored index (the next search builds it again)
    Clear,
}

/// Arguments shared by `sessions` and `checkpoints`.
#[derive(Debug, Args)]
pub struct ListShowArgs {
    #[command(subcommand)]
    pub action: Option<ListOrShow>,
    /// Agent root
    #[arg(long, default_value = ".", value_name = "PATH", global = true)]
    pub root: PathBuf,
    /// JSON output
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SessionsArgs {
    #[command(subcommand)]
    pub action: Option<SessionAction>,
    /// Agent root
    #[arg(long, default_value = ".", value_name = "PATH", global = true)]
    pub root: PathBuf,
    /// JSON output
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum SessionAction {
    /// One line per session (the default)
    List,
    /// One session in full
    Show {
        /// Its id
        id: String,
    },
    /// Delete a session (sessions are kept until deleted or `[sessions] max_age_days`)
    Delete {
        /// Its id
        id: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum ListOrShow {
    /// One line per item (the default)
    List,
    /// One item in full
    Show {
        /// Its id
        id: String,
    },
}

#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// Session whose pending bundle to show (default: the latest)
    pub session: Option<String>,
    /// Agent root
    #[arg(long, default_value = ".", value_name = "PATH")]
    pub root: PathBuf,
    /// JSON output
    #[arg(long)]
    pub json: bool,
    /// Hunks to accept, e.g. h_1,h_2
    #[arg(long, value_delimiter = ',', value_name = "HUNKS")]
    pub accept: Vec<String>,
    /// Hunks to reject
    #[arg(long, value_delimiter = ',', value_name = "HUNKS")]
    pub reject: Vec<String>,
    /// Accept every hunk not explicitly rejected
    #[arg(long)]
    pub accept_all: bool,
    /// Apply the accepted hunks (hash-checked; exit 3 on conflict)
    #[arg(long)]
    pub apply: bool,
    /// Run the project's check ([verify]) on the accepted hunks in a
    /// scratch copy first (exit 1 if it fails; --apply then applies only
    /// if it passes)
    #[arg(long)]
    pub verify: bool,
    /// With --verify: send a failure back to the model for a corrected
    /// proposal, and show it
    #[arg(long, requires = "verify")]
    pub feedback: bool,
    /// With --apply: apply even though the last verify of these same
    /// decisions failed (without it, such an apply is refused)
    #[arg(long, requires = "apply")]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct RollbackArgs {
    /// Checkpoint id
    pub checkpoint: String,
    /// Roll back only these hunks (scoped), e.g. h_1,h_2
    #[arg(long, value_delimiter = ',', value_name = "HUNKS")]
    pub hunks: Vec<String>,
    /// Roll back only these files, each to its bytes before the checkpoint,
    /// e.g. src/a.rs,gen/b.rs
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "FILES",
        conflicts_with = "hunks"
    )]
    pub files: Vec<String>,
    /// Agent root
    #[arg(long, default_value = ".", value_name = "PATH")]
    pub root: PathBuf,
}

#[derive(Debug, Args)]
pub struct AuditArgs {
    #[command(subcommand)]
    pub action: AuditAction,
}

#[derive(Debug, Subcommand)]
pub enum AuditAction {
    /// Check the audit log's hash chain; exit 1 with the first broken record
    Verify {
        /// Agent root
        #[arg(long, default_value = ".", value_name = "PATH")]
        root: PathBuf,
    },
    /// The audit log's records, oldest first (the newest --limit)
    List {
        /// Agent root
        #[arg(long, default_value = ".", value_name = "PATH")]
        root: PathBuf,
        /// Only the records a request of this server user caused
        #[arg(long, value_name = "NAME")]
        user: Option<String>,
        /// Only this session's records
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// The newest this many records
        #[arg(long, default_value_t = 200, value_name = "N")]
        limit: usize,
        /// One JSON object: {"records": [...]}
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub struct McpArgs {
    #[command(subcommand)]
    pub action: McpAction,
}

#[derive(Debug, Subcommand)]
pub enum McpAction {
    /// Start each enabled server and show its state and tools (exit 1 if one failed)
    List {
        /// JSON output
        #[arg(long)]
        json: bool,
        /// Agent root (servers run there)
        #[arg(long, default_value = ".", value_name = "PATH")]
        root: PathBuf,
    },
}

#[derive(Debug, Args)]
pub struct HooksArgs {
    #[command(subcommand)]
    pub action: HooksAction,
}

#[derive(Debug, Subcommand)]
pub enum HooksAction {
    /// The config's and the project's hooks, with their trust (exit 2 if
    /// the project's file is wrong)
    List {
        /// JSON output
        #[arg(long)]
        json: bool,
        /// Agent root
        #[arg(long, default_value = ".", value_name = "PATH")]
        root: PathBuf,
    },
    /// Trust the project's hooks (.agent-tui/hooks.toml) as they are now:
    /// the definition and each script it names are pinned by sha256
    Trust {
        /// Only this hook
        name: Option<String>,
        /// Agent root
        #[arg(long, default_value = ".", value_name = "PATH")]
        root: PathBuf,
    },
    /// Run one event's hooks as a job would, keeping nothing (exit 0 pass,
    /// 1 block, 2 a config or usage error)
    Test {
        /// The event (tool.before, prompt.submit, job.end …)
        event: String,
        /// Only this hook
        #[arg(long, value_name = "NAME")]
        hook: Option<String>,
        /// The event's `data` as JSON (a call: {"tool": …, "arguments": {…}}),
        /// or the whole input a hook received
        #[arg(long, value_name = "FILE")]
        input: Option<PathBuf>,
        /// JSON output
        #[arg(long)]
        json: bool,
        /// Agent root
        #[arg(long, default_value = ".", value_name = "PATH")]
        root: PathBuf,
    },
}

#[derive(Debug, Args)]
pub struct StoreArgs {
    #[command(subcommand)]
    pub action: StoreAction,
}

#[derive(Debug, Subcommand)]
pub enum StoreAction {
    /// Integrity check plus every audit chain; exit 1 with the first problem
    Check {
        /// JSON output
        #[arg(long)]
        json: bool,
    },
    /// A consistent online copy of a SQLite store to FILE (PostgreSQL: use pg_dump)
    Backup {
        /// Where to write the copy (must not exist)
        file: PathBuf,
    },
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Agent root to check (default ".")
    #[arg(long, default_value = ".", value_name = "PATH")]
    pub root: PathBuf,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
