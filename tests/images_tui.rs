//! Images in the TUI (SPEC 20), in a real terminal (tmux) against a
//! loopback model: `@red` then Tab attaches the root's `red.png` (a chip on
//! the input, the bytes in the request, the chip under the message) and a
//! resumed session still shows it; a pasted image path attaches that
//! file; Ctrl+V reads a real X clipboard (Xvfb + xclip), and says what is
//! missing when no clipboard tool is installed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use base64::Engine as _;
use support::Env;
use support::jobs::{config, project, sse};
use support::llm_server::{LlmServer, openai};
use support::tmux::{Tmux, start_agent};

fn red_png() -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/images/red.png"))
        .unwrap()
}

fn data_url(bytes: &[u8]) -> String {
    format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

/// The model calls' messages, as text.
fn asked(server: &LlmServer) -> Vec<String> {
    server
        .requests()
        .into_iter()
        .filter(|r| r.is_model_call())
        .map(|r| r.body["messages"].to_string())
        .collect()
}

/// The agent in tmux with its own `PATH` and display variables.
fn start_with(env: &Env, cfg: &Path, root: &Path, name: &str, vars: &str) -> Tmux {
    let home = env.home.path();
    let command = format!(
        "env -i {vars} HOME={h} TERM=xterm-256color AGENT_TUI_HOME={h}/state \
         XDG_CONFIG_HOME={h}/config TEST_LLM_KEY={key} {bin} --config {cfg} {root}",
        h = home.display(),
        key = support::jobs::KEY,
        bin = env!("CARGO_BIN_EXE_agent-tui"),
        cfg = cfg.display(),
        root = root.display(),
    );
    Tmux::start(name, &command, (120, 36))
}

#[test]
fn at_red_tab_attaches_the_image_and_a_resumed_session_still_shows_it() {
    let env = Env::new();
    let dir = project();
    let png = red_png();
    std::fs::write(dir.path().join("red.png"), &png).unwrap();
    let server = LlmServer::start(vec![sse(openai::text(&["It is red."]))]);
    let cfg = config(&env, "openai", &server.url(), "vision = true");
    {
        let tmux = start_agent(&env, &cfg, dir.path(), "img-at", "");
        tmux.wait_for("F1 help");
        // The root's files are listed (Tab completes from them).
        tmux.wait_for("index 4 files");
        tmux.keys(&["-l", "what colour is @red"]);
        tmux.keys(&["Tab"]);
        let screen = tmux.wait_for("▣ red.png · PNG 4×3 · 73 B");
        assert!(screen.contains("what colour is @red.png"), "{screen}");
        tmux.keys(&["Enter"]);
        let screen = tmux.wait_for("It is red.");
        // Under the message, with what the model counts for it.
        assert!(
            screen.contains("▣ red.png · PNG 4×3 · 73 B · ~255 tok (estimate)"),
            "{screen}"
        );
        // The answer shows before the job's end is in: wait for that,
        // then for the TUI to be gone (its store written).
        tmux.wait_for(" done ");
        tmux.quit();
    }
    let calls = asked(&server);
    assert_eq!(calls.len(), 1);
    assert!(calls[0].contains(&data_url(&png)), "{}", calls[0]);
    let tmux = start_agent(&env, &cfg, dir.path(), "img-at2", "--continue");
    let screen = tmux.wait_for("It is red.");
    assert!(
        screen.contains("▣ red.png · PNG 4×3 · 73 B · ~255 tok (estimate)"),
        "the resumed session shows its image: {screen}"
    );
}

#[test]
fn a_pasted_image_path_attaches_that_file() {
    let env = Env::new();
    let dir = project();
    let png = red_png();
    let away = tempfile::tempdir().unwrap();
    let file = away.path().join("screen shot.png");
    std::fs::write(&file, &png).unwrap();
    let server = LlmServer::start(vec![sse(openai::text(&["A shot."]))]);
    let cfg = config(&env, "openai", &server.url(), "vision = true");
    let tmux = start_agent(&env, &cfg, dir.path(), "img-paste", "");
    tmux.wait_for("F1 help");
    // As a file manager's drop pastes it: quoted, bracketed.
    let quoted = format!("'{}'", file.display());
    let set = tmux
        .cmd()
        .args(["set-buffer", "--", &quoted])
        .status()
        .unwrap();
    assert!(set.success());
    let pasted = tmux
        .cmd()
        .args(["paste-buffer", "-p", "-t", "e2e"])
        .status()
        .unwrap();
    assert!(pasted.success());
    let screen = tmux.wait_for("▣ screen shot.png · PNG 4×3 · 73 B");
    assert!(screen.contains("[image screen shot.png]"), "{screen}");
    assert!(!screen.contains(&quoted), "{screen}");
    tmux.keys(&["-l", "what is this?"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("A shot.");
    assert!(asked(&server)[0].contains(&data_url(&png)));
}

/// An X server of its own (Xvfb) on a free display, stopped when dropped.
struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    fn start() -> Option<Xvfb> {
        let xvfb = PathBuf::from("/usr/bin/Xvfb");
        if !xvfb.exists() || !Path::new("/usr/bin/xclip").exists() {
            assert!(
                std::env::var_os("AGENT_TUI_REQUIRE_CHROMIUM").is_none(),
                "Xvfb or xclip is missing (apt-get install xvfb xclip)"
            );
            eprintln!("skipped: Xvfb or xclip missing (apt-get install xvfb xclip)");
            return None;
        }
        // `-displayfd 1`: Xvfb picks a free display and prints its number
        // once it accepts connections (a socket file alone may be stale, or
        // there before the server listens).
        let mut child = Command::new(xvfb)
            .args([
                "-displayfd",
                "1",
                "-nolisten",
                "tcp",
                "-screen",
                "0",
                "320x200x24",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            let mut line = String::new();
            let _ = std::io::BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("Xvfb did not report its display within 10 s");
        let n: u32 = line.trim().parse().expect("Xvfb's display number");
        let display = format!(":{n}");
        Some(Xvfb { child, display })
    }

    /// Puts `bytes` on the clipboard as `kind` (xclip serves it until the
    /// server ends).
    fn copy(&self, bytes: &[u8], kind: &str) {
        let mut xclip = Command::new("/usr/bin/xclip")
            .args(["-selection", "clipboard", "-t", kind, "-i"])
            .env("DISPLAY", &self.display)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        use std::io::Write;
        xclip.stdin.take().unwrap().write_all(bytes).unwrap();
        assert!(xclip.wait().unwrap().success());
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn ctrl_v_attaches_the_x_clipboards_image() {
    let Some(x) = Xvfb::start() else { return };
    let env = Env::new();
    let dir = project();
    let png = red_png();
    let server = LlmServer::start(vec![sse(openai::text(&["From the clipboard."]))]);
    let cfg = config(&env, "openai", &server.url(), "vision = true");
    // Text first: the clipboard holds no image, and says what it holds.
    x.copy(b"just words", "text/plain");
    let vars = format!("PATH=/usr/bin:/bin DISPLAY={}", x.display);
    let tmux = start_with(&env, &cfg, dir.path(), "img-clip", &vars);
    tmux.wait_for("F1 help");
    tmux.keys(&["C-v"]);
    tmux.wait_for("the clipboard holds no image (it holds text/plain)");
    x.copy(&png, "image/png");
    tmux.keys(&["C-v"]);
    let screen = tmux.wait_for("▣ clipboard-1.png · PNG 4×3 · 73 B");
    assert!(screen.contains("[image clipboard-1.png]"), "{screen}");
    tmux.keys(&["-l", "and this?"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("From the clipboard.");
    let calls = asked(&server);
    assert!(calls[0].contains(&data_url(&png)), "{}", calls[0]);
}

#[test]
fn ctrl_v_without_a_clipboard_tool_names_both() {
    let env = Env::new();
    let dir = project();
    let server = LlmServer::start(vec![]);
    let cfg = config(&env, "openai", &server.url(), "");
    let empty = tempfile::tempdir().unwrap();
    let vars = format!("PATH={} DISPLAY=:0", empty.path().display());
    let tmux = start_with(&env, &cfg, dir.path(), "img-noclip", &vars);
    tmux.wait_for("F1 help");
    tmux.keys(&["C-v"]);
    let screen = tmux.wait_for("neither is installed");
    assert!(
        screen.contains("wl-paste (Wayland) or xclip (X11)"),
        "{screen}"
    );
}
