#!/usr/bin/env bash
# The state store at scale, as a user with history meets it: `sessions list`
# and `exec --continue` with 10 and with 10,000 sessions in one agent root
# (each session a real one made by `exec`, cloned with new ids), and the
# state's size on disk. Budgets (issue 19): list of 10,000 < 50 ms;
# --continue as fast with 10,000 sessions as with 10.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
BIN=$PWD/target/release/agent-tui
WORK=$(mktemp -d)
PORT=$((20000 + RANDOM % 20000))
python3 bench/fake_openai.py "$PORT" 200 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; rm -rf "$WORK"' EXIT
mkdir -p "$WORK/root"
echo "hello" > "$WORK/root/a.txt"
cat > "$WORK/config.toml" <<TOML
provider = "bench"
[providers.bench]
kind = "openai"
base_url = "http://127.0.0.1:$PORT/v1"
model = "bench"
api_key_env = ""
context_window = 32768
TOML
sleep 0.5
export AGENT_TUI_HOME=$WORK/state
run() { "$BIN" --config "$WORK/config.toml" "$@"; }
run exec --root "$WORK/root" --mode ask "first" > /dev/null
SESSIONS=$(ls -d "$WORK"/state/roots/*/sessions)
TEMPLATE=$(ls "$SESSIONS"/*.jsonl | head -1)
ms() { local s e; s=$(date +%s%N); "$@" > /dev/null 2>&1; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for n in 10 10000; do
  python3 - "$TEMPLATE" "$SESSIONS" "$n" <<'PY'
import os, sys
template, folder, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
old = os.path.basename(template)[:-len(".jsonl")]
text = open(template).read()
have = len(os.listdir(folder))
for i in range(have, n):
    new = "s_%013d_%04x" % (1700000000000 + i, i % 65536)
    open(os.path.join(folder, new + ".jsonl"), "w").write(text.replace(old, new))
PY
  list=$(for _ in 1 2 3 4 5; do ms run sessions list --root "$WORK/root"; done | median)
  cont=$(for _ in 1 2 3; do ms run exec --root "$WORK/root" --continue --mode ask "again"; done | median)
  size=$(du -sk "$WORK/state" | cut -f1)
  echo "$n sessions: sessions list ${list} ms, exec --continue ${cont} ms, state ${size} KB"
done
