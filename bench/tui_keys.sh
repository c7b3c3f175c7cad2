#!/usr/bin/env bash
# Key-to-frame latency of the TUI in a real pseudo-terminal (bench/tui_keys.py):
# from writing a key's bytes to the first byte of the frame that answers it.
# Budget: under 16 ms.
#
#   bench/tui_keys.sh [TREE]     # default: the kernel tree of bench/search.sh
set -euo pipefail
cd "$(dirname "$0")/.."
TREE=${1:-$(ls -d target/bench-corpus/linux-source-* 2>/dev/null | head -n 1)}
[ -d "$TREE" ] || { echo "bench: give a tree, or run bench/search.sh once to extract one" >&2; exit 2; }
cargo build --release --quiet
STATE=$(mktemp -d)
trap 'rm -rf "$STATE"' EXIT
env -i PATH=/usr/bin:/bin HOME="$STATE" TERM=xterm-256color AGENT_TUI_HOME="$STATE/state" \
  XDG_CONFIG_HOME="$STATE/config" python3 bench/tui_keys.py "$PWD/target/release/agent-tui" "$TREE"
