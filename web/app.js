// agent-tui's web page: the public API (/api/v1) with the user's token, in
// the browser. SSE is read with fetch (EventSource cannot send a token) and
// resumed by Last-Event-ID; nothing here keeps state the server lacks.
"use strict";

const $ = (id) => document.getElementById(id);
const state = {
  token: sessionStorage.getItem("agent-tui-token") || "",
  workspace: "",
  session: "",
  job: "",
  bundle: null,
  current: 0,
  // The open session's job streams (job id -> AbortController) and views.
  streams: new Map(),
  views: new Map(),
  // Bumped whenever what the page shows changes hands (sign in or out,
  // another session): async work begun under an older epoch is dropped.
  epoch: 0,
  signedIn: false,
};

// ---- the API ------------------------------------------------------------

class ApiError extends Error {
  constructor(status, body) {
    const e = (body && body.error) || {};
    super(e.message || `HTTP ${status}`);
    this.status = status;
    this.code = e.code;
    this.body = body;
  }
}

// A request to the API with the token. A network failure says offline; a
// 401 signs out and asks for a token again; any failure throws ApiError.
async function api(method, path, body) {
  const headers = { Authorization: `Bearer ${state.token}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let r;
  try {
    r = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    setOffline(true);
    throw new ApiError(0, { error: { code: "offline", message: "the server cannot be reached (offline)" } });
  }
  setOffline(false);
  const text = await r.text();
  let json = {};
  try {
    json = text ? JSON.parse(text) : {};
  } catch (e) {
    json = { error: { message: `HTTP ${r.status}: not JSON` } };
  }
  if (r.status === 401 && state.signedIn) signOut("Your token was refused (revoked or unknown): paste a token to sign in again.");
  if (!r.ok) throw new ApiError(r.status, json);
  return json;
}

// Says in the chat what failed and why (a 401 has already signed out).
function failed(what, e) {
  if (e.status === 401 || !state.signedIn) return;
  logItem(el("div", { class: "status failed", "data-testid": "error", role: "alert" }, `${what}: ${e.message}`));
}

// ---- elements -----------------------------------------------------------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "class") node.className = v;
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c !== undefined && c !== null) node.append(c);
  }
  return node;
}

function logItem(node) {
  const log = $("log");
  const stick = log.scrollTop + log.clientHeight >= log.scrollHeight - 40;
  const li = el("li", {}, node);
  log.append(li);
  if (stick) log.scrollTop = log.scrollHeight;
  return li;
}

// ---- markdown (a small, safe subset: text nodes only) --------------------

const KEYWORDS = new Set(("fn let mut pub use struct enum impl match if else for while loop return " +
  "const static async await def class import from as in not and or None True False self " +
  "function var new this null true false type interface export package func go").split(" "));

function highlight(code) {
  const out = document.createDocumentFragment();
  const re = /(\/\/[^\n]*|#[^\n]*|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|\b\d+(?:\.\d+)?\b|\b[A-Za-z_]\w*\b)/g;
  let last = 0;
  for (const m of code.matchAll(re)) {
    out.append(code.slice(last, m.index));
    const t = m[0];
    let cls = "";
    if (t.startsWith("//") || t.startsWith("#")) cls = "tok-c";
    else if (t[0] === '"' || t[0] === "'") cls = "tok-s";
    else if (/^\d/.test(t)) cls = "tok-n";
    else if (KEYWORDS.has(t)) cls = "tok-k";
    out.append(cls ? el("span", { class: cls }, t) : t);
    last = m.index + t.length;
  }
  out.append(code.slice(last));
  return out;
}

function inline(text) {
  const out = document.createDocumentFragment();
  const re = /(`[^`]+`|\*\*[^*]+\*\*|\*[^*\s][^*]*\*|\[[^\]]+\]\(https?:\/\/[^)\s]+\))/g;
  let last = 0;
  for (const m of text.matchAll(re)) {
    out.append(text.slice(last, m.index));
    const t = m[0];
    if (t[0] === "`") out.append(el("code", {}, t.slice(1, -1)));
    else if (t.startsWith("**")) out.append(el("strong", {}, t.slice(2, -2)));
    else if (t[0] === "*") out.append(el("em", {}, t.slice(1, -1)));
    else {
      const [, label, href] = t.match(/^\[([^\]]+)\]\(([^)]+)\)$/);
      out.append(el("a", { href, rel: "noopener noreferrer", target: "_blank" }, label));
    }
    last = m.index + t.length;
  }
  out.append(text.slice(last));
  return out;
}

const ITEM = /^(\s*)([-*+]|\d+[.)])\s+(.*)$/;
const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
const TABLE_SEP = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

// The cells of a table row: `| a | b |` -> ["a", "b"] (`\|` is a bar).
function cells(line) {
  const t = line.trim().replace(/^\|/, "").replace(/(^|[^\\])\|$/, "$1");
  return t.split(/(?<!\\)\|/).map((c) => c.trim().replaceAll("\\|", "|"));
}

