//! A scripted fake LLM provider for integration tests: a real HTTP/1.1 server on
//! 127.0.0.1 that answers every model call (`POST …/chat/completions`,
//! `POST …/messages`) with the next `Reply` of its script, or from a handler
//! once the script is used up, and records what it was sent. Other requests
//! (model lists, llama.cpp `/props`, Ollama `/api/show`) take the replies of
//! a side script, then 404. Builders for the OpenAI `/chat/completions` and
//! Anthropic `/v1/messages` streaming formats are in `openai` and `anthropic`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

/// What the server does with one request.
pub enum Reply {
    /// 200 text/event-stream. `events` are complete SSE payload strings, each already framed
    /// (e.g. "data: {...}\n\n" or "event: message_start\ndata: {...}\n\n"); the server concatenates
    /// them and streams the bytes split per `split`.
    Sse { events: Vec<String>, split: Split },
    /// Stream these SSE events, then close the connection abruptly without the final 0-length chunk.
    SseCut { events: Vec<String> },
    /// Any status with headers and a body (e.g. 429 with Retry-After, 500, 401 with JSON error body).
    /// Content-Length is always computed; Content-Type defaults to application/json.
    Status {
        code: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Send the response headers of an SSE stream, then nothing for `secs` seconds (to trigger
    /// client read timeouts), then close. Ends early if the client hangs up.
    Stall { secs: u64 },
    /// Stream events with `delay_ms` between chunks (for cancellation tests): each event one chunk.
    Slow { events: Vec<String>, delay_ms: u64 },
    /// Close the TCP connection immediately after reading the request, writing nothing.
    Drop,
}

impl Reply {
    /// `code` with `body` as JSON and no other header.
    pub fn json(code: u16, body: serde_json::Value) -> Reply {
        Reply::Status {
            code,
            headers: Vec::new(),
            body: body.to_string(),
        }
    }

    /// A 200 HTML page (a web page `web_fetch` reads).
    pub fn html(body: &str) -> Reply {
        Reply::Status {
            code: 200,
            headers: vec![("Content-Type".into(), "text/html; charset=utf-8".into())],
            body: body.to_string(),
        }
    }
}

/// How the bytes of an SSE body are cut into HTTP chunks (cuts may fall mid-line and
/// mid-UTF-8-character).
pub enum Split {
    Whole,
    EveryNBytes(usize),
    /// Chunk sizes 1..=max from a deterministic xorshift PRNG.
    Random {
        seed: u64,
        max: usize,
    },
}

#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// Names lowercased, in the order sent.
    pub headers: Vec<(String, String)>,
    /// Null if the body is empty or not JSON.
    pub body: Value,
    pub raw_body: String,
}

impl RecordedRequest {
    /// First header of that name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn header_is(&self, name: &str, value: &str) -> bool {
        self.header(name)
            .is_some_and(|v| v.eq_ignore_ascii_case(value))
    }
}

/// Answers model calls once the script is used up (a fake model).
pub type Handler = Box<dyn FnMut(&RecordedRequest) -> Reply + Send>;

struct State {
    script: VecDeque<Reply>,
    side: VecDeque<Reply>,
    /// Answers to tokenizer requests only (before `side`).
    tokenizer: VecDeque<Reply>,
    /// Answers to other requests by path (before `side`): each time a
    /// request's path ends with the key.
    paths: Vec<(String, String)>,
    handler: Option<Handler>,
    requests: Vec<RecordedRequest>,
    side_requests: Vec<RecordedRequest>,
}

impl RecordedRequest {
    /// A call to the model, as opposed to discovery or a models list.
    pub fn is_model_call(&self) -> bool {
        self.method == "POST"
            && (self.path.ends_with("/chat/completions") || self.path.ends_with("/messages"))
    }
}

