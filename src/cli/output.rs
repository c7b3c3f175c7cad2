//! What the headless commands print: engine events (JSON lines, or text for
//! people) and diff bundles (coloured hunks on a terminal).

use crate::protocol::words::counted;
use std::io::{IsTerminal, Write};

use crate::protocol::{
    DiffBundle, Event, EventBody, HunkState, JobStatus, VerifyOutcome, VerifyResult,
};

/// Whether to colour stdout: a terminal, and `NO_COLOR` unset.
pub fn colour() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

fn paint(on: bool, code: &str, text: &str) -> String {
    if on {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// How much a bundle holds to decide: "1 hunk in src/a.rs", "5 hunks in 3
/// files".
fn review_size(bundle: &DiffBundle) -> String {
    let hunks = counted(bundle.hunks().count(), "hunk");
    match bundle.files.as_slice() {
        [one] => format!("{hunks} in {}", one.file_path),
        files => format!("{hunks} in {}", counted(files.len(), "file")),
    }
}

/// A bundle as people read it: each file, each hunk with its id and state.
pub fn render_bundle(bundle: &DiffBundle, colour: bool) -> String {
    let mut out = String::new();
    for file in &bundle.files {
        let state = if file.base_file_hash.is_none() {
            " (new file)"
        } else {
            ""
        };
        out.push_str(&paint(colour, "1", &format!("{}{state}\n", file.file_path)));
        for hunk in &file.hunks {
            let decision = match &hunk.state {
                HunkState::Applied => "applied".to_string(),
                HunkState::Accepted => "accepted".to_string(),
                HunkState::Rejected => "rejected".to_string(),
                HunkState::Pending => "pending".to_string(),
                HunkState::Conflicted { reason } => format!("conflict: {reason}"),
            };
            let big = if hunk.oversized { ", oversized" } else { "" };
            out.push_str(&paint(
                colour,
                "33",
                &format!(
                    "  {} [{decision}{big}] edits {}\n",
                    hunk.hunk_id,
                    hunk.edit_ids.join(",")
                ),
            ));
            for line in hunk.patch.lines() {
                let code = match line.chars().next() {
                    Some('+') => "32",
                    Some('-') => "31",
                    Some('@') => "36",
                    _ => "",
                };
                let shown = line.trim_end_matches('\r');
                out.push_str("    ");
                out.push_str(&if code.is_empty() {
                    shown.to_string()
                } else {
                    paint(colour, code, shown)
                });
                out.push('\n');
            }
        }
    }
    out
}

/// An apply's or a rollback's outcome, or hunk ids that named nothing.
/// A verify's result as people read it: its line, what else it ran
/// against, and on a failure the end of its output (on stderr).
pub fn verify_text(result: &VerifyResult) -> String {
    let mut out = result.summary();
    if let Some(b) = &result.baseline {
        let how = if b.passed { "passes" } else { "fails too" };
        let cached = if b.cached { ", cached" } else { "" };
        out.push_str(&format!("\n  the unmodified tree {how} (baseline{cached})"));
    }
    if let Some(e) = &result.error {
        out.push_str(&format!("\n  {e}"));
    }
    if !result.not_verified.is_empty() {
        out.push_str(&format!(
            "\n  not in the copy (outside the agent root): {}",
            result.not_verified.join(", ")
        ));
    }
    if !result.confined && result.outcome != VerifyOutcome::Error {
        out.push_str("\n  note: not confined (this kernel has no Landlock)");
    }
    if !result.passed && !result.output_tail.trim().is_empty() {
        out.push_str("\n  --- the end of its output ---\n");
        for line in result.output_tail.lines() {
            out.push_str(&format!("  {line}\n"));
        }
    }
    out
}

fn review_line(body: &EventBody) {
    match body {
        EventBody::VerifyStarted { hunk_ids, command } => eprintln!(
            "· verify: `{command}` on hunks {} in a scratch copy…",
            hunk_ids.join(" ")
        ),
        EventBody::VerifyCompleted(result) => eprintln!("{}", verify_text(result).trim_end()),
        EventBody::ApplyCompleted {
            checkpoint_id,
            files,
            hunk_ids,
            ..
        } => eprintln!(
            "Applied {} to {}; checkpoint {checkpoint_id} (undo: agent-tui rollback {checkpoint_id})",
            counted(hunk_ids.len(), "hunk"),
            counted(files.len(), "file")
        ),
        EventBody::ApplyFailed { error, .. } => eprintln!("agent-tui: apply failed: {error}"),
        EventBody::RollbackCompleted {
            rollback_checkpoint_id,
            files,
            ..
        } => eprintln!(
            "Rolled back {}; this rollback is checkpoint {rollback_checkpoint_id}",
            counted(files.len(), "file")
        ),
        EventBody::RollbackFailed { error, .. } => eprintln!("agent-tui: rollback failed: {error}"),
        EventBody::ReviewUpdated { unknown, .. } if !unknown.is_empty() => {
            eprintln!("agent-tui: no such hunk: {}", unknown.join(", "));
        }
        _ => {}
    }
}

/// Turns events into output: JSON lines, or text for people. Streamed text
/// is buffered until the caller sees no more events waiting (`flush`), so a
/// fast stream costs a few writes, not one per token; every other event is
/// written at once.
pub struct Printer {
    json: bool,
    out: std::io::BufWriter<Box<dyn Write + Send>>,
    /// Whether stdout's last byte was a newline (or nothing was printed).
    at_line_start: bool,
    /// The answer's text printed so far (of the current attempt).
    streamed: String,
    attempt: u32,
    /// Whether "thinking" was said for the model's current reasoning.
    thinking_noted: bool,
    /// What the latest diff holds to review: "2 hunks in src/a.rs".
    to_review: Option<String>,
    /// The answer is written whole when the job completes, not as it
    /// streams (stdout is no terminal: a script reads it, and a stream a
    /// retry or a fallback abandoned must not be in what it reads).
    hold: bool,
}

impl Printer {
    pub fn new(json: bool) -> Printer {
        use std::io::IsTerminal;
        let mut printer = Printer::writing(json, Box::new(std::io::stdout()));
        printer.hold = !std::io::stdout().is_terminal();
        printer
    }

    /// A printer whose answer text and JSON lines go to stderr (stdout is
    /// kept for something else).
    pub fn to_stderr(json: bool) -> Printer {
        Printer::writing(json, Box::new(std::io::stderr()))
    }

    fn writing(json: bool, out: Box<dyn Write + Send>) -> Printer {
        Printer {
            json,
            out: std::io::BufWriter::with_capacity(1 << 16, out),
            at_line_start: true,
            streamed: String::new(),
            attempt: 1,
            thinking_noted: false,
            to_review: None,
            hold: false,
        }
    }

    /// Writes out what is buffered.
    pub fn flush(&mut self) {
        let _ = self.out.flush();
    }

    pub fn print(&mut self, event: &Event) {
        self.write(event);
        if !matches!(
            event.body,
            EventBody::LlmDelta { .. } | EventBody::LlmReasoning { .. }
        ) {
            self.flush();
        }
    }

    fn write(&mut self, event: &Event) {
        if self.json {
            if let Ok(line) = serde_json::to_string(event) {
                let _ = writeln!(self.out, "{line}");
            }
            return;
        }
        // Progress goes to stderr; what stdout holds so far goes first.
        if !matches!(event.body, EventBody::LlmDelta { .. }) {
            self.flush();
        }
        // Text from the model, a tool or a check never steers the
        // terminal: control characters are shown, not sent.
        let inert = inert_event(event);
        let body = &inert.as_ref().unwrap_or(event).body;
        match body {
            EventBody::LlmDelta { text, attempt } => self.delta(text, *attempt),
            // Thinking stays off stdout (it is not the answer): one note on
            // stderr says why the answer has not started.
            EventBody::LlmReasoning { .. } if !self.thinking_noted => {
                self.thinking_noted = true;
                self.end_line();
                self.flush();
                eprintln!("· thinking…");
            }
            EventBody::UserSteer { text } => {
                self.end_line();
                self.flush();
                eprintln!("↳ {text}");
            }
            EventBody::HookCompleted(run) => {
                self.end_line();
                self.flush();
                eprintln!("{}", hook_line(run));
            }
            EventBody::HookStarted { .. } => {}
            EventBody::JobStarted { images, .. } if !images.is_empty() => {
                for image in images {
                    eprintln!("· image {}", image.chip());
                }
            }
            EventBody::ToolCallRequested { .. }
            | EventBody::ToolCallCompleted { ok: false, .. }
            | EventBody::ClarificationRequested { .. }
            | EventBody::ClarificationReceived { .. }
            | EventBody::ApprovalRequested { .. }
            | EventBody::ApprovalResolved { .. } => self.call_line(body),
            EventBody::JobCompleted { .. }
            | EventBody::JobFailed { .. }
            | EventBody::JobCancelled {} => self.job_end(body),
            EventBody::ApplyCompleted { .. }
            | EventBody::ApplyFailed { .. }
            | EventBody::RollbackCompleted { .. }
            | EventBody::RollbackFailed { .. }
            | EventBody::VerifyStarted { .. }
            | EventBody::VerifyCompleted(_)
            | EventBody::ReviewUpdated { .. } => review_line(body),
            EventBody::ContextCompacted { .. }
            | EventBody::ProviderFallback { .. }
            | EventBody::ToolsInPrompt { .. }
            | EventBody::RepeatStopped { .. }
            | EventBody::RecoveryCompleted(_)
            | EventBody::McpServers { .. } => self.notice(body),
            EventBody::DiffGenerated { bundle } => self.to_review = Some(review_size(bundle)),
            EventBody::JobStarted { .. }
            | EventBody::JobQueued { .. }
            | EventBody::ToolCallCompleted { ok: true, .. }
            | EventBody::EditsProposed { .. }
            | EventBody::ApplyStarted { .. }
            | EventBody::CheckpointCreated { .. }
            | EventBody::UsageUpdated { .. }
            | EventBody::LlmReasoning { .. }
            | EventBody::RollbackStarted { .. } => {}
        }
    }

    /// Streamed answer text, on stdout.
    fn delta(&mut self, text: &str, attempt: u32) {
        if attempt != self.attempt {
            self.attempt = attempt;
            self.streamed.clear();
            if attempt > 1 {
                self.end_line();
                eprintln!("[the model request failed and is being retried; attempt {attempt}]");
            }
        }
        if !self.hold {
            self.out(text);
        }
        self.streamed.push_str(text);
        self.thinking_noted = false;
    }

    /// A tool call, a question or an approval, as a line on stderr.
    fn call_line(&mut self, body: &EventBody) {
        match body {
            EventBody::ToolCallRequested {
                name,
                arguments,
                attached,
                ..
            } => {
                self.end_line();
                let by = if *attached {
                    " (read for the model: the instruction names it)"
                } else {
                    ""
                };
                eprintln!("· {name} {}{by}", shorten(&arguments.to_string(), 160));
            }
            EventBody::ToolCallCompleted { error, .. } => {
                let message = error
                    .as_ref()
                    .and_then(|e| e["message"].as_str())
                    .unwrap_or("failed");
                eprintln!("  ✗ {}", shorten(message, 300));
            }
            EventBody::ClarificationRequested { question, .. } => {
                self.end_line();
                eprintln!("? {question}");
            }
            EventBody::ClarificationReceived { answer, .. } => eprintln!("  → {answer}"),
            EventBody::ApprovalRequested {
                name,
                arguments,
                batch,
                ..
            } => {
                self.end_line();
                let what = arguments["command"]
                    .as_str()
                    .map_or_else(|| arguments.to_string(), str::to_string);
                let more = match batch.len() {
                    0 => String::new(),
                    n => format!(" (with {} more of this turn)", counted(n, "call")),
                };
                eprintln!("! {name} needs approval{more}: {}", shorten(&what, 160));
            }
            EventBody::ApprovalResolved { approved, by, .. } => {
                let verdict = if *approved { "allowed" } else { "denied" };
                eprintln!("  → {verdict} ({by})");
            }
            _ => {}
        }
    }

    /// How the job ended: the rest of the answer, or why not.
    fn job_end(&mut self, body: &EventBody) {
        match body {
            EventBody::JobCompleted {
                answer,
                status,
                budget_exhausted,
                ..
            } => {
                // Text the stream did not bring (none came, or a reader
                // that fell behind missed some) comes from the answer.
                if self.hold {
                    self.out(answer);
                } else if let Some(rest) = answer.strip_prefix(self.streamed.as_str()) {
                    self.out(rest);
                }
                self.end_line();
                self.flush();
                if *budget_exhausted {
                    eprintln!(
                        "[the tool budget was spent; this answer came without further tool calls]"
                    );
                }
                if *status == JobStatus::AwaitingReview {
                    let what = self.to_review.as_deref().unwrap_or("the proposed edits");
                    eprintln!("To review: {what} (`agent-tui review`, or --apply all next time).");
                }
            }
            EventBody::JobFailed { error, .. } => {
                self.end_line();
                eprintln!("agent-tui: {error}");
            }
            EventBody::JobCancelled {} => {
                self.end_line();
                eprintln!("agent-tui: cancelled");
            }
            _ => {}
        }
    }

    /// What happened besides the job: a compaction, a fallback, a
    /// recovery, a failed MCP server.
    fn notice(&mut self, body: &EventBody) {
        self.end_line();
        self.flush();
        match body {
            EventBody::ContextCompacted {
                reason,
                tokens_before,
                tokens_after,
                ..
            } => eprintln!(
                "[context compacted ({}): {tokens_before} → {tokens_after} tokens]",
                reason.as_str()
            ),
            EventBody::ProviderFallback {
                from, to, reason, ..
            } => eprintln!(
                "[{from} gave up ({}): the job goes on with {to}]",
                reason.as_str()
            ),
            EventBody::ToolsInPrompt { provider, reason } => eprintln!(
                "[{provider}: the server's chat template drops the tools ({reason}); they are \
                 described in the prompt instead (tool_protocol = \"json\" does this without \
                 asking)]"
            ),
            EventBody::RepeatStopped {
                provider,
                chars,
                copies,
            } => eprintln!(
                "[{provider}: the reply went round in a loop (the same {chars} characters \
                 {copies} times in a row); it was stopped there and kept once]"
            ),
            EventBody::RecoveryCompleted(r) => eprintln!("! agent-tui recovered: {}", r.summary()),
            EventBody::McpServers { servers } => {
                // Only trouble is worth a line.
                for s in servers
                    .iter()
                    .filter(|s| s.state == crate::protocol::McpState::Failed)
                {
                    eprintln!(
                        "! MCP server {} failed: {}",
                        s.name,
                        shorten(s.error.as_deref().unwrap_or_default(), 300)
                    );
                }
            }
            _ => {}
        }
    }

    fn out(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let _ = self.out.write_all(text.as_bytes());
        self.at_line_start = text.ends_with('\n');
    }

    fn end_line(&mut self) {
        if !self.at_line_start {
            self.out("\n");
        }
    }
}

/// `event` with every control character in its text (an escape sequence
/// that would set the title or clear the screen) written out as `\u{1b}`;
/// `None` when it has none. Newlines and tabs stay.
fn inert_event(event: &Event) -> Option<Event> {
    // The stream's many small pieces are looked at directly (no copy of
    // the event for the common case: nothing to escape).
    if let EventBody::LlmDelta { text, .. } | EventBody::LlmReasoning { text, .. } = &event.body
        && !text.chars().any(steers)
    {
        return None;
    }
    fn walk(v: &mut serde_json::Value, changed: &mut bool) {
        match v {
            serde_json::Value::String(s) if s.chars().any(steers) => {
                *s = s
                    .chars()
                    .map(|c| {
                        if steers(c) {
                            c.escape_default().to_string()
                        } else {
                            c.to_string()
                        }
                    })
                    .collect();
                *changed = true;
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|i| walk(i, changed)),
            serde_json::Value::Object(map) => map.values_mut().for_each(|i| walk(i, changed)),
            _ => {}
        }
    }
    let mut value = serde_json::to_value(event).ok()?;
    let mut changed = false;
    walk(&mut value, &mut changed);
    changed.then(|| serde_json::from_value(value).ok())?
}

/// A character that would steer the terminal (newlines and tabs do not),
/// or reorder what it shows (the bidirectional overrides and isolates).
fn steers(c: char) -> bool {
    (c.is_control() && !matches!(c, '\n' | '\t' | '\r'))
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// A hook's run in one line: `· hook guard (tool.before): block — why`.
fn hook_line(run: &crate::protocol::HookOutcome) -> String {
    let why = run
        .reason
        .as_deref()
        .or(run.error.as_deref())
        .map(|w| format!(" — {}", w.lines().next().unwrap_or_default()))
        .unwrap_or_default();
    format!(
        "· hook {} ({}): {} in {} ms{why}",
        run.name,
        run.event,
        run.decision.as_str(),
        run.duration_ms
    )
}