// A table from its header, separator and body rows, aligned per column.
function table(rows) {
  const align = cells(rows[1]).map((c) => (c.startsWith(":") && c.endsWith(":") ? "center" : c.endsWith(":") ? "right" : c.startsWith(":") ? "left" : ""));
  const row = (line, tag) => el("tr", {}, cells(line).slice(0, align.length).map((c, i) => el(tag, { class: align[i] ? `align-${align[i]}` : undefined }, inline(c))));
  return el("div", { class: "table" }, el("table", {},
    el("thead", {}, row(rows[0], "th")),
    el("tbody", {}, rows.slice(2).map((r) => row(r, "td")))));
}

// A list from line `i` (its items at that line's indent, deeper ones
// nested in the item above); returns the list and the next line.
function list(lines, i) {
  const first = lines[i].match(ITEM);
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const start = ordered ? parseInt(first[2], 10) : 1;
  const node = el(ordered ? "ol" : "ul", { start: start !== 1 ? String(start) : undefined });
  let li = null;
  while (i < lines.length) {
    const line = lines[i];
    const m = line.match(ITEM);
    if (line.trim() === "") {
      // A blank line inside a list: it goes on if an item follows.
      let j = i;
      while (j < lines.length && lines[j].trim() === "") j += 1;
      const next = j < lines.length && lines[j].match(ITEM);
      if (!next || next[1].length < indent) break;
      i = j;
      continue;
    }
    if (m && m[1].length <= indent + 1 && m[1].length >= indent) {
      if (/\d/.test(m[2]) !== ordered) break;
      li = el("li", {}, inline(m[3]));
      node.append(li);
      i += 1;
    } else if (m && m[1].length > indent && li) {
      const [sub, next] = list(lines, i);
      li.append(sub);
      i = next;
    } else if (!m && li && /^\s/.test(line) && !RULE.test(line)) {
      li.append(" ", inline(line.trim()));
      i += 1;
    } else {
      break;
    }
  }
  return [node, i];
}

