//! The TUI's state and how keys and engine events change it. Pure: keys
//! return the commands to send, events and finished loads update the state;
//! nothing here draws or does I/O, so every behaviour is testable without a
//! terminal. Keys are in `keys.rs`, engine events in `events.rs`, finished
//! loads in `loads.rs`.

pub mod attach;
mod cost;
mod dialogs;
mod events;
mod find;
mod hook_runs;
mod input;
mod keys;
mod loads;
pub mod models;
mod notices;
mod open_root;
pub mod outbox;
mod pending;
mod pinned;
mod queue;
mod resume;
mod review;
mod scroll;
mod slash;

use crate::protocol::words::counted;
use ratatui_textarea::TextArea;

pub use cost::Cost;
pub use find::{FIND_ROWS, FindFor, IndexGauge};
pub use loads::{Load, Loaded, latest_of};
pub use open_root::RootDialog;
pub use resume::Resumed;
pub use review::{Badge, HunkCode, Refusal, ReviewScroll, ReviewView, VerifyState, WholeFileRow};

use super::highlight::StyledLine;
use super::keymap::Context;
pub use super::markdown::Answer;
use super::markdown::Colours;
use super::tree::Tree;
use crate::protocol::{JobStatus, Mode, SessionSummary, ThreeWay, Usage};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Tree,
    Chat,
    Input,
}

/// One row group of the transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    User(String),
    /// What the user added to a running job (the model had it at its next step).
    Steer(String),
    /// The files an instruction pinned, dim under it.
    Pinned(Vec<String>),
    /// The images that went with it (their chips), dim under it.
    Images(Vec<String>),
    /// Rendered as markdown.
    Assistant(Box<Answer>),
    /// The model's thinking: dimmed, folded to one line unless details are shown.
    Thinking(String),
    Tool {
        name: String,
        summary: String,
        ok: Option<bool>,
        /// Full arguments and the outcome, shown when tool details are expanded.
        detail: String,
    },
    Notice(String),
    Error(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Overlay {
    None,
    /// The key help; `scroll` is the first line shown.
    Help {
        scroll: usize,
    },
    /// A read-only file view; `lines` is empty while it loads.
    Preview {
        path: String,
        lines: Vec<StyledLine>,
        scroll: usize,
        error: Option<String>,
        /// Where a line range being selected starts (`v`); it ends at the top line.
        mark: Option<usize>,
    },
    Clarify {
        job_id: String,
        question: String,
        answer: String,
    },
    /// The session picker (`--resume` without an id).
    Sessions {
        rows: Vec<SessionSummary>,
        cursor: usize,
    },
    /// The checkpoints list; `three_way` is the opened checkpoint's files.
    Checkpoints {
        rows: Vec<CheckpointRow>,
        cursor: usize,
        three_way: Option<Vec<ThreeWay>>,
        file: usize,
    },
    /// A command (or MCP call) waiting for the user's allow-once / deny.
    Approval {
        job_id: String,
        tool_call_id: String,
        name: String,
        /// The command line, or the call's arguments as JSON.
        command: String,
        cwd: String,
        root: String,
        /// How it would be confined; empty when not a command.
        sandbox: String,
        /// More calls of the same turn decided with it (batch approval).
        also: Vec<String>,
    },
    /// Editing a hunk's new text before accepting it (`e` in the review).
    EditHunk {
        job_id: String,
        hunk_id: String,
        file_path: String,
        /// The file's line number of the text's first line.
        first_line: usize,
        editor: Box<Editor>,
    },
    /// `/model`: the provider and model of the next messages.
    Models {
        /// Typed words narrow the rows.
        input: String,
        rows: Vec<models::ModelRow>,
        cursor: usize,
        loading: bool,
    },
    /// `Ctrl+P`: a file or a symbol by a fuzzy name.
    Find {
        input: String,
        found: Vec<crate::protocol::Found>,
        cursor: usize,
    },
    /// `Ctrl+O`: another folder to open as the agent root.
    OpenRoot {
        input: String,
        /// Recent roots, or the folders Tab found.
        choices: Vec<String>,
        cursor: Option<usize>,
        status: RootDialog,
    },
    Rollback {
        checkpoint_id: String,
        files: Vec<String>,
        /// (hunk id, file) of the hunks it applied, for a scoped rollback.
        hunks: Vec<(String, String)>,
        /// `Some`: picking hunks; which are chosen and the cursor.
        picking: Option<(Vec<bool>, usize)>,
    },
}

/// A multi-line text area; two are equal when their text is.
#[derive(Debug, Clone)]
pub struct Editor(pub TextArea<'static>);

impl Editor {
    pub fn new(text: &str) -> Editor {
        // Line numbers are the file's own, drawn beside it (render/review.rs);
        // a long line wraps (code: anywhere), so all of it is in view.
        let mut area = TextArea::new(text.lines().map(str::to_string).collect());
        area.set_wrap_mode(ratatui_textarea::WrapMode::Glyph);
        Editor(area)
    }

    /// The text, each line ending in `\n`; empty when nothing is left.
    pub fn text(&self) -> String {
        let lines = self.0.lines();
        if lines.len() == 1 && lines[0].is_empty() {
            return String::new();
        }
        lines.iter().map(|l| format!("{l}\n")).collect()
    }
}

impl PartialEq for Editor {
    fn eq(&self, other: &Editor) -> bool {
        self.0.lines() == other.0.lines()
    }
}

impl Eq for Editor {}

/// What the model is streaming into the transcript's last entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Streaming {
    Nothing,
    Thinking,
    Answer,
}

/// What `y` / `Y` in the chat copy of the focused message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyRequest {
    /// The message as written (an answer's markdown source).
    Message,
    /// Its last code block.
    LastCode,
}