struct Shared {
    state: Mutex<State>,
    open: AtomicUsize,
    accepted: AtomicUsize,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Counts a connection as open from accept until its task is dropped.
struct OpenGuard(Arc<Shared>);

impl Drop for OpenGuard {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::SeqCst);
    }
}

pub struct LlmServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl LlmServer {
    /// Starts on 127.0.0.1:0 on its own thread with its own tokio runtime (works from plain
    /// `#[test]` fns and from async tests). Replies are consumed in order, one per request, for
    /// any path; once the script is exhausted every request gets a 500
    /// `{"error":{"message":"script exhausted"}}`.
    pub fn start(script: Vec<Reply>) -> LlmServer {
        LlmServer::launch(script, Vec::new(), None)
    }

    /// Model calls take `script`; every other request takes `side` in order
    /// (404 once it is used up).
    pub fn start_with_side(script: Vec<Reply>, side: Vec<Reply>) -> LlmServer {
        LlmServer::launch(script, side, None)
    }

    /// Model calls take `script`; tokenizer requests (`…tokenize…`) take
    /// `tokenizer` in order, whatever other requests come between them (a
    /// server's health checks); the rest get 404.
    pub fn start_with_tokenizer(script: Vec<Reply>, tokenizer: Vec<Reply>) -> LlmServer {
        let server = LlmServer::launch(script, Vec::new(), None);
        server.shared.state().tokenizer = tokenizer.into();
        server
    }

    /// Every model call is answered by `handler`.
    pub fn start_model(handler: Handler) -> LlmServer {
        LlmServer::launch(Vec::new(), Vec::new(), Some(handler))
    }

    /// Model calls take `script`; any other request whose path ends with
    /// one of `paths`' keys is answered its JSON, every time (discovery in
    /// whatever order it asks); the rest get 404.
    pub fn start_with_paths(script: Vec<Reply>, paths: &[(&str, Value)]) -> LlmServer {
        let server = LlmServer::launch(script, Vec::new(), None);
        server.shared.state().paths = paths
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        server
    }

    /// A model, plus replies for other requests (discovery).
    pub fn start_model_with_side(handler: Handler, side: Vec<Reply>) -> LlmServer {
        LlmServer::launch(Vec::new(), side, Some(handler))
    }

