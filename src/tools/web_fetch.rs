//! `web_fetch {url, max_tokens?}` (SPEC 20): a web page as Markdown made
//! here (HTML converted locally; plain text and JSON as they are; other
//! types refused, naming what they were), with its status, type, size and
//! sha256. Asked per `[approvals] web` (hosts of `[web] allow_domains`
//! unasked); addresses that are not public are refused before anything
//! connects (`crate::web`).

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolSpec, on_runtime, parse_args};
use crate::context::TokenCounter;
use crate::context::cap::fit_text;
use crate::protocol::{Mode, Tier};
use crate::store::web_cache::CachedPage;
use crate::web::{self, Fetched, Validators};
use crate::workspace::sha256_hex;

pub const WEB_FETCH: &str = "web_fetch";

pub struct WebFetch;

#[derive(Deserialize)]
struct Args {
    url: String,
    max_tokens: Option<u32>,
}

impl Tool for WebFetch {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: WEB_FETCH,
            description: "Fetch a web page (http or https) as Markdown: documentation, a changelog, \
                an issue thread. Public addresses only. Returns {url, status, content_type, \
                markdown, truncated, bytes, sha256}.",
            schema: json!({
                "type": "object",
                "properties": {
                    "url": {"type": "string", "minLength": 1, "description": "The http(s) URL."},
                    "max_tokens": {"type": "integer", "minimum": 100, "description": "Keep the Markdown to about this many tokens (its head and tail)."}
                },
                "required": ["url"],
                "additionalProperties": false
            }),
            tier: Tier::Exec,
            modes: Mode::ALL.to_vec(),
        }
    }

    fn run(&self, ctx: &ToolContext<'_>, args: Value) -> Result<Value, ToolError> {
        let args: Args = parse_args(args)?;
        // A page read before is asked for again only if it changed.
        let kept = ctx.store.and_then(|s| s.web_page(&args.url).ok().flatten());
        let validators = Validators {
            etag: kept.as_ref().and_then(|k| k.etag.clone()),
            last_modified: kept.as_ref().and_then(|k| k.last_modified.clone()),
        };
        let fetched = on_runtime(WEB_FETCH, web::fetch(ctx.web, &args.url, &validators))??;
        let fetched = match kept {
            Some(kept) if fetched.status == 304 => Fetched {
                url: fetched.url,
                status: kept.status,
                content_type: kept.content_type,
                body: kept.body,
                truncated: kept.truncated,
                etag: kept.etag,
                last_modified: kept.last_modified,
            },
            _ => {
                keep(ctx, &args.url, &fetched);
                fetched
            }
        };
        page(&fetched, args.max_tokens)
    }
}

/// Keeps a successful page that carries a validator, under the URL asked.
fn keep(ctx: &ToolContext<'_>, url: &str, fetched: &Fetched) {
    let Some(store) = ctx.store else { return };
    if fetched.status != 200 || (fetched.etag.is_none() && fetched.last_modified.is_none()) {
        return;
    }
    let page = CachedPage {
        url: url.to_string(),
        etag: fetched.etag.clone(),
        last_modified: fetched.last_modified.clone(),
        status: fetched.status,
        content_type: fetched.content_type.clone(),
        body: fetched.body.clone(),
        truncated: fetched.truncated,
    };
    // A page not kept is only fetched whole next time.
    let _ = store.keep_web_page(&page, &crate::store::session::now());
}

/// What the model reads of a response.
pub fn page(fetched: &Fetched, max_tokens: Option<u32>) -> Result<Value, ToolError> {
    let text = String::from_utf8_lossy(&fetched.body);
    let kind = fetched
        .content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let markdown = match kind.as_str() {
        "text/html" | "application/xhtml+xml" => web::html::to_markdown(&text),
        "" | "text/plain" | "text/markdown" | "text/x-markdown" | "text/csv" => text.into_owned(),
        k if k.starts_with("text/") || k == "application/json" || k.ends_with("+json") => {
            text.into_owned()
        }
        other => {
            return Err(ToolError::Web {
                code: "unsupported_type",
                message: format!(
                    "{} is {other} ({} bytes), not a page: only HTML, text and JSON are read",
                    fetched.url,
                    fetched.body.len()
                ),
            });
        }
    };
    let markdown = match max_tokens {
        Some(cap) => fit_text(
            &markdown,
            cap,
            &TokenCounter::for_model(""),
            "call web_fetch again with a larger max_tokens",
        ),
        None => markdown,
    };
    Ok(json!({
        "url": fetched.url,
        "status": fetched.status,
        "content_type": fetched.content_type,
        "markdown": markdown,
        "truncated": fetched.truncated,
        "bytes": fetched.body.len(),
        "sha256": sha256_hex(&fetched.body),
    }))
}
