#!/usr/bin/env python3
"""A loopback OpenAI-compatible server for benchmarks: every chat completion
streams N tokens as fast as the socket takes them (one SSE event each)."""
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOKENS = int(sys.argv[2]) if len(sys.argv) > 2 else 20000

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def send(obj):
            data = ("data: " + (obj if isinstance(obj, str) else json.dumps(obj)) + "\n\n").encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

        for i in range(TOKENS):
            send({"choices": [{"index": 0, "delta": {"content": f" tok{i}"}}]})
        send({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        send({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": TOKENS}})
        send("[DONE]")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