    fn launch(script: Vec<Reply>, side: Vec<Reply>, handler: Option<Handler>) -> LlmServer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("nonblocking listener");
        let addr = listener.local_addr().expect("local addr");
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                script: script.into(),
                side: side.into(),
                tokenizer: VecDeque::new(),
                paths: Vec::new(),
                handler,
                requests: Vec::new(),
                side_requests: Vec::new(),
            }),
            open: AtomicUsize::new(0),
            accepted: AtomicUsize::new(0),
        });
        let (tx, mut rx) = oneshot::channel::<()>();
        let server_shared = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("llm-server".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("llm server runtime");
                rt.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                    loop {
                        tokio::select! {
                            _ = &mut rx => break,
                            accepted = listener.accept() => {
                                let Ok((stream, _)) = accepted else { continue };
                                server_shared.accepted.fetch_add(1, Ordering::SeqCst);
                                server_shared.open.fetch_add(1, Ordering::SeqCst);
                                let guard = OpenGuard(Arc::clone(&server_shared));
                                tokio::spawn(async move {
                                    let shared = Arc::clone(&guard.0);
                                    serve_connection(stream, shared).await;
                                    drop(guard);
                                });
                            }
                        }
                    }
                });
                // Dropping the runtime drops every connection task, closing their sockets.
                drop(rt);
            })
            .expect("spawn llm server thread");
        LlmServer {
            addr,
            shared,
            shutdown: Some(tx),
            thread: Some(thread),
        }
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// "http://127.0.0.1:PORT"
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Snapshot of the model calls received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.state().requests.clone()
    }

    /// The other requests (models lists, discovery), in arrival order.
    pub fn side_requests(&self) -> Vec<RecordedRequest> {
        self.shared.state().side_requests.clone()
    }

    /// Number of currently open TCP connections.
    pub fn connections_open(&self) -> usize {
        self.shared.open.load(Ordering::SeqCst)
    }

    /// Number of TCP connections accepted since start (to check keep-alive reuse).
    pub fn connections_accepted(&self) -> usize {
        self.shared.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for LlmServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn serve_connection(stream: TcpStream, shared: Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    let mut conn = Conn {
        stream,
        buf: Vec::new(),
    };
    while let Some(request) = conn.read_request().await {
        let close = request.header_is("connection", "close");
        let reply = {
            let mut state = shared.state();
            if request.is_model_call() {
                let reply = match state.script.pop_front() {
                    Some(reply) => Some(reply),
                    None => state.handler.as_mut().map(|h| h(&request)),
                };
                state.requests.push(request);
                reply.unwrap_or_else(|| Reply::Status {
                    code: 500,
                    headers: Vec::new(),
                    body: json!({"error": {"message": "script exhausted"}}).to_string(),
                })
            } else {
                let tokenizer = request.path.contains("tokenize");
                let by_path = state
                    .paths
                    .iter()
                    .find(|(k, _)| request.path.ends_with(k.as_str()))
                    .map(|(_, body)| Reply::Status {
                        code: 200,
                        headers: Vec::new(),
                        body: body.clone(),
                    });
                state.side_requests.push(request);
                let own = tokenizer.then(|| state.tokenizer.pop_front()).flatten();
                by_path
                    .or(own)
                    .or_else(|| state.side.pop_front())
                    .unwrap_or_else(|| Reply::Status {
                        code: 404,
                        headers: Vec::new(),
                        body: json!({"detail": "Not Found"}).to_string(),
                    })
            }
        };
        if !conn.respond(reply).await || close {
            return;
        }
    }
}

/// How an SSE response ends after its last piece.
enum End {
    Done,
    Cut,
    Stall(Duration),
}

const SSE_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\
Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n";

const REASONS: &[(u16, &str)] = &[
    (200, "OK"),
    (400, "Bad Request"),
    (401, "Unauthorized"),
    (404, "Not Found"),
    (429, "Too Many Requests"),
    (500, "Internal Server Error"),
    (503, "Service Unavailable"),
    (529, "Overloaded"),
];

/// One accepted connection: the socket and bytes read but not yet consumed.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    /// Reads more bytes into `buf`; false on EOF or error.
    async fn fill(&mut self) -> bool {
        let mut tmp = [0u8; 8192];
        match self.stream.read(&mut tmp).await {
            Ok(0) | Err(_) => false,
            Ok(n) => {
                self.buf.extend_from_slice(&tmp[..n]);
                true
            }
        }
    }

    async fn line(&mut self) -> Option<String> {
        loop {
            if let Some(i) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line = String::from_utf8_lossy(&self.buf[..i]).into_owned();
                self.buf.drain(..i + 2);
                return Some(line);
            }
            if !self.fill().await {
                return None;
            }
        }
    }

    async fn bytes(&mut self, n: usize) -> Option<Vec<u8>> {
        while self.buf.len() < n {
            if !self.fill().await {
                return None;
            }
        }
        Some(self.buf.drain(..n).collect())
    }

    /// One request; None on EOF or malformed input (the connection then closes).
    async fn read_request(&mut self) -> Option<RecordedRequest> {
        let mut line = self.line().await?;
        while line.is_empty() {
            line = self.line().await?; // stray CRLF between requests is allowed
        }
        let mut parts = line.split(' ');
        let (method, path) = (parts.next()?.to_string(), parts.next()?.to_string());
        let mut headers = Vec::new();
        loop {
            let line = self.line().await?;
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(':')?;
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
        let mut req = RecordedRequest {
            method,
            path,
            headers,
            body: Value::Null,
            raw_body: String::new(),
        };
        let chunked = req
            .header("transfer-encoding")
            .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
        let length: usize = match req.header("content-length") {
            Some(v) => v.parse().ok()?,
            None => 0,
        };
        let expects = (chunked || length > 0) && req.header_is("expect", "100-continue");
        if expects && !self.write(b"HTTP/1.1 100 Continue\r\n\r\n").await {
            return None;
        }
        let body = if chunked {
            let mut body = Vec::new();
            loop {
                let size_line = self.line().await?;
                let size = usize::from_str_radix(size_line.split(';').next()?.trim(), 16).ok()?;
                if size == 0 {
                    while !self.line().await?.is_empty() {} // trailers
                    break body;
                }
                body.extend(self.bytes(size + 2).await?.drain(..size));
            }
        } else {
            self.bytes(length).await?
        };
        req.raw_body = String::from_utf8_lossy(&body).into_owned();
        req.body = serde_json::from_slice(&body).unwrap_or(Value::Null);
        Some(req)
    }

    async fn write(&mut self, bytes: &[u8]) -> bool {
        self.stream.write_all(bytes).await.is_ok() && self.stream.flush().await.is_ok()
    }

    /// Sleeps for `dur` while watching the socket; false if the client hung up meanwhile.
    async fn wait(&mut self, dur: Duration) -> bool {
        let mut sleep = std::pin::pin!(tokio::time::sleep(dur));
        let mut tmp = [0u8; 1024];
        loop {
            tokio::select! {
                _ = &mut sleep => return true,
                read = self.stream.read(&mut tmp) => match read {
                    Ok(0) | Err(_) => return false,
                    Ok(n) => self.buf.extend_from_slice(&tmp[..n]),
                },
            }
        }
    }

    /// SSE head, then each non-empty piece as its own HTTP chunk (flushed, then a yield or
    /// `delay`), then `end`. True if the connection may serve another request.
    async fn sse<P: AsRef<[u8]>>(&mut self, pieces: &[P], delay: Duration, end: End) -> bool {
        if !self.write(SSE_HEAD).await {
            return false;
        }
        let pieces = pieces.iter().map(AsRef::as_ref).filter(|p| !p.is_empty());
        for (i, piece) in pieces.enumerate() {
            if i > 0 && !delay.is_zero() && !self.wait(delay).await {
                return false;
            }
            let mut frame = format!("{:x}\r\n", piece.len()).into_bytes();
            frame.extend_from_slice(piece);
            frame.extend_from_slice(b"\r\n");
            if !self.write(&frame).await {
                return false;
            }
            tokio::task::yield_now().await;
        }
        match end {
            End::Done => self.write(b"0\r\n\r\n").await,
            End::Cut => {
                let _ = self.stream.shutdown().await;
                false
            }
            End::Stall(dur) => {
                self.wait(dur).await;
                false
            }
        }
    }

    /// Sends `reply`; true if the connection may serve another request.
    async fn respond(&mut self, reply: Reply) -> bool {
        match reply {
            Reply::Sse { events, split } => {
                let bytes = events.concat().into_bytes();
                let pieces = split_bytes(&bytes, &split);
                self.sse(&pieces, Duration::ZERO, End::Done).await
            }
            Reply::SseCut { events } => self.sse(&events, Duration::ZERO, End::Cut).await,
            Reply::Slow { events, delay_ms } => {
                let delay = Duration::from_millis(delay_ms);
                self.sse(&events, delay, End::Done).await
            }
            Reply::Stall { secs } => {
                let end = End::Stall(Duration::from_secs(secs));
                self.sse::<&[u8]>(&[], Duration::ZERO, end).await
            }
            Reply::Status {
                code,
                headers,
                body,
            } => {
                let reason = REASONS
                    .iter()
                    .find(|(c, _)| *c == code)
                    .map_or("Status", |(_, r)| r);
                let mut head = format!("HTTP/1.1 {code} {reason}\r\n");
                for (name, value) in headers
                    .iter()
                    .filter(|(n, _)| !n.eq_ignore_ascii_case("content-length"))
                {
                    head.push_str(&format!("{name}: {value}\r\n"));
                }
                if !headers
                    .iter()
                    .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
                {
                    head.push_str("Content-Type: application/json\r\n");
                }
                head.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
                let close = headers.iter().any(|(n, v)| {
                    n.eq_ignore_ascii_case("connection") && v.eq_ignore_ascii_case("close")
                });
                self.write(head.as_bytes()).await && !close
            }
            Reply::Drop => false,
        }
    }
}

