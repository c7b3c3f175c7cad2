#!/usr/bin/env python3
"""First-request size per mode, as the model server itself counts it
(issue 30). Runs `agent-tui exec` once per mode and window against a
recording proxy in front of an OpenAI-compatible server (the real
SmolLM2 of ../shared/real-llm by default), then sends each first request
again without streaming and with one token of reply, and prints the
server's `usage.prompt_tokens` for it.

Usage: bench/first_request.py [--upstream http://127.0.0.1:8089]
       [--bin target/release/agent-tui] [--protocol json|native]
"""
import argparse
import http.server
import json
import os
import subprocess
import tempfile
import threading
import urllib.request

FIRST = []


class Proxy(http.server.BaseHTTPRequestHandler):
    upstream = ""

    def log_message(self, *args):
        pass

    def _forward(self, body=None):
        req = urllib.request.Request(self.upstream + self.path, data=body, method=self.command)
        for k in ("Content-Type", "Authorization", "Accept"):
            if self.headers.get(k):
                req.add_header(k, self.headers[k])
        try:
            with urllib.request.urlopen(req, timeout=300) as r:
                data = r.read()
                self.send_response(r.status)
                for k, v in r.getheaders():
                    if k.lower() not in ("transfer-encoding", "content-length", "connection"):
                        self.send_header(k, v)
        except urllib.error.HTTPError as e:
            data = e.read()
            self.send_response(e.code)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self._forward()

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path.endswith("/chat/completions"):
            FIRST.append(json.loads(body))
        self._forward(body)


def server_count(upstream, request):
    req = dict(request)
    req["stream"] = False
    req["max_tokens"] = 1
    req.pop("stream_options", None)
    # A grammar cannot end in one token; it does not change the prompt.
    req.pop("response_format", None)
    r = urllib.request.Request(
        upstream + "/v1/chat/completions",
        data=json.dumps(req).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(r, timeout=600) as resp:
            return json.load(resp)["usage"]["prompt_tokens"]
    except urllib.error.HTTPError as e:
        raise SystemExit(f"{e}: {e.read()[:400]!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--upstream", default="http://127.0.0.1:8089")
    ap.add_argument("--bin", default="target/release/agent-tui")
    ap.add_argument("--protocol", default="json")
    ap.add_argument("--git", action="store_true", help="make the root a git work tree")
    args = ap.parse_args()
    Proxy.upstream = args.upstream
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    port = httpd.server_address[1]
    root = tempfile.mkdtemp()
    with open(os.path.join(root, "notes.txt"), "w") as f:
        f.write("one\ntwo\n")
    if args.git:
        subprocess.run(["git", "init", "-q", root], check=True)
    print(f"| window | mode | first request (server's prompt_tokens) | share of the window |")
    print("|---:|---|---:|---:|")
    for window in (2048, 8192, 131072):
        for mode in ("ask", "plan", "agent"):
            home = tempfile.mkdtemp()
            cfg = os.path.join(home, "config.toml")
            with open(cfg, "w") as f:
                f.write(
                    f'provider = "local"\n[providers.local]\nkind = "openai"\n'
                    f'base_url = "http://127.0.0.1:{port}/v1"\nmodel = "smollm2"\n'
                    f'api_key_env = ""\ncontext_window = {window}\n'
                    f'tool_protocol = "{args.protocol}"\n[agent]\nmax_tool_calls_per_job = 1\n'
                )
            FIRST.clear()
            env = dict(os.environ, AGENT_TUI_HOME=os.path.join(home, "state"))
            subprocess.run(
                [args.bin, "--config", cfg, "exec", "--root", root, "--mode", mode,
                 "--json", "Change one to ONE in notes.txt"],
                env=env, capture_output=True, timeout=600,
            )
            if not FIRST:
                print(f"| {window} | {mode} | (no request) | |")
                continue
            n = server_count(args.upstream, FIRST[0])
            print(f"| {window} | {mode} | {n} | {100 * n / window:.0f} % |")


if __name__ == "__main__":
    main()
