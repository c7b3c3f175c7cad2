#!/usr/bin/env bash
# The TUI's CPU share while an answer streams at a real model's pace: 2,000
# tokens at 200 tokens/s (10 s) from a loopback server, in a 120x36 tmux
# pane. CPU share = the process's time on a CPU (every thread's, from
# /proc/PID/task/*/schedstat: nanoseconds, where utime + stime count 10 ms
# ticks) over the stream's wall time. Budget (issue 42): 2 %. Median of 5.
set -euo pipefail
command -v tmux >/dev/null || { echo "bench: tmux not found" >&2; exit 2; }
source "$(dirname "$0")/common.sh"
SOCK=agent-tui-pace-$$
trap 'tmux -L $SOCK kill-server 2>/dev/null || true; kill $SERVER 2>/dev/null || true; rm -rf "$WORK"' EXIT
start_model fake_openai.py 2000 200
mkdir -p "$WORK/root"
echo "hello" > "$WORK/root/a.txt"
for run in 1 2 3 4 5; do
  tmux -L "$SOCK" kill-server 2>/dev/null || true
  rm -rf "$WORK/state"
  start_tui "$SOCK" "$WORK/root"
  ticks() { cat /proc/"$pid"/task/*/schedstat | awk '{s += $1} END {printf "%d\n", s / 1e6}'; }
  before=$(ticks)
  start=$(date +%s%N)
  tmux -L "$SOCK" send-keys -t s "stream please" Enter
  until tmux -L "$SOCK" capture-pane -p -t s | grep -q " done "; do sleep 0.05; done
  end=$(date +%s%N)
  after=$(ticks)
  wall_ms=$(( (end - start) / 1000000 ))
  cpu_ms=$(( after - before ))
  awk -v c="$cpu_ms" -v w="$wall_ms" 'BEGIN {printf "%d %d %.2f\n", w, c, 100 * c / w}'
done | sort -k3 -n > "$WORK/runs"
read -r wall cpu share < <(sed -n 3p "$WORK/runs")
echo "2,000 tokens at 200 tok/s: wall ${wall} ms, TUI CPU ${cpu} ms = ${share}% (budget 2%); runs: $(awk '{printf "%s%% ", $3}' "$WORK/runs")"
