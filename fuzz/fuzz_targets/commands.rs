//! Custom command files: parsed or skipped; arguments kept whole.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agent_tui::agent::fuzzing::commands(data));
