//! The SSE decoder: the same events for every split of a stream.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agent_tui::llm::fuzzing::sse(data));