/// Cuts `bytes` into non-empty pieces per `split`.
fn split_bytes<'a>(bytes: &'a [u8], split: &Split) -> Vec<&'a [u8]> {
    match *split {
        Split::Whole => bytes.chunks(bytes.len().max(1)).collect(),
        Split::EveryNBytes(n) => bytes.chunks(n.max(1)).collect(),
        Split::Random { seed, max } => {
            let mut state = if seed == 0 {
                0x9E37_79B9_7F4A_7C15
            } else {
                seed
            };
            let mut pieces = Vec::new();
            let mut rest = bytes;
            while !rest.is_empty() {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let size = 1 + (state % max.max(1) as u64) as usize;
                let (piece, tail) = rest.split_at(size.min(rest.len()));
                pieces.push(piece);
                rest = tail;
            }
            pieces
        }
    }
}

/// Splits `s` into up to three non-empty pieces at char boundaries.
fn thirds(s: &str) -> Vec<String> {
    let bounds: Vec<usize> = s.char_indices().map(|(i, _)| i).chain([s.len()]).collect();
    let n = bounds.len() - 1;
    let cuts = [0, bounds[n / 3], bounds[2 * n / 3], s.len()];
    cuts.windows(2)
        .map(|w| &s[w[0]..w[1]])
        .filter(|p| !p.is_empty())
        .map(String::from)
        .collect()
}

