//! Tool calls written as text: a call read has arguments that occur in the reply.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agent_tui::llm::fuzzing::tool_text(data));
