//! Which provider and model a job runs on (`/model`, SPEC 19): a choice a
//! front end sends with a job, and the configured providers with the models
//! each one lists, as the picker shows them.

use serde::{Deserialize, Serialize};

/// A job's provider and model, instead of the engine's. `provider: None`
/// keeps the engine's provider with another model; `model: None` takes the
/// provider's configured model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelChoice {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl ModelChoice {
    /// Nothing chosen: the engine's own provider and model.
    pub fn is_empty(&self) -> bool {
        self.provider.is_none() && self.model.is_none()
    }

    /// `provider model`, `provider` or `model`, as a status bar shows it.
    pub fn label(&self) -> String {
        match (&self.provider, &self.model) {
            (Some(p), Some(m)) => format!("{p} {m}"),
            (Some(p), None) => p.clone(),
            (None, Some(m)) => m.clone(),
            (None, None) => String::new(),
        }
    }
}

/// Whether a provider's models could be listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Reach {
    /// The server answered with its models.
    Listed,
    /// Its key variable is not set: nothing was asked.
    NoKey { var: String },
    /// The server did not answer, or refused (the reason).
    Offline { error: String },
}

/// A configured provider as the model picker shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderModels {
    pub name: String,
    /// `openai` or `anthropic` (the wire protocol).
    pub kind: String,
    /// The model its config names.
    pub model: String,
    /// The engine's own provider (jobs without a choice run on it).
    pub current: bool,
    /// What the server lists, sorted (empty unless `Listed`).
    pub models: Vec<String>,
    pub reach: Reach,
}