// Markdown as DOM nodes (text only, never parsed as HTML): fences, headings,
// quotes, rules, tables, nested lists, paragraphs.
function markdown(src) {
  const out = document.createDocumentFragment();
  const lines = src.split("\n");
  let i = 0;
  let para = [];
  const flush = () => {
    if (para.length) out.append(el("p", {}, inline(para.join(" "))));
    para = [];
  };
  while (i < lines.length) {
    const line = lines[i];
    const fence = line.match(/^```\s*([\w+-]*)/);
    if (fence) {
      flush();
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].startsWith("```")) body.push(lines[i++]);
      i += 1;
      out.append(el("pre", {}, el("code", { "data-lang": fence[1] || undefined }, highlight(body.join("\n")))));
      continue;
    }
    const heading = line.match(/^(#{1,4})\s+(.*)/);
    if (heading) {
      flush();
      out.append(el(`h${heading[1].length + 2}`, {}, inline(heading[2])));
    } else if (/^\s{0,3}>/.test(line)) {
      flush();
      const body = [];
      while (i < lines.length && /^\s{0,3}>/.test(lines[i])) body.push(lines[i++].replace(/^\s{0,3}> ?/, ""));
      out.append(el("blockquote", {}, markdown(body.join("\n"))));
      continue;
    } else if (RULE.test(line)) {
      flush();
      out.append(el("hr"));
    } else if (line.includes("|") && i + 1 < lines.length && lines[i + 1].includes("|") && TABLE_SEP.test(lines[i + 1])) {
      flush();
      const rows = [line, lines[i + 1]];
      i += 2;
      while (i < lines.length && lines[i].includes("|") && lines[i].trim() !== "") rows.push(lines[i++]);
      out.append(table(rows));
      continue;
    } else if (ITEM.test(line)) {
      flush();
      const [node, next] = list(lines, i);
      out.append(node);
      i = next;
      continue;
    } else if (line.trim() === "") {
      flush();
    } else {
      para.push(line);
    }
    i += 1;
  }
  flush();
  return out;
}

// ---- a job's view -------------------------------------------------------

class JobView {
  constructor(jobId) {
    this.jobId = jobId;
    // The session (epoch) it was made for: it acts only while that is open.
    this.epoch = state.epoch;
    this.done = false;
    this.text = "";
    this.attempt = 1;
    this.thinking = "";
    this.answer = el("div", { class: "answer", "data-testid": "answer" });
    this.thinkBox = el("details", { class: "thinking", hidden: true }, el("summary", {}, "thinking"), el("pre"));
    this.tools = el("details", { class: "tools", "data-testid": "tool-log", hidden: true, open: true },
      el("summary", {}, "tool calls"));
    this.calls = new Map();
    this.notes = el("div", { class: "notes", "data-testid": "notes" });
    this.status = el("div", { class: "status" }, "queued");
    this.prompts = new Map();
    this.root = el("div", { class: "job", "data-job-id": jobId, "data-stored": "0" },
      this.thinkBox, this.tools, this.notes, this.answer, this.status);
    logItem(this.root);
    this.pending = false;
    state.views.set(jobId, this);
    updateStop();
  }

  // Whether its session is still the one on screen.
  live() {
    return this.epoch === state.epoch;
  }

  // The job ended: no more Stop for it.
  finish(text) {
    this.status.textContent = text;
    this.done = true;
    updateStop();
  }

  render() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.answer.replaceChildren(markdown(this.text));
      this.thinkBox.querySelector("pre").textContent = this.thinking;
      const log = $("log");
      if (log.scrollTop + log.clientHeight >= log.scrollHeight - 120) log.scrollTop = log.scrollHeight;
    });
  }

  on(e) {
    const d = e.data || {};
    switch (e.type) {
      case "job.started":
        this.status.textContent = `running on ${d.provider || "the model"}…`;
        break;
      case "llm.delta":
        if (d.attempt > this.attempt) {
          this.attempt = d.attempt;
          this.text = "";
        }
        this.text += d.text;
        this.render();
        break;
      case "llm.reasoning":
        this.thinking += d.text;
        this.thinkBox.hidden = false;
        this.render();
        break;
      case "tool.call.requested": {
        this.tools.hidden = false;
        // agent-tui's own reads of the files the instruction names.
        const why = d.attached ? " (read for the model: the instruction names it)" : "";
        const call = el("details", { class: d.attached ? "call attached" : "call" },
          el("summary", {}, `${d.name} ${brief(d.arguments)}${why}`),
          el("pre", {}, JSON.stringify(d.arguments, null, 2)));
        this.calls.set(d.tool_call_id, call);
        this.tools.append(call);
        break;
      }
      case "tool.call.completed": {
        const call = this.calls.get(d.tool_call_id);
        if (call) {
          call.classList.add(d.ok ? "ok" : "failed");
          call.querySelector("summary").append(` · ${d.ok ? "ok" : "failed"} ${d.duration_ms} ms`);
          call.append(el("pre", {}, JSON.stringify(d.ok ? d.result : d.error, null, 2)));
        }
        break;
      }
      case "provider.tools_in_prompt":
        this.note(`${d.provider}'s chat template drops the tools (${d.reason}): they are described in the prompt from now on.`);
        break;
      case "llm.repeat_stopped":
        this.note(`${d.provider}'s reply went round in a loop (the same ${d.chars} characters ${d.copies} times in a row); it was stopped there and kept once.`);
        break;
      case "provider.fallback":
        this.note(`${d.from} gave up (${String(d.reason).replaceAll("_", " ")}): the job goes on with ${d.to}, from the same conversation.`);
        this.status.textContent = `running on ${d.to}…`;
        break;
      case "context.compacted":
        this.note(`Context compacted (${d.reason}): ${d.tokens_before} → ${d.tokens_after} tokens; older turns are now a summary.`);
        break;
      case "approval.requested":
        this.ask(d, "approval");
        break;
      case "clarification.requested":
        this.ask(d, "clarification");
        break;
      case "approval.resolved":
      case "clarification.received":
        this.decided(d);
        break;
      case "job.completed":
        this.text = d.answer || this.text;
        this.render();
        this.finish(d.status === "awaiting_review" ? "awaiting review" : "completed");
        if (d.status === "awaiting_review" && this.live()) loadReview(this.jobId);
        break;
      case "job.failed":
        // SPEC 6: data.error says what happened, data.code what kind.
        this.finish(`failed: ${d.error || d.message || "error"}${d.code ? ` (${d.code})` : ""}`);
        this.status.classList.add("failed");
        break;
      case "job.cancelled":
        this.finish("cancelled");
        break;
      case "verify.completed":
        if (state.job === this.jobId && !state.verifying) {
          state.verify = d;
          renderVerify();
        }
        break;
      case "apply.completed":
      case "rollback.completed":
        refreshCheckpoints();
        break;
      default:
        break;
    }
  }

  // A line about what the engine did for this job (the TUI's notices).
  note(text) {
    this.notes.append(el("div", { class: "note", "data-testid": "note" }, text));
  }

  ask(d, kind) {
    const id = d.tool_call_id;
    const box = el("div", { class: "prompt", "data-testid": kind === "approval" ? "approval" : "clarification" });
    if (kind === "approval") {
      const ws = $("workspace").selectedOptions[0];
      box.append(
        el("strong", {}, `Allow ${d.name}?`),
        el("pre", {}, d.arguments && d.arguments.command ? d.arguments.command : JSON.stringify(d.arguments, null, 2)),
        el("div", { class: "status" }, `arguments: ${JSON.stringify(d.arguments)}`),
        el("div", { class: "status" }, `workspace: ${state.workspace}${ws && ws.textContent !== state.workspace ? ` (${ws.textContent})` : ""} · runs in ${d.cwd || d.root || "the root"}`),
        d.sandbox ? el("div", { class: "status" }, d.sandbox) : null,
        el("div", { class: "row" },
          el("button", { type: "button", "data-testid": "approve", onclick: (ev) => this.answer_(ev, id, "allow", box) }, "Allow"),
          el("button", { type: "button", "data-testid": "deny", onclick: (ev) => this.answer_(ev, id, "deny", box) }, "Deny"),
          el("span", { class: "status" }, "click, or Tab to a button and press Enter")),
      );
      guard(box);
    } else {
      const input = el("input", { type: "text", "aria-label": "Your answer" });
      box.append(el("strong", {}, d.question),
        el("form", { class: "row", onsubmit: (ev) => { ev.preventDefault(); this.clarify(id, input.value, box); } },
          input, el("button", { type: "submit" }, "Answer")));
    }
    this.prompts.set(id, box);
    this.root.insertBefore(box, this.answer);
    box.scrollIntoView({ block: "nearest" });
    // Never taken from a field being typed in: the keys are meant for it.
    if (!editable(document.activeElement)) box.querySelector("button, input").focus({ preventScroll: true });
  }

  async answer_(ev, id, decision, box) {
    if (!deliberate(ev, box)) return;
    try {
      await api("POST", `/api/v1/agent/jobs/${this.jobId}/approvals/${encodeURIComponent(id)}`, { decision });
    } catch (e) {
      if (e.status !== 409) box.append(el("div", { class: "error" }, e.message));
    }
  }

  async clarify(id, answer, box) {
    try {
      await api("POST", `/api/v1/agent/jobs/${this.jobId}/clarify`, { question_id: id, answer });
    } catch (e) {
      if (e.status !== 409) box.append(el("div", { class: "error" }, e.message));
    }
  }

  decided(d) {
    const box = this.prompts.get(d.tool_call_id);
    if (!box) return;
    box.querySelectorAll("button, input").forEach((b) => { b.disabled = true; });
    const what = d.approved === undefined ? `answered: ${d.answer}` : (d.approved ? "allowed" : "denied");
    box.append(el("div", { class: "decided" }, d.by ? `${what} (${d.by})` : what));
  }
}

