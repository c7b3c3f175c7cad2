#!/usr/bin/env bash
# The store at scale, from the installed binary, as a user with history
# meets it (issue 19, SPEC section 15): `sessions list` and `exec --continue`
# with 10 and with 10,000 sessions in one agent root (each a clone of a real
# session made by `exec`), TUI start to ready with that history, and the
# state written for one 20,000-token answer. Budgets: list of 10,000
# < 50 ms; --continue as fast with 10,000 sessions as with 10; TUI start
# < 50 ms (plus tmux's own start-up); state < 2x the answer.
# In-process figures (open, 500-file checkpoint): cargo bench --bench store.
set -euo pipefail
source "$(dirname "$0")/common.sh"
start_model fake_openai.py 200
mkdir -p "$WORK/root"
echo "hello" > "$WORK/root/a.txt"
export AGENT_TUI_HOME=$WORK/state
run() { "$BIN" --config "$WORK/config.toml" "$@"; }
run exec --root "$WORK/root" --mode ask "first" > /dev/null
DB=$WORK/state/state.db
ms() { local s e; s=$(date +%s%N); "$@" > /dev/null 2>&1; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
tui_ready() {
  local sock=agent-tui-store-$$ s e
  tmux -L "$sock" kill-server 2>/dev/null || true
  s=$(date +%s%N)
  tmux -L "$sock" new-session -d -s b -x 120 -y 36 \
    "AGENT_TUI_HOME=$WORK/state $BIN --config $WORK/config.toml $WORK/root"
  until tmux -L "$sock" capture-pane -p -t b 2>/dev/null | grep -q "› "; do sleep 0.002; done
  e=$(date +%s%N)
  tmux -L "$sock" kill-server 2>/dev/null || true
  echo $(( (e - s) / 1000000 ))
}
for n in 10 10000; do
  python3 - "$DB" "$n" <<'PY'
import sqlite3, sys
db, n = sys.argv[1], int(sys.argv[2])
con = sqlite3.connect(db)
(sid,) = con.execute("SELECT session_id FROM sessions ORDER BY created_at LIMIT 1").fetchone()
have = con.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
cols = lambda t: [r[1] for r in con.execute(f"PRAGMA table_info({t})")]
for i in range(have, n):
    new = "s_%013d_%04x" % (1700000000000 + i, i % 65536)
    for table in ("sessions", "session_records", "jobs"):
        c = cols(table)
        sel = ", ".join("?" if x == "session_id" else x for x in c)
        con.execute(f"INSERT INTO {table} ({', '.join(c)}) SELECT {sel} FROM {table} WHERE session_id = ?", (new, sid))
con.commit()
PY
  list=$(for _ in 1 2 3 4 5; do ms run sessions list --root "$WORK/root"; done | median)
  cont=$(for _ in 1 2 3; do ms run exec --root "$WORK/root" --continue --mode ask "again"; done | median)
  tui=$( (command -v tmux >/dev/null && for _ in 1 2 3; do tui_ready; done | median) || echo "n/a")
  size=$(( $(stat -c %s "$DB") / 1024 ))
  echo "$n sessions: sessions list ${list} ms, exec --continue ${cont} ms, TUI ready ${tui} ms, state.db ${size} KB"
done
# The state one 20,000-token answer adds, against the answer's own size.
kill $SERVER; sleep 0.2
start_model fake_openai.py 20000
export AGENT_TUI_HOME=$WORK/fresh
run sessions list --root "$WORK/root" > /dev/null 2>&1
empty=$(stat -c %s "$WORK/fresh/state.db")
answer=$(run exec --json --root "$WORK/root" --mode ask "a long one" \
  | python3 -c 'import json,sys; print(sum(len(json.loads(l)["data"]["answer"].encode()) for l in sys.stdin if "\"job.completed\"" in l))')
full=$(stat -c %s "$WORK/fresh/state.db")
echo "20k-token answer: ${answer} bytes; state grew $(( full - empty )) bytes ($(python3 -c "print(round(($full - $empty) / $answer, 2))")x)"
