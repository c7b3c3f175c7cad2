// agent-tui's web page: the per-hunk review and verify before apply.
// Loaded before app.js.
"use strict";

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
      const by = (h.origin || "").startsWith("hook:") ? ` · by hook ${h.origin.slice(5)}` : h.origin === "user" ? " · edited by you" : "";
      const stateText = (h.conflict ? `conflict: ${h.conflict}` : h.applied ? "applied" : d === true ? "accepted" : d === false ? "rejected" : "undecided") + by;
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

// ---- verify before apply -------------------------------------------

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