// Whether `node` takes typed text (a key pressed there is not for a prompt).
function editable(node) {
  return Boolean(node) && (node.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(node.tagName));
}

// Arms an approval prompt for keys only once a key is pressed on it (not
// held down from before) a moment after it appeared, or a pointer on it.
function guard(box) {
  const shown = performance.now();
  box.addEventListener("keydown", (ev) => {
    if (!ev.repeat && performance.now() - shown > 300) box.dataset.armed = "true";
  }, true);
  box.addEventListener("pointerdown", () => { box.dataset.armed = "true"; }, true);
}

// A click with a pointer, or a key pressed on the armed prompt itself:
// never a keystroke begun in the instruction box or before the prompt.
function deliberate(ev, box) {
  return ev.detail > 0 || box.dataset.armed === "true";
}

function brief(args) {
  if (!args) return "";
  const v = args.command || args.file_path || args.path || args.query || "";
  return String(v).slice(0, 80);
}

// ---- streams: fetch + Last-Event-ID, resumed after any drop --------------

// Follows job `jobId`'s stream into `view` until the job ends, its session
// is left (leaveSession aborts it) or the token is refused.
async function follow(jobId, view) {
  const stop = new AbortController();
  state.streams.set(jobId, stop);
  let last = null;
  let delay = 250;
  try {
    while (!stop.signal.aborted && view.live()) {
      let ended = false;
      try {
        const headers = { Authorization: `Bearer ${state.token}`, Accept: "text/event-stream" };
        if (last !== null) headers["Last-Event-ID"] = String(last);
        const r = await fetch(`/api/v1/agent/jobs/${jobId}/stream`, { headers, signal: stop.signal });
        if (r.status === 401) {
          if (state.signedIn) signOut("Your token was refused (revoked or unknown): paste a token to sign in again.");
          return;
        }
        if (r.status === 403 || r.status === 404) {
          view.finish(`not followed: HTTP ${r.status}`);
          return;
        }
        if (!r.ok) throw new Error(`HTTP ${r.status}`);
        setOffline(false);
        delay = 250;
        const reader = r.body.getReader();
        const decoder = new TextDecoder();
        let buf = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += decoder.decode(value, { stream: true });
          let cut;
          while ((cut = buf.indexOf("\n\n")) >= 0) {
            const frame = buf.slice(0, cut);
            buf = buf.slice(cut + 2);
            const data = frame.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n");
            const id = frame.split("\n").find((l) => l.startsWith("id:"));
            if (!data) continue;
            if (stop.signal.aborted || !view.live()) return;
            const event = JSON.parse(data);
            if (id) {
              // Stored events carry their cursor: each is shown once.
              const cursor = Number(id.slice(3).trim());
              if (last !== null && cursor <= last) {
                document.body.dataset.duplicates = String(Number(document.body.dataset.duplicates || 0) + 1);
                continue;
              }
              last = cursor;
              view.root.dataset.stored = String(Number(view.root.dataset.stored) + 1);
            }
            view.on(event);
            if (["job.completed", "job.failed", "job.cancelled"].includes(event.type)) ended = true;
          }
        }
        if (ended) return;
      } catch (e) {
        if (stop.signal.aborted) return;
        setOffline(true);
      }
      await new Promise((ok) => setTimeout(ok, delay));
      delay = Math.min(delay * 2, 4000);
    }
  } finally {
    if (state.streams.get(jobId) === stop) state.streams.delete(jobId);
  }
}

// Stops following every stream of the session on screen.
function stopStreams() {
  for (const stop of state.streams.values()) stop.abort();
  state.streams.clear();
}

function setOffline(off) {
  $("offline").hidden = !off;
  if (off) setAvailability("offline");
}

// ---- review -------------------------------------------------------------

