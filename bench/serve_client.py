#!/usr/bin/env python3
"""Client side of bench/serve.sh, over plain HTTP (no third-party modules).
  serve_client.py BASE TOKEN sessions N   makes N sessions
  serve_client.py BASE TOKEN jobs N       N jobs at once, each in its own session,
                                          each followed over SSE: latency from an
                                          event's `ts` to its arrival, and every
                                          stored event received exactly once.
  serve_client.py BASE TOKEN latency N   one job whose model writes N tokens
                                          at 200 a second, each stamped with
                                          the time the model wrote it: the
                                          delay from that write to this
                                          client's read of it over SSE
  BASE may be several, comma-separated (hosts sharing a store): job i is
  posted to host i and followed on the next one."""
import http.client, json, re, sys, threading, time
from datetime import datetime
from urllib.parse import urlparse

BASES, TOKEN, WHAT, N = sys.argv[1].split(","), sys.argv[2], sys.argv[3], int(sys.argv[4])
HOSTS = [urlparse(b) for b in BASES]

def call(method, path, body=None, host=0):
    U = HOSTS[host % len(HOSTS)]
    c = http.client.HTTPConnection(U.hostname, U.port, timeout=60)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    data = None
    if body is not None:
        data = json.dumps(body)
        headers["Content-Type"] = "application/json"
    c.request(method, path, data, headers)
    r = c.getresponse()
    out = json.loads(r.read() or b"null")
    c.close()
    if r.status >= 300:
        raise SystemExit(f"{method} {path}: {r.status} {out}")
    return out

def session(host=0):
    return call("POST", "/api/v1/agent/sessions", {"workspace_id": "default"}, host)["session_id"]

def ts_ms(ts):
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1000

if WHAT == "sessions":
    for _ in range(N):
        session()
    sys.exit(0)

if WHAT == "latency":
    s = session(0)
    if len(HOSTS) > 1:
        time.sleep(3)  # the host lets its new session go (2 s idle): any host may run it
    U = HOSTS[1 % len(HOSTS)]
    prompt = f"BENCH tokens={N} rate=200 stamp=1"
    job = call("POST", "/api/v1/agent/run", {"session_id": s, "instruction": prompt, "mode": "ask"}, 0)["job_id"]
    c = http.client.HTTPConnection(U.hostname, U.port, timeout=120)
    c.request("GET", f"/api/v1/agent/jobs/{job}/stream", headers={"Authorization": f"Bearer {TOKEN}"})
    r = c.getresponse()
    delays, buf, done = [], b"", False
    while not done:
        chunk = r.read1(65536)
        if not chunk:
            break
        now = time.monotonic_ns()
        buf += chunk
        while b"\n\n" in buf:
            frame, buf = buf.split(b"\n\n", 1)
            for line in frame.decode().splitlines():
                if not line.startswith("data:"):
                    continue
                e = json.loads(line[5:])
                if e["type"] == "llm.delta":
                    delays.extend((now - int(t)) / 1e6 for t in re.findall(r"T(\d{6,})", e["data"]["text"]))
                if e["type"] in ("job.completed", "job.failed", "job.cancelled"):
                    done = True
    delays.sort()
    if not delays:
        raise SystemExit("no stamped token arrived")
    pick = lambda q: delays[min(len(delays) - 1, int(q * len(delays)))]
    where = f"posted to one host, read on another" if len(HOSTS) > 1 else "one host"
    print(f"token latency at 200 tokens/s ({where}), model's write to this client's read: "
          f"{len(delays)} of {N} tokens live, p50 {pick(0.5):.2f} ms, p99 {pick(0.99):.2f} ms, max {delays[-1]:.2f} ms")
    sys.exit(0)

sessions = [session(i) for i in range(N)]
if len(HOSTS) > 1:
    time.sleep(3)  # the hosts let their new sessions go (2 s idle): any host may run them
lat, problems, received, resumes, live, stored_lat = [], [], {}, [], [], []
errors = []  # every HTTP error a client met (a run refused, a stream answered 503 ...)
lock = threading.Lock()
go = threading.Barrier(N)

