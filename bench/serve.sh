#!/usr/bin/env bash
# `agent-tui serve` on one host (SQLite): idle resident memory, memory per
# idle session, and the time from an event's emission to its arrival at an
# SSE client with 50 jobs streaming at once from a fast loopback model
# streaming 200 tokens at 100 a second each (issue 27 goals: idle < 20 MB,
# < 100 KB a session, p99 < 5 ms), every
# stored event received once; then a token's delay from the model's write
# to the client's read at 200 tokens/s.
set -euo pipefail
source "$(dirname "$0")/common.sh"
start_model fake_openai.py "${TOKENS:-200}" "${RATE:-100}"
cat >> "$WORK/config.toml" <<TOML
[server]
rate_limit_per_minute = 1000000
max_concurrent_jobs_per_user = 1000
TOML
start_serve
rss() { awk '/VmRSS/ {print $2}' "/proc/$SERVE/status"; }
sleep 3
idle=$(rss)
echo "idle server: $idle kB resident (goal < 20 MB)"
python3 bench/serve_client.py "$BASE" "$TOKEN" sessions 200
sleep 3
after=$(rss)
echo "200 idle sessions: $(( (after - idle) / 200 )) kB each (goal < 100 KB)"
python3 bench/serve_client.py "$BASE" "$TOKEN" jobs "${JOBS:-50}"
echo "after the jobs: $(rss) kB resident"
# A token's delay from the model's write to an SSE client's read (goal at
# 200 tokens/s: p50 < 1 ms, p99 < 2 ms); each of 3 runs.
for _ in 1 2 3; do
  python3 bench/serve_client.py "$BASE" "$TOKEN" latency 2000
done
