//! HTML to Markdown for `web_fetch` (SPEC 20): a 2 MB documentation page
//! (sections, paragraphs with links and inline code, code blocks, tables,
//! lists, and the navigation, scripts and styles a real page carries)
//! converted in at most 50 ms; the Rust book's one-page edition too when
//! the toolchain ships it (or `AGENT_TUI_BENCH_HTML=FILE`). Run with
//! `cargo bench --bench html`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use agent_tui::web::html::to_markdown;

const BUDGET: Duration = Duration::from_millis(50);
const RUNS: usize = 9;

/// A documentation page of about `bytes`.
fn page(bytes: usize) -> String {
    let mut out = String::from(
        "<!doctype html><html><head><title>API</title><style>body{margin:0}.nav{display:flex}</style>\
         <script>window.analytics=function(){};</script></head><body>\
         <nav class=\"nav\"><a href=\"/\">Home</a><a href=\"/docs\">Docs</a></nav><main>",
    );
    let mut i: usize = 0;
    while out.len() < bytes {
        out.push_str(&format!(
            "<h2 id=\"s{i}\">Section {i}: <code>Builder::with_{i}</code></h2>\
             <p>Calling <a href=\"https://docs.example.org/api/{i}\">with_{i}</a> sets the \
             <em>option</em> {i}; see <strong>the guide</strong> for <code>Options</code> and \
             the <a href=\"#s{}\">previous section</a>. It returns <code>Result&lt;Self&gt;</code>.</p>\
             <pre><code class=\"language-rust\">let b = Builder::new()\n    .with_{i}(true)\n    .build()?;\n</code></pre>\
             <table><thead><tr><th>Field</th><th>Type</th><th>Default</th></tr></thead><tbody>\
             <tr><td>depth</td><td><code>u32</code></td><td>{i}</td></tr>\
             <tr><td>name</td><td><code>String</code></td><td>\"x\"</td></tr></tbody></table>\
             <ul><li>first point of {i}</li><li>second, with <a href=\"/x/{i}\">a link</a></li></ul>\
             <div class=\"ad\"><script>track({i})</script></div>",
            i.saturating_sub(1usize)
        ));
        i += 1;
    }
    out.push_str("</main><footer>© docs</footer></body></html>");
    out
}

fn time(name: &str, html: &str, budget: Option<Duration>) -> bool {
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            let md = to_markdown(html);
            let took = t.elapsed();
            assert!(!md.is_empty());
            took
        })
        .collect();
    times.sort();
    let median = times[RUNS / 2];
    let md = to_markdown(html);
    let ok = budget.is_none_or(|b| median <= b);
    println!(
        "{name}: {:.2} MB of HTML -> {:.2} MB of Markdown, median {:.1} ms (min {:.1}, max {:.1}){}",
        html.len() as f64 / 1e6,
        md.len() as f64 / 1e6,
        median.as_secs_f64() * 1e3,
        times[0].as_secs_f64() * 1e3,
        times[RUNS - 1].as_secs_f64() * 1e3,
        match budget {
            Some(b) if ok => format!(" (budget {} ms: ok)", b.as_millis()),
            Some(b) => format!(" (budget {} ms: OVER)", b.as_millis()),
            None => String::new(),
        }
    );
    ok
}

fn main() {
    let mut ok = time("generated documentation page", &page(2 << 20), Some(BUDGET));
    let real = std::env::var("AGENT_TUI_BENCH_HTML").ok().or_else(|| {
        let home = std::env::var("HOME").ok()?;
        let book = format!(
            "{home}/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/share/doc/rust/html/book/print.html"
        );
        std::path::Path::new(&book).exists().then_some(book)
    });
    if let Some(file) = real {
        let html = std::fs::read_to_string(&file).unwrap();
        ok &= time(&file, &html, Some(BUDGET));
    }
    // Hostile: nesting a parser lets through (reported, no budget).
    let deep = format!("{}deep{}", "<div>".repeat(20_000), "</div>".repeat(20_000));
    time("20,000 nested <div>", &deep, None);
    if !ok {
        std::process::exit(1);
    }
}