/// OpenAI chat completions streaming (`chat.completion.chunk` events).
pub mod openai {
    use serde_json::{Value, json};

    pub const ID: &str = "chatcmpl-test";
    pub const MODEL: &str = "gpt-test";
    pub const CREATED: u64 = 1_700_000_000;
    pub const PROMPT_TOKENS: u64 = 11;
    pub const COMPLETION_TOKENS: u64 = 7;

    /// "data: <json>\n\n"
    pub fn chunk(json: Value) -> String {
        format!("data: {json}\n\n")
    }

    fn choice(delta: Value, finish_reason: Option<&str>) -> String {
        chunk(json!({
            "id": ID, "object": "chat.completion.chunk", "created": CREATED, "model": MODEL,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }))
    }

    fn finish(out: &mut Vec<String>, finish_reason: &str) {
        out.push(choice(json!({}), Some(finish_reason)));
        out.push(chunk(json!({
            "id": ID, "object": "chat.completion.chunk", "created": CREATED, "model": MODEL,
            "choices": [],
            "usage": {
                "prompt_tokens": PROMPT_TOKENS,
                "completion_tokens": COMPLETION_TOKENS,
                "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS,
            },
        })));
        out.push("data: [DONE]\n\n".to_string());
    }

    /// Role chunk, one `delta.content` per chunk, finish_reason "stop", usage chunk, [DONE].
    pub fn text(chunks: &[&str]) -> Vec<String> {
        let mut out = vec![choice(json!({"role": "assistant", "content": ""}), None)];
        out.extend(chunks.iter().map(|c| choice(json!({"content": c}), None)));
        finish(&mut out, "stop");
        out
    }

