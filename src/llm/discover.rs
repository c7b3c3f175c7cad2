//! Asking an OpenAI-compatible server how large its context window is:
//! `/v1/models` fields (vLLM `max_model_len`, OpenRouter and LM Studio
//! `context_length`), llama.cpp `GET /props` (`n_ctx`), Ollama `GET /api/ps`
//! (the loaded model's window) and `POST /api/show` (`num_ctx`), and
//! llama-cpp-python's refusal of a prompt longer than any window. Every
//! question is short and a server that answers none of them costs little.

use std::time::Duration;

use serde_json::{Value, json};

use super::ServerWindow;
use super::http::Endpoint;

/// Longest wait for one discovery answer.
const ASK_TIMEOUT: Duration = Duration::from_secs(2);
/// Ollama's window when a model sets no `num_ctx` (its documented default).
const OLLAMA_DEFAULT_NUM_CTX: u32 = 4096;
/// Hosted APIs whose model lists say nothing about windows: not asked.
const SILENT_HOSTS: &[&str] = &["api.openai.com"];

/// The window an OpenAI-compatible server reports for the endpoint's model.
pub async fn openai_compatible(ep: &Endpoint) -> Option<ServerWindow> {
    if SILENT_HOSTS.iter().any(|h| ep.base_url.contains(h)) {
        return None;
    }
    let root = ep.base_url.strip_suffix("/v1").unwrap_or(&ep.base_url);
    let get =
        |url: String| async move { ask(ep.bearer(ep.client.get(&url))).await.map(|v| (url, v)) };
    let models = get(format!("{}/models", ep.base_url)).await.map(|(_, v)| v);
    if let Some(found) = models.as_ref().and_then(|m| from_models(m, &ep.model)) {
        return Some(found);
    }
    if models.as_ref().is_some_and(is_llama_cpp_python) {
        return llama_cpp_python(ep).await;
    }
    if let Some((_, props)) = get(format!("{root}/props")).await
        && let Some(found) = from_props(&props)
    {
        return Some(found);
    }
    if let Some((_, ps)) = get(format!("{root}/api/ps")).await
        && let Some(found) = from_ollama_ps(&ps, &ep.model)
    {
        return Some(found);
    }
    let show = ep
        .bearer(ep.client.post(format!("{root}/api/show")))
        .json(&json!({"model": ep.model}));
    from_ollama_show(&ask(show).await?)
}

/// A prompt longer than any window llama-cpp-python is run with (its
/// `n_ctx`, at most the model's trained context): the probe below.
const PROBE_TOKENS: usize = 524_288;

/// llama-cpp-python's model list: every entry as its server writes it
/// (`owned_by: "me"`, `permissions: []`), which no other server does.
pub(super) fn is_llama_cpp_python(models: &Value) -> bool {
    models["data"].as_array().is_some_and(|data| {
        !data.is_empty()
            && data
                .iter()
                .all(|m| m["owned_by"] == "me" && m["permissions"] == json!([]))
    })
}

/// llama-cpp-python says its window nowhere but in refusing a prompt that
/// does not fit, and it checks a prompt's length before it evaluates any
/// of it: a prompt of `PROBE_TOKENS` tokens is refused at once (about 0.3 s
/// of tokenizing on loopback) with "maximum context length is N tokens".
async fn llama_cpp_python(ep: &Endpoint) -> Option<ServerWindow> {
    let body = json!({"model": ep.model, "prompt": " a".repeat(PROBE_TOKENS), "max_tokens": 1});
    let request = ep.client.post(format!("{}/completions", ep.base_url));
    let response = ep
        .bearer(request)
        .json(&body)
        .timeout(ASK_TIMEOUT)
        .send()
        .await
        .ok()?;
    if response.status().is_success() {
        return None;
    }
    let overflow = super::overflow::detect(&response.text().await.ok()?)?;
    Some(ServerWindow {
        tokens: overflow.limit.filter(|n| *n > 0)?,
        detail: "llama-cpp-python's n_ctx, from its refusal of a longer prompt".into(),
    })
}

/// Which tokenizer endpoint a server answers, learned on its first count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tokenizer {
    /// Not asked yet: both are tried in turn.
    Unknown,
    /// llama-cpp-python `POST /extras/tokenize/count` (`{"input"}` →
    /// `{"count"}`).
    Count,
    /// `POST /tokenize`: llama.cpp (`{"content"}` → `{"tokens"}`) and
    /// vLLM (`{"model", "prompt"}` → `{"count", "tokens"}`), one body for
    /// both (each ignores the other's fields).
    Tokenize,
    /// Neither answered: not asked again.
    Missing,
}

/// How many tokens the server's own tokenizer makes of `text`, asking the
/// endpoint `known` names (or finding it), and the endpoint that answered.
/// For servers whose streams carry no usage, and `auto`'s tools check.
pub async fn count_tokens(ep: &Endpoint, known: Tokenizer, text: &str) -> (Tokenizer, Option<u64>) {
    if known == Tokenizer::Missing || SILENT_HOSTS.iter().any(|h| ep.base_url.contains(h)) {
        return (Tokenizer::Missing, None);
    }
    let root = ep.base_url.strip_suffix("/v1").unwrap_or(&ep.base_url);
    let post =
        |path: &str, body: Value| ep.bearer(ep.client.post(format!("{root}{path}")).json(&body));
    if matches!(known, Tokenizer::Unknown | Tokenizer::Count) {
        let body = json!({"input": text, "model": ep.model});
        if let Some(n) = ask(post("/extras/tokenize/count", body))
            .await
            .and_then(|v| v["count"].as_u64())
        {
            return (Tokenizer::Count, Some(n));
        }
        if known == Tokenizer::Count {
            return (known, None);
        }
    }
    let body = json!({"content": text, "prompt": text, "model": ep.model});
    let answer = ask(post("/tokenize", body)).await;
    let counted = answer.as_ref().and_then(|v| {
        v["count"]
            .as_u64()
            .or_else(|| v["tokens"].as_array().map(|t| t.len() as u64))
    });
    match (known, counted) {
        (Tokenizer::Unknown, None) => (Tokenizer::Missing, None),
        (_, counted) => (Tokenizer::Tokenize, counted),
    }
}

