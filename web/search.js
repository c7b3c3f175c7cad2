// agent-tui's web page: the code search box (POST /api/v1/agent/code/search
// on the chosen workspace's index): ranked files, why each ranks and its
// best lines. Loaded before app.js, whose `api`, `el`, `state` and `$` it
// uses once the page starts.
"use strict";

// Runs the search in the box; an answer to an older text is dropped.
async function codeSearch(ev) {
  if (ev) ev.preventDefault();
  const query = $("code-query").value.trim();
  const out = $("code-results");
  const status = $("code-status");
  if (!query || !state.workspace) {
    out.replaceChildren();
    status.textContent = "";
    return;
  }
  const asked = (state.searchAsked = (state.searchAsked || 0) + 1);
  status.textContent = "searching…";
  let found;
  try {
    found = await api("POST", "/api/v1/agent/code/search", { workspace_id: state.workspace, query, limit: 10 });
  } catch (e) {
    if (asked !== state.searchAsked) return;
    out.replaceChildren();
    status.textContent = e.status === 503 ? `The code index is not available: ${e.message}` : `Search failed: ${e.message}`;
    return;
  }
  if (asked !== state.searchAsked) return;
  const results = found.results || [];
  status.textContent = results.length
    ? `${results.length} file${results.length === 1 ? "" : "s"} of ${found.index.files} indexed${found.truncated ? " (more match)" : ""}`
    : "nothing found";
  out.replaceChildren(...results.map((r) => el("li", { "data-testid": "code-result", "data-path": r.path },
    el("div", { class: "code-path" }, r.path),
    el("div", { class: "code-why" }, (r.why || []).join(" · ")),
    ...(r.snippets || []).map((s) => el("pre", { class: "code-snippet", title: `lines ${s.start_line}-${s.end_line}` },
      el("span", { class: "code-line" }, `${s.start_line}`), " ", s.text)),
  )));
}

function startSearch() {
  $("code-search").addEventListener("submit", codeSearch);
  $("workspace").addEventListener("change", () => {
    $("code-results").replaceChildren();
    $("code-status").textContent = "";
  });
}

document.addEventListener("DOMContentLoaded", startSearch);
