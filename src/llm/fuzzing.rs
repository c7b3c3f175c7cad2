//! Fuzz doors of what models and their servers send (`fuzz/`, and
//! `tests/fuzz_corpus.rs`, which replays every kept input): each takes any
//! bytes, and panics only when a property fails.

use serde_json::Value;

use super::Delta;
use super::json_action::{Action, extract_action};
use super::sse::{Decoder, SseEvent};
use super::text_calls::{TextCall, read_call};
use super::think::ThinkTags;

/// Chunk sizes from a seed: 0 cuts at every byte, others vary from 1 to 17.
fn chunks(seed: u8, data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let (mut rest, mut s) = (data, usize::from(seed));
    while !rest.is_empty() {
        s = s.wrapping_mul(31).wrapping_add(7);
        let n = if seed == 0 { 1 } else { 1 + s % 17 }.min(rest.len());
        out.push(&rest[..n]);
        rest = &rest[n..];
    }
    out
}

/// The events of `pieces` pushed one after another, up to the first line
/// that is not UTF-8 (`Err`), as the provider's stream reads them.
fn events(pieces: &[&[u8]]) -> Vec<Result<SseEvent, ()>> {
    let mut decoder = Decoder::default();
    let mut out = Vec::new();
    for piece in pieces {
        decoder.push(piece);
        loop {
            match decoder.next_event() {
                Ok(Some(event)) => out.push(Ok(event)),
                Ok(None) => break,
                Err(_) => {
                    out.push(Err(()));
                    return out;
                }
            }
        }
    }
    out
}

/// SSE: the same events for every split of a stream into chunks (the first
/// byte picks the split).
pub fn sse(data: &[u8]) {
    let Some((&seed, stream)) = data.split_first() else {
        return;
    };
    let whole = events(&[stream]);
    let split = events(&chunks(seed, stream));
    assert_eq!(whole, split, "split {seed} of {} bytes", stream.len());
}

/// What a string looks like with JSON's escapes read (`\n`, `\"`, `\u0041`
/// …); other text as it is.
fn unescaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('u') => {
                let hex: String = (0..4).filter_map(|_| chars.next()).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) => out.push(ch),
                    None => {
                        out.push_str("\\u");
                        out.push_str(&hex);
                    }
                }
            }
            Some(other) => out.push(super::json_reply::simple_escape(other).unwrap_or(other)),
            None => out.push('\\'),
        }
    }
    out
}

/// Whether every string of `value` (keys too) occurs in `text`, as it is
/// or with JSON's escapes read once or twice (arguments written as a
/// string of JSON).
fn occurs_in(value: &Value, text: &str, once: &str, twice: &str) -> Result<(), String> {
    let found = |s: &str| {
        // A JSON escape may stand for a surrogate pair or a character the
        // readers made whole; pieces are looked for line by line.
        s.split(['\n', '\r'])
            .all(|part| text.contains(part) || once.contains(part) || twice.contains(part))
    };
    match value {
        Value::String(s) if !found(s) => Err(format!("{s:?} is not in the text")),
        Value::Array(items) => items
            .iter()
            .try_for_each(|v| occurs_in(v, text, once, twice)),
        Value::Object(map) => map.iter().try_for_each(|(k, v)| {
            if found(k) {
                occurs_in(v, text, once, twice)
            } else {
                Err(format!("key {k:?} is not in the text"))
            }
        }),
        _ => Ok(()),
    }
}

/// Tool calls written as text (the JSON-action protocol, `<tool_call>`
/// and bare JSON): a call read from a reply names a tool and arguments
/// that occur in it; arguments are always an object.
pub fn tool_text(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let once = unescaped(text);
    let twice = unescaped(&once);
    let check = |name: &str, arguments: &Value, how: &str| {
        let name_value = Value::String(name.to_string());
        if let Err(e) = occurs_in(&name_value, text, &once, &twice)
            .and_then(|()| occurs_in(arguments, text, &once, &twice))
        {
            panic!("{how}: {e}: {name} {arguments} from {text:?}");
        }
    };
    if let Action::Call { name, arguments } = extract_action(text) {
        assert!(arguments.is_object(), "arguments {arguments}");
        check(&name, &arguments, "json_action");
    }
    let offered = ["read_file", "run_command", "propose_edits", "search"];
    if let TextCall::Call(name, arguments) = read_call(text, &offered) {
        assert!(offered.contains(&name.as_str()), "{name} was not offered");
        check(&name, &arguments, "text call");
    }
    if let Some((name, arguments)) = super::loose_call(text) {
        check(&name, &arguments, "loose call");
    }
}

/// The thinking and the answer `pieces` split into.
fn think_run(pieces: &[&str]) -> (String, String) {
    let mut tags = ThinkTags::default();
    let (mut answer, mut thinking) = (String::new(), String::new());
    let mut out = |d: Delta<'_>| match d {
        Delta::Text(t) => answer.push_str(t),
        Delta::Reasoning(t) => thinking.push_str(t),
    };
    for piece in pieces {
        tags.split(piece, &mut out);
    }
    tags.end(&mut out);
    (thinking, answer)
}

/// `<think>` splitting: the same thinking and answer for every split of a
/// reply into streamed pieces, each of them a piece of the reply.
pub fn think(data: &[u8]) {
    let Some((&seed, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let mut pieces = Vec::new();
    let mut at = 0;
    for chunk in chunks(seed, text.as_bytes()) {
        let mut end = (at + chunk.len()).min(text.len());
        while end < text.len() && !text.is_char_boundary(end) {
            end += 1;
        }
        if end > at {
            pieces.push(&text[at..end]);
            at = end;
        }
        if at >= text.len() {
            break;
        }
    }
    let whole = think_run(&[text]);
    let split = think_run(&pieces);
    assert_eq!(whole, split, "split {seed} of {text:?}");
    let (thinking, answer) = whole;
    assert!(
        text.contains(&thinking),
        "thinking {thinking:?} of {text:?}"
    );
    assert!(text.contains(&answer), "answer {answer:?} of {text:?}");
    assert!(thinking.len() + answer.len() <= text.len());
}