/// The provider as the status bar shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderState {
    /// No provider is configured (the status bar says so in red).
    Missing,
    Online,
    /// Requests needed retries (rate limits, 5xx, cut streams).
    Degraded,
    /// The last request could not reach it, or none is configured.
    Offline,
}

/// Which view fills the screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// Tree, chat and input.
    Chat,
    /// The pending diff, hunk by hunk.
    Review,
}

/// How tool calls and thinking show in the chat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Details {
    /// One line each.
    Folded,
    /// Full arguments and outcome.
    Shown,
}

/// Where quitting stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quit {
    No,
    /// Ctrl+C once: the next one quits.
    Armed,
    Now,
}

/// One line of the checkpoints list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointRow {
    pub id: String,
    pub created_at: String,
    pub kind: String,
    pub files: Vec<String>,
}

/// The newest checkpoint, as Ctrl+Z offers it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LatestCheckpoint {
    pub id: String,
    pub files: Vec<String>,
    pub hunks: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobView {
    pub id: String,
    pub purpose: JobPurpose,
    pub status: JobStatus,
    pub steps: u32,
    pub max_steps: u32,
}

/// What a job the TUI started is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobPurpose {
    /// The user's instruction.
    Instruction,
    /// `/compact`: only summarizes the conversation.
    Compact,
}

/// How full the model's context window is, as last reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextGauge {
    pub tokens: u64,
    pub window: u32,
}

impl ContextGauge {
    pub fn percent(&self) -> u64 {
        (self.tokens * 100 / u64::from(self.window.max(1))).min(999)
    }
}

