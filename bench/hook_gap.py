#!/usr/bin/env python3
"""What a no-op `tool.before` gate adds to a tool call, as a client sees it:
the gap between two model requests (the previous reply's last byte written
to the next request's arrival), over CALLS calls of `read_file` in one
`agent-tui exec` job, without a hook and with one gate (`true`), in the
same run. Prints both gaps' p50/p99 and what the gate adds (the issue's
budget: < 5 ms at p50).
Usage: hook_gap.py BIN [CALLS]"""
import json, os, socket, statistics, subprocess, sys, tempfile, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BIN = sys.argv[1]
CALLS = int(sys.argv[2]) if len(sys.argv) > 2 else 300


class Model(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # As model servers do: a reply's last bytes are not held back for an ACK.
    disable_nagle_algorithm = True
    arrivals = []  # (arrival, previous reply's end)
    last_end = None

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        if not self.path.endswith("/chat/completions"):
            return self.do_GET()
        now = time.monotonic()
        if Model.last_end is not None:
            Model.arrivals.append(now - Model.last_end)
        done = sum(1 for m in body["messages"] if m["role"] == "tool")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def send(obj):
            data = ("data: " + (obj if isinstance(obj, str) else json.dumps(obj)) + "\n\n").encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

        if done < CALLS and body.get("tools"):
            args = json.dumps({"file_path": "a.txt"})
            send({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
                {"index": 0, "id": f"c{done}", "type": "function",
                 "function": {"name": "read_file", "arguments": args}}]}}]})
            send({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
        else:
            send({"choices": [{"index": 0, "delta": {"role": "assistant", "content": "done"}}]})
            send({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        send("[DONE]")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        Model.last_end = time.monotonic()


def run(hook: bool):
    Model.arrivals, Model.last_end = [], None
    server = ThreadingHTTPServer(("127.0.0.1", 0), Model)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory() as work:
        root = os.path.join(work, "root")
        os.makedirs(root)
        with open(os.path.join(root, "a.txt"), "w") as f:
            f.write("one line\n")
        config = os.path.join(work, "config.toml")
        with open(config, "w") as f:
            f.write(f'''provider = "bench"
[providers.bench]
kind = "openai"
base_url = "http://127.0.0.1:{server.server_port}/v1"
model = "bench"
api_key_env = ""
context_window = 1000000
[agent]
max_tool_calls_per_job = {CALLS + 5}
[context]
max_tool_output_tokens = 200
''')
            if hook:
                f.write('[[hooks.run]]\nname = "noop"\non = "tool.before"\ncommand = ["true"]\n')
        env = dict(os.environ, AGENT_TUI_HOME=os.path.join(work, "state"))
        wrap = os.environ.get("GAP_WRAP", "").split() if hook else []
        out = subprocess.run(wrap + [BIN, "--config", config, "exec", "--root", root, "--mode", "agent",
                              "read a.txt again and again"], env=env, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"exec failed: {out.stderr[-2000:]}")
    server.shutdown()
    if os.environ.get("GAP_TRACE"):
        a = Model.arrivals
        print("first 10:", " ".join(f"{g*1000:.1f}" for g in a[:10]), file=sys.stderr)
        print("last 10: ", " ".join(f"{g*1000:.1f}" for g in a[-10:]), file=sys.stderr)
    return sorted(Model.arrivals)


def pct(v, q):
    return v[min(len(v) - 1, int(q * len(v)))] * 1000


plain = run(False)
gated = run(True)
print(f"{len(plain)} calls each")
print(f"no hook:       gap p50 {pct(plain, .5):.2f} ms, p99 {pct(plain, .99):.2f} ms")
print(f"no-op gate:    gap p50 {pct(gated, .5):.2f} ms, p99 {pct(gated, .99):.2f} ms")
print(f"the gate adds: p50 {pct(gated, .5) - pct(plain, .5):.2f} ms, p99 {pct(gated, .99) - pct(plain, .99):.2f} ms")
