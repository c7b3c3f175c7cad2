//! HTTP plumbing shared by the adapters: the client, sending a request with
//! errors mapped to `LlmError`, and turning a response into SSE events.

use std::time::{Duration, SystemTime};

use futures_util::{FutureExt, Stream, StreamExt};
use serde_json::Value;

use futures_util::future::BoxFuture;

use super::ServerWindow;
use super::sse::SseEvent;
use super::{LlmError, Provider, Request, TextSink, Turn};
use crate::config::ProviderConfig;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Most bytes of an error body we read and quote.
const MAX_ERROR_BODY: usize = 4096;

/// Where and as whom an adapter talks; the same for every wire protocol.
pub struct Endpoint {
    pub name: String,
    /// Without a trailing slash.
    pub base_url: String,
    pub model: String,
    pub key: Option<String>,
    pub client: reqwest::Client,
    /// Longest silence on a connection (`agent.request_timeout_secs`).
    pub idle: Duration,
    pub context_window: Option<u32>,
    pub max_output_tokens: Option<u32>,
    /// `[providers.NAME] vision`.
    pub vision: crate::config::Vision,
}

impl Endpoint {
    /// `builder` with the key as a bearer token, if the endpoint has one
    /// (OpenAI-compatible servers).
    pub fn bearer(&self, builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.key {
            Some(key) => builder.bearer_auth(key),
            None => builder,
        }
    }

    pub fn new(
        name: &str,
        config: &ProviderConfig,
        key: Option<String>,
        idle: Duration,
    ) -> Result<Endpoint, LlmError> {
        Ok(Endpoint {
            name: name.to_string(),
            base_url: config.base_url.trim_end_matches('/').to_string(),
            model: config.model.clone(),
            key,
            // A plain-http server (a local model) needs no certificate store.
            client: client(config.base_url.starts_with("http://"))?,
            idle,
            context_window: config.context_window,
            max_output_tokens: config.max_output_tokens,
            vision: config.vision,
        })
    }

    /// `vision` as written in the config.
    pub fn vision_word(&self) -> &'static str {
        match self.vision {
            crate::config::Vision::Auto => "\"auto\"",
            crate::config::Vision::Yes => "true",
            crate::config::Vision::No => "false",
        }
    }
}

/// What one wire protocol adds to an `Endpoint`; `Provider` follows from it.
pub trait WireAdapter: Send + Sync {
    fn endpoint(&self) -> &Endpoint;
    /// The request with the protocol's authentication headers.
    fn authorize(&self, builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder;
    /// The models-list URL used by `probe`.
    fn models_url(&self) -> String;
    fn run<'a>(
        &'a self,
        request: Request<'a>,
        on_text: TextSink<'a>,
    ) -> BoxFuture<'a, Result<Turn, LlmError>>;
    /// What the server says about its context window (nothing by default).
    fn server_window(&self) -> BoxFuture<'_, Option<ServerWindow>> {
        Box::pin(async { None })
    }
    /// The server's token count of a text (nothing by default).
    fn server_count<'a>(&'a self, _text: &'a str) -> BoxFuture<'a, Option<u64>> {
        Box::pin(async { None })
    }
    /// Whether the model reads images: the config's word, else nothing
    /// known (adapters that can ask their server do).
    fn server_sight(&self) -> BoxFuture<'_, super::Sight> {
        let said = super::vision::configured(self.endpoint()).unwrap_or(super::Sight::Unknown);
        Box::pin(async move { said })
    }
    /// How the model counts an image's tokens.
    fn image_rule(&self) -> crate::protocol::ImageRule {
        crate::protocol::ImageRule::Estimate
    }
    /// The server's prompt count of a rendered request (nothing by default).
    fn server_prompt_count<'a>(&'a self, _request: Request<'a>) -> BoxFuture<'a, Option<u64>> {
        Box::pin(async { None })
    }
}

impl<T: WireAdapter> Provider for T {
    fn name(&self) -> &str {
        &self.endpoint().name
    }

    fn model(&self) -> &str {
        &self.endpoint().model
    }

    fn supports_native_tools(&self) -> bool {
        true
    }

    fn context_window(&self) -> Option<u32> {
        self.endpoint().context_window
    }

    fn max_output_tokens(&self) -> Option<u32> {
        self.endpoint().max_output_tokens
    }