pub struct App {
    pub root: String,
    /// The session jobs go to: `None` until the first job's reply names it.
    pub session: Option<String>,
    pub mode: Mode,
    /// `[ui] theme`: colours for a dark or a light background.
    pub theme: crate::config::Theme,
    pub focus: Focus,
    pub tree: Tree,
    pub transcript: Vec<Entry>,
    pub input: TextArea<'static>,
    history: Vec<String>,
    history_pos: Option<usize>,
    pub job: Option<JobView>,
    /// Messages waiting for the running job to end, oldest first.
    pub queued: Vec<queue::QueuedMessage>,
    /// The job the last Enter started (the engine may queue it instead).
    sent_last: Option<String>,
    /// The custom commands `/` lists (read at start).
    pub commands: Vec<crate::protocol::CustomCommandInfo>,
    /// What `/model` picked for the next jobs (`None`: the engine's own).
    pub choice: Option<crate::protocol::ModelChoice>,
    pub outbox: outbox::Outbox,
    /// The session's cost, when prices are configured.
    pub cost: cost::Cost,
    pub provider_label: String,
    /// `auto`: tools go in the prompt (the template drops them).
    pub tools_in_prompt: bool,
    /// How the provider behaved lately: requests retried or failing.
    pub provider_state: ProviderState,
    pub tokens: Usage,
    /// Some token counts are estimates (the server reported none).
    pub tokens_estimated: bool,
    /// `ctx NN%` in the status bar; unknown until the first response.
    pub context: Option<ContextGauge>,
    pub review: Option<ReviewView>,
    /// Which view fills the screen.
    pub view: View,
    pub overlay: Overlay,
    /// The last refusal of the review (a conflict on apply, a refused
    /// edit, a verify that cannot run), shown in the review until the next
    /// decision.
    pub review_error: Option<Refusal>,
    /// The tree's badges of files the reviews touched (kept after an apply).
    pub badges: std::collections::BTreeMap<String, Badge>,
    /// The terminal's size as last drawn (`None` before the first frame).
    pub screen: Option<ratatui::layout::Rect>,
    /// Notes said while an answer streamed: they follow it once it ends, so
    /// the streamed message stays whole (the status line shows them meanwhile).
    deferred: Vec<Entry>,
    pub latest_checkpoint: Option<LatestCheckpoint>,
    /// The MCP servers as the last job found them (none before one starts).
    pub mcp: Vec<crate::protocol::McpServerStatus>,
    /// Files sent as context with every instruction until unpinned.
    pub pinned: Vec<String>,
    pub attached: attach::Attached,
    /// Each hook's last run, for `/hooks`.
    pub hook_runs: hook_runs::HookRuns,
    /// Whether tool-call lines show their full arguments and outcome
    /// (Enter in the chat).
    pub details: Details,
    /// The key table with the user's `[keys]` overrides.
    pub keymap: crate::tui::KeyMap,
    /// Every file of the root (loaded off the UI task), for `@path` completion.
    pub paths: crate::protocol::PathList,
    /// The code index, as the status bar shows it.
    pub index: IndexGauge,
    /// Work asked of the event loop (loads off the UI task), oldest first.
    pub loads: Vec<Load>,
    preview_generation: u64,
    /// Ctrl+C once arms, twice quits.
    pub quit: Quit,
    /// Rows scrolled up from the bottom of the transcript.
    pub scroll: usize,
    /// The retry attempt whose text the last assistant entry holds.
    attempt: u32,
    streaming: Streaming,
    /// Highlighted code blocks of answers, by `markdown::code_key`.
    pub code_colours: Colours,
    /// Grows whenever `code_colours` does (laid-out answers are redone).
    pub colours_generation: u64,
    /// Code blocks the event loop should highlight: (key, language, code).
    pub highlight_requests: Vec<(u64, String, String)>,
    /// Keys asked for whose colours have not come back yet.
    highlighting: std::collections::HashSet<u64>,
    /// What the event loop should copy to the clipboard.
    pub copy_request: Option<CopyRequest>,
    /// A note for the status line (what was copied), until the next key.
    pub status_note: Option<String>,
    max_tool_calls: u32,
    next_job: u32,
}

/// The empty input's hint: short enough for the input of an 80-column
/// terminal (Shift+Enter's new line is in the help).
const PLACEHOLDER: &str = "Ask, plan or instruct… (Enter sends, F1 help)";

