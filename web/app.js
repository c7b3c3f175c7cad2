// agent-tui's web page: the public API (/api/v1) with the user's token, in
// the browser. SSE is read with fetch (EventSource cannot send a token) and
// resumed by Last-Event-ID; nothing here keeps state the server lacks.
"use strict";

const $ = (id) => document.getElementById(id);
const state = {
  token: sessionStorage.getItem("agent-tui-token") || "",
  workspace: "",
  askedNotify: false,
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
    logItem(el("div", { class: "you" }, job.prompt, job.images ? imageChips(job.images) : null));
    if (job.answer) logItem(el("div", { class: "answer", "data-testid": "answer" }, markdown(job.answer)));
    if (job.provider) {
      const on = job.model ? `${job.provider} · ${job.model}` : job.provider;
      logItem(el("div", { class: "via", "data-testid": "answered-by" }, on));
    }
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
async function send(ev, queue = false) {
  ev.preventDefault();
  askToNotify();
  const box = $("instruction");
  const text = box.value.trim();
  if (!text) return;
  if (!state.session && !(await newSession())) return;
  const busy = running()[0];
  if (busy && !queue) {
    // A job runs: the text steers it (the model reads it at its next step).
    box.value = "";
    try {
      await api("POST", `/api/v1/agent/jobs/${busy.jobId}/steer`, { text });
    } catch (e) {
      failed("not steered", e);
      if (!box.value) box.value = text;
    }
    return;
  }
  const epoch = state.epoch;
  const images = takeAttached();
  const shown = images.map((i) => ({ name: i.name, media_type: i.media_type, bytes: Math.floor(i.data_base64.length * 3 / 4) }));
  const mine = logItem(el("div", { class: "you" }, text, images.length ? imageChips(shown) : null));
  box.value = "";
  try {
    const body = { session_id: state.session, instruction: text, mode: $("mode").value };
    if (images.length) body.images = images;
    const picked = $("model").value;
    if (picked) Object.assign(body, JSON.parse(picked));
    const r = await api("POST", "/api/v1/agent/run", body);
    if (epoch !== state.epoch) return;
    follow(r.job_id, new JobView(r.job_id));
    refreshSessions();
  } catch (e) {
    if (epoch !== state.epoch) return;
    mine.remove();
    failed("not sent", e);
    if (!box.value) box.value = text;
    restoreAttached(images);
  }
}

// The open session's jobs still running.
function running() {
  return [...state.views.values()].filter((v) => !v.done);
}

// Stop and Queue show while a job of the open session runs.
function updateStop() {
  $("stop").hidden = running().length === 0;
  $("queue").hidden = running().length === 0;
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

// The model picker: the workspace's providers, each with the models its
// server lists (the default first; one without its key cannot be picked,
// one that did not answer is marked). Kept when the same pick is offered.
async function loadModels() {
  const select = $("model");
  const kept = select.value;
  const workspace = state.workspace;
  let providers = [];
  try {
    ({ providers } = await api("GET", `/api/v1/agent/models?workspace_id=${encodeURIComponent(workspace)}`));
  } catch (e) {
    providers = [];
  }
  if (workspace !== state.workspace) return;
  const groups = providers.map((p) => {
    const models = [p.model, ...p.models.filter((m) => m !== p.model)];
    const note = p.reach.state === "no_key" ? ` (no key: set ${p.reach.var})`
      : p.reach.state === "offline" ? " (offline)" : "";
    return el("optgroup", { label: `${p.name}${note}` }, ...models.map((m) => {
      const value = p.current && m === p.model ? "" : JSON.stringify({ provider: p.name, model: m });
      const option = el("option", { value, "data-provider": p.name }, p.current && m === p.model ? `${m} (default)` : m);
      if (p.reach.state === "no_key") option.disabled = true;
      if (p.reach.state === "offline") option.title = p.reach.error;
      return option;
    }));
  });
  const hasDefault = providers.some((p) => p.current);
  select.replaceChildren(...(hasDefault ? [] : [el("option", { value: "" }, "default model")]), ...groups);
  select.value = [...select.options].some((o) => o.value === kept) ? kept : "";
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
    loadModels();
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
    loadModels();
  });
  $("new-session").addEventListener("click", newSession);
  $("signout").addEventListener("click", () => signOut());
  $("ask").addEventListener("submit", send);
  $("instruction").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) send(ev);
  });
  $("stop").addEventListener("click", cancelJobs);
  $("queue").addEventListener("click", (ev) => send(ev, true));
  $("apply").addEventListener("click", applyReview);
  $("verify").addEventListener("click", () => verifyReview(false));
  document.addEventListener("keydown", keys);
  watchImages();
  watchHealth();
  if (state.token) signIn();
  else signOut();
}

start();