    fn step<'a>(
        &'a self,
        request: Request<'a>,
        on_text: TextSink<'a>,
    ) -> BoxFuture<'a, Result<Turn, LlmError>> {
        Box::pin(async move {
            let key = self.endpoint().key.as_deref();
            self.run(request, on_text).await.map_err(|e| e.redact(key))
        })
    }

    fn probe(&self) -> BoxFuture<'_, Result<String, LlmError>> {
        Box::pin(async move {
            let url = self.models_url();
            let key = self.endpoint().key.as_deref();
            probe_models(self.authorize(self.endpoint().client.get(&url)), &url)
                .await
                .map_err(|e| e.redact(key))
        })
    }

    fn discover_window(&self) -> BoxFuture<'_, Option<ServerWindow>> {
        self.server_window()
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, LlmError>> {
        Box::pin(async move {
            let url = self.models_url();
            let key = self.endpoint().key.as_deref();
            let body = models_body(self.authorize(self.endpoint().client.get(&url)), &url)
                .await
                .map_err(|e| e.redact(key))?;
            let mut ids: Vec<String> = body["data"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|m| m["id"].as_str().map(str::to_string))
                .collect();
            ids.sort();
            ids.dedup();
            Ok(ids)
        })
    }

    fn count_tokens<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Option<u64>> {
        self.server_count(text)
    }

    fn sight(&self) -> BoxFuture<'_, super::Sight> {
        self.server_sight()
    }

    fn images_counted(&self) -> crate::protocol::ImageRule {
        self.image_rule()
    }

    fn prompt_tokens<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Option<u64>> {
        self.server_prompt_count(request)
    }
}

/// The HTTP client. Silence limits (`agent.request_timeout_secs`) are
/// enforced by `send` and per batch of a stream, not per read, which would
/// re-arm a timer for every token. With `plain_http` the system's
/// certificates are not loaded (hundreds of files read for nothing).
pub fn client(plain_http: bool) -> Result<reqwest::Client, LlmError> {
    let builder = reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .user_agent(concat!("agent-tui/", env!("CARGO_PKG_VERSION")));
    let builder = if plain_http {
        builder.tls_certs_only(std::iter::empty())
    } else {
        builder
    };
    builder.build().map_err(|e| LlmError::Client(e.to_string()))
}

/// Bounds a provider probe (a models list request).
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(4);

/// Sends a models-list request and summarizes the answer; a body that does
/// not arrive in time or is not JSON is a failure too.
pub async fn probe_models(request: reqwest::RequestBuilder, url: &str) -> Result<String, LlmError> {
    let body = models_body(request, url).await?;
    let count = body["data"].as_array().map_or(0, Vec::len);
    let noun = if count == 1 { "model" } else { "models" };
    Ok(format!("{url} answered ({count} {noun} listed)"))
}

/// A models list's JSON, within the probe's time.
async fn models_body(request: reqwest::RequestBuilder, url: &str) -> Result<Value, LlmError> {
    let response = send(request.timeout(PROBE_TIMEOUT), url, PROBE_TIMEOUT).await?;
    let bytes = response
        .bytes()
        .await
        .map_err(|e| transport_error(url, &e, PROBE_TIMEOUT))?;
    let body: Value = serde_json::from_slice(&bytes).map_err(|e| LlmError::Protocol {
        url: url.to_string(),
        detail: format!("the models list is not JSON: {e}"),
    })?;
    Ok(body)
}

