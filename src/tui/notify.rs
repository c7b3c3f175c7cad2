//! Telling the person when the agent waits for them (SPEC 19): which engine
//! events are such moments (pure), the bytes that reach the terminal (BEL,
//! OSC 9 and OSC 777, wrapped for tmux to pass on), and the `[notify]
//! command` fed the moment as JSON (its environment without the secrets).

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::json;

use crate::config::{Config, NotifyKind};
use crate::protocol::{Event, EventBody, JobStatus};

/// Longest text a notification carries.
const MAX_TEXT: usize = 200;

/// The moment `event` is, with a line saying what waits.
pub fn moment(event: &Event) -> Option<(NotifyKind, String)> {
    Some(match &event.body {
        EventBody::ApprovalRequested {
            name, arguments, ..
        } => {
            let what = arguments["command"]
                .as_str()
                .map_or_else(|| name.clone(), |c| format!("{name}: {c}"));
            (NotifyKind::Approval, format!("asks to run {what}"))
        }
        EventBody::ClarificationRequested { question, .. } => {
            (NotifyKind::Clarification, format!("asks: {question}"))
        }
        EventBody::JobCompleted {
            status: JobStatus::AwaitingReview,
            ..
        } => (NotifyKind::Review, "edits wait for your review".into()),
        EventBody::VerifyCompleted(result) => (
            NotifyKind::Verify,
            format!(
                "verify {}: {}",
                if result.passed {
                    "passed"
                } else {
                    "did not pass"
                },
                result.command
            ),
        ),
        EventBody::JobFailed { error, .. } => (NotifyKind::Failed, format!("failed: {error}")),
        _ => return None,
    })
}

/// `text` as one short line without control characters.
fn clean(text: &str) -> String {
    let line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let mut out: String = line.split_whitespace().collect::<Vec<_>>().join(" ");
    if out.chars().count() > MAX_TEXT {
        out = out.chars().take(MAX_TEXT - 1).collect::<String>() + "…";
    }
    out
}

/// BEL, then OSC 9 (iTerm2, WezTerm, Windows Terminal, kitty…) and OSC
/// 777 (VTE, foot, rxvt). Inside tmux each OSC goes in its passthrough
/// (`allow-passthrough on`) so the outer terminal gets it.
pub fn terminal_bytes(text: &str, in_tmux: bool) -> Vec<u8> {
    let text = clean(text);
    let osc = |body: String| {
        let seq = format!("\x1b]{body}\x07");
        if in_tmux {
            format!("\x1bPtmux;{}\x1b\\", seq.replace('\x1b', "\x1b\x1b"))
        } else {
            seq
        }
    };
    let mut out = String::from("\x07");
    out.push_str(&osc(format!("9;agent-tui: {text}")));
    out.push_str(&osc(format!("777;notify;agent-tui;{text}")));
    out.into_bytes()
}

/// Tells the terminal and runs `[notify] command` for `event`, if it is a
/// moment the config wants told now.
pub fn tell(config: &Config, event: &Event, focused: bool, session: Option<&str>, root: &str) {
    let Some((kind, text)) = moment(event) else {
        return;
    };
    if !config.notify.wants(kind, focused) {
        return;
    }
    let in_tmux = std::env::var_os("TMUX").is_some();
    let mut stdout = std::io::stdout();
    let _ = stdout.write_all(&terminal_bytes(&text, in_tmux));
    let _ = stdout.flush();
    if config.notify.command.is_empty() {
        return;
    }
    let body = json!({
        "type": kind.as_str(),
        "session_id": session,
        "job_id": event.job_id,
        "root": root,
        "text": clean(&text),
    });
    run_command(
        &config.notify.command,
        &config.secret_env_names(),
        &body.to_string(),
    );
}

/// Runs `argv` with `json` on its stdin, off the UI's way; a command that
/// cannot start is skipped (a notification is never worth an error).
fn run_command(argv: &[String], secrets: &[String], json: &str) {
    let Some((program, args)) = argv.split_first() else {
        return;
    };
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for name in secrets {
        command.env_remove(name);
    }
    let Ok(mut child) = command.spawn() else {
        return;
    };
    let json = json.to_string();
    std::thread::spawn(move || {
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(json.as_bytes());
        }
        let _ = child.wait();
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(body: EventBody) -> Event {
        Event {
            cursor: 1,
            body,
            ts: String::new(),
            job_id: "j".into(),
        }
    }

    #[test]
    fn waits_for_the_user_are_moments_and_streaming_is_not() {
        let asked = event(EventBody::ClarificationRequested {
            tool_call_id: "c".into(),
            question: "Which\nfile?".into(),
        });
        assert_eq!(
            moment(&asked),
            Some((NotifyKind::Clarification, "asks: Which\nfile?".into()))
        );
        let delta = event(EventBody::LlmDelta {
            text: "x".into(),
            attempt: 1,
        });
        assert_eq!(moment(&delta), None);
    }

    #[test]
    fn the_bytes_carry_bell_and_both_oscs_and_pass_through_tmux() {
        let plain = String::from_utf8(terminal_bytes("done\x1b[2J now", false)).unwrap();
        assert_eq!(
            plain,
            "\x07\x1b]9;agent-tui: done [2J now\x07\x1b]777;notify;agent-tui;done [2J now\x07"
        );
        let wrapped = String::from_utf8(terminal_bytes("hi", true)).unwrap();
        assert!(wrapped.starts_with("\x07\x1bPtmux;\x1b\x1b]9;agent-tui: hi\x07\x1b\\"));
        assert!(wrapped.ends_with("\x1bPtmux;\x1b\x1b]777;notify;agent-tui;hi\x07\x1b\\"));
    }
}
