//! Everything a model request can fail with; each error knows whether it is
//! worth retrying and says what the user can do about it.

use crate::protocol::JobFailure;
use std::time::Duration;

use thiserror::Error;

pub use super::overflow::Overflow;

#[derive(Debug, Error)]
pub enum LlmError {
    #[error("provider `{provider}` needs an API key: export {var}=<your key>")]
    MissingKey { provider: String, var: String },
    #[error("cannot set up the HTTP client: {0}")]
    Client(String),
    #[error("cannot connect to {url}: {detail}; is the server running and base_url right?")]
    Connect { url: String, detail: String },
    #[error("{url} did not respond within {secs} s (agent.request_timeout_secs)")]
    Timeout { url: String, secs: u64 },
    #[error("{url} answered HTTP {status}: {message}{}", hint_for(*status, message))]
    Status {
        url: String,
        status: u16,
        message: String,
        retry_after: Option<Duration>,
    },
    #[error("the response from {url} broke off: {detail}")]
    StreamCut { url: String, detail: String },
    #[error("the provider reported an error mid-stream: {message}")]
    StreamError { message: String, retryable: bool },
    #[error("unexpected response from {url}: {detail}")]
    Protocol { url: String, detail: String },
    /// The request did not fit the model's context window.
    #[error("{url} refused the request: it does not fit the model's context window ({})", overflow.message)]
    ContextOverflow { url: String, overflow: Overflow },
}

impl LlmError {
    /// The error with every copy of `key` (plain or URL-encoded) in what the server said masked
    /// (some gateways quote the key they refused): it goes on into events,
    /// the store and the terminal.
    pub fn redact(self, key: Option<&str>) -> LlmError {
        let Some(key) = key.map(str::trim).filter(|k| k.len() >= 4) else {
            return self;
        };
        // As sent, and as a gateway may quote it back URL-encoded.
        let encoded: String = key
            .bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                    char::from(b).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect();
        let mask = |s: String| {
            let s = if s.contains(key) {
                s.replace(key, "[the API key]")
            } else {
                s
            };
            if encoded != key && s.contains(&encoded) {
                s.replace(&encoded, "[the API key]")
            } else {
                s
            }
        };
        match self {
            LlmError::Client(d) => LlmError::Client(mask(d)),
            LlmError::Connect { url, detail } => LlmError::Connect {
                url,
                detail: mask(detail),
            },
            LlmError::Status {
                url,
                status,
                message,
                retry_after,
            } => LlmError::Status {
                url,
                status,
                message: mask(message),
                retry_after,
            },
            LlmError::StreamCut { url, detail } => LlmError::StreamCut {
                url,
                detail: mask(detail),
            },
            LlmError::StreamError { message, retryable } => LlmError::StreamError {
                message: mask(message),
                retryable,
            },
            LlmError::Protocol { url, detail } => LlmError::Protocol {
                url,
                detail: mask(detail),
            },
            LlmError::ContextOverflow { url, mut overflow } => {
                overflow.message = mask(overflow.message);
                LlmError::ContextOverflow { url, overflow }
            }
            other @ (LlmError::MissingKey { .. } | LlmError::Timeout { .. }) => other,
        }
    }
}

/// Whether a refusal's `message` says the model takes no tools.
fn refuses_tools(message: &str) -> bool {
    let message = message.to_lowercase();
    [
        "does not support tools",
        "tools are not supported",
        "tools not supported",
        // vLLM started without a tool-call parser.
        "requires --enable-auto-tool-choice",
        // llama.cpp's server started without its Jinja templates
        // (`--no-jinja`, older builds): HTTP 500, or 400 in newer ones.
        "tools param requires --jinja",
    ]
    .iter()
    .any(|phrase| message.contains(phrase))
}

fn hint_for(status: u16, message: &str) -> &'static str {
    match status {
        400 | 500 if message.contains("--jinja") && refuses_tools(message) => {
            " (start llama.cpp's server with --jinja for native tools, or set tool_protocol = \
             \"json\" to describe them in the prompt)"
        }
        400 if refuses_tools(message) => {
            " (this model takes no native tools here: tool_protocol = \"json\" describes them \
             in the prompt)"
        }
        401 | 403 => " (check that the API key variable holds a valid key for this provider)",
        404 => " (check the provider's base_url and model name)",
        429 => " (rate limited; wait a moment or lower the request rate)",
        400 | 413 | 422 => {
            " (the request was refused; try another model or a shorter conversation)"
        }
        _ => "",
    }
}

