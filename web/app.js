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
  streams: new Map(),
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

async function api(method, path, body) {
  const headers = { Authorization: `Bearer ${state.token}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const r = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  const json = text ? JSON.parse(text) : {};
  if (!r.ok) throw new ApiError(r.status, json);
  return json;
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
    } else if (/^\s*([-*]|\d+\.)\s+/.test(line)) {
      flush();
      const ordered = /^\s*\d+\./.test(line);
      const list = el(ordered ? "ol" : "ul");
      while (i < lines.length && /^\s*([-*]|\d+\.)\s+/.test(lines[i])) {
        list.append(el("li", {}, inline(lines[i].replace(/^\s*([-*]|\d+\.)\s+/, ""))));
        i += 1;
      }
      out.append(list);
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
        this.status.textContent = d.status === "awaiting_review" ? "awaiting review" : "completed";
        if (d.status === "awaiting_review") loadReview(this.jobId);
        break;
      case "job.failed":
        this.status.textContent = `failed: ${d.message || d.code || "error"}`;
        this.status.classList.add("failed");
        break;
      case "job.cancelled":
        this.status.textContent = "cancelled";
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
          el("button", { type: "button", "data-testid": "approve", onclick: () => this.answer_(id, "allow", box) }, "Allow"),
          el("button", { type: "button", "data-testid": "deny", onclick: () => this.answer_(id, "deny", box) }, "Deny")),
      );
    } else {
      const input = el("input", { type: "text", "aria-label": "Your answer" });
      box.append(el("strong", {}, d.question),
        el("form", { class: "row", onsubmit: (ev) => { ev.preventDefault(); this.clarify(id, input.value, box); } },
          input, el("button", { type: "submit" }, "Answer")));
    }
    this.prompts.set(id, box);
    this.root.insertBefore(box, this.answer);
    box.querySelector("button, input").focus();
  }

  async answer_(id, decision, box) {
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

function brief(args) {
  if (!args) return "";
  const v = args.command || args.file_path || args.path || args.query || "";
  return String(v).slice(0, 80);
}

// ---- streams: fetch + Last-Event-ID, resumed after any drop --------------

async function follow(jobId, view) {
  let last = null;
  let delay = 250;
  for (;;) {
    let ended = false;
    try {
      const headers = { Authorization: `Bearer ${state.token}`, Accept: "text/event-stream" };
      if (last !== null) headers["Last-Event-ID"] = String(last);
      const r = await fetch(`/api/v1/agent/jobs/${jobId}/stream`, { headers });
      if (r.status === 401) return signOut("The token was refused.");
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
      setOffline(true);
    }
    await new Promise((ok) => setTimeout(ok, delay));
    delay = Math.min(delay * 2, 4000);
  }
}

function setOffline(off) {
  $("offline").hidden = !off;
  if (off) setAvailability("offline");
}

// ---- review -------------------------------------------------------------

async function loadReview(jobId) {
  const snap = await api("GET", `/api/v1/agent/jobs/${jobId}`);
  if (!snap.diff_bundle) return;
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
  try {
    const r = await api("POST", `/api/v1/agent/jobs/${state.job}/verify`, {
      accepted_hunk_ids: accepted, rejected_hunk_ids: rejected, feedback: Boolean(feedback),
    });
    state.verify = r.verify;
    status.textContent = "";
    if (r.feedback_job_id) {
      status.textContent = "the failure went to the model: a new proposal follows";
      $("review").hidden = true;
      state.bundle = null;
      follow(r.feedback_job_id, new JobView(r.feedback_job_id));
    }
  } catch (e) {
    status.textContent = `verify: ${e.message}`;
  } finally {
    state.verifying = null;
    renderVerify();
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

async function applyReview() {
  const { accepted, rejected } = decisions();
  const status = $("review-status");
  const v = state.verify;
  if (v && !v.passed && !verifyStale(v) && !window.confirm(`The verify of these hunks ${VERDICTS[v.outcome] || v.outcome}. Apply them anyway?`)) {
    status.textContent = "nothing written: the verify failed";
    return;
  }
  try {
    const r = await api("POST", "/api/v1/agent/apply", {
      session_id: state.session, job_id: state.job, accepted_hunk_ids: accepted, rejected_hunk_ids: rejected,
    });
    status.textContent = `applied: checkpoint ${r.checkpoint_id || "none"}`;
    $("review").hidden = true;
    state.bundle = null;
    state.verify = null;
    refreshCheckpoints();
  } catch (e) {
    const conflicts = (e.body && e.body.error && e.body.error.conflicts) || [];
    status.textContent = conflicts.length
      ? `nothing written: ${conflicts.map((c) => `${c.file_path}: ${c.reason}`).join("; ")}`
      : `nothing written: ${e.message}`;
  }
}

// ---- workspaces, sessions, checkpoints ----------------------------------

async function refreshSessions() {
  const { sessions } = await api("GET", "/api/v1/agent/sessions");
  const list = $("sessions");
  list.replaceChildren();
  for (const s of sessions.filter((x) => x.workspace_id === state.workspace)) {
    list.append(el("li", {}, el("button", {
      type: "button", "aria-current": s.session_id === state.session ? "true" : "false",
      onclick: () => openSession(s.session_id),
    }, s.last_prompt || s.session_id)));
  }
}

async function refreshCheckpoints() {
  const list = $("checkpoints");
  list.replaceChildren();
  if (!state.session) return;
  const { checkpoints } = await api("GET", `/api/v1/agent/checkpoints?session_id=${encodeURIComponent(state.session)}`);
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

async function openSession(id) {
  state.session = id;
  $("log").replaceChildren();
  $("review").hidden = true;
  const s = await api("GET", `/api/v1/agent/sessions/${id}`);
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

async function newSession() {
  const s = await api("POST", "/api/v1/agent/sessions", { workspace_id: state.workspace });
  await openSession(s.session_id);
}

async function send(ev) {
  ev.preventDefault();
  const text = $("instruction").value.trim();
  if (!text) return;
  if (!state.session) await newSession();
  logItem(el("div", { class: "you" }, text));
  $("instruction").value = "";
  try {
    const r = await api("POST", "/api/v1/agent/run", { session_id: state.session, instruction: text, mode: $("mode").value });
    follow(r.job_id, new JobView(r.job_id));
    refreshSessions();
  } catch (e) {
    logItem(el("div", { class: "status failed" }, e.message));
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

function signOut(message) {
  sessionStorage.removeItem("agent-tui-token");
  state.token = "";
  $("app").hidden = true;
  $("login").hidden = false;
  $("login-error").textContent = message || "";
  $("token").focus();
}

async function signIn() {
  const t0 = performance.now();
  try {
    const { workspaces } = await api("GET", "/api/v1/agent/workspaces");
    const select = $("workspace");
    select.replaceChildren(...workspaces.map((w) => el("option", { value: w.id }, w.name || w.id)));
    state.workspace = workspaces.length ? workspaces[0].id : "";
    $("login").hidden = true;
    $("app").hidden = false;
    $("login-error").textContent = "";
    // Token in hand to workspaces listed (bench/web.sh reads it).
    document.body.dataset.readyMs = (performance.now() - t0).toFixed(1);
    await refreshSessions();
    $("instruction").focus();
  } catch (e) {
    signOut(e.status === 401 ? "That token was refused." : e.message);
  }
}

function keys(ev) {
  if ($("review").hidden || !state.bundle) return;
  const typing = ["INPUT", "TEXTAREA", "SELECT"].includes(document.activeElement.tagName);
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
  // A token in the fragment (never sent to the server) fills the form once.
  const m = location.hash.match(/token=([^&]+)/);
  if (m) {
    state.token = decodeURIComponent(m[1]);
    sessionStorage.setItem("agent-tui-token", state.token);
    history.replaceState(null, "", location.pathname + location.search);
  }
  $("login").addEventListener("submit", (ev) => {
    ev.preventDefault();
    state.token = $("token").value.trim();
    sessionStorage.setItem("agent-tui-token", state.token);
    signIn();
  });
  $("workspace").addEventListener("change", () => {
    state.workspace = $("workspace").value;
    state.session = "";
    $("log").replaceChildren();
    refreshSessions();
    refreshCheckpoints();
  });
  $("new-session").addEventListener("click", newSession);
  $("signout").addEventListener("click", () => signOut());
  $("ask").addEventListener("submit", send);
  $("instruction").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey) send(ev);
  });
  $("apply").addEventListener("click", applyReview);
  $("verify").addEventListener("click", () => verifyReview(false));
  document.addEventListener("keydown", keys);
  health();
  setInterval(health, 10000);
  if (state.token) signIn();
  else signOut();
}

start();
