//! `web_search {query, limit?}` (SPEC 20): results (title, URL, snippet)
//! from the SearXNG instance `[web] search_url` names; offered only with it
//! set, asked per `[approvals] web` like `web_fetch`.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolSpec, bounded, on_runtime, parse_args};
use crate::protocol::{Mode, Tier};

pub const WEB_SEARCH: &str = "web_search";

/// Results returned at most.
const MAX_RESULTS: usize = 20;

pub struct WebSearch;

#[derive(Deserialize)]
struct Args {
    query: String,
    limit: Option<usize>,
}

impl Tool for WebSearch {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: WEB_SEARCH,
            description: "Search the web: results with title, url and snippet. Read a result with \
                web_fetch.",
            schema: json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1, "description": "What to search for."},
                    "limit": {"type": "integer", "minimum": 1, "description": "Results to return (default 8)."}
                },
                "required": ["query"],
                "additionalProperties": false
            }),
            tier: Tier::Exec,
            modes: Mode::ALL.to_vec(),
        }
    }

    fn run(&self, ctx: &ToolContext<'_>, args: Value) -> Result<Value, ToolError> {
        let args: Args = parse_args(args)?;
        let limit = bounded(args.limit, 8, MAX_RESULTS);
        let search = crate::web::search::search(ctx.web, &args.query, limit);
        let found = on_runtime(WEB_SEARCH, search)?.ok_or_else(|| ToolError::Web {
            code: "not_configured",
            message: "no search service is set up ([web] search_url)".into(),
        })??;
        Ok(json!({ "results": found }))
    }
}
