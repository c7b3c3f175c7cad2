#!/usr/bin/env bash
# What a no-op confined gate adds to a tool call (SPEC 21's budget: p50 < 5 ms,
# p99 < 20 ms): `agent-tui hooks test tool.before` N times with one gate
# (`true`), each run's own time as the runner measured it (spawn, Landlock,
# the command, its end) from hook.completed's duration_ms.
# Usage: bench/hooks.sh [BIN] [N]   (defaults: target/release/agent-tui, 200)
set -euo pipefail
BIN=${1:-target/release/agent-tui}
N=${2:-200}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
mkdir -p "$DIR/root"
cat > "$DIR/config.toml" <<TOML
[[hooks.run]]
name = "noop"
on = "tool.before"
command = ["true"]
TOML
echo '{"tool": "read_file", "arguments": {"path": "x"}}' > "$DIR/call.json"
export AGENT_TUI_HOME="$DIR/state"
for _ in $(seq "$N"); do
  "$BIN" --config "$DIR/config.toml" hooks test tool.before --json \
    --input "$DIR/call.json" --root "$DIR/root" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"][0]["duration_ms"])'
done | sort -n | python3 -c '
import sys
v = [int(x) for x in sys.stdin]
p = lambda q: v[min(len(v) - 1, int(q * len(v)))]
print(f"no-op confined gate, {len(v)} runs: p50 {p(0.5)} ms, p99 {p(0.99)} ms, max {v[-1]} ms")
'
