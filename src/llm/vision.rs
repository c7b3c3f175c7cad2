//! Whether a provider's model reads images (SPEC 20): its config says
//! (`vision = true|false`), or with `"auto"` its server is asked: the models
//! list (OpenRouter's `architecture.input_modalities`, a `capabilities`
//! field), llama.cpp `GET /props` (`modalities.vision`), Ollama `POST
//! /api/show` (`capabilities`); llama-cpp-python, which cannot say, is
//! taken as blind unless the config says otherwise. Any other server that
//! says nothing is taken at its word when the request comes.

use std::time::Duration;

use serde_json::{Value, json};

use super::http::Endpoint;
use crate::config::Vision;

/// Longest wait for one answer.
const ASK_TIMEOUT: Duration = Duration::from_secs(2);

/// What is known of a model's sight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sight {
    /// It reads images; `how` says who said so.
    Sees { how: String },
    /// It does not; `how` says who said so.
    Blind { how: String },
    /// Nobody said: images are sent and the server decides.
    Unknown,
}

/// What the config says, if it decides.
pub fn configured(ep: &Endpoint) -> Option<Sight> {
    let how = || format!("vision = {} in [providers.{}]", ep.vision_word(), ep.name);
    match ep.vision {
        Vision::Auto => None,
        Vision::Yes => Some(Sight::Sees { how: how() }),
        Vision::No => Some(Sight::Blind { how: how() }),
    }
}

/// An OpenAI-compatible server's answer for the endpoint's model.
pub async fn openai_compatible(ep: &Endpoint) -> Sight {
    if let Some(said) = configured(ep) {
        return said;
    }
    if ep.base_url.contains("api.openai.com") {
        return Sight::Unknown;
    }
    let root = ep.base_url.strip_suffix("/v1").unwrap_or(&ep.base_url);
    let get = |url: String| ask(ep.bearer(ep.client.get(url)));
    if let Some(models) = get(format!("{}/models", ep.base_url)).await {
        if let Some(said) = from_models(&models, &ep.model) {
            return said;
        }
        // It says nothing of images anywhere, and a text model's chat
        // template breaks on them (the stream just ends).
        if super::discover::is_llama_cpp_python(&models) {
            return Sight::Blind {
                how: "llama-cpp-python, which serves images only with a multimodal chat \
                      handler and cannot say whether it has one; set vision = true if it does"
                    .into(),
            };
        }
    }
    if let Some(props) = get(format!("{root}/props")).await
        && let Some(said) = from_props(&props)
    {
        return said;
    }
    let show = ep
        .bearer(ep.client.post(format!("{root}/api/show")))
        .json(&json!({"model": ep.model}));
    match ask(show).await {
        Some(body) => from_ollama_show(&body).unwrap_or(Sight::Unknown),
        None => Sight::Unknown,
    }
}

async fn ask(request: reqwest::RequestBuilder) -> Option<Value> {
    let response = request.timeout(ASK_TIMEOUT).send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    response.json().await.ok()
}

fn said(sees: bool, how: &str) -> Sight {
    let how = how.to_string();
    if sees {
        Sight::Sees { how }
    } else {
        Sight::Blind { how }
    }
}

/// The models list's entry for `model`: `architecture.input_modalities`
/// (OpenRouter), `capabilities` as a list of words or an object.
fn from_models(body: &Value, model: &str) -> Option<Sight> {
    let data = body["data"].as_array()?;
    let entry = data
        .iter()
        .find(|m| m["id"].as_str() == Some(model))
        .or_else(|| (data.len() == 1).then(|| &data[0]))?;
    if let Some(inputs) = entry["architecture"]["input_modalities"].as_array() {
        let sees = inputs.iter().any(|m| m == "image");
        return Some(said(sees, "the models list's input_modalities"));
    }
    capabilities(&entry["capabilities"], "the models list's capabilities")
}

/// `["completion", "vision"]` or `{"vision": true}`.
fn capabilities(value: &Value, how: &str) -> Option<Sight> {
    if let Some(words) = value.as_array() {
        return Some(said(words.iter().any(|w| w == "vision"), how));
    }
    value["vision"].as_bool().map(|sees| said(sees, how))
}

/// llama.cpp `/props`: `modalities.vision` (a server from before images
/// has no `modalities` and cannot take them).
fn from_props(body: &Value) -> Option<Sight> {
    if let Some(sees) = body["modalities"]["vision"].as_bool() {
        return Some(said(sees, "llama.cpp /props modalities.vision"));
    }
    let llama = body.get("default_generation_settings").is_some() || body.get("n_ctx").is_some();
    llama.then(|| said(false, "llama.cpp /props, which lists no image support"))
}

/// Ollama `/api/show`: `capabilities` lists `vision`.
fn from_ollama_show(body: &Value) -> Option<Sight> {
    capabilities(&body["capabilities"], "Ollama /api/show capabilities")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_answers() {
        let router =
            json!({"data": [{"id": "m", "architecture": {"input_modalities": ["text", "image"]}}]});
        assert!(matches!(
            from_models(&router, "m"),
            Some(Sight::Sees { .. })
        ));
        let text = json!({"data": [{"id": "m", "architecture": {"input_modalities": ["text"]}}]});
        assert!(matches!(from_models(&text, "m"), Some(Sight::Blind { .. })));
        assert_eq!(from_models(&json!({"data": [{"id": "m"}]}), "m"), None);
        let props =
            json!({"default_generation_settings": {"n_ctx": 2048}, "modalities": {"vision": true}});
        assert!(matches!(from_props(&props), Some(Sight::Sees { .. })));
        let old = json!({"default_generation_settings": {"n_ctx": 2048}});
        assert!(matches!(from_props(&old), Some(Sight::Blind { .. })));
        assert_eq!(from_props(&json!({"other": 1})), None);
        let show = json!({"capabilities": ["completion", "tools"]});
        assert!(matches!(from_ollama_show(&show), Some(Sight::Blind { .. })));
        let show = json!({"capabilities": ["completion", "vision"]});
        assert!(matches!(from_ollama_show(&show), Some(Sight::Sees { .. })));
    }
}
