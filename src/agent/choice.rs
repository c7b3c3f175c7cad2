//! A job's own provider and model (`/model`, SPEC 19): built from the
//! engine's config when the job is asked for (a name that is not
//! configured, or a key that is not set, is refused then), and the
//! configured providers with the models each lists, for a picker.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::join_all;

use super::EngineContext;
use super::builder::process_env;
use crate::config::ProviderKind;
use crate::llm::{LlmError, Provider, build_provider};
use crate::protocol::{EngineError, ModelChoice, ProviderModels, Reach};

/// How long one provider's models list is waited for.
const LIST_TIMEOUT: Duration = Duration::from_secs(4);

/// The provider a job with `choice` runs on (`None`: the engine's own,
/// which an empty choice, or one naming it as it is, means).
pub(super) fn provider_for(
    ctx: &EngineContext,
    choice: &ModelChoice,
) -> Result<Option<Arc<dyn Provider>>, EngineError> {
    if choice.is_empty() {
        return Ok(None);
    }
    let current = ctx.provider.as_deref();
    let name = match (&choice.provider, current) {
        (Some(name), _) => name.clone(),
        (None, Some(current)) => current.name().to_string(),
        (None, None) => {
            return Err(EngineError::invalid(
                "a model was chosen but no provider is set up: choose a provider too",
            ));
        }
    };
    let Some(config) = ctx.config.providers.get(&name) else {
        return Err(EngineError::invalid(format!(
            "no provider named {name}; the configured ones are {}",
            ctx.config.provider_names().join(", ")
        )));
    };
    let mut config = config.clone();
    if let Some(model) = &choice.model {
        if model.trim().is_empty() {
            return Err(EngineError::invalid("the model's name is empty"));
        }
        config.model.clone_from(model);
    }
    if current.is_some_and(|c| c.name() == name && c.model() == config.model) {
        return Ok(None);
    }
    let timeout = Duration::from_secs(ctx.config.agent.request_timeout_secs);
    build_provider(&name, &config, timeout, &process_env)
        .map(|p| Some(Arc::from(p)))
        .map_err(|e| EngineError::invalid(e.to_string()))
}

/// Every configured provider with the models its server lists, asked at
/// once, each within `LIST_TIMEOUT`; one without its key is not asked.
pub(super) async fn list(ctx: &EngineContext) -> Vec<ProviderModels> {
    let current = ctx.provider.as_deref();
    let timeout = Duration::from_secs(ctx.config.agent.request_timeout_secs);
    let asks = ctx
        .config
        .providers
        .iter()
        .map(|(name, config)| async move {
            let is_current = current.is_some_and(|c| c.name() == name);
            let built;
            let provider: Result<&dyn Provider, &LlmError> = match current {
                // The engine's own: as it was set up (a detected base URL too).
                Some(c) if is_current => Ok(c),
                _ => {
                    built = build_provider(name, config, timeout, &process_env);
                    built.as_deref()
                }
            };
            let (models, reach) = match provider {
                Err(LlmError::MissingKey { var, .. }) => {
                    (Vec::new(), Reach::NoKey { var: var.clone() })
                }
                Err(e) => (
                    Vec::new(),
                    Reach::Offline {
                        error: e.to_string(),
                    },
                ),
                Ok(p) => match tokio::time::timeout(LIST_TIMEOUT, p.list_models()).await {
                    Ok(Ok(models)) => (models, Reach::Listed),
                    Ok(Err(e)) => (
                        Vec::new(),
                        Reach::Offline {
                            error: e.to_string(),
                        },
                    ),
                    Err(_) => (
                        Vec::new(),
                        Reach::Offline {
                            error: format!("no answer in {} s", LIST_TIMEOUT.as_secs()),
                        },
                    ),
                },
            };
            ProviderModels {
                name: name.clone(),
                kind: match config.kind {
                    ProviderKind::Openai => "openai",
                    ProviderKind::Anthropic => "anthropic",
                }
                .to_string(),
                model: match current {
                    Some(c) if is_current => c.model().to_string(),
                    _ => config.model.clone(),
                },
                current: is_current,
                models,
                reach,
            }
        });
    join_all(asks).await
}

/// How long a models list is kept before the picker asks again.
const KEPT: Duration = Duration::from_secs(300);

/// The lists last asked for, and when.
pub(super) type Kept = tokio::sync::Mutex<Option<(std::time::Instant, Vec<ProviderModels>)>>;

impl super::door::Engine {
    /// The configured providers and the models each one lists (`/model`),
    /// kept for five minutes unless `fresh`.
    pub async fn models(&self, fresh: bool) -> Vec<ProviderModels> {
        let mut kept = self.inner.models.lock().await;
        if let Some((at, lists)) = kept.as_ref()
            && !fresh
            && at.elapsed() < KEPT
        {
            return lists.clone();
        }
        let lists = list(&self.inner.ctx).await;
        *kept = Some((std::time::Instant::now(), lists.clone()));
        lists
    }

    /// Refuses a provider or model choice a job could not run on, as
    /// starting the job would.
    pub fn check_choice(&self, choice: &ModelChoice) -> Result<(), EngineError> {
        provider_for(&self.inner.ctx, choice).map(|_| ())
    }
}
