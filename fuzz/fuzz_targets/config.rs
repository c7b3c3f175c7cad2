//! Config files: parse or a clear error; a parsed config round-trips.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agent_tui::config::fuzzing::config(data));
