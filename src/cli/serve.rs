//! `agent-tui serve` and `agent-tui serve token add|list|revoke`: builds one
//! engine per workspace through the door (all on the state home's store),
//! decides who may come in, listens, and stops cleanly on SIGTERM or
//! Ctrl+C (no new requests; running jobs end and are stored).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use super::Exit;
use super::args::{GlobalArgs, ServeAction, ServeArgs, TokenAction};
use super::context::{build_error, builder, failed, usage};
use crate::agent::{Accounts, Engine, Providers};
use crate::config::ServerConfig;
use crate::protocol::{EngineError, Role};
use crate::server::Workspace;

pub fn run(global: &GlobalArgs, args: &ServeArgs) -> Exit {
    match &args.action {
        Some(ServeAction::Token { action }) => token(global, action),
        None => serve(global, args),
    }
}

fn engine_failed(e: EngineError) -> Exit {
    match e {
        EngineError::Invalid { .. } | EngineError::NotFound { .. } => usage(e),
        e => failed(e),
    }
}

/// `serve token …`: the state home's store, no engine.
fn token(global: &GlobalArgs, action: &TokenAction) -> Exit {
    let accounts = match builder(global, Path::new(".")).accounts() {
        Ok(a) => a,
        Err(e) => return build_error(e),
    };
    let rt = match super::context::runtime() {
        Ok(rt) => rt,
        Err(exit) => return exit,
    };
    rt.block_on(async move {
        match action {
            TokenAction::Add { name, role } => {
                let role = Role::parse(role).unwrap_or_default();
                match accounts.add_token(name, role).await {
                    Ok(token) => {
                        eprintln!(
                            "token for {name} ({}), shown this once; only its sha256 is kept:",
                            role.as_str()
                        );
                        println!("{token}");
                        Exit::Ok
                    }
                    Err(e) => engine_failed(e),
                }
            }
            TokenAction::List { json } => match accounts.tokens().await {
                Ok(tokens) if *json => {
                    println!("{}", json!({ "tokens": tokens }));
                    Exit::Ok
                }
                Ok(tokens) if tokens.is_empty() => {
                    println!("no tokens (agent-tui serve token add NAME makes one)");
                    Exit::Ok
                }
                Ok(tokens) => {
                    for t in tokens {
                        let state = t
                            .revoked_at
                            .map_or("live".to_string(), |at| format!("revoked {at}"));
                        println!(
                            "{}  {}  made {}  {state}",
                            t.name,
                            t.role.as_str(),
                            t.created_at
                        );
                    }
                    Exit::Ok
                }
                Err(e) => engine_failed(e),
            },
            TokenAction::Revoke { name } => match accounts.revoke_token(name).await {
                Ok(true) => {
                    println!("revoked {name}'s token");
                    Exit::Ok
                }
                Ok(false) => usage(format!("no live token named {name} (serve token list)")),
                Err(e) => engine_failed(e),
            },
        }
    })
}

fn serve(global: &GlobalArgs, args: &ServeArgs) -> Exit {
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return failed(format!("cannot start the async runtime: {e}")),
    };
    let started = {
        let _guard = rt.enter();
        start(global, args)
    };
    let (workspaces, accounts, config) = match started {
        Ok(s) => s,
        Err(exit) => return exit,
    };
    rt.block_on(listen(args, workspaces, accounts, config))
}

/// The workspaces' engines (built on the current runtime; blocking).
fn start(
    global: &GlobalArgs,
    args: &ServeArgs,
) -> Result<(Vec<Workspace>, Accounts, ServerConfig), Exit> {
    // The first workspace's root (or --root) starts the first engine; the
    // others are built like it, on its store.
    let first = builder(global, &args.root)
        .providers(Providers::Optional)
        .remember(false)
        .front_end(crate::agent::FrontEnd::Lasting)
        .front_name("serve");
    let primary = first.build().map_err(build_error)?;
    let config = primary.config().server.clone();
    let accounts = primary
        .accounts()
        .ok_or_else(|| failed("internal error: the server's engine records nothing"))?;
    let mut workspaces = Vec::new();
    if config.workspaces.is_empty() {
        workspaces.push(Workspace {
            id: "default".into(),
            name: primary
                .root()
                .file_name()
                .map_or("default".into(), |n| n.to_string_lossy().to_string()),
            engine: primary.clone(),
            users: vec!["*".into()],
            allowed_commands: Vec::new(),
            read_only: false,
        });
    }
    for w in &config.workspaces {
        let root = crate::agent::expand_home(&w.root);
        let opened = if w.read_only {
            // Its own engine, even on the first one's root: it runs nothing.
            primary.open_root_read_only(&root).map(Some)
        } else if same_folder(&root, primary.root()) {
            Ok(None)
        } else {
            primary.open_root(&root).map(Some)
        };
        let engine: Engine = opened
            .map_err(|e| usage(format!("server.workspaces {:?}: {e}", w.id)))?
            .unwrap_or_else(|| primary.clone());
        workspaces.push(Workspace {
            id: w.id.clone(),
            name: if w.name.is_empty() {
                w.id.clone()
            } else {
                w.name.clone()
            },
            engine,
            users: w.users.clone(),
            allowed_commands: w.allowed_commands.clone(),
            read_only: w.read_only,
        });
    }
    Ok((workspaces, accounts, config))
}

fn same_folder(a: &Path, b: &Path) -> bool {
    std::fs::canonicalize(a).is_ok_and(|a| a == b)
}

fn loopback(addr: &SocketAddr) -> bool {
    addr.ip().is_loopback()
}

