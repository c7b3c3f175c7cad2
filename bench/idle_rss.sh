#!/usr/bin/env bash
# Resident memory of the idle TUI and the idle server, on a release build
# made from a fresh clone of HEAD (its own folder and target directory, as
# a new machine builds it), each with a provider configured (a loopback
# model): VmRSS, and its file-backed and anonymous parts, median of 3 runs
# each. Goals (issue 42): TUI < 15 MiB, server < 20 MiB.
# Also how many names of build/startup.order the build's linker script
# placed in `.text.hot`, and how big that section is.
#
#   bench/idle_rss.sh [COMMIT]     # default HEAD
#   AGENT_TUI_BIN=PATH bench/idle_rss.sh   # a release build made elsewhere
#
# Exits 1 when over budget (idle TUI < 15 MiB, idle server < 20 MiB).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v tmux >/dev/null || { echo "bench: tmux not found" >&2; exit 2; }
REV=${1:-HEAD}
WORK=$(mktemp -d)
SOCK=agent-tui-rss-$$
trap 'tmux -L $SOCK kill-server 2>/dev/null || true; kill $SERVE 2>/dev/null || true; rm -rf "$WORK"' EXIT
SERVE=""
if [ -n "${AGENT_TUI_BIN:-}" ]; then
  # A build made elsewhere (another path, its own target folder).
  BIN=$AGENT_TUI_BIN
  echo "measuring $BIN"
else
  git clone --quiet --no-local . "$WORK/clone"
  git -C "$WORK/clone" checkout --quiet "$REV"
  echo "building $(git -C "$WORK/clone" rev-parse --short HEAD) from a fresh clone in $WORK/clone"
  start=$(date +%s)
  (cd "$WORK/clone" && CARGO_TARGET_DIR="$WORK/target" cargo build --release --quiet)
  echo "cold release build: $(( $(date +%s) - start )) s"
  BIN=$WORK/target/release/agent-tui
fi
hot=$(readelf -SW "$BIN" | awk '$2 == ".text.hot" {print $6}')
echo ".text.hot: $(( 16#${hot:-0} / 1024 )) KB"
# A configured provider on loopback (its models listed), as a user has one.
MPORT=$((20000 + RANDOM % 20000))
python3 bench/fake_openai.py "$MPORT" 20 &
MODEL=$!
trap 'tmux -L $SOCK kill-server 2>/dev/null || true; kill $SERVE $MODEL 2>/dev/null || true; rm -rf "$WORK"' EXIT
cat >"$WORK/config.toml" <<TOML
provider = "local"
[providers.local]
kind = "openai"
base_url = "http://127.0.0.1:$MPORT/v1"
model = "bench"
api_key_env = ""
TOML
mkdir -p "$WORK/project/src"
printf 'fn main() {}\n' >"$WORK/project/src/main.rs"
git -C "$WORK/project" init -q
git -C "$WORK/project" add -A
git -C "$WORK/project" -c user.name=b -c user.email=b@b commit -qm start
mem() { awk '/^(VmRSS|RssAnon|RssFile):/ {printf "%s %s ", $1, $2} END {print ""}' "/proc/$1/status"; }
median() { sort -n -k2 | sed -n 2p; }
for run in 1 2 3; do
  tmux -L "$SOCK" kill-server 2>/dev/null || true
  rm -rf "$WORK/home"
  tmux -L "$SOCK" new-session -d -s s -x 120 -y 36 \
    "AGENT_TUI_HOME=$WORK/home $BIN --config $WORK/config.toml $WORK/project"
  until tmux -L "$SOCK" capture-pane -p -t s 2>/dev/null | grep -q "› "; do sleep 0.05; done
  sleep 5
  mem "$(pgrep -f "^$BIN --config $WORK/config.toml $WORK/project" | head -n 1)"
done | median >"$WORK/tui"
sed 's/^/idle TUI (kB): /' "$WORK/tui"
tmux -L "$SOCK" kill-server 2>/dev/null || true
for run in 1 2 3; do
  rm -rf "$WORK/home" "$WORK/port"
  AGENT_TUI_HOME=$WORK/home "$BIN" --config "$WORK/config.toml" serve --bind 127.0.0.1:0 \
    --port-file "$WORK/port" --root "$WORK/project" >/dev/null 2>&1 &
  SERVE=$!
  until [ -s "$WORK/port" ]; do sleep 0.05; done
  sleep 3
  mem "$SERVE"
  kill "$SERVE"
  wait "$SERVE" 2>/dev/null || true
  SERVE=""
done | median >"$WORK/server"
sed 's/^/idle server (kB): /' "$WORK/server"
# The budgets: an idle TUI under 15 MiB, an idle server under 20 MiB.
over=0
for pair in "tui 15360 TUI" "server 20480 server"; do
  set -- $pair
  rss=$(awk '{print $2}' "$WORK/$1")
  if [ "$rss" -ge "$2" ]; then
    echo "over budget: the idle $3 holds $rss kB (budget $2 kB)" >&2
    over=1
  fi
done
if [ "$over" = 1 ]; then
  echo "a release build warns when build/startup.order no longer fits the code; rerun bench/startup-order.sh" >&2
  exit 1
fi
echo "within budget (TUI < 15 MiB, server < 20 MiB)"
