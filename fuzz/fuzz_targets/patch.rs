//! `fs/patch` unified diffs: our own diffs apply; any other text is refused cleanly.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agent_tui::agent::fuzzing::patch(data));
