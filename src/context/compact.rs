//! Compaction, the pure part: which messages stay word for word (the job's
//! instruction, the last turns), the older ones rendered as a transcript in
//! chunks that fit one summary request, and the conversation rebuilt around
//! the summary. The requests themselves are the agent loop's business.

use crate::llm::Message;

use super::cap;
use super::tokens::TokenCounter;

/// The summarizer's system prompt.
pub const PROMPT: &str = include_str!("../../assets/prompts/compact.md");
/// First line of the message that stands for the summarized turns.
pub const SUMMARY_HEADER: &str = "[agent-tui: the earlier conversation was compacted to fit the \
                                  model's context window; this is its summary]";

/// A conversation cut in two: what is summarized and what stays.
#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    /// Oldest first; summarized.
    pub older: Vec<Message>,
    /// The job's instruction when it falls among the older turns.
    pub instruction: Option<Message>,
    /// The last turns, word for word.
    pub kept: Vec<Message>,
}

/// Indices where a turn starts: a turn is any user messages, then one
/// assistant message, then the tool results answering it.
pub fn turn_starts(messages: &[Message]) -> Vec<usize> {
    let mut starts = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let after_user = i > 0 && matches!(messages[i - 1], Message::User(_) | Message::Image(_));
        match m {
            Message::User(_) | Message::Image(_) | Message::Assistant { .. } if !after_user => {
                starts.push(i)
            }
            Message::User(_) | Message::Image(_) | Message::Assistant { .. } | Message::Tool(_) => {
            }
        }
    }
    starts
}

/// Splits off everything but the last `keep_turns` complete turns (a
/// trailing turn still waiting for its reply is always kept). `None` when
/// nothing would be summarized.
pub fn split(
    messages: &[Message],
    instruction_at: Option<usize>,
    keep_turns: usize,
) -> Option<Split> {
    let starts = turn_starts(messages);
    let waiting = matches!(messages.last(), Some(Message::User(_)));
    let keep = keep_turns + usize::from(waiting);
    let cut = if keep == 0 {
        messages.len()
    } else if starts.len() > keep {
        starts[starts.len() - keep]
    } else {
        return None;
    };
    let instruction = instruction_at.filter(|i| *i < cut);
    let older: Vec<Message> = messages[..cut]
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != instruction)
        .map(|(_, m)| m.clone())
        .collect();
    if older.is_empty() {
        return None;
    }
    Some(Split {
        older,
        instruction: instruction.map(|i| messages[i].clone()),
        kept: messages[cut..].to_vec(),
    })
}

/// Each message as one block of transcript text; tool results are cut to
/// `result_cap` tokens.
pub fn transcript(messages: &[Message], result_cap: u32, counter: &TokenCounter) -> Vec<String> {
    messages
        .iter()
        .map(|m| match m {
            Message::User(text) => format!("USER:\n{text}\n"),
            Message::Image(image) => format!("USER attached the image {}\n", image.meta.name),
            Message::Assistant { text, tool_calls } => {
                let mut block = String::new();
                if !text.trim().is_empty() {
                    block.push_str(&format!("ASSISTANT:\n{text}\n"));
                }
                for c in tool_calls {
                    block.push_str(&format!("ASSISTANT called {} {}\n", c.name, c.arguments));
                }
                block
            }
            Message::Tool(r) => {
                let state = if r.ok { "result" } else { "error" };
                format!(
                    "TOOL {} {state}:\n{}\n",
                    r.name,
                    cap::shown(&r.outcome(), result_cap, counter)
                )
            }
        })
        .collect()
}

