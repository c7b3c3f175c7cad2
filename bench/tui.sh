#!/usr/bin/env bash
# TUI budgets measured in a real terminal (tmux): time to first frame on a
# large tree, CPU used while idle, and resident memory.
#
#   bench/tui.sh [TREE]     # default: the kernel tree of bench/search.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v tmux >/dev/null || { echo "bench: tmux not found (apt-get install tmux)" >&2; exit 2; }
TREE=${1:-$(ls -d target/bench-corpus/linux-source-* 2>/dev/null | head -n 1)}
[ -d "$TREE" ] || { echo "bench: give a tree, or run bench/search.sh once to extract one" >&2; exit 2; }
cargo build --release --quiet
BIN=$PWD/target/release/agent-tui
STATE=$(mktemp -d)
SOCK=agent-tui-bench-$$
trap 'for s in $SOCK-1 $SOCK-2 $SOCK-3 $SOCK-4 $SOCK-5; do tmux -L $s kill-server 2>/dev/null || true; done; rm -rf "$STATE"' EXIT
echo "tree: $TREE ($(find "$TREE" -type f | wc -l) files)"
# One tmux server per run (a new session on a server that is still going
# away after kill-server fails now and then), the previous one ended first.
for i in 1 2 3 4 5; do
  [ "$i" = 1 ] || tmux -L "$SOCK-$((i - 1))" kill-server 2>/dev/null || true
  start=$(date +%s%N)
  tmux -L "$SOCK-$i" new-session -d -s b -x 120 -y 36 "AGENT_TUI_HOME=$STATE $BIN $TREE"
  until tmux -L "$SOCK-$i" capture-pane -p -t b 2>/dev/null | grep -q "› "; do sleep 0.002; done
  end=$(date +%s%N)
  echo "first frame: $(( (end - start) / 1000000 )) ms (budget 100 ms; includes tmux start-up)"
done
sleep 1
pid=$(pgrep -n -x agent-tui)
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
before=$(ticks)
sleep 10
after=$(ticks)
echo "idle CPU over 10 s: $(( (after - before) * 10 )) ms (clock ticks of 10 ms)"
echo "resident memory: $(awk '/VmRSS/ {print $2 " kB"}' "/proc/$pid/status")" \
  "(heap and stacks $(awk '/RssAnon/ {print $2 " kB"}' "/proc/$pid/status"), mapped code and data $(awk '/RssFile/ {print $2 " kB"}' "/proc/$pid/status"))"
