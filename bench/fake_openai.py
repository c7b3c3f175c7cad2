#!/usr/bin/env python3
"""A loopback OpenAI-compatible server for benchmarks: every chat completion
streams N tokens as fast as the socket takes them (one SSE event each).
Usage: fake_openai.py PORT [TOKENS] [burst | RATE]. By default each event is
its own write (and HTTP chunk); with `burst` the whole reply goes out in one
write, as a fast server behind any buffering sends it; with a number, tokens
go out at that many per second, as a real model streams. GET …/models lists
one model; other GETs, and POSTs to anything but /chat/completions, get 404.
An instruction holding `BENCH tokens=N rate=R stamp=1` sets the count and
rate for that request; with stamp=1 each token carries `T<ns>`, the
CLOCK_MONOTONIC time it was written, so a client on this machine can tell a
token's delay from the model's write to its own read."""
import json, re, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOKENS = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
BURST = len(sys.argv) > 3 and sys.argv[3] == "burst"
RATE = float(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[3].replace(".", "").isdigit() else 0

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path.endswith("/models"):
            body = json.dumps({"object": "list", "data": [{"id": "bench", "object": "model"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode(errors="replace")
        if not self.path.endswith("/chat/completions"):
            # Not a model call (a tokenizer's count, say): a plain
            # OpenAI-compatible server has no such endpoint.
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        tokens, rate, stamp = TOKENS, RATE, False
        asked = re.search(r"BENCH tokens=(\d+) rate=([\d.]+)( stamp=1)?", body)
        if asked:
            tokens, rate, stamp = int(asked.group(1)), float(asked.group(2)), bool(asked.group(3))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        out = []

        def send(obj):
            data = ("data: " + (obj if isinstance(obj, str) else json.dumps(obj)) + "\n\n").encode()
            chunk = b"%x\r\n%s\r\n" % (len(data), data)
            if BURST:
                out.append(chunk)
            else:
                self.wfile.write(chunk)

        start = time.monotonic()
        for i in range(tokens):
            if rate:
                delay = start + i / rate - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            word = f" T{time.monotonic_ns()}" if stamp else f" tok{i}"
            send({"choices": [{"index": 0, "delta": {"content": word}}]})
            if rate:
                self.wfile.flush()
        send({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        send({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": tokens}})
        send("[DONE]")
        self.wfile.write(b"".join(out) + b"0\r\n\r\n")
        self.wfile.flush()

ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