// Opens job `jobId`'s review, if it has one and its session is still open.
async function loadReview(jobId) {
  const epoch = state.epoch;
  let snap;
  try {
    snap = await api("GET", `/api/v1/agent/jobs/${jobId}`);
  } catch (e) {
    if (epoch === state.epoch) failed("loading the review", e);
    return;
  }
  if (epoch !== state.epoch || !snap.diff_bundle) return;
  state.job = jobId;
  state.bundle = snap.diff_bundle;
  state.decisions = new Map();
  for (const f of state.bundle.files) {
    for (const h of f.hunks) state.decisions.set(h.hunk_id, h.accepted === true ? true : h.accepted === false ? false : null);
  }
  state.current = 0;
  state.verify = snap.verify || null;
  state.verifying = null;
  renderReview();
  $("review").hidden = false;
}

function hunks() {
  return state.bundle ? state.bundle.files.flatMap((f) => f.hunks.map((h) => ({ file: f, hunk: h }))) : [];
}

function renderReview() {
  const files = $("files");
  files.replaceChildren();
  let n = 0;
  for (const f of state.bundle.files) {
    const box = el("div", { class: "file" },
      el("h3", {}, el("span", {}, f.file_path),
        el("button", { type: "button", "data-testid": "accept-file", onclick: () => decideFile(f, true) }, "accept file"),
        el("button", { type: "button", "data-testid": "reject-file", onclick: () => decideFile(f, false) }, "reject file")));
    for (const h of f.hunks) {
      const index = n++;
      const d = state.decisions.get(h.hunk_id);
      const diff = el("pre", { class: "diff" });
      for (const line of h.patch.split("\n")) {
        const cls = line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : line.startsWith("@@") ? "at" : "";
        diff.append(cls ? el("span", { class: cls }, line) : `${line}\n`);
      }
      const stateText = h.conflict ? `conflict: ${h.conflict}` : h.applied ? "applied" : d === true ? "accepted" : d === false ? "rejected" : "undecided";
      box.append(el("div", {
        class: `hunk ${d === true ? "accepted" : d === false ? "rejected" : ""} ${index === state.current ? "current" : ""}`,
        "data-testid": "hunk", "data-hunk-id": h.hunk_id, tabindex: "0",
        onfocus: () => { state.current = index; markCurrent(); },
      },
      el("div", { class: "bar" }, el("span", { class: "state" }, stateText),
        el("button", { type: "button", "data-testid": "accept", onclick: () => decide(index, true) }, "accept (y)"),
        el("button", { type: "button", "data-testid": "reject", onclick: () => decide(index, false) }, "reject (n)")),
      diff));
    }
    files.append(box);
  }
  renderVerify();
}

// ---- verify before apply (SPEC 17) -------------------------------------

function decisions() {
  const accepted = [...state.decisions].filter(([, v]) => v === true).map(([k]) => k);
  const rejected = [...state.decisions].filter(([, v]) => v === false).map(([k]) => k);
  return { accepted, rejected };
}

// A result ran with other accepted hunks than the review has now.
function verifyStale(v) {
  const now = decisions().accepted.slice().sort().join(" ");
  return (v.hunk_ids || []).slice().sort().join(" ") !== now;
}

const VERDICTS = {
  passed: "passed",
  failed: "failed: these hunks break it",
  already_failing: "failed, and fails without these hunks too",
  timed_out: "timed out",
  cancelled: "stopped",
  error: "could not run",
};

function renderVerify() {
  const box = $("verify-result");
  const v = state.verify;
  $("verify").disabled = Boolean(state.verifying);
  if (state.verifying) {
    box.hidden = false;
    box.className = "verify running";
    box.replaceChildren(`verifying ${state.verifying.length} accepted hunk${state.verifying.length === 1 ? "" : "s"}…`);
    return;
  }
  if (!v) {
    box.hidden = true;
    return;
  }
  const stale = verifyStale(v);
  const secs = (v.duration_ms / 1000).toFixed(1);
  const exit = v.exit_code === null || v.exit_code === undefined ? "" : `exit ${v.exit_code}, `;
  let line = `verify ${VERDICTS[v.outcome] || v.outcome} (${exit}${secs} s, hunks ${(v.hunk_ids || []).join(" ")}): ${v.command}`;
  if (v.error) line += ` — ${v.error}`;
  if (stale) line += " — stale: the decisions changed since (v runs it again)";
  box.hidden = false;
  box.className = `verify ${v.passed ? "passed" : "failed"}${stale ? " stale" : ""}`;
  box.dataset.outcome = v.outcome;
  box.dataset.stale = String(stale);
  const parts = [el("div", {}, line)];
  if (!v.passed && v.output_tail) parts.push(el("pre", { "data-testid": "verify-output" }, v.output_tail));
  if ((v.not_verified || []).length) parts.push(el("div", { class: "status" }, `not verified (outside the copy): ${v.not_verified.join(", ")}`));
  if (!v.passed && !stale && v.outcome !== "error") {
    parts.push(el("button", { type: "button", "data-testid": "verify-feedback", onclick: () => verifyReview(true) }, "send the failure to the model (f)"));
  }
  box.replaceChildren(...parts);
}

