//! The server's requests (bodies, headers, query strings, Last-Event-ID)
//! through the real router in process: an answer, never a panic or a 500.
#![no_main]

use std::sync::OnceLock;

use agent_tui::server::fuzzing::Harness;

static HARNESS: OnceLock<Harness> = OnceLock::new();
static HOME: OnceLock<tempfile::TempDir> = OnceLock::new();

libfuzzer_sys::fuzz_target!(
    init: {
        let home = tempfile::tempdir().expect("a scratch state home");
        // SAFETY: set once, before the harness starts any thread.
        unsafe { std::env::set_var("AGENT_TUI_HOME", home.path()) };
        let _ = HOME.set(home);
        let harness = Harness::start().expect("the server starts");
        let _ = HARNESS.set(harness);
    },
    |data: &[u8]| {
        if let Some(harness) = HARNESS.get() {
            harness.request(data);
        }
    }
);
