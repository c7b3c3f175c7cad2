//! `hybrid_auto` (SPEC section 12): a job starts on the local provider and,
//! when one of `[routing]`'s triggers fires, goes on with the remote one
//! from the same conversation (the next request's fit compacts it if the
//! remote window is smaller). `remote` and `local` jobs have one provider
//! and never reach the other.

use std::future::Future;
use std::time::{Duration, Instant};

use super::EngineContext;
use super::job::{Job, JobSpec, Outcome};
use crate::context::ContextWindow;
use crate::llm::Provider;
use crate::protocol::{EventBody, FallbackReason, JobFailure, Mode};

/// Which provider a job is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Route {
    /// One provider, nothing to fall back to (`remote`, `local`).
    Single,
    /// `hybrid_auto`, still on the local provider.
    Local,
    /// `hybrid_auto`, moved to the remote provider.
    Remote(FallbackReason),
}

impl Route {
    /// A job with a provider of its own (`/model`) has nothing to fall
    /// back to.
    pub(super) fn start(ctx: &EngineContext, spec: &JobSpec) -> Route {
        if ctx.fallback.is_some() && spec.chosen.is_none() {
            Route::Local
        } else {
            Route::Single
        }
    }

    /// The provider this route sends requests to: the job's own, else
    /// the engine's.
    pub(super) fn provider<'c>(
        self,
        ctx: &'c EngineContext,
        spec: &'c JobSpec,
    ) -> Option<&'c dyn Provider> {
        if let Some(chosen) = spec.chosen.as_deref() {
            return Some(chosen);
        }
        match self {
            Route::Remote(_) => ctx.fallback.as_deref(),
            Route::Single | Route::Local => ctx.provider.as_deref(),
        }
    }

    pub(super) fn reason(self) -> Option<FallbackReason> {
        match self {
            Route::Remote(reason) => Some(reason),
            Route::Single | Route::Local => None,
        }
    }
}

impl Job<'_> {
    /// The provider the job's requests go to now.
    pub(super) fn provider(&self) -> Option<&dyn Provider> {
        self.route.provider(&self.ctx, self.spec)
    }

    /// Whether `reason` moves this job to the remote provider now.
    pub(super) fn triggers(&self, reason: FallbackReason) -> bool {
        let r = &self.ctx.config.routing;
        self.route == Route::Local
            && match reason {
                FallbackReason::BudgetExhaustedWithoutEdits => {
                    r.hybrid_remote_on_budget_without_edits
                        && self.spec.mode == Mode::Agent
                        && self.edits.is_empty()
                }
                FallbackReason::SchemaFailures => {
                    r.hybrid_remote_on_schema_fail > 0
                        && self.malformed >= r.hybrid_remote_on_schema_fail
                }
                FallbackReason::ContextOverflow => r.hybrid_remote_on_context_overflow,
                FallbackReason::Timeout => r.hybrid_remote_on_timeout_ms > 0,
                FallbackReason::ProviderError => true,
            }
    }

    /// The trigger a failed request gives, if it fires.
    pub(super) fn failure_trigger(&self, outcome: &Outcome) -> Option<FallbackReason> {
        let Outcome::Failed { code, .. } = outcome else {
            return None;
        };
        let timeouts = self.ctx.config.routing.hybrid_remote_on_timeout_ms > 0;
        let reason = match code {
            JobFailure::Timeout if timeouts => FallbackReason::Timeout,
            JobFailure::ContextOverflow => FallbackReason::ContextOverflow,
            JobFailure::MalformedToolCalls => FallbackReason::SchemaFailures,
            code if code.from_provider() => FallbackReason::ProviderError,
            _ => return None,
        };
        self.triggers(reason).then_some(reason)
    }

    /// Goes on with the remote provider: `provider.fallback`, its window,
    /// and a fresh tool budget.
    pub(super) async fn fall_back(&mut self, reason: FallbackReason) {
        let name = |p: Option<&dyn Provider>| p.map_or(String::new(), |p| p.name().to_string());
        let from = name(self.provider());
        self.route = Route::Remote(reason);
        let to = name(self.provider());
        let model = self
            .provider()
            .map_or(String::new(), |p| p.model().to_string());
        self.emit.emit(EventBody::ProviderFallback {
            from,
            to,
            reason,
            model,
        });
        let ctx = self.ctx.clone();
        if let Some(remote) = ctx.fallback.as_deref() {
            let configured = remote.context_window();
            let server = match configured {
                Some(_) => None,
                None => remote.discover_window().await,
            };
            self.window = ContextWindow::resolve(configured, server, remote.model());
            let cap = self.tool_cap();
            self.conv.set_cap(cap);
            // How the local server counts says nothing of the remote's
            // tokenizer: back to the plain estimate until it reports.
            self.conv.set_factor(1.0);
            // What the local's overflow said is the local's.
            self.overflowed = None;
            self.window_stated = false;
        }
        self.calls_made = 0;
        self.malformed = 0;
    }

    /// How long a local request may take before it falls back.
    pub(super) fn local_deadline(&self) -> Option<Duration> {
        let ms = self.ctx.config.routing.hybrid_remote_on_timeout_ms;
        (self.route == Route::Local && ms > 0).then(|| Duration::from_millis(ms))
    }

    /// What is left of the next local request's time: the probes of the
    /// server before it (its window, its tokenizer) spend the same budget,
    /// so a slow local server falls back about `hybrid_remote_on_timeout_ms`
    /// after the job starts however many probes come first. `None`: no
    /// limit (not on a local provider with a timeout).
    pub(super) fn local_budget(&self) -> Option<Duration> {
        self.local_deadline()
            .map(|limit| limit.saturating_sub(self.probed))
    }

    /// A probe of the server the job is on, within `local_budget` (its time
    /// then counts against the next request). `None`: the budget ran out.
    pub(super) async fn probe<T>(&mut self, probe: impl Future<Output = T>) -> Option<T> {
        let started = Instant::now();
        let answer = bounded(self.local_budget(), probe).await;
        if self.local_deadline().is_some() {
            self.probed += started.elapsed();
        }
        answer
    }

    /// Requests (the first and its retries) the local provider gets.
    pub(super) fn local_attempts(&self) -> Option<u32> {
        (self.route == Route::Local).then_some(self.ctx.config.routing.hybrid_max_local_attempts)
    }
}

/// `probe`'s answer within `budget` if there is one (`None`: it ran out;
/// with nothing left it is not asked at all).
pub(super) async fn bounded<T>(
    budget: Option<Duration>,
    probe: impl Future<Output = T>,
) -> Option<T> {
    match budget {
        Some(left) if left.is_zero() => None,
        Some(left) => tokio::time::timeout(left, probe).await.ok(),
        None => Some(probe.await),
    }
}
