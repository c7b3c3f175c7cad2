#!/usr/bin/env bash
# What a no-op confined gate adds to a tool call (SPEC 21's budget: p50 < 5 ms,
# p99 < 20 ms): `agent-tui hooks test tool.before` with ten gates (`true`)
# in a row, run until N gates ran, each gate's own time from
# hook.completed's duration_ms: its folder and input, spawn, Landlock and
# seccomp, the command, the wrapper's sweep, its output read (rounded up to
# the millisecond). The kernel's Landlock is asked once a process, before
# the first gate, so it is not in these times.
# Usage: bench/hooks.sh [BIN] [N]   (defaults: target/release/agent-tui, 200)
set -euo pipefail
BIN=${1:-target/release/agent-tui}
N=${2:-200}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
mkdir -p "$DIR/root"
for i in $(seq 10); do
  printf '[[hooks.run]]\nname = "noop%s"\non = "tool.before"\ncommand = ["true"]\n' "$i"
done > "$DIR/config.toml"
echo '{"tool": "read_file", "arguments": {"path": "x"}}' > "$DIR/call.json"
export AGENT_TUI_HOME="$DIR/state"
for _ in $(seq $(( (N + 9) / 10 ))); do
  "$BIN" --config "$DIR/config.toml" hooks test tool.before --json \
    --input "$DIR/call.json" --root "$DIR/root" \
    | python3 -c 'import json,sys; [print(r["duration_ms"]) for r in json.load(sys.stdin)["runs"]]'
done | sort -n | python3 -c '
import sys
v = [int(x) for x in sys.stdin]
p = lambda q: v[min(len(v) - 1, int(q * len(v)))]
print(f"no-op confined gate, {len(v)} runs: p50 {p(0.5)} ms, p99 {p(0.99)} ms, max {v[-1]} ms")
'
