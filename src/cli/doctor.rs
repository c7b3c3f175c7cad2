//! `agent-tui doctor`: which config, state dir and provider are in force, and
//! whether the provider's server answers. Exit 1 if something needs fixing.

use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use super::args::{DoctorArgs, GlobalArgs};
use super::{Exit, load_config, process_env};
use crate::config::{SETUP_HINT, ollama_answers};
use crate::store::StateDirs;
use crate::workspace::Workspace;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

pub fn run(global: &GlobalArgs, args: &DoctorArgs) -> Exit {
    let loaded = match load_config(global) {
        Ok(c) => c,
        Err(exit) => return exit,
    };
    println!("agent-tui {}", env!("CARGO_PKG_VERSION"));
    let mut healthy = true;
    match &loaded.path {
        Some(path) => line(
            "config",
            format!("{} (from {})", path.display(), loaded.origin),
        ),
        None => line("config", "no file found; built-in defaults in use".into()),
    }
    let state = StateDirs::locate(&process_env);
    match &state {
        Some(s) => line(
            "state home",
            format!("{} (from {})", s.home.display(), s.origin),
        ),
        None => {
            healthy = false;
            line(
                "state home",
                "cannot be determined: set AGENT_TUI_HOME".into(),
            );
        }
    }
    match Workspace::open(&args.root) {
        Ok(ws) => {
            line("agent root", ws.root().display().to_string());
            if let Some(s) = &state {
                line("root state", s.for_root(ws.root()).display().to_string());
            }
        }
        Err(e) => {
            healthy = false;
            line("agent root", format!("PROBLEM: {e}"));
        }
    }
    let choice = loaded.config.choose_provider(
        global.provider.as_deref(),
        global.model.as_deref(),
        &process_env,
        ollama_answers,
    );
    match choice {
        Err(e) => {
            eprintln!("agent-tui: {e}");
            return Exit::Usage;
        }
        Ok(None) => {
            line("provider", format!("PROBLEM: {SETUP_HINT}"));
            return Exit::Failed;
        }
        Ok(Some(choice)) => {
            let p = &choice.provider;
            line(
                "provider",
                format!(
                    "{} ({}): model {} at {}",
                    choice.name, choice.reason, p.model, p.base_url
                ),
            );
            if let Some(var) = &p.api_key_env {
                if process_env(var).is_some_and(|v| !v.trim().is_empty()) {
                    line("api key", format!("${var} is set"));
                } else {
                    healthy = false;
                    line(
                        "api key",
                        format!("PROBLEM: ${var} is not set; export it with your key"),
                    );
                }
            }
            match reach(&p.base_url) {
                Ok(report) => line("reachable", report),
                Err(problem) => {
                    healthy = false;
                    line("reachable", format!("PROBLEM: {problem}"));
                }
            }
        }
    }
    if healthy { Exit::Ok } else { Exit::Failed }
}

fn line(label: &str, text: String) {
    println!("{label:<11} {text}");
}

/// Opens a TCP connection to the host of `base_url`.
fn reach(base_url: &str) -> Result<String, String> {
    let (host, port) = host_port(base_url).ok_or_else(|| format!("cannot parse `{base_url}`"))?;
    let target = format!("{host}:{port}");
    let addrs: Vec<_> = (host.as_str(), port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {host}: {e}"))?
        .collect();
    let started = Instant::now();
    let mut last = String::from("no address");
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
            Ok(_) => {
                return Ok(format!(
                    "{target} answered in {} ms",
                    started.elapsed().as_millis()
                ));
            }
            Err(e) => last = e.to_string(),
        }
    }
    Err(format!("{target} does not answer: {last}"))
}

/// Host and port of an http(s) URL.
fn host_port(url: &str) -> Option<(String, u16)> {
    let (default_port, rest) = if let Some(rest) = url.strip_prefix("https://") {
        (443, rest)
    } else {
        (80, url.strip_prefix("http://")?)
    };
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit('@').next()?;
    if let Some(v6) = authority.strip_prefix('[') {
        let (host, after) = v6.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None => default_port,
        };
        return Some((host.to_string(), port));
    }
    match authority.rsplit_once(':') {
        Some((host, port)) => Some((host.to_string(), port.parse().ok()?)),
        None if !authority.is_empty() => Some((authority.to_string(), default_port)),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::host_port;

    #[test]
    fn parses_hosts_and_ports() {
        let hp = |u| host_port(u).map(|(h, p)| format!("{h}:{p}"));
        assert_eq!(
            hp("https://api.openai.com/v1").as_deref(),
            Some("api.openai.com:443")
        );
        assert_eq!(
            hp("http://127.0.0.1:11434/v1").as_deref(),
            Some("127.0.0.1:11434")
        );
        assert_eq!(hp("http://user:pw@host:8080").as_deref(), Some("host:8080"));
        assert_eq!(hp("http://[::1]:9/x").as_deref(), Some("::1:9"));
        assert_eq!(hp("ftp://x"), None);
        assert_eq!(hp("http://"), None);
    }
}
