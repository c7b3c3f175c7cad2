// agent-tui's web page: a job's view and its event stream (fetch + SSE,
// resumed by Last-Event-ID). Loaded before app.js.
"use strict";

// ---- notifications ---------------------------------------------------

// The browser's notification for a moment the agent waits for the user,
// only while the page is hidden and the user allowed it (asked once, when
// they first send an instruction: never on load).
function tell(text) {
  if (!("Notification" in window) || Notification.permission !== "granted" || !document.hidden) return;
  try {
    new Notification("agent-tui", { body: String(text).slice(0, 200), tag: "agent-tui" });
  } catch (_) { /* a browser that only notifies from a service worker */ }
}

// Asks for the permission once, from a user's gesture.
function askToNotify() {
  if ("Notification" in window && Notification.permission === "default" && !state.askedNotify) {
    state.askedNotify = true;
    Notification.requestPermission().catch(() => {});
  }
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
    this.drawn = new StreamedMarkdown(this.answer);
    this.thought = 0; // how much of the thinking is drawn
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

  // Draws the answer in the next frame, as much of it as one frame lays
  // out in a few milliseconds; the rest in the frames after.
  render() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      const part = this.drawn.within(this.text, FRAME_CHARS);
      this.drawn.show(part);
      if (part.length < this.text.length) this.render();
      if (this.thought !== this.thinking.length) {
        this.thought = this.thinking.length;
        this.thinkBox.querySelector("pre").textContent = this.thinking;
      }
      const log = $("log");
      if (log.scrollTop + log.clientHeight >= log.scrollHeight - 120) log.scrollTop = log.scrollHeight;
    });
  }

  on(e) {
    const d = e.data || {};
    switch (e.type) {
      case "job.queued":
        this.status.textContent = "queued: it starts when the running job ends";
        break;
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
        tell(`asks to run ${d.arguments && d.arguments.command ? d.arguments.command : d.name}`);
        break;
      case "clarification.requested":
        this.ask(d, "clarification");
        tell(`asks: ${d.question}`);
        break;
      case "user.steer":
        // What the user added while it ran; the model read it here.
        this.notes.append(el("div", { class: "you steer", "data-testid": "steer" }, `↳ ${d.text}`));
        break;
      case "approval.resolved":
      case "clarification.received":
        this.decided(d);
        break;
      case "job.completed":
        // The stored answer stands in for what streamed (a reader that fell
        // behind may have missed some); only what differs is drawn again.
        this.text = d.answer || this.text;
        this.render();
        this.finish(d.status === "awaiting_review" ? "awaiting review" : "completed");
        if (d.status === "awaiting_review") tell("edits wait for your review");
        if (d.status === "awaiting_review" && this.live()) loadReview(this.jobId);
        break;
      case "job.failed":
        // job.failed: data.error says what happened, data.code what kind.
        this.finish(`failed: ${d.error || d.message || "error"}${d.code ? ` (${d.code})` : ""}`);
        tell(`failed: ${d.error || d.message || "error"}`);
        this.status.classList.add("failed");
        break;
      case "job.cancelled":
        this.finish("cancelled");
        break;
      case "verify.completed":
        tell(`verify ${d.passed ? "passed" : "did not pass"}: ${d.command}`);
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
    // An approval never takes the keyboard (a key pressed for something
    // else would decide it): it is clicked, or reached with Tab. A question
    // gets its answer field, unless a field is being typed in.
    const field = box.querySelector("input");
    if (field && !editable(document.activeElement)) field.focus({ preventScroll: true });
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

// How long the stream's reader runs before the page may draw.
const SLICE_MS = 8;
// The most new answer text laid out in one frame (layout takes about 10 ms
// per 19,000 characters here): a burst is drawn over a few frames, none of
// them long.
const FRAME_CHARS = 40000;

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
          // Every whole frame of what came, in one pass (a read may hold
          // hundreds of streamed words).
          const frames = buf.split("\n\n");
          buf = frames.pop();
          let since = performance.now();
          for (const frame of frames) {
            // A long read is handled in slices, the page drawing between
            // them: no task of the stream runs long.
            if (performance.now() - since > SLICE_MS) {
              await new Promise((go) => setTimeout(go, 0));
              since = performance.now();
            }
            let data = "";
            let id = null;
            for (const line of frame.split("\n")) {
              if (line.startsWith("data:")) data += (data ? "\n" : "") + line.slice(5).trimStart();
              else if (line.startsWith("id:")) id = line.slice(3).trim();
            }
            if (!data) continue;
            if (stop.signal.aborted || !view.live()) return;
            const event = JSON.parse(data);
            if (id !== null) {
              // Stored events carry their cursor: each is shown once.
              const cursor = Number(id);
              if (last !== null && cursor <= last) {
                document.body.dataset.duplicates = String(Number(document.body.dataset.duplicates || 0) + 1);
                continue;
              }
              last = cursor;
              view.root.dataset.stored = String(Number(view.root.dataset.stored) + 1);
            }
            view.on(event);
            if (event.type === "job.completed" || event.type === "job.failed" || event.type === "job.cancelled") ended = true;
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
