//! `agent-tui eval` (SPEC section 12): a suite's tasks run through the
//! engine once per routing mode, in parallel, and measured. A front end
//! like `exec`: it talks to the engine through its door (builder,
//! commands, queries, events) only.

mod checks;
mod report;
mod run;
mod suite;
mod tally;

pub use report::{Metrics, Report, RoutingRun, markdown, metrics, percentile};
pub use run::{Choice, Reviewer, TaskResult, decide, run_task};
pub use suite::{Check, Suite, SuiteError, Task, load};
