//! How a job ended, as its driver reports it: completed (with its answer
//! and status) or failed (with a typed failure code).

use crate::llm::LlmError;
use crate::protocol::{JobFailure, JobStatus};

pub(super) enum Outcome {
    Completed {
        answer: String,
        status: JobStatus,
        budget_exhausted: bool,
    },
    Failed {
        error: String,
        code: JobFailure,
    },
}

impl Outcome {
    pub(super) fn failed(error: impl Into<String>, code: JobFailure) -> Outcome {
        Outcome::Failed {
            error: error.into(),
            code,
        }
    }
}

impl From<LlmError> for Outcome {
    fn from(e: LlmError) -> Outcome {
        Outcome::failed(e.to_string(), e.failure())
    }
}
