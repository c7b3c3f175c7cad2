//! The session's cost in the status bar (SPEC 19): each job's tokens at the
//! prices `[providers.NAME] price_input_per_mtok` / `price_output_per_mtok`
//! set for the provider that answered it; nothing is shown without prices.

use std::collections::BTreeMap;

use crate::config::ProviderConfig;
use crate::protocol::Usage;

/// Prices by provider name (USD per million tokens, in and out) and the sum.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cost {
    prices: BTreeMap<String, (f64, f64)>,
    usd: f64,
}

impl Cost {
    /// The prices the configured providers set (none: no cost shown).
    pub fn priced(providers: &BTreeMap<String, ProviderConfig>) -> Cost {
        let prices = providers
            .iter()
            .filter(|(_, p)| p.price_input_per_mtok.is_some() || p.price_output_per_mtok.is_some())
            .map(|(name, p)| {
                (
                    name.clone(),
                    (
                        p.price_input_per_mtok.unwrap_or(0.0),
                        p.price_output_per_mtok.unwrap_or(0.0),
                    ),
                )
            })
            .collect();
        Cost { prices, usd: 0.0 }
    }

    /// A job that `provider` answered, with `usage`.
    pub fn add(&mut self, provider: &str, usage: Usage) {
        if let Some((input, output)) = self.prices.get(provider) {
            self.usd +=
                (usage.input_tokens as f64 * input + usage.output_tokens as f64 * output) / 1e6;
        }
    }

    /// The sum to show, when any price is set.
    pub fn shown(&self) -> Option<f64> {
        (!self.prices.is_empty()).then_some(self.usd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jobs_tokens_cost_its_providers_prices() {
        let base = crate::config::Config::default().providers["openai"].clone();
        let mut providers = BTreeMap::new();
        let paid = ProviderConfig {
            price_input_per_mtok: Some(2.0),
            price_output_per_mtok: Some(8.0),
            ..base.clone()
        };
        providers.insert("paid".to_string(), paid);
        providers.insert("local".to_string(), base);
        let mut cost = Cost::priced(&providers);
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 500_000,
            requests: 1,
        };
        cost.add("paid", usage);
        cost.add("local", usage);
        assert_eq!(cost.shown(), Some(6.0));
        assert_eq!(Cost::priced(&BTreeMap::new()).shown(), None);
    }
}