def follow(i, s):
    try:
        follow_job(i, s)
    except BaseException as e:  # SystemExit too: a thread would swallow it
        with lock:
            errors.append(f"job {i}: {e}")

def follow_job(i, s):
    go.wait()
    job = call("POST", "/api/v1/agent/run", {"session_id": s, "instruction": "bench", "mode": "ask"}, i)["job_id"]
    U = HOSTS[(i + 1) % len(HOSTS)]
    ids, mine, last_id, ended, opened = [], [], None, False, None
    # A stream that ends before the job's last event (a slow client cut
    # off) is resumed after its Last-Event-ID, as any client would.
    while not ended:
        c = http.client.HTTPConnection(U.hostname, U.port, timeout=120)
        headers = {"Authorization": f"Bearer {TOKEN}"}
        if last_id is not None:
            headers["Last-Event-ID"] = str(last_id)
            with lock:
                resumes.append(job)
        c.request("GET", f"/api/v1/agent/jobs/{job}/stream", headers=headers)
        r = c.getresponse()
        if r.status != 200:
            with lock:
                errors.append(f"{job}: stream HTTP {r.status} {r.read()[:200]!r}")
            c.close()
            time.sleep(0.5)
            continue
        # Events emitted before the stream was open come from the store:
        # only the ones emitted after it count for latency.
        if opened is None:
            opened = time.time() * 1000
        buf = b""
        while True:
            chunk = r.read1(65536)
            if not chunk:
                break
            now = time.time() * 1000
            buf += chunk
            while b"\n\n" in buf:
                frame, buf = buf.split(b"\n\n", 1)
                for line in frame.decode().splitlines():
                    if line.startswith("data:"):
                        e = json.loads(line[5:])
                        emitted = ts_ms(e["ts"])
                        if emitted >= opened:
                            mine.append(now - emitted)
                            (live if e["type"] in ("llm.delta", "llm.reasoning") else stored_lat).append(now - emitted)
                        if e["type"] not in ("llm.delta", "llm.reasoning"):
                            ids.append(e["cursor"])
                            received.setdefault(job, []).append(e["cursor"])
                            last_id = e["cursor"]
                        if e["type"] in ("job.completed", "job.failed", "job.cancelled"):
                            ended = True
        c.close()
    with lock:
        lat.extend(mine)
        if ids != sorted(set(ids)):
            problems.append(f"{job}: stored events not rising once each")
    stored = [e["cursor"] for e in call("GET", f"/api/v1/agent/jobs/{job}/events?cursor=0")["events"]]
    if stored != received.get(job, []):
        with lock:
            problems.append(f"{job}: stored {len(stored)} events, streamed {len(received.get(job, []))}")

threads = [threading.Thread(target=follow, args=(i, s)) for i, s in enumerate(sessions)]
start = time.time()
for t in threads:
    t.start()
for t in threads:
    t.join()
lat.sort()
pick = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]
where = f" over {len(HOSTS)} hosts (followed on another host than the one posted to)" if len(HOSTS) > 1 else ""
print(f"{N} jobs at once{where}: {len(lat)} live events in {time.time() - start:.2f} s; "
      f"emission to SSE client p50 {pick(0.5):.1f} ms, p99 {pick(0.99):.1f} ms, max {lat[-1]:.1f} ms "
      f"(ts has 1 ms steps); lost or duplicated: {len(problems)}; streams resumed after a cut: {len(resumes)}; "
      f"HTTP errors met: {len(errors)}")
for e in errors[:5]:
    print("  " + e)
for name, xs in (("streamed text", live), ("stored events", stored_lat)):
    xs.sort()
    if xs:
        print(f"  {name}: {len(xs)}, p50 {xs[len(xs) // 2]:.1f} ms, p99 {xs[min(len(xs) - 1, int(0.99 * len(xs)))]:.1f} ms")
for p in problems[:5]:
    print("  " + p)
sys.exit(1 if problems or errors else 0)
