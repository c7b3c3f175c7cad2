#!/usr/bin/env bash
# How soon an edit made outside is found in a running TUI (bench/index_fresh.py):
# from the write to the Ctrl+P answer that shows it. Budget: 500 ms.
#
#   bench/index_fresh.sh [TREE] [ROUNDS]   # default: the deno tree of bench/code_index.sh
set -euo pipefail
cd "$(dirname "$0")/.."
TREE=${1:-/tmp/deno-dev}
[ -d "$TREE" ] || { echo "bench: give a tree, or run bench/code_index.sh once to write one" >&2; exit 2; }
cargo build --release --quiet
STATE=$(mktemp -d)
trap 'rm -rf "$STATE"' EXIT
cat > "$STATE/config.toml" <<TOML
provider = "local"
[providers.local]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "none"
api_key_env = ""
TOML
mkdir -p "$STATE/config/agent-tui" && cp "$STATE/config.toml" "$STATE/config/agent-tui/config.toml"
env -i PATH=/usr/bin:/bin HOME="$STATE" TERM=xterm-256color AGENT_TUI_HOME="$STATE/state" \
  XDG_CONFIG_HOME="$STATE/config" python3 bench/index_fresh.py "$PWD/target/release/agent-tui" "$TREE" "${2:-20}"
