//! A task's tokens per provider, read from its jobs' events (`job.started`
//! names the provider a job starts on, `usage.updated` its running totals,
//! `provider.fallback` where the rest of them go, `job.completed` the last
//! of them), and the task's cost at each provider's own prices (SPEC 12:
//! `null` where no price is known).

use std::collections::{BTreeMap, HashMap};

use crate::config::Config;
use crate::protocol::{EventBody, FallbackReason};

/// One job's provider now and the tokens of it already counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct JobTokens {
    provider: String,
    input: u64,
    output: u64,
}

/// Input and output tokens per provider, over every job of a task.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    jobs: HashMap<String, JobTokens>,
    /// The job started last.
    last_job: Option<String>,
    by_provider: BTreeMap<String, (u64, u64)>,
    /// The first fallback of any job.
    fallback: Option<FallbackReason>,
}

impl Tally {
    /// Counts what event `body` of job `job_id` says of tokens and providers.
    pub fn see(&mut self, job_id: &str, body: &EventBody) {
        match body {
            EventBody::JobStarted { provider, .. } => {
                self.jobs.insert(
                    job_id.to_string(),
                    JobTokens {
                        provider: provider.clone(),
                        ..JobTokens::default()
                    },
                );
                self.by_provider.entry(provider.clone()).or_default();
                self.last_job = Some(job_id.to_string());
            }
            EventBody::UsageUpdated {
                input_tokens,
                output_tokens,
                ..
            } => self.add(job_id, None, *input_tokens, *output_tokens),
            EventBody::ProviderFallback { to, reason, .. } => {
                self.jobs.entry(job_id.to_string()).or_default().provider = to.clone();
                self.by_provider.entry(to.clone()).or_default();
                self.fallback = self.fallback.or(Some(*reason));
            }
            EventBody::JobCompleted {
                usage, provider, ..
            } => self.add(
                job_id,
                Some(provider),
                usage.input_tokens,
                usage.output_tokens,
            ),
            _ => {}
        }
    }

    /// Job `job_id`'s running totals are now `input`/`output`: what is new
    /// goes to the provider it is on (`answered`, when the event says).
    fn add(&mut self, job_id: &str, answered: Option<&str>, input: u64, output: u64) {
        let job = self.jobs.entry(job_id.to_string()).or_default();
        if let Some(name) = answered.filter(|n| !n.is_empty()) {
            job.provider = name.to_string();
        }
        let new = (
            input.saturating_sub(job.input),
            output.saturating_sub(job.output),
        );
        job.input = job.input.max(input);
        job.output = job.output.max(output);
        let counted = self.by_provider.entry(job.provider.clone()).or_default();
        counted.0 += new.0;
        counted.1 += new.1;
    }

    /// Input and output tokens over every provider.
    pub fn tokens(&self) -> (u64, u64) {
        self.by_provider
            .values()
            .fold((0, 0), |(i, o), (a, b)| (i + a, o + b))
    }

    /// The provider the last job started is on now (`None`: no job started).
    pub fn provider(&self) -> Option<&str> {
        let job = self.jobs.get(self.last_job.as_deref()?)?;
        Some(job.provider.as_str()).filter(|p| !p.is_empty())
    }

    /// The first fallback any job made.
    pub fn fallback(&self) -> Option<FallbackReason> {
        self.fallback
    }

    /// Dollars for the tokens of the providers with a price; the tokens of
    /// one without cost nothing known. `None` when none of the tokens used
    /// had a known price (and, with none used, when no provider the task
    /// was on has one).
    pub fn cost(&self, config: &Config) -> Option<f64> {
        let price = |name: &str| {
            let p = config.providers.get(name)?;
            Some((p.price_input_per_mtok?, p.price_output_per_mtok?))
        };
        let (mut dollars, mut priced, mut priced_tokens, mut unpriced_tokens) = (0.0, false, 0, 0);
        for (name, (input, output)) in &self.by_provider {
            match price(name) {
                Some((per_input, per_output)) => {
                    dollars += (*input as f64 * per_input + *output as f64 * per_output) / 1e6;
                    priced = true;
                    priced_tokens += input + output;
                }
                None => unpriced_tokens += input + output,
            }
        }
        let known = priced_tokens > 0 || (priced && unpriced_tokens == 0);
        known.then_some(dollars)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{JobStatus, Mode, Usage};

    fn started(provider: &str) -> EventBody {
        EventBody::JobStarted {
            prompt: String::new(),
            mode: Mode::Ask,
            root: String::new(),
            provider: provider.into(),
            model: String::new(),
            images: Vec::new(),
        }
    }

    fn usage(input_tokens: u64, output_tokens: u64) -> EventBody {
        EventBody::UsageUpdated {
            input_tokens,
            output_tokens,
            context_tokens: 0,
            context_window: 0,
            estimated: false,
        }
    }

    fn config(priced: &[&str]) -> Config {
        let mut text = String::new();
        for name in ["local", "remote"] {
            text.push_str(&format!(
                "[providers.{name}]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\n"
            ));
            if priced.contains(&name) {
                text.push_str("price_input_per_mtok = 2.0\nprice_output_per_mtok = 8.0\n");
            }
        }
        toml::from_str(&text).unwrap()
    }

    #[test]
    fn tokens_go_to_the_provider_that_used_them() {
        let mut t = Tally::default();
        t.see("j", &started("local"));
        t.see("j", &usage(900, 40));
        t.see("j", &usage(1800, 80));
        t.see(
            "j",
            &EventBody::ProviderFallback {
                from: "local".into(),
                to: "remote".into(),
                reason: FallbackReason::SchemaFailures,
                model: "big".into(),
            },
        );
        t.see("j", &usage(2700, 120));
        t.see(
            "j",
            &EventBody::JobCompleted {
                answer: String::new(),
                usage: Usage {
                    input_tokens: 2700,
                    output_tokens: 120,
                    requests: 3,
                },
                status: JobStatus::Completed,
                budget_exhausted: false,
                provider: "remote".into(),
                fallback_reason: Some(FallbackReason::SchemaFailures),
            },
        );
        assert_eq!(t.tokens(), (2700, 120));
        assert_eq!(t.provider(), Some("remote"));
        assert_eq!(t.fallback(), Some(FallbackReason::SchemaFailures));
        // Only the remote's 900/40 at its price.
        let cost = t.cost(&config(&["remote"])).unwrap();
        assert!((cost - 0.00212).abs() < 1e-12, "{cost}");
        // Only the local's tokens have a price.
        let cost = t.cost(&config(&["local"])).unwrap();
        assert!((cost - 0.00424).abs() < 1e-12, "{cost}");
        assert_eq!(t.cost(&config(&[])), None);
    }

    #[test]
    fn unpriced_tokens_alone_have_no_cost() {
        let mut t = Tally::default();
        t.see("j", &started("local"));
        t.see("j", &usage(100, 10));
        t.see(
            "j",
            &EventBody::ProviderFallback {
                from: "local".into(),
                to: "remote".into(),
                reason: FallbackReason::Timeout,
                model: "big".into(),
            },
        );
        // The remote used nothing: none of the tokens had a price.
        assert_eq!(t.cost(&config(&["remote"])), None);
        // No tokens at all, on a priced provider: nothing spent.
        let mut idle = Tally::default();
        idle.see("j", &started("remote"));
        assert_eq!(idle.cost(&config(&["remote"])), Some(0.0));
        assert_eq!(idle.cost(&config(&[])), None);
    }
}