// Runs the verify on the accepted hunks (the decisions are recorded with
// it); with `feedback`, a failure goes to the model as a new job.
async function verifyReview(feedback) {
  if (state.verifying || !state.job) return;
  const { accepted, rejected } = decisions();
  const status = $("review-status");
  if (!accepted.length) {
    status.textContent = "accept a hunk first: verify runs on the accepted ones";
    return;
  }
  state.verifying = accepted;
  renderVerify();
  const epoch = state.epoch;
  try {
    const r = await api("POST", `/api/v1/agent/jobs/${state.job}/verify`, {
      accepted_hunk_ids: accepted, rejected_hunk_ids: rejected, feedback: Boolean(feedback),
    });
    if (epoch !== state.epoch) return;
    state.verify = r.verify;
    status.textContent = "";
    if (r.feedback_job_id) {
      status.textContent = "the failure went to the model: a new proposal follows";
      $("review").hidden = true;
      state.bundle = null;
      follow(r.feedback_job_id, new JobView(r.feedback_job_id));
    }
  } catch (e) {
    if (epoch === state.epoch) status.textContent = `verify: ${e.message}`;
  } finally {
    if (epoch === state.epoch) {
      state.verifying = null;
      renderVerify();
    }
  }
}

function markCurrent() {
  document.querySelectorAll(".hunk").forEach((h, i) => h.classList.toggle("current", i === state.current));
}

function decide(index, accepted) {
  const all = hunks();
  if (!all[index]) return;
  state.decisions.set(all[index].hunk.hunk_id, accepted);
  state.current = Math.min(index + 1, all.length - 1);
  renderReview();
  const next = document.querySelectorAll(".hunk")[state.current];
  if (next) next.focus();
}

function decideFile(file, accepted) {
  for (const h of file.hunks) state.decisions.set(h.hunk_id, accepted);
  renderReview();
}

// Applies the accepted hunks; what was written and its checkpoint stay
// in the chat, and the job's status says it was applied.
async function applyReview() {
  const { accepted, rejected } = decisions();
  const status = $("review-status");
  const v = state.verify;
  if (v && !v.passed && !verifyStale(v) && !window.confirm(`The verify of these hunks ${VERDICTS[v.outcome] || v.outcome}. Apply them anyway?`)) {
    status.textContent = "nothing written: the verify failed";
    return;
  }
  const epoch = state.epoch;
  const job = state.job;
  try {
    const r = await api("POST", "/api/v1/agent/apply", {
      session_id: state.session, job_id: job, accepted_hunk_ids: accepted, rejected_hunk_ids: rejected,
    });
    if (epoch !== state.epoch) return;
    const said = applied(r);
    status.textContent = said;
    logItem(el("div", { class: "status applied", "data-testid": "applied", role: "status" }, said));
    const view = state.views.get(job);
    if (view) view.status.textContent = `applied: checkpoint ${r.checkpoint_id || "none"}`;
    $("review").hidden = true;
    state.bundle = null;
    state.verify = null;
    refreshCheckpoints();
  } catch (e) {
    if (epoch !== state.epoch) return;
    const conflicts = (e.body && e.body.error && e.body.error.conflicts) || [];
    status.textContent = conflicts.length
      ? `nothing written: ${conflicts.map((c) => `${c.file_path}: ${c.reason}`).join("; ")}`
      : `nothing written: ${e.message}`;
  }
}

// An apply's answer in words: the files written, hunks, the checkpoint.
function applied(r) {
  const files = (r.applied_files || []).filter((f) => (f.applied_hunks || []).length);
  const n = files.reduce((sum, f) => sum + f.applied_hunks.length, 0);
  const names = files.length === 1 ? files[0].file_path : files.map((f) => `${f.file_path} (${f.applied_hunks.length})`).join(", ");
  if (!n) return `applied: nothing written (every hunk rejected) · checkpoint ${r.checkpoint_id || "none"}`;
  return `applied ${n} hunk${n === 1 ? "" : "s"} to ${names} · checkpoint ${r.checkpoint_id || "none"}`;
}

// ---- workspaces, sessions, checkpoints ----------------------------------

// The sessions of the workspace, the open one marked.
async function refreshSessions() {
  const epoch = state.epoch;
  let sessions;
  try {
    ({ sessions } = await api("GET", "/api/v1/agent/sessions"));
  } catch (e) {
    if (epoch === state.epoch) failed("listing the sessions", e);
    return;
  }
  if (epoch !== state.epoch) return;
  const list = $("sessions");
  list.replaceChildren();
  for (const s of (sessions || []).filter((x) => x.workspace_id === state.workspace)) {
    list.append(el("li", {}, el("button", {
      type: "button", "aria-current": s.session_id === state.session ? "true" : "false",
      "data-session-id": s.session_id,
      onclick: () => openSession(s.session_id),
    }, s.last_prompt || s.session_id)));
  }
}

// The open session's checkpoints.
async function refreshCheckpoints() {
  const epoch = state.epoch;
  const list = $("checkpoints");
  if (!state.session) {
    list.replaceChildren();
    return;
  }
  let checkpoints;
  try {
    ({ checkpoints } = await api("GET", `/api/v1/agent/checkpoints?session_id=${encodeURIComponent(state.session)}`));
  } catch (e) {
    if (epoch === state.epoch) failed("listing the checkpoints", e);
    return;
  }
  if (epoch !== state.epoch) return;
  list.replaceChildren();
  for (const c of checkpoints || []) {
    const files = (c.affected_files || []).map((f) => f.file_path).join(", ");
    list.append(el("li", { "data-testid": "checkpoint", "data-checkpoint-id": c.checkpoint_id },
      el("span", { title: files }, `${c.kind} · ${files}`),
      el("button", { type: "button", "data-testid": "three-way", onclick: () => threeWay(c) }, "view"),
      el("button", { type: "button", "data-testid": "rollback", onclick: () => rollback(c.checkpoint_id, files) }, "rollback")));
  }
}

