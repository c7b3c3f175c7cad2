#!/usr/bin/env bash
# The code index on the deno tasks of ../shared/code-index: file
# localisation with code_search (any@1/5/10, all@5, MRR, beside the plain
# BM25 the README there gives), the cold build (time, bytes in the state
# home against the source, peak RSS), a warm start, and each code_search
# as a whole process (p50/p95); then the same build and a search with no
# network (unshare -n), and search_project on a few patterns with and
# without the index (same output, the time of each).
# The tree is written from the fetched mirror (`fetch github:denoland/deno`).
# Usage: bench/code_index.sh [TASKS.json] [TREE]
set -euo pipefail
cd "$(dirname "$0")/.."
TASKS=${1:-../shared/code-index/dev_tasks.json}
TREE=${2:-/tmp/deno-dev}
MIRROR=${MIRROR:-/work/.mirror/denoland+deno/repo}
if [ ! -d "$TREE" ]; then
  # The tree at the tasks' base, written by the window miner's own code.
  python3 - "$MIRROR" "$TASKS" "$TREE" <<'PY'
import json, sys
sys.path.insert(0, "bench")
import code_index_window
mirror, tasks, out = sys.argv[1:4]
code_index_window.write_tree(mirror, json.load(open(tasks))["base"], out)
PY
fi
cargo build --release --quiet
BIN=$PWD/target/release/agent-tui
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
AGENT_TUI_HOME=$WORK/home python3 bench/code_index.py "$BIN" "$TREE" "$TASKS"

if unshare -n true 2>/dev/null; then
  AGENT_TUI_HOME=$WORK/offline unshare -n "$BIN" index build --root "$TREE" > /dev/null
  AGENT_TUI_HOME=$WORK/offline unshare -n "$BIN" tool code_search '{"query": "permission denied"}' --root "$TREE" > /dev/null
  echo "no network (unshare -n): build and code_search ok"
fi

printf '[index]\nenabled = false\n' > "$WORK/off.toml"
for q in '"permission denied"' '"op_fs_read_file_sync"' '"fn main"'; do
  args="{\"query\": $q}"
  a=$(AGENT_TUI_HOME=$WORK/home "$BIN" tool search_project "$args" --root "$TREE")
  b=$(AGENT_TUI_HOME=$WORK/off "$BIN" --config "$WORK/off.toml" tool search_project "$args" --root "$TREE")
  [ "$a" = "$b" ] || { echo "search_project $q differs with the index" >&2; exit 1; }
  t() { /usr/bin/time -f %e "$@" > /dev/null 2> "$WORK/t"; tail -1 "$WORK/t"; }
  with=$(t env AGENT_TUI_HOME="$WORK/home" "$BIN" tool search_project "$args" --root "$TREE")
  without=$(t env AGENT_TUI_HOME="$WORK/off" "$BIN" --config "$WORK/off.toml" tool search_project "$args" --root "$TREE")
  echo "search_project $q: same results; ${with} s with the index, ${without} s without"
done