/// Groups transcript blocks into chunks of at most `budget` tokens; a block
/// bigger than that alone is cut to fit.
pub fn chunks(blocks: &[String], budget: u32, counter: &TokenCounter) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut used = 0u32;
    for block in blocks {
        let mut block = block.clone();
        let mut size = counter.count(&block);
        if size > budget {
            block = cap::fit_text(&block, budget, counter, "");
            size = counter.count(&block);
        }
        if used + size > budget && !current.is_empty() {
            out.push(std::mem::take(&mut current));
            used = 0;
        }
        current.push_str(&block);
        current.push('\n');
        used += size + 1;
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// The user message of one summary request.
pub fn summary_request(previous: Option<&str>, chunk: &str) -> String {
    match previous {
        None => format!(
            "Here is the conversation to summarize:\n\n<conversation>\n{chunk}</conversation>\n\n\
             Write the summary now."
        ),
        Some(summary) => format!(
            "Here is the summary of the conversation so far:\n\n<summary>\n{summary}\n</summary>\n\n\
             And here is how the conversation went on:\n\n<conversation>\n{chunk}</conversation>\n\n\
             Write one summary that covers both."
        ),
    }
}

/// The compacted conversation: summary, instruction, open review, last turns.
pub fn rebuild(summary: &str, split: Split, review_state: Option<String>) -> Vec<Message> {
    let mut out = vec![Message::User(format!(
        "{SUMMARY_HEADER}\n\n{}",
        summary.trim()
    ))];
    out.extend(split.instruction);
    if let Some(state) = review_state {
        out.push(Message::User(state));
    }
    out.extend(split.kept);
    out
}

/// A summary made without the model, when it gave none: the user's words
/// and the calls made, cut to `budget` tokens.
pub fn mechanical_summary(older: &[Message], budget: u32, counter: &TokenCounter) -> String {
    let lines: Vec<String> = older
        .iter()
        .filter_map(|m| match m {
            Message::User(text) => Some(format!("- The user wrote: {text}")),
            Message::Image(image) => {
                Some(format!("- The user attached the image {}", image.meta.name))
            }
            Message::Assistant { text, tool_calls } if tool_calls.is_empty() => {
                Some(format!("- The assistant answered: {text}"))
            }
            Message::Assistant { tool_calls, .. } => Some(
                tool_calls
                    .iter()
                    .map(|c| format!("- The assistant called {} {}", c.name, c.arguments))
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            Message::Tool(_) => None,
        })
        .collect();
    let text = format!(
        "(The model gave no summary; this list was kept instead. Tool results were dropped: \
         call the tools again for anything you need.)\n{}",
        lines.join("\n")
    );
    cap::fit_text(&text, budget, counter, "")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{ToolCall, ToolResult};
    use serde_json::json;

    fn asst_call(id: &str) -> Message {
        Message::Assistant {
            text: String::new(),
            tool_calls: vec![ToolCall {
                tool_call_id: id.into(),
                name: "read_file".into(),
                arguments: json!({"file_path": format!("{id}.txt")}),
            }],
        }
    }

    fn tool(id: &str) -> Message {
        Message::Tool(ToolResult::new(
            id.into(),
            "read_file".into(),
            Ok(json!({"content": format!("FACT {id}")})),
        ))
    }

    fn user(t: &str) -> Message {
        Message::User(t.into())
    }

    fn answer(t: &str) -> Message {
        Message::Assistant {
            text: t.into(),
            tool_calls: vec![],
        }
    }

    #[test]
    fn turns_start_at_user_runs_and_bare_assistant_messages() {
        let m = vec![
            user("q1"),
            answer("a1"),
            user("note"),
            user("q2"),
            asst_call("c1"),
            tool("c1"),
            asst_call("c2"),
            tool("c2"),
        ];
        assert_eq!(turn_starts(&m), [0, 2, 6]);
    }

    #[test]
    fn split_keeps_the_last_turns_and_lifts_the_instruction() {
        let m = vec![
            user("earlier question"),
            answer("earlier answer"),
            user("the instruction"),
            asst_call("c1"),
            tool("c1"),
            asst_call("c2"),
            tool("c2"),
            asst_call("c3"),
            tool("c3"),
        ];
        let s = split(&m, Some(2), 2).unwrap();
        assert_eq!(s.instruction, Some(user("the instruction")));
        assert_eq!(s.kept, m[5..].to_vec());
        // The instruction's own turn (with call c1) is summarized without it.
        assert_eq!(
            s.older,
            vec![m[0].clone(), m[1].clone(), m[3].clone(), m[4].clone()]
        );
        let rebuilt = rebuild("S", s, Some("review".into()));
        assert!(matches!(&rebuilt[0], Message::User(t) if t.starts_with(SUMMARY_HEADER)));
        assert_eq!(rebuilt[1], user("the instruction"));
        assert_eq!(rebuilt[2], user("review"));
        assert_eq!(rebuilt[3..], m[5..]);
    }

    #[test]
    fn a_waiting_instruction_is_kept_with_the_turns() {
        let m = vec![
            user("q1"),
            answer("a1"),
            user("q2"),
            answer("a2"),
            user("q3"),
        ];
        let s = split(&m, Some(4), 1).unwrap();
        assert_eq!(s.older, m[..2].to_vec());
        assert_eq!(s.kept, m[2..].to_vec());
        assert_eq!(s.instruction, None);
        assert!(
            split(&m, Some(4), 2).is_none(),
            "nothing older than two turns"
        );
        let all = split(&m, Some(4), 0).unwrap();
        assert_eq!(all.kept, vec![user("q3")]);
    }

    #[test]
    fn chunks_respect_the_budget() {
        let counter = TokenCounter::estimating();
        let blocks: Vec<String> = (0..50)
            .map(|i| format!("block {i} {}\n", "x".repeat(300)))
            .collect();
        let parts = chunks(&blocks, 400, &counter);
        assert!(parts.len() > 5);
        assert!(
            parts.iter().all(|p| counter.count(p) <= 420),
            "{:?}",
            parts.iter().map(|p| counter.count(p)).collect::<Vec<_>>()
        );
        let giant = vec!["y".repeat(50_000)];
        let parts = chunks(&giant, 400, &counter);
        assert_eq!(parts.len(), 1);
        assert!(counter.count(&parts[0]) <= 420);
    }

    #[test]
    fn transcript_names_calls_and_results() {
        let t = transcript(
            &[asst_call("c1"), tool("c1")],
            100,
            &TokenCounter::estimating(),
        );
        assert!(t[0].contains("ASSISTANT called read_file"));
        assert!(t[1].contains("FACT c1"));
    }

    #[test]
    fn mechanical_summary_lists_the_user_and_the_calls() {
        let text = mechanical_summary(
            &[user("find the bug"), asst_call("c1"), tool("c1")],
            500,
            &TokenCounter::estimating(),
        );
        assert!(text.contains("The user wrote: find the bug"));
        assert!(text.contains("called read_file"));
    }
}
