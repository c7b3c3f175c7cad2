//! `<think>` splitting: the same thinking and answer for every split.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agent_tui::llm::fuzzing::think(data));
