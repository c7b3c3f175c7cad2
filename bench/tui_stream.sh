#!/usr/bin/env bash
# The TUI while a 20,000-token answer streams as fast as a loopback server can
# send it: total CPU time of the process and its peak resident memory.
# Budget: under 1 CPU-second, under 50 MB.
set -euo pipefail
command -v tmux >/dev/null || { echo "bench: tmux not found" >&2; exit 2; }
source "$(dirname "$0")/common.sh"
SOCK=agent-tui-stream-$$
trap 'tmux -L $SOCK kill-server 2>/dev/null || true; kill $SERVER 2>/dev/null || true; rm -rf "$WORK"' EXIT
start_model fake_openai.py 20000
mkdir -p "$WORK/root"
echo "hello" > "$WORK/root/a.txt"
start_tui "$SOCK" "$WORK/root"
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
before=$(ticks)
start=$(date +%s%N)
tmux -L "$SOCK" send-keys -t s "stream please" Enter
until tmux -L "$SOCK" capture-pane -p -t s | grep -q " done "; do sleep 0.01; done
end=$(date +%s%N)
after=$(ticks)
echo "streamed 20000 tokens in $(( (end - start) / 1000000 )) ms wall"
echo "process CPU while streaming: $(( (after - before) * 10 )) ms (budget 1000 ms)"
echo "peak resident memory: $(awk '/VmHWM/ {print $2 " kB"}' "/proc/$pid/status") (budget 50 MB)"
