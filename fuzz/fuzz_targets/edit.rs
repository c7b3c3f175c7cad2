//! Proposal -> validate -> bundle -> apply, then roll back: byte-identical.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agent_tui::review::fuzzing::edit(data));