    /// (id, name, arguments_json_text) per call. Each call's first delta carries id, type,
    /// function.name and empty arguments (the very first also role "assistant", content null);
    /// then argument fragments in ~3 pieces; calls are interleaved round-robin by index.
    pub fn tool_calls(calls: &[(&str, &str, &str)]) -> Vec<String> {
        let per_call: Vec<Vec<Value>> = calls
            .iter()
            .enumerate()
            .map(|(i, (id, name, args))| {
                let mut deltas = vec![json!({
                    "index": i, "id": id, "type": "function",
                    "function": {"name": name, "arguments": ""},
                })];
                deltas.extend(
                    super::thirds(args)
                        .into_iter()
                        .map(|p| json!({"index": i, "function": {"arguments": p}})),
                );
                deltas
            })
            .collect();
        let rounds = per_call.iter().map(Vec::len).max().unwrap_or(0);
        let mut out = Vec::new();
        for round in 0..rounds {
            for delta in per_call.iter().filter_map(|d| d.get(round)) {
                let body = if out.is_empty() {
                    json!({"role": "assistant", "content": null, "tool_calls": [delta]})
                } else {
                    json!({"tool_calls": [delta]})
                };
                out.push(choice(body, None));
            }
        }
        finish(&mut out, "tool_calls");
        out
    }

    /// Thinking in `delta.<field>` (`reasoning_content`: llama.cpp, vLLM;
    /// `reasoning`: Ollama), then the answer, as those servers stream them.
    pub fn reasoning_then_text(field: &str, thinking: &[&str], text: &[&str]) -> Vec<String> {
        let mut out = vec![choice(json!({"role": "assistant", "content": null}), None)];
        out.extend(
            thinking
                .iter()
                .map(|t| choice(json!({ field: t, "content": null }), None)),
        );
        out.extend(text.iter().map(|c| choice(json!({"content": c}), None)));
        finish(&mut out, "stop");
        out
    }

    /// Like `tool_calls`, with thinking streamed first in `delta.reasoning_content`.
    pub fn reasoning_then_tool_calls(thinking: &str, calls: &[(&str, &str, &str)]) -> Vec<String> {
        let mut out = vec![choice(
            json!({"role": "assistant", "reasoning_content": thinking}),
            None,
        )];
        out.extend(tool_calls(calls));
        out
    }

    /// Text streamed with no usage chunk at the end (llama-cpp-python, or a
    /// server asked without `stream_options`).
    pub fn text_without_usage(chunks: &[&str]) -> Vec<String> {
        let mut out = vec![choice(json!({"role": "assistant", "content": ""}), None)];
        out.extend(chunks.iter().map(|c| choice(json!({"content": c}), None)));
        out.push(choice(json!({}), Some("stop")));
        out.push("data: [DONE]\n\n".to_string());
        out
    }

    /// A stream whose only event is `data: {"error":{"message":...,"type":"server_error"}}`.
    pub fn error_event(message: &str) -> Vec<String> {
        vec![chunk(
            json!({"error": {"message": message, "type": "server_error"}}),
        )]
    }

    /// A tokenizer's answer (llama-cpp-python `/extras/tokenize/count`).
    pub fn count(n: u64) -> super::Reply {
        super::Reply::Status {
            code: 200,
            headers: vec![],
            body: json!({"count": n}).to_string(),
        }
    }

    /// The answer to `auto`'s one-token probe: a non-streamed completion
    /// whose usage says the server counted `prompt` tokens.
    pub fn probe(prompt: u64) -> super::Reply {
        super::Reply::Status {
            code: 200,
            headers: vec![],
            body: json!({"id": "p", "object": "chat.completion", "choices": [{"index": 0,
                "message": {"role": "assistant", "content": "I"}, "finish_reason": "length"}],
                "usage": {"prompt_tokens": prompt, "completion_tokens": 1}})
            .to_string(),
        }
    }
}

/// Anthropic messages streaming (`event: NAME\ndata: JSON\n\n`).
pub mod anthropic {
    use serde_json::{Value, json};

