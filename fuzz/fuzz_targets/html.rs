//! Web pages made Markdown: no panic, bounded, squeezed.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agent_tui::web::fuzzing::html(data));