/// Listens until SIGTERM or Ctrl+C, then stops the engines.
async fn listen(
    args: &ServeArgs,
    workspaces: Vec<Workspace>,
    accounts: Accounts,
    config: ServerConfig,
) -> Exit {
    let bind = args.bind.clone().unwrap_or_else(|| config.bind.clone());
    let Ok(addr) = bind.parse::<SocketAddr>() else {
        return usage(format!(
            "--bind {bind:?} is not ADDRESS:PORT (127.0.0.1:8787)"
        ));
    };
    let stored = match accounts.tokens().await {
        Ok(t) => t.iter().filter(|t| t.revoked_at.is_none()).count(),
        Err(e) => return failed(e),
    };
    let has_users = stored > 0 || !config.users.is_empty();
    if !has_users && !loopback(&addr) {
        return usage(format!(
            "refusing to serve {addr} without users: anyone who reaches it could run commands. \
             Make a token first (agent-tui serve token add NAME --role admin) or bind 127.0.0.1"
        ));
    }
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(l) => l,
        Err(e) => return failed(format!("cannot listen on {addr}: {e}")),
    };
    let local = listener.local_addr().unwrap_or(addr);
    let run_token = if has_users {
        None
    } else {
        match crate::agent::new_token() {
            Ok(t) => Some(t),
            Err(e) => return failed(e),
        }
    };
    let run_sha = run_token.as_deref().map(crate::agent::token_sha256);
    let host = config.host_name.clone().unwrap_or_else(|| {
        let name = crate::platform::process::hostname();
        format!("{name}:{}", local.port())
    });
    let engines: Vec<Engine> = workspaces.iter().map(|w| w.engine.clone()).collect();
    let names: Vec<String> = workspaces.iter().map(|w| w.id.clone()).collect();
    let app = crate::server::app(workspaces, accounts, config, run_sha, host);
    if let Err(e) = crate::server::hosts::join(&app).await {
        return usage(e);
    }
    // Only a server that may serve says its token and port (a refused
    // second one would have replaced the first one's token file).
    if let Some(token) = &run_token
        && let Err(exit) = announce_run_token(token)
    {
        return exit;
    }
    if let Some(file) = &args.port_file
        && let Err(e) = std::fs::write(file, format!("{}\n", local.port()))
    {
        return failed(format!("cannot write the port to {}: {e}", file.display()));
    }
    crate::server::hosts::start(app.clone());
    crate::server::relay::start(app.clone());
    crate::server::queue::start(app.clone());
    eprintln!(
        "agent-tui serve: listening on http://{local} (workspaces: {}; the web page is at /, \
         sign in with the token); Ctrl+C or SIGTERM stops it",
        names.join(", ")
    );
    serve_until_stopped(listener, app, engines).await
}

/// Serves until SIGTERM or Ctrl+C, then drains (`server::drain`), leaves
/// the hosts' list and stops the engines.
async fn serve_until_stopped(
    listener: tokio::net::TcpListener,
    app: crate::server::AppState,
    engines: Vec<Engine>,
) -> Exit {
    let (stop, stopping) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        stop_signal().await;
        let _ = stop.send(true);
    });
    let mut accepting = stopping.clone();
    let server = axum::serve(listener, crate::server::router(app.clone())).with_graceful_shutdown(
        async move {
            let _ = accepting.wait_for(|s| *s).await;
        },
    );
    let mut server = tokio::spawn(server.into_future());
    let mut stopping = stopping;
    // The listener may end at once on the signal (no connection open):
    // the drain and the engines' stop must come all the same.
    let asked = stopping.clone();
    let early = tokio::select! {
        biased;
        _ = stopping.wait_for(|s| *s) => None,
        served = &mut server => match *asked.borrow() {
            true => Some(served),
            false => return ended(served),
        },
    };
    let grace = Duration::from_secs(app.config.shutdown_grace_secs);
    crate::server::drain::drain(&app, grace).await;
    crate::server::hosts::leave(&app).await;
    for engine in engines {
        if let Err(e) = engine.shutdown().await {
            eprintln!("agent-tui serve: while stopping: {e}");
        }
    }
    // Streams end with their engines; a client that holds on is let go.
    if let Some(served) = early {
        return ended(served);
    }
    match tokio::time::timeout(Duration::from_secs(5), server).await {
        Ok(served) => ended(served),
        Err(_) => ended(Ok(Ok(()))),
    }
}

/// How the listener ended.
fn ended(served: Result<std::io::Result<()>, tokio::task::JoinError>) -> Exit {
    match served {
        Ok(Ok(())) => {
            eprintln!("agent-tui serve: stopped");
            Exit::Ok
        }
        Ok(Err(e)) => failed(format!("the server stopped: {e}")),
        Err(e) => failed(format!("the server stopped: {e}")),
    }
}

/// The token of this run only (loopback, no users): printed, and written
/// to `server-token` (mode 0600) at the top of the state home.
fn announce_run_token(token: &str) -> Result<(), Exit> {
    let home: PathBuf = crate::agent::state_home()
        .ok_or_else(|| usage("cannot find the state home: set AGENT_TUI_HOME"))?;
    let file = home.join("server-token");
    write_private(&file, token)
        .map_err(|e| failed(format!("cannot write {}: {e}", file.display())))?;
    eprintln!(
        "agent-tui serve: no users are set up, so this run has its own token (also in {}):",
        file.display()
    );
    println!("{token}");
    Ok(())
}

fn write_private(file: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let _ = std::fs::remove_file(file);
    let mut f = crate::platform::fs::owner_only(&mut std::fs::OpenOptions::new())
        .write(true)
        .create_new(true)
        .open(file)?;
    f.write_all(text.as_bytes())?;
    f.write_all(b"\n")?;
    f.sync_all()
}

async fn stop_signal() {
    tokio::select! {
        _ = crate::platform::signal::terminate() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}
