//! Real Chromium for the web page: Debian's `chromium` driven headless by
//! its `chromedriver` over WebDriver (fantoccini), plus what the browser
//! printed to its console. Tests skip with a printed reason where the two
//! are absent, unless `AGENT_TUI_REQUIRE_CHROMIUM` is set (CI).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const DRIVER: &str = "/usr/bin/chromedriver";

/// Whether the browser tests can run here (else why not, printed).
pub fn available() -> bool {
    let there = std::path::Path::new(CHROMIUM).exists() && std::path::Path::new(DRIVER).exists();
    if !there {
        assert!(
            std::env::var_os("AGENT_TUI_REQUIRE_CHROMIUM").is_none(),
            "AGENT_TUI_REQUIRE_CHROMIUM is set but {CHROMIUM} or {DRIVER} is missing \
             (apt-get install chromium chromium-driver)"
        );
        eprintln!(
            "skipped: {CHROMIUM} or {DRIVER} missing (apt-get install chromium chromium-driver)"
        );
    }
    there
}

/// A chromedriver on a free loopback port, stopped when dropped.
pub struct Driver {
    child: Child,
    pub port: u16,
}

impl Drop for Driver {
    /// Stops chromedriver and every browser it started (its own process
    /// group: a test that failed before closing its browser leaves none).
    fn drop(&mut self) {
        let group = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

impl Driver {
    pub fn start() -> Driver {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(DRIVER)
            .arg(format!("--port={port}"))
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Driver { child, port }
    }

    /// A headless Chromium window of `width` x `height`.
    pub async fn browser(&self, width: u32, height: u32) -> Client {
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": CHROMIUM,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--no-first-run",
                         format!("--window-size={width},{height}")],
            }),
        );
        caps.insert("goog:loggingPrefs".into(), json!({"browser": "ALL"}));
        ClientBuilder::rustls()
            .unwrap()
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{}", self.port))
            .await
            .unwrap()
    }

    /// What the page printed to the console since the last call (Chrome's
    /// log endpoint beside WebDriver's).
    pub async fn console(&self, client: &Client) -> Vec<Value> {
        let id = client.session_id().await.unwrap().unwrap();
        let r: Value = reqwest::Client::new()
            .post(format!(
                "http://127.0.0.1:{}/session/{id}/se/log",
                self.port
            ))
            .json(&json!({"type": "browser"}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        r["value"].as_array().cloned().unwrap_or_default()
    }
}

/// Waits (at most `secs`) until `script` (a function body returning a
/// value) returns something truthy; that value.
pub async fn until(client: &Client, secs: u64, what: &str, script: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let v = client.execute(script, vec![]).await.unwrap();
        let truthy = match &v {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::String(s) => !s.is_empty(),
            Value::Number(n) => n.as_f64() != Some(0.0),
            Value::Array(a) => !a.is_empty(),
            Value::Object(_) => true,
        };
        if truthy {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The element with `data-testid` = `id` (waiting for it).
pub async fn testid(client: &Client, id: &str) -> fantoccini::elements::Element {
    client
        .wait()
        .at_most(Duration::from_secs(20))
        .for_element(Locator::Css(&format!("[data-testid={id}]")))
        .await
        .unwrap_or_else(|e| panic!("no [data-testid={id}]: {e}"))
}

/// Browser console entries that are the page's own errors (a dropped or
/// aborted connection is logged by Chromium itself as `net::ERR_…`).
pub fn errors(entries: &[Value]) -> Vec<&Value> {
    entries
        .iter()
        .filter(|e| e["level"] == "SEVERE")
        .filter(|e| !e["message"].as_str().unwrap_or("").contains("net::ERR_"))
        .collect()
}

/// The test's end: the page logged no error of its own; the browser goes.
pub async fn no_errors_then_close(driver: &Driver, b: Client) {
    let console = driver.console(&b).await;
    assert!(errors(&console).is_empty(), "console errors: {console:?}");
    b.close().await.unwrap();
}

/// Signs in at `base` from the fragment and waits for the workspaces.
pub async fn sign_in(b: &Client, base: &str, token: &str) {
    b.goto(&format!("{base}/#token={token}")).await.unwrap();
    until(
        b,
        20,
        "workspaces listed",
        "return document.querySelectorAll('[data-testid=workspace-select] option').length",
    )
    .await;
}

/// Types `text` into the instruction box and sends it with Enter (the
/// focus stays in the box, as when a person types).
pub async fn send_with_enter(b: &Client, text: &str) {
    let enter = char::from(fantoccini::key::Key::Enter);
    testid(b, "instruction")
        .await
        .send_keys(&format!("{text}{enter}"))
        .await
        .unwrap();
}