    pub const ID: &str = "msg_test";
    pub const MODEL: &str = "claude-test";
    pub const INPUT_TOKENS: u64 = 11;
    pub const OUTPUT_TOKENS: u64 = 7;

    /// "event: NAME\ndata: JSON\n\n"
    pub fn event(name: &str, json: Value) -> String {
        format!("event: {name}\ndata: {json}\n\n")
    }

    fn start() -> String {
        event(
            "message_start",
            json!({"type": "message_start", "message": {
                "id": ID, "type": "message", "role": "assistant", "content": [], "model": MODEL,
                "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": INPUT_TOKENS, "output_tokens": 1},
            }}),
        )
    }

    fn block(out: &mut Vec<String>, index: usize, content_block: Value, deltas: Vec<Value>) {
        out.push(event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": content_block}),
        ));
        for delta in deltas {
            out.push(event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        out.push(event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
    }

    /// Inserts a ping after the first content_block_start (as the API does), then the
    /// message_delta and message_stop.
    fn finish(mut out: Vec<String>, stop_reason: &str) -> Vec<String> {
        out.insert(out.len().min(2), event("ping", json!({"type": "ping"})));
        out.push(event(
            "message_delta",
            json!({
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                "usage": {"output_tokens": OUTPUT_TOKENS},
            }),
        ));
        out.push(event("message_stop", json!({"type": "message_stop"})));
        out
    }

    fn text_deltas(chunks: &[&str]) -> Vec<Value> {
        chunks
            .iter()
            .map(|c| json!({"type": "text_delta", "text": c}))
            .collect()
    }

    /// A thinking block (thinking_delta pieces, then its signature), then
    /// a text block, as the API streams extended thinking.
    pub fn thinking_then_text(thinking: &[&str], text: &[&str]) -> Vec<String> {
        let mut out = vec![start()];
        let mut deltas: Vec<Value> = thinking
            .iter()
            .map(|t| json!({"type": "thinking_delta", "thinking": t}))
            .collect();
        deltas.push(json!({"type": "signature_delta", "signature": "EqQBCgIYAhIM"}));
        block(
            &mut out,
            0,
            json!({"type": "thinking", "thinking": ""}),
            deltas,
        );
        block(
            &mut out,
            1,
            json!({"type": "text", "text": ""}),
            text_deltas(text),
        );
        finish(out, "end_turn")
    }

    /// One text block with a text_delta per chunk; stop_reason "end_turn".
    pub fn text(chunks: &[&str]) -> Vec<String> {
        let mut out = vec![start()];
        block(
            &mut out,
            0,
            json!({"type": "text", "text": ""}),
            text_deltas(chunks),
        );
        finish(out, "end_turn")
    }

    /// Optional text block, then per (id, name, input_json_text) a tool_use block whose input
    /// arrives as input_json_delta fragments (an empty one first, as the API sends, then ~3
    /// pieces); stop_reason "tool_use".
    pub fn tool_uses(text_before: Option<&str>, calls: &[(&str, &str, &str)]) -> Vec<String> {
        let mut out = vec![start()];
        let mut index = 0;
        if let Some(text) = text_before {
            block(
                &mut out,
                index,
                json!({"type": "text", "text": ""}),
                text_deltas(&[text]),
            );
            index += 1;
        }
        for (id, name, input) in calls {
            let deltas = std::iter::once(String::new())
                .chain(super::thirds(input))
                .map(|p| json!({"type": "input_json_delta", "partial_json": p}))
                .collect();
            let content_block = json!({"type": "tool_use", "id": id, "name": name, "input": {}});
            block(&mut out, index, content_block, deltas);
            index += 1;
        }
        finish(out, "tool_use")
    }

    /// `event: error` with `{"type":"error","error":{"type":kind,"message":...}}`.
    pub fn error_event(kind: &str, message: &str) -> Vec<String> {
        vec![event(
            "error",
            json!({"type": "error", "error": {"type": kind, "message": message}}),
        )]
    }
}