/// A JSON answer within `ASK_TIMEOUT`, or nothing.
async fn ask(request: reqwest::RequestBuilder) -> Option<Value> {
    let response = request.timeout(ASK_TIMEOUT).send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    response.json().await.ok()
}

fn positive(v: &Value) -> Option<u32> {
    v.as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| *n > 0)
}

/// `/v1/models`: the entry of `model` (or the only entry) with a window field.
fn from_models(body: &Value, model: &str) -> Option<ServerWindow> {
    let data = body["data"].as_array()?;
    let entry = data
        .iter()
        .find(|m| m["id"].as_str() == Some(model))
        .or_else(|| (data.len() == 1).then(|| &data[0]))?;
    [
        "max_model_len",
        "context_length",
        "max_context_length",
        "context_window",
    ]
    .iter()
    .find_map(|key| {
        positive(&entry[*key]).map(|tokens| ServerWindow {
            tokens,
            detail: format!("/v1/models {key}"),
        })
    })
}

/// llama.cpp `/props`: the slot's `n_ctx`.
fn from_props(body: &Value) -> Option<ServerWindow> {
    positive(&body["default_generation_settings"]["n_ctx"])
        .or_else(|| positive(&body["n_ctx"]))
        .map(|tokens| ServerWindow {
            tokens,
            detail: "llama.cpp /props n_ctx".into(),
        })
}

/// Ollama `/api/ps`: the window of the model as loaded right now.
fn from_ollama_ps(body: &Value, model: &str) -> Option<ServerWindow> {
    let wanted = |name: &str| name == model || name.strip_suffix(":latest") == Some(model);
    body["models"]
        .as_array()?
        .iter()
        .find(|m| m["name"].as_str().is_some_and(wanted) || m["model"].as_str().is_some_and(wanted))
        .and_then(|m| positive(&m["context_length"]))
        .map(|tokens| ServerWindow {
            tokens,
            detail: "Ollama /api/ps context_length of the loaded model".into(),
        })
}

/// Ollama `/api/show`: `num_ctx` if the model sets one, else its trained
/// length capped at Ollama's default `num_ctx`.
fn from_ollama_show(body: &Value) -> Option<ServerWindow> {
    let num_ctx = body["parameters"].as_str().and_then(|params| {
        params.lines().find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("num_ctx")).then(|| words.next()?.parse::<u32>().ok())?
        })
    });
    if let Some(tokens) = num_ctx.filter(|n| *n > 0) {
        return Some(ServerWindow {
            tokens,
            detail: "Ollama /api/show num_ctx".into(),
        });
    }
    let trained = body["model_info"].as_object()?.iter().find_map(|(k, v)| {
        k.ends_with(".context_length")
            .then(|| positive(v))
            .flatten()
    })?;
    Some(ServerWindow {
        tokens: trained.min(OLLAMA_DEFAULT_NUM_CTX),
        detail: format!(
            "Ollama /api/show: trained for {trained}, but Ollama serves {OLLAMA_DEFAULT_NUM_CTX} \
             unless num_ctx is set"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_lists() {
        let vllm = json!({"object": "list", "data": [{"id": "qwen", "max_model_len": 32768}]});
        assert_eq!(from_models(&vllm, "qwen").unwrap().tokens, 32768);
        let router = json!({"data": [{"id": "a", "context_length": 1000}, {"id": "b", "context_length": 2000}]});
        assert_eq!(from_models(&router, "b").unwrap().tokens, 2000);
        assert!(
            from_models(&router, "c").is_none(),
            "no guess among several"
        );
        let plain = json!({"data": [{"id": "smollm2", "object": "model"}]});
        assert!(from_models(&plain, "smollm2").is_none());
        assert!(!is_llama_cpp_python(&plain));
        let lcp = json!({"object": "list", "data": [{"id": "smollm2", "object": "model", "owned_by": "me", "permissions": []}]});
        assert!(is_llama_cpp_python(&lcp));
        assert!(!is_llama_cpp_python(&json!({"data": []})));
    }

    #[test]
    fn llama_cpp_props() {
        let props = json!({"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1});
        let w = from_props(&props).unwrap();
        assert_eq!(w.tokens, 4096);
        assert!(w.detail.contains("n_ctx"));
        assert!(from_props(&json!({"detail": "Not Found"})).is_none());
    }

    #[test]
    fn ollama() {
        let ps = json!({"models": [{"name": "llama3.2:latest", "model": "llama3.2:latest", "context_length": 8192}]});
        assert_eq!(from_ollama_ps(&ps, "llama3.2").unwrap().tokens, 8192);
        assert!(from_ollama_ps(&ps, "qwen").is_none());
        let show = json!({"parameters": "stop \"<|eot_id|>\"\nnum_ctx 16384", "model_info": {"llama.context_length": 131072}});
        assert_eq!(from_ollama_show(&show).unwrap().tokens, 16384);
        let show = json!({"parameters": "stop x", "model_info": {"llama.context_length": 131072}});
        let w = from_ollama_show(&show).unwrap();
        assert_eq!(w.tokens, OLLAMA_DEFAULT_NUM_CTX);
        assert!(w.detail.contains("131072"));
    }
}