/// Maps a transport error of a request to `url`.
pub fn transport_error(url: &str, e: &reqwest::Error, idle: Duration) -> LlmError {
    if e.is_timeout() {
        LlmError::Timeout {
            url: url.to_string(),
            secs: idle.as_secs(),
        }
    } else if e.is_connect() {
        LlmError::Connect {
            url: url.to_string(),
            detail: root_cause(e),
        }
    } else {
        LlmError::StreamCut {
            url: url.to_string(),
            detail: root_cause(e),
        }
    }
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// Sends `request`; a non-2xx answer becomes `LlmError::Status` with the
/// server's message and `Retry-After`.
pub async fn send(
    request: reqwest::RequestBuilder,
    url: &str,
    idle: Duration,
) -> Result<reqwest::Response, LlmError> {
    let stalled = || LlmError::Timeout {
        url: url.to_string(),
        secs: idle.as_secs(),
    };
    let started = std::time::Instant::now();
    // The URL without its query: some providers take a key there.
    let at = url.split('?').next().unwrap_or_default();
    let response = tokio::time::timeout(idle, request.send())
        .await
        .map_err(|_| {
            tracing::warn!(url = at, secs = idle.as_secs(), "model request stalled");
            stalled()
        })?
        .map_err(|e| {
            tracing::warn!(url = at, error = %e, "model request failed");
            transport_error(url, &e, idle)
        })?;
    let status = response.status();
    tracing::info!(
        url = at,
        status = status.as_u16(),
        ms = started.elapsed().as_millis() as u64,
        "model request"
    );
    if status.is_success() {
        return Ok(response);
    }
    let retry_after = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(parse_retry_after);
    let body = tokio::time::timeout(idle, response.text())
        .await
        .map_err(|_| stalled())?
        .unwrap_or_default();
    if matches!(status.as_u16(), 400 | 413 | 422 | 500)
        && let Some(overflow) = super::overflow::detect(&body)
    {
        return Err(LlmError::ContextOverflow {
            url: url.to_string(),
            overflow,
        });
    }
    Err(LlmError::Status {
        url: url.to_string(),
        status: status.as_u16(),
        message: error_message(&body),
        retry_after,
    })
}

/// `Retry-After` as seconds or an HTTP date.
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// The human part of an error body: `error.message` (both providers), else
/// the text itself, shortened.
pub fn error_message(body: &str) -> String {
    if let Ok(v) = serde_json::from_str::<Value>(body) {
        let msg = v["error"]["message"]
            .as_str()
            .or_else(|| v["error"].as_str())
            .or_else(|| v["message"].as_str());
        if let Some(msg) = msg {
            return msg.to_string();
        }
    }
    let body = body.trim();
    if body.is_empty() {
        return "(empty body)".to_string();
    }
    let mut cut = body.len().min(MAX_ERROR_BODY);
    while !body.is_char_boundary(cut) {
        cut -= 1;
    }
    body[..cut].to_string()
}

/// The SSE events of a streaming response, in batches (see `Batcher`):
/// transport failures mid-way become `StreamCut` or `Timeout`, and a stream
/// silent for `idle` is a `Timeout`.
pub struct SseBatches {
    events: std::pin::Pin<Box<dyn Stream<Item = Result<SseEvent, LlmError>> + Send>>,
    batcher: Batcher,
    url: String,
    /// An error that followed events of the last batch; reported next.
    failed: Option<LlmError>,
}

impl SseBatches {
    pub fn new(response: reqwest::Response, url: &str, idle: Duration) -> SseBatches {
        let owned = url.to_string();
        // Fused: a batch may look for more after the last event.
        let events = super::sse::decode(Box::pin(response.bytes_stream()))
            .fuse()
            .map(move |item| {
                item.map_err(|e| match e {
                    Some(e) => transport_error(&owned, &e, idle),
                    None => LlmError::Protocol {
                        url: owned.clone(),
                        detail: "the stream is not UTF-8".into(),
                    },
                })
            });
        SseBatches {
            events: Box::pin(events),
            batcher: Batcher::new(idle),
            url: url.to_string(),
            failed: None,
        }
    }

    /// Fills `batch` with the next burst of events; false once the stream
    /// has ended.
    pub async fn next(&mut self, batch: &mut Vec<SseEvent>) -> Result<bool, LlmError> {
        batch.clear();
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let mut items = Vec::new();
        match self.batcher.next(&mut self.events, &mut items).await {
            Batch::Items => {}
            Batch::Ended => return Ok(false),
            Batch::Stalled => {
                return Err(LlmError::Timeout {
                    url: self.url.clone(),
                    secs: self.batcher.idle.as_secs(),
                });
            }
        }
        for item in items {
            match item {
                Ok(event) => batch.push(event),
                Err(e) if batch.is_empty() => return Err(e),
                Err(e) => {
                    self.failed = Some(e);
                    break;
                }
            }
        }
        Ok(true)
    }
}

/// Groups a stream's items into batches: each batch is one item waited
/// for plus every item already there, so a burst becomes one batch (and
/// one delta) while a lone token goes on the moment it comes: nothing is
/// held back to save wake-ups (a slow stream's every word would wait; the
/// screen keeps its own frame rate). A stream silent for `idle` is stalled.
#[derive(Debug)]
struct Batcher {
    idle: Duration,
    /// When the last batch was taken.
    last: Option<std::time::Instant>,
}

/// Items closer together than this make a fast stream: after one, the
/// connection is let run once more before the batch is closed (a yield,
/// no timer), so a burst split across reads stays one batch. A slower
/// stream's item goes on at once, without that extra turn of the runtime.
const FAST: Duration = Duration::from_millis(2);

/// What `Batcher::next` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Batch {
    /// The batch holds at least one item.
    Items,
    Ended,
    /// Nothing arrived for `idle`.
    Stalled,
}

impl Batcher {
    fn new(idle: Duration) -> Batcher {
        Batcher { idle, last: None }
    }

