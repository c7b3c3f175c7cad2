//! Markdown layout at random widths: never wider, streamed = whole.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agent_tui::tui::fuzzing::markdown(data));
