#!/usr/bin/env bash
# A 40-step job (`exec --mode ask`, 40 tool calls on this repository's src/: file
# reads, searches, listings, then an answer) against a fast loopback model
# (bench/fake_agent.py: 20 ms to the first token, ~12 ms of streaming per
# reply). How much of the job's wall time is agent-tui's own CPU (user + sys
# of the process, tools included)? Budget (issue 10): under 5 %. Median of 5.
set -euo pipefail
WINDOW=1000000 source "$(dirname "$0")/common.sh"
start_model fake_agent.py 40 20
# The tools work on a copy of src/ only, so the workload does not grow with
# the repository's test fixtures.
mkdir -p "$WORK/root"
cp -r src "$WORK/root/src"
for _ in 1 2 3 4 5; do
  rm -rf "$WORK/state"
  AGENT_TUI_HOME=$WORK/state /usr/bin/time -f "%e %U %S" -o "$WORK/t" "$BIN" --config "$WORK/config.toml" \
    exec --root "$WORK/root" --mode ask --max-tool-calls 40 --json "Explore the agent loop." > "$WORK/out"
  calls=$(grep -c '"tool.call.completed"' "$WORK/out")
  [ "$calls" = 40 ] || { echo "bench: expected 40 tool calls, saw $calls" >&2; exit 1; }
  awk '{printf "%.3f %.3f %.2f\n", $1, $2 + $3, 100 * ($2 + $3) / $1}' "$WORK/t"
done | sort -k3 -n > "$WORK/runs"
read -r wall cpu share < <(sed -n 3p "$WORK/runs")
echo "40-step job: wall ${wall}s, agent-tui CPU ${cpu}s = ${share}% of wall (budget 5%); $(awk "BEGIN {printf \"%.1f\", 1000 * $cpu / 41}") ms CPU per request"
