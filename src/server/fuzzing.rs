//! Fuzz door of the server (`fuzz/`, `tests/fuzz_corpus.rs`): any request
//! (method, path and query, headers, `Last-Event-ID`, body) through the
//! real router in process, on a real engine over a scratch root with no
//! provider: an answer within 10 s, never a panic or a 500.

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use tower::ServiceExt;

use super::{Workspace, app, router};
use crate::agent::{EngineBuilder, FrontEnd, Providers, new_token, token_sha256};

/// The routes requests start from (the rest of the path is the input's).
const ROUTES: [&str; 24] = [
    "/api/v1/agent/apply",
    "/api/v1/agent/audit",
    "/api/v1/agent/checkpoints",
    "/api/v1/agent/checkpoints/cp_1",
    "/api/v1/agent/code/search",
    "/api/v1/agent/exec",
    "/api/v1/agent/fs/list",
    "/api/v1/agent/fs/patch",
    "/api/v1/agent/fs/read",
    "/api/v1/agent/fs/search",
    "/api/v1/agent/fs/write",
    "/api/v1/agent/hooks",
    "/api/v1/agent/hooks/test",
    "/api/v1/agent/index",
    "/api/v1/agent/jobs/job_1/events",
    "/api/v1/agent/jobs/job_1/stream",
    "/api/v1/agent/mcp/call",
    "/api/v1/agent/models",
    "/api/v1/agent/run",
    "/api/v1/agent/sessions",
    "/api/v1/agent/usage",
    "/api/v1/agent/workspaces",
    "/api/v1/health",
    "/openapi.json",
];

const METHODS: [Method; 6] = [
    Method::GET,
    Method::POST,
    Method::PUT,
    Method::DELETE,
    Method::OPTIONS,
    Method::PATCH,
];

/// A server to send requests to: its router, its token and its root.
pub struct Harness {
    rt: tokio::runtime::Runtime,
    router: Router,
    token: String,
    _root: tempfile::TempDir,
}

impl Harness {
    /// A server over a scratch root (the state home is the process's:
    /// point `AGENT_TUI_HOME` at a scratch folder first).
    pub fn start() -> Result<Harness, String> {
        let root = tempfile::tempdir().map_err(|e| e.to_string())?;
        std::fs::write(root.path().join("a.txt"), "one\ntwo\n").map_err(|e| e.to_string())?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let token = new_token().map_err(|e| e.to_string())?;
        let router = rt.block_on(async {
            let engine = EngineBuilder::new(root.path())
                .providers(Providers::Optional)
                .remember(false)
                .front_end(FrontEnd::Lasting)
                .front_name("serve")
                .build()
                .map_err(|e| e.to_string())?;
            let config = engine.config().server.clone();
            let accounts = engine.accounts().ok_or("the engine records nothing")?;
            let workspace = Workspace {
                id: "default".into(),
                name: "fuzz".into(),
                engine,
                users: vec!["*".into()],
                allowed_commands: Vec::new(),
                read_only: false,
            };
            let state = app(
                vec![workspace],
                accounts,
                config,
                Some(token_sha256(&token)),
                "fuzz:1".into(),
            );
            Ok::<Router, String>(router(state))
        })?;
        Ok(Harness {
            rt,
            router,
            token,
            _root: root,
        })
    }

    /// Sends the request `data` describes: a method, whether to carry the
    /// token, a route, then (split by 0xFF) the rest of the path, header
    /// lines and the body.
    pub fn request(&self, data: &[u8]) {
        let Some(request) = self.build(data) else {
            return;
        };
        let what = format!("{} {}", request.method(), request.uri());
        let sent = self.router.clone().oneshot(request);
        let answer = self
            .rt
            .block_on(async { tokio::time::timeout(Duration::from_secs(10), sent).await });
        let status = match answer {
            Ok(Ok(response)) => response.status(),
            Ok(Err(never)) => match never {},
            Err(_) => panic!("{what}: no answer within 10 s"),
        };
        assert_ne!(status, StatusCode::INTERNAL_SERVER_ERROR, "{what}");
    }

    fn build(&self, data: &[u8]) -> Option<Request<Body>> {
        let [method, flags, route, rest @ ..] = data else {
            return None;
        };
        let mut parts = rest.split(|b| *b == 0xFF);
        let tail = String::from_utf8_lossy(parts.next().unwrap_or_default());
        let headers = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
        let body = parts.next().unwrap_or_default().to_vec();
        let route = ROUTES[usize::from(*route) % ROUTES.len()];
        let path = if flags & 2 == 0 {
            format!("{route}{tail}")
        } else {
            format!("{route}?workspace_id=default&{tail}")
        };
        let mut request = Request::builder()
            .method(METHODS[usize::from(*method) % METHODS.len()].clone())
            .uri(path)
            .header("host", "127.0.0.1");
        if flags & 1 == 0 {
            request = request.header("authorization", format!("Bearer {}", self.token));
        }
        if flags & 4 == 0 {
            request = request.header("content-type", "application/json");
        }
        for line in headers.lines() {
            if let Some((name, value)) = line.split_once(':') {
                request = request.header(name.trim(), value.trim());
            }
        }
        request.body(Body::from(body)).ok()
    }
}