// A checkpoint's files as three columns: before it, what it wrote, now.
async function threeWay(c) {
  const box = el("div", { class: "three", "data-testid": "diff3" },
    el("div", { class: "row" }, el("strong", {}, `checkpoint ${c.kind} · ${c.created_at || ""}`),
      el("button", { type: "button", onclick: () => box.parentElement.remove() }, "close")));
  for (const f of c.affected_files || []) {
    try {
      const d = await api("GET", `/api/v1/agent/checkpoints/${c.checkpoint_id}/diff3?file_path=${encodeURIComponent(f.file_path)}`);
      const col = (title, text) => el("div", {}, el("h3", {}, title),
        el("pre", {}, text === null || text === undefined ? "(no file)" : text));
      box.append(el("h3", {}, f.file_path),
        el("div", { class: "columns" }, col("before", d.base), col("written", d.proposed), col("now", d.current)));
    } catch (e) {
      box.append(el("div", { class: "status failed" }, `${f.file_path}: ${e.message}`));
    }
  }
  logItem(box);
  box.querySelector("button").focus();
}

async function rollback(id, files) {
  if (!window.confirm(`Roll back every change of this checkpoint (${files})?`)) return;
  try {
    await api("POST", `/api/v1/agent/checkpoints/${id}/rollback`, { mode: "hard_all" });
    logItem(el("div", { class: "status" }, `rolled back ${files}`));
  } catch (e) {
    logItem(el("div", { class: "status failed" }, `rollback refused: ${e.message}`));
  }
  refreshCheckpoints();
}

// Leaves the session on screen: its streams stop, its chat, review and
// checkpoints go, and late answers for it are dropped (a new epoch).
function leaveSession() {
  stopStreams();
  state.epoch += 1;
  state.session = "";
  state.job = "";
  state.bundle = null;
  state.decisions = new Map();
  state.verify = null;
  state.verifying = null;
  state.views.clear();
  $("log").replaceChildren();
  $("review").hidden = true;
  $("files").replaceChildren();
  $("review-status").textContent = "";
  $("verify-result").hidden = true;
  $("checkpoints").replaceChildren();
  updateStop();
}

// Opens session `id`: its history, the jobs still running followed (their
// approvals asked again), its pending review. The chat on screen stays
// until the session is read.
async function openSession(id) {
  const epoch = state.epoch;
  state.opening = id;
  let s;
  try {
    s = await api("GET", `/api/v1/agent/sessions/${encodeURIComponent(id)}`);
  } catch (e) {
    if (epoch === state.epoch && state.opening === id) failed("opening the session", e);
    return;
  }
  if (epoch !== state.epoch || state.opening !== id) return;
  leaveSession();
  state.session = id;
  for (const job of s.jobs || []) {
    logItem(el("div", { class: "you" }, job.prompt));
    if (job.answer) logItem(el("div", { class: "answer", "data-testid": "answer" }, markdown(job.answer)));
    if (["queued", "running", "waiting_for_user"].includes(job.status)) {
      const view = new JobView(job.job_id);
      follow(job.job_id, view);
    }
  }
  if (s.pending_review && s.pending_review.job_id) loadReview(s.pending_review.job_id);
  refreshSessions();
  refreshCheckpoints();
}

// A new session in the workspace, opened; false if it could not be made.
async function newSession() {
  let s;
  try {
    s = await api("POST", "/api/v1/agent/sessions", { workspace_id: state.workspace });
  } catch (e) {
    failed("new session", e);
    return false;
  }
  await openSession(s.session_id);
  return state.session === s.session_id;
}

// Sends the instruction; if it cannot start, it goes back in the box.
async function send(ev) {
  ev.preventDefault();
  const box = $("instruction");
  const text = box.value.trim();
  if (!text) return;
  if (!state.session && !(await newSession())) return;
  const epoch = state.epoch;
  const mine = logItem(el("div", { class: "you" }, text));
  box.value = "";
  try {
    const r = await api("POST", "/api/v1/agent/run", { session_id: state.session, instruction: text, mode: $("mode").value });
    if (epoch !== state.epoch) return;
    follow(r.job_id, new JobView(r.job_id));
    refreshSessions();
  } catch (e) {
    if (epoch !== state.epoch) return;
    mine.remove();
    failed("not sent", e);
    if (!box.value) box.value = text;
  }
}

// The open session's jobs still running.
function running() {
  return [...state.views.values()].filter((v) => !v.done);
}

// Stop shows while a job of the open session runs.
function updateStop() {
  $("stop").hidden = running().length === 0;
}

// Cancels the running jobs of the open session (Stop, or Esc).
async function cancelJobs() {
  for (const view of running()) {
    view.status.textContent = "cancelling…";
    try {
      await api("POST", `/api/v1/agent/jobs/${encodeURIComponent(view.jobId)}/cancel`, {});
    } catch (e) {
      failed("cancel", e);
    }
  }
}