impl LlmError {
    /// The server's words when it refused the request's tools for this
    /// model (Ollama: HTTP 400 "<model> does not support tools"; vLLM
    /// without a tool-call parser: "\"auto\" tool choice requires
    /// --enable-auto-tool-choice …"; llama.cpp without Jinja: HTTP 500
    /// "tools param requires --jinja flag").
    pub fn tools_unsupported(&self) -> Option<&str> {
        match self {
            LlmError::Status {
                status: 400 | 500,
                message,
                ..
            } if refuses_tools(message) => Some(message),
            _ => None,
        }
    }

    /// Whether sending the same request again may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::Connect { .. } | LlmError::Timeout { .. } | LlmError::StreamCut { .. } => {
                true
            }
            // A refusal of the tools is the same every time.
            LlmError::Status {
                status, message, ..
            } => {
                matches!(status, 408 | 409 | 425 | 429 | 500 | 502 | 503 | 504 | 529)
                    && !refuses_tools(message)
            }
            LlmError::StreamError { retryable, .. } => *retryable,
            LlmError::MissingKey { .. }
            | LlmError::Client(_)
            | LlmError::Protocol { .. }
            | LlmError::ContextOverflow { .. } => false,
        }
    }

    /// How long the server asked us to wait (`Retry-After`).
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            LlmError::Status { retry_after, .. } => *retry_after,
            LlmError::MissingKey { .. }
            | LlmError::Client(_)
            | LlmError::Connect { .. }
            | LlmError::Timeout { .. }
            | LlmError::StreamCut { .. }
            | LlmError::StreamError { .. }
            | LlmError::Protocol { .. }
            | LlmError::ContextOverflow { .. } => None,
        }
    }

    /// What `job.failed` says of it.
    pub fn failure(&self) -> JobFailure {
        match self {
            LlmError::MissingKey { .. } => JobFailure::MissingApiKey,
            LlmError::Client(_) => JobFailure::ClientSetup,
            LlmError::Connect { .. } => JobFailure::ConnectFailed,
            LlmError::Timeout { .. } => JobFailure::Timeout,
            LlmError::Status { .. } => JobFailure::HttpStatus,
            LlmError::StreamCut { .. } => JobFailure::StreamCut,
            LlmError::StreamError { .. } => JobFailure::StreamError,
            LlmError::Protocol { .. } => JobFailure::BadResponse,
            LlmError::ContextOverflow { .. } => JobFailure::ContextOverflow,
        }
    }

    /// The overflow, if this error is one.
    pub fn overflow(&self) -> Option<&Overflow> {
        match self {
            LlmError::ContextOverflow { overflow, .. } => Some(overflow),
            LlmError::MissingKey { .. }
            | LlmError::Client(_)
            | LlmError::Connect { .. }
            | LlmError::Timeout { .. }
            | LlmError::Status { .. }
            | LlmError::StreamCut { .. }
            | LlmError::StreamError { .. }
            | LlmError::Protocol { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16) -> LlmError {
        LlmError::Status {
            url: "u".into(),
            status: code,
            message: "m".into(),
            retry_after: None,
        }
    }

    #[test]
    fn retryable_statuses() {
        for code in [429, 500, 502, 503, 504, 529] {
            assert!(status(code).is_retryable(), "{code}");
        }
        for code in [400, 401, 403, 404, 422] {
            assert!(!status(code).is_retryable(), "{code}");
        }
        assert!(status(401).to_string().contains("API key"));
    }

    /// llama.cpp's server without Jinja refuses tools with HTTP 500: not
    /// retried, known as a refusal, and the hint names both ways out.
    #[test]
    fn llama_cpp_without_jinja_refuses_tools() {
        let refused = LlmError::Status {
            url: "u".into(),
            status: 500,
            message: "tools param requires --jinja flag".into(),
            retry_after: None,
        };
        assert!(!refused.is_retryable());
        assert_eq!(
            refused.tools_unsupported(),
            Some("tools param requires --jinja flag")
        );
        let said = refused.to_string();
        assert!(
            said.contains("--jinja for native tools") && said.contains("tool_protocol"),
            "{said}"
        );
    }
}

#[cfg(test)]
mod redact_tests {
    use super::*;

    #[test]
    fn a_key_is_masked_as_sent_and_url_encoded() {
        let key = "sk-a/b+c d";
        let err = LlmError::Status {
            url: "http://x".into(),
            status: 401,
            message: format!("bad key {key}, or sk-a%2Fb%2Bc%20d"),
            retry_after: None,
        }
        .redact(Some(key));
        let LlmError::Status { message, .. } = err else {
            panic!()
        };
        assert_eq!(message, "bad key [the API key], or [the API key]");
    }
}
