#!/usr/bin/env python3
"""A loopback OpenAI-compatible server that proposes one edit to each of N
files (f00.txt ... line 2 replaced), then answers "done" once the tool
result is back. Usage: fake_propose.py PORT N. For bench/torture.sh."""
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

N = int(sys.argv[2]) if len(sys.argv) > 2 else 40

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        answered = any(m.get("role") == "tool" for m in body.get("messages", []))
        if answered:
            deltas = [{"content": "done"}]
        else:
            edits = [{"file_path": f"f{i:02}.txt", "operation": "replace", "start_line": 2,
                      "end_line": 2, "new_text": f"new line two of file {i}\n"} for i in range(N)]
            deltas = [{"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                       "function": {"name": "propose_edits",
                                    "arguments": json.dumps({"edits": edits})}}]}]
        out = []
        for d in deltas:
            out.append({"choices": [{"index": 0, "delta": d}]})
        out.append({"choices": [{"index": 0, "delta": {},
                    "finish_reason": "stop" if answered else "tool_calls"}]})
        data = b"".join(b"data: " + json.dumps(o).encode() + b"\n\n" for o in out) + b"data: [DONE]\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
