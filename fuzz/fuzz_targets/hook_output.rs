//! A hook's JSON decision: read or refused, never a panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agent_tui::agent::fuzzing::hook_output(data));
