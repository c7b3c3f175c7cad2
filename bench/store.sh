#!/usr/bin/env bash
# The state store at scale, as a user with history meets it: `sessions list`
# and `exec --continue` with 10 and with 10,000 sessions in one agent root
# (each session a real one made by `exec`, cloned with new ids), and the
# state's size on disk. Budgets (issue 19): list of 10,000 < 50 ms;
# --continue as fast with 10,000 sessions as with 10.
set -euo pipefail
source "$(dirname "$0")/common.sh"
start_model fake_openai.py 200
mkdir -p "$WORK/root"
echo "hello" > "$WORK/root/a.txt"
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
