//! Retrying model requests: exponential backoff with jitter, bounded, and
//! `Retry-After` honoured when the server sends it.

use std::time::Duration;

use super::LlmError;

/// The longest `Retry-After` we wait for; beyond it the job fails with the
/// server's wait in the message.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// Delay before the first retry; doubles each time.
    pub base_delay: Duration,
    /// Upper bound of one computed delay.
    pub max_delay: Duration,
}

impl RetryPolicy {
    /// The wait before retry number `retry` (1-based) after `error`, or
    /// `None` when the error is final or retries are used up.
    pub fn delay(&self, retry: u32, error: &LlmError) -> Option<Duration> {
        if retry > self.max_retries || !error.is_retryable() {
            return None;
        }
        let exp = self
            .base_delay
            .saturating_mul(1u32 << (retry - 1).min(16))
            .min(self.max_delay);
        // "Equal jitter": half fixed, half random, so retries spread out but
        // never collapse to zero.
        let jittered = exp.mul_f64(0.5 + fastrand::f64() * 0.5);
        match error.retry_after() {
            Some(wait) if wait > MAX_RETRY_AFTER => None,
            Some(wait) => Some(wait.max(jittered)),
            None => Some(jittered),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(250),
        }
    }

    fn err(status: u16, retry_after: Option<u64>) -> LlmError {
        LlmError::Status {
            url: "u".into(),
            status,
            message: "m".into(),
            retry_after: retry_after.map(Duration::from_secs),
        }
    }

    #[test]
    fn backoff_grows_is_capped_and_jittered() {
        let p = policy();
        for _ in 0..50 {
            let d1 = p.delay(1, &err(503, None)).unwrap();
            assert!(
                d1 >= Duration::from_millis(50) && d1 <= Duration::from_millis(100),
                "{d1:?}"
            );
            let d3 = p.delay(3, &err(503, None)).unwrap();
            assert!(
                d3 >= Duration::from_millis(125) && d3 <= Duration::from_millis(250),
                "{d3:?}"
            );
        }
        assert_eq!(p.delay(4, &err(503, None)), None, "bounded");
        assert_eq!(p.delay(1, &err(401, None)), None, "not retryable");
    }

    #[test]
    fn retry_after_is_honoured_within_reason() {
        let p = policy();
        assert!(p.delay(1, &err(429, Some(2))).unwrap() >= Duration::from_secs(2));
        assert_eq!(p.delay(1, &err(429, Some(3600))), None);
    }
}