    /// The next batch into `batch`.
    async fn next<S>(&mut self, stream: &mut S, batch: &mut Vec<S::Item>) -> Batch
    where
        S: Stream + Unpin,
    {
        batch.clear();
        match tokio::time::timeout(self.idle, stream.next()).await {
            Ok(Some(item)) => batch.push(item),
            Ok(None) => return Batch::Ended,
            Err(_) => return Batch::Stalled,
        }
        // Take what is there already, never waiting for more: the HTTP
        // connection runs as a task of its own, so on a fast stream it is
        // let run once more (a yield, not a timer) before nothing is taken
        // to be left.
        let fast = self.last.is_some_and(|t| t.elapsed() < FAST);
        let mut yielded = false;
        loop {
            match stream.next().now_or_never() {
                Some(Some(item)) => {
                    batch.push(item);
                    yielded = false;
                }
                None if fast && !yielded => {
                    tokio::task::yield_now().await;
                    yielded = true;
                }
                Some(None) | None => break,
            }
        }
        self.last = Some(std::time::Instant::now());
        Batch::Items
    }
}

/// An error object a server sent inside its stream: a context overflow
/// when it says so, else a stream error.
pub fn in_stream_error(url: &str, error: &Value, retryable: bool) -> LlmError {
    let text = serde_json::json!({ "error": error }).to_string();
    if let Some(overflow) = super::overflow::detect(&text) {
        return LlmError::ContextOverflow {
            url: url.to_string(),
            overflow,
        };
    }
    let message = error["message"]
        .as_str()
        .map_or_else(|| error.to_string(), str::to_string);
    LlmError::StreamError { message, retryable }
}

/// Parses one SSE `data` payload as JSON.
pub fn json_data(url: &str, data: &str) -> Result<Value, LlmError> {
    serde_json::from_str(data).map_err(|e| LlmError::Protocol {
        url: url.to_string(),
        detail: format!("event data is not JSON ({e}): {}", shorten(data)),
    })
}

fn shorten(s: &str) -> String {
    s.chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A token that comes alone is handed on at once, however old the
    /// stream is; tokens already waiting go together.
    #[tokio::test(start_paused = true)]
    async fn a_lone_token_is_never_held_back() {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<u32>();
        let mut stream = tokio_stream_of(rx);
        let mut batcher = Batcher::new(Duration::from_secs(60));
        let mut batch = Vec::new();
        for i in 0..20u32 {
            // A slow stream: a token every 200 ms (5 a second), for 4 s.
            tokio::time::sleep(Duration::from_millis(200)).await;
            tx.send(i).unwrap();
            let asked = tokio::time::Instant::now();
            assert_eq!(batcher.next(&mut stream, &mut batch).await, Batch::Items);
            assert_eq!(batch, vec![i]);
            assert_eq!(asked.elapsed(), Duration::ZERO, "token {i} waited");
        }
        for i in 20..25 {
            tx.send(i).unwrap();
        }
        assert_eq!(batcher.next(&mut stream, &mut batch).await, Batch::Items);
        assert_eq!(batch, (20..25).collect::<Vec<_>>());
        drop(tx);
        assert_eq!(batcher.next(&mut stream, &mut batch).await, Batch::Ended);
    }

    #[tokio::test(start_paused = true)]
    async fn a_silent_stream_is_stalled() {
        let (_tx, rx) = tokio::sync::mpsc::unbounded_channel::<u32>();
        let mut stream = tokio_stream_of(rx);
        let mut batcher = Batcher::new(Duration::from_secs(5));
        let mut batch = Vec::new();
        assert_eq!(batcher.next(&mut stream, &mut batch).await, Batch::Stalled);
    }

    fn tokio_stream_of(
        rx: tokio::sync::mpsc::UnboundedReceiver<u32>,
    ) -> std::pin::Pin<Box<dyn Stream<Item = u32> + Send>> {
        Box::pin(futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|i| (i, rx))
        }))
    }

    #[test]
    fn retry_after_forms() {
        assert_eq!(parse_retry_after("3"), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after("0.5"), Some(Duration::from_millis(500)));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon"), None);
        assert_eq!(parse_retry_after("-1"), None);
    }

    #[test]
    fn error_messages_from_bodies() {
        assert_eq!(
            error_message(r#"{"error":{"message":"bad key","type":"x"}}"#),
            "bad key"
        );
        assert_eq!(
            error_message(
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            ),
            "Overloaded"
        );
        assert_eq!(error_message("plain"), "plain");
        assert_eq!(error_message(""), "(empty body)");
    }
}