function setAvailability(status) {
  const a = document.querySelector("[data-testid=availability]");
  a.className = `availability ${status}`;
  a.textContent = status;
}

async function health() {
  try {
    const r = await fetch("/api/v1/health");
    const h = await r.json();
    setAvailability(h.status || "offline");
    document.querySelector("[data-testid=availability]").title = `host ${h.host || ""}`;
    $("offline").hidden = true;
  } catch (e) {
    setAvailability("offline");
  }
}

// Checks the server every 10 s, every 2 s while it is offline.
async function watchHealth() {
  await health();
  const off = $("offline").hidden === false || document.querySelector("[data-testid=availability]").classList.contains("offline");
  setTimeout(watchHealth, off ? 2000 : 10000);
}

// Signs out: the token, and everything of this user on the page, go.
function signOut(message) {
  leaveSession();
  sessionStorage.removeItem("agent-tui-token");
  state.token = "";
  state.signedIn = false;
  state.workspace = "";
  state.opening = "";
  $("token").value = "";
  $("instruction").value = "";
  $("sessions").replaceChildren();
  $("workspace").replaceChildren();
  $("app").hidden = true;
  $("login").hidden = false;
  $("login-error").textContent = message || "";
  $("token").focus();
}

// Signs in with state.token: the workspaces, then the sessions.
async function signIn() {
  const t0 = performance.now();
  const epoch = state.epoch;
  try {
    const { workspaces } = await api("GET", "/api/v1/agent/workspaces");
    if (epoch !== state.epoch) return;
    const select = $("workspace");
    select.replaceChildren(...workspaces.map((w) => el("option", { value: w.id }, w.name || w.id)));
    state.workspace = workspaces.length ? workspaces[0].id : "";
    state.signedIn = true;
    $("token").value = "";
    $("login").hidden = true;
    $("app").hidden = false;
    $("login-error").textContent = "";
    // Token in hand to workspaces listed (bench/web.sh reads it).
    document.body.dataset.readyMs = (performance.now() - t0).toFixed(1);
    await refreshSessions();
    $("instruction").focus();
  } catch (e) {
    if (epoch !== state.epoch) return;
    signOut(e.status === 401 ? "That token was refused." : e.message);
  }
}

// Signs in with `token`, as a new visitor: whoever was signed in is signed
// out first, and nothing of theirs stays.
function signInWith(token) {
  signOut();
  state.token = token;
  sessionStorage.setItem("agent-tui-token", token);
  signIn();
}

// A token in the fragment (never sent to the server) signs in, at load or
// when pasted into the address bar of an open tab, and leaves the address
// bar and the history.
function tokenFromFragment() {
  const m = location.hash.match(/token=([^&]+)/);
  if (!m) return "";
  history.replaceState(null, "", location.pathname + location.search);
  return decodeURIComponent(m[1]);
}

// The page's keys: Esc cancels the running job (from the instruction box
// or nothing editable; not from a prompt), then the review's keys.
function keys(ev) {
  const at = document.activeElement;
  if (ev.key === "Escape" && !ev.defaultPrevented && running().length
    && (at === $("instruction") || !editable(at)) && !(at && at.closest(".prompt"))) {
    ev.preventDefault();
    cancelJobs();
    return;
  }
  if ($("review").hidden || !state.bundle) return;
  const typing = editable(at);
  if (ev.key === "s" && (ev.ctrlKey || ev.metaKey)) {
    ev.preventDefault();
    applyReview();
    return;
  }
  if (typing || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const all = hunks();
  if (ev.key === "j" || ev.key === "k") {
    state.current = Math.max(0, Math.min(all.length - 1, state.current + (ev.key === "j" ? 1 : -1)));
    markCurrent();
    const node = document.querySelectorAll(".hunk")[state.current];
    if (node) node.focus();
  } else if (ev.key === "y" || ev.key === "n") {
    decide(state.current, ev.key === "y");
  } else if (ev.key === "v") {
    verifyReview(false);
  } else if (ev.key === "f" && state.verify && !state.verify.passed && !verifyStale(state.verify)) {
    verifyReview(true);
  } else {
    return;
  }
  ev.preventDefault();
}

function start() {
  const fragment = tokenFromFragment();
  if (fragment) {
    state.token = fragment;
    sessionStorage.setItem("agent-tui-token", state.token);
  }
  window.addEventListener("hashchange", () => {
    const token = tokenFromFragment();
    if (token) signInWith(token);
  });
  $("login").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const token = $("token").value.trim();
    if (token) signInWith(token);
  });
  $("workspace").addEventListener("change", () => {
    leaveSession();
    state.workspace = $("workspace").value;
    refreshSessions();
  });
  $("new-session").addEventListener("click", newSession);
  $("signout").addEventListener("click", () => signOut());
  $("ask").addEventListener("submit", send);
  $("instruction").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) send(ev);
  });
  $("stop").addEventListener("click", cancelJobs);
  $("apply").addEventListener("click", applyReview);
  $("verify").addEventListener("click", () => verifyReview(false));
  document.addEventListener("keydown", keys);
  watchHealth();
  if (state.token) signIn();
  else signOut();
}

start();
