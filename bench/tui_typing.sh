#!/usr/bin/env bash
# Typing while the agent works (SPEC 19): the TUI's CPU share while a
# 20,000-token answer streams at 2,000 tokens/s (10 s) from a loopback
# server and a person types into the input (a key every 50 ms, 20 a second,
# each one redrawn), in a 120x36 tmux pane; and how long the stream took to
# show whole. Every thread's CPU from /proc/PID/task/*/schedstat. Median of
# 5. Run it for this build and for an earlier one to compare:
#
#   bench/tui_typing.sh                  # target/release/agent-tui (built)
#   BIN=~/.cargo/bin/agent-tui bench/tui_typing.sh
#
# Budget (issue 44): within 10 % of the build before queueing and steering.
set -euo pipefail
command -v tmux >/dev/null || { echo "bench: tmux not found" >&2; exit 2; }
GIVEN=${BIN:-}
source "$(dirname "$0")/common.sh"
[ -n "$GIVEN" ] && BIN=$GIVEN
SOCK=agent-tui-typing-$$
trap 'tmux -L $SOCK kill-server 2>/dev/null || true; kill $SERVER $TYPIST 2>/dev/null || true; rm -rf "$WORK"' EXIT
TYPIST=""
start_model fake_openai.py 20000 2000
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
  ( while true; do
      tmux -L "$SOCK" send-keys -t s -l "w" 2>/dev/null || exit 0
      sleep 0.05
    done ) &
  TYPIST=$!
  until tmux -L "$SOCK" capture-pane -p -t s | grep -q " done "; do sleep 0.05; done
  end=$(date +%s%N)
  after=$(ticks)
  kill $TYPIST 2>/dev/null || true
  wait $TYPIST 2>/dev/null || true
  wall_ms=$(( (end - start) / 1000000 ))
  cpu_ms=$(( after - before ))
  awk -v c="$cpu_ms" -v w="$wall_ms" 'BEGIN {printf "%d %d %.2f\n", w, c, 100 * c / w}'
done | sort -k3 -n > "$WORK/runs"
read -r wall cpu share < <(sed -n 3p "$WORK/runs")
echo "$(basename "$(dirname "$(dirname "$BIN")")")/$(basename "$BIN"): 20,000 tokens at 2,000 tok/s while typing 20 keys/s: wall ${wall} ms, TUI CPU ${cpu} ms = ${share}%; runs: $(awk '{printf "%s%% ", $3}' "$WORK/runs")"