impl App {
    pub fn new(
        root: String,
        tree: Tree,
        mode: Mode,
        provider_label: String,
        provider_ok: bool,
        max_tool_calls: u32,
    ) -> App {
        let mut input = TextArea::default();
        input.set_placeholder_text(PLACEHOLDER);
        App {
            theme: crate::config::Theme::Dark,
            root,
            session: None,
            mode,
            focus: Focus::Input,
            tree,
            transcript: Vec::new(),
            input,
            history: Vec::new(),
            history_pos: None,
            job: None,
            queued: Vec::new(),
            sent_last: None,
            commands: Vec::new(),
            choice: None,
            outbox: outbox::Outbox::default(),
            cost: cost::Cost::default(),
            provider_label,
            tools_in_prompt: false,
            provider_state: if provider_ok {
                ProviderState::Online
            } else {
                ProviderState::Missing
            },
            tokens: Usage::default(),
            tokens_estimated: false,
            context: None,
            review: None,
            view: View::Chat,
            overlay: Overlay::None,
            review_error: None,
            badges: std::collections::BTreeMap::new(),
            screen: None,
            deferred: Vec::new(),
            latest_checkpoint: None,
            mcp: Vec::new(),
            pinned: Vec::new(),
            attached: attach::Attached::default(),
            hook_runs: hook_runs::HookRuns::default(),
            paths: crate::protocol::PathList::new(),
            index: IndexGauge::Unknown,
            keymap: crate::tui::KeyMap::default(),
            details: Details::Folded,
            loads: Vec::new(),
            preview_generation: 0,
            quit: Quit::No,
            scroll: 0,
            attempt: 1,
            streaming: Streaming::Nothing,
            code_colours: Colours::new(),
            colours_generation: 0,
            highlight_requests: Vec::new(),
            highlighting: std::collections::HashSet::new(),
            copy_request: None,
            status_note: None,
            max_tool_calls,
            next_job: 1,
        }
    }

    pub fn job_running(&self) -> bool {
        self.job.as_ref().is_some_and(|j| {
            matches!(
                j.status,
                JobStatus::Running | JobStatus::WaitingForUser | JobStatus::Queued
            )
        })
    }

    /// The text `request` copies of entry `index`, and how to name it in
    /// the status line; or why there is nothing to copy.
    pub fn copy_text(
        &self,
        index: Option<usize>,
        request: CopyRequest,
    ) -> Result<(String, String), String> {
        let entry = index.and_then(|i| self.transcript.get(i));
        let (text, whose) = match entry {
            Some(Entry::User(t) | Entry::Steer(t)) => (t.clone(), "your message"),
            Some(Entry::Assistant(a)) => (a.text().to_string(), "the answer"),
            _ => return Err("no message on screen to copy".into()),
        };
        let lines = |t: &str| t.lines().count().max(1);
        match (request, entry) {
            (CopyRequest::Message, _) => {
                let what = format!("{whose} ({})", counted(lines(&text), "line"));
                Ok((text, what))
            }
            (CopyRequest::LastCode, Some(Entry::Assistant(a))) => match a.last_code() {
                Some(code) => {
                    let what = format!("the code block ({})", counted(lines(&code), "line"));
                    Ok((code, what))
                }
                None => Err("this answer has no code block".into()),
            },
            (CopyRequest::LastCode, _) => Err(format!("{whose} has no code block")),
        }
    }

    /// Entries said since the transcript had `before` while an answer
    /// streams: held until it ends (`on_event`), so the streamed message
    /// stays whole; the status line shows the last meanwhile.
    fn defer_since(&mut self, before: usize) {
        if self.streaming == Streaming::Nothing || self.transcript.len() <= before {
            return;
        }
        let said = self.transcript.split_off(before);
        if let Some(Entry::Notice(t) | Entry::Error(t)) = said.last() {
            self.status_note = Some(t.clone());
        }
        self.deferred.extend(said);
    }

    fn context(&self) -> Context {
        if matches!(self.overlay, Overlay::Rollback { .. }) {
            return Context::RollbackDialog;
        }
        if matches!(self.overlay, Overlay::Preview { .. }) {
            return Context::Preview;
        }
        if matches!(self.overlay, Overlay::Checkpoints { .. }) {
            return Context::Checkpoints;
        }
        if matches!(self.overlay, Overlay::Sessions { .. }) {
            return Context::Sessions;
        }
        if matches!(self.overlay, Overlay::Approval { .. }) {
            return Context::Approval;
        }
        if matches!(self.overlay, Overlay::EditHunk { .. }) {
            return Context::HunkEditor;
        }
        if self.view == View::Review {
            return Context::Review;
        }
        match self.focus {
            Focus::Tree => Context::Tree,
            Focus::Input => Context::Input,
            Focus::Chat => Context::Chat,
        }
    }
}
