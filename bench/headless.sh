#!/usr/bin/env bash
# A headless 20,000-token answer (`agent-tui exec`), as plain text and as JSON
# lines: CPU time of the whole process (user + sys, median of 5), its write
# syscalls (strace), and the state it adds to the store (state.db and its
# WAL, beyond an empty store's) next to the answer's size.
# Budgets (issue 10): under 0.07 CPU-s, stored state under 2x the answer.
# Two servers: `burst` sends the reply in one write (a fast server behind any
# buffering); `trickle` writes each event alone, which costs any client the
# kernel's work for 20,000 TCP segments: curl's CPU on it is shown alongside.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v strace >/dev/null || { echo "bench: strace not found" >&2; exit 2; }
cargo build --release --quiet
BIN=$PWD/target/release/agent-tui
WORK=$(mktemp -d)
BURST=$((20000 + RANDOM % 20000))
TRICKLE=$((BURST + 1))
python3 bench/fake_openai.py "$BURST" 20000 burst &
S1=$!
python3 bench/fake_openai.py "$TRICKLE" 20000 &
S2=$!
trap 'kill $S1 $S2 2>/dev/null || true; rm -rf "$WORK"' EXIT
mkdir -p "$WORK/root"
config() {
  cat > "$WORK/$1.toml" <<TOML
provider = "bench"
[providers.bench]
kind = "openai"
base_url = "http://127.0.0.1:$2/v1"
model = "bench"
api_key_env = ""
TOML
}
config burst "$BURST"
config trickle "$TRICKLE"
sleep 0.5

# Median CPU seconds (user + sys) of 5 runs of "$@".
cpu() {
  for _ in 1 2 3 4 5; do
    rm -rf "$WORK/state"
    /usr/bin/time -f "%U %S" -o "$WORK/t" "$@" > "$WORK/out" 2>/dev/null
    awk '{printf "%.3f\n", $1 + $2}' "$WORK/t"
  done | sort -n | sed -n 3p
}

# Bytes of the store in $WORK/state (the database and its WAL).
stored() { cat "$WORK"/state/state.db* 2>/dev/null | wc -c; }
AGENT_TUI_HOME=$WORK/empty "$BIN" --config "$WORK/burst.toml" sessions list --root "$WORK/root" >/dev/null
EMPTY=$(cat "$WORK"/empty/state.db* | wc -c)

run() { AGENT_TUI_HOME=$WORK/state "$BIN" --config "$WORK/$1.toml" exec --root "$WORK/root" "${@:2}" stream; }

for server in burst trickle; do
  for mode in text json; do
    flag=$([ "$mode" = json ] && echo --json || true)
    c=$(cpu env AGENT_TUI_HOME="$WORK/state" "$BIN" --config "$WORK/$server.toml" exec --root "$WORK/root" $flag stream)
    rm -rf "$WORK/state"
    AGENT_TUI_HOME=$WORK/state strace -f -c -o "$WORK/strace" "$BIN" --config "$WORK/$server.toml" \
      exec --root "$WORK/root" $flag stream > "$WORK/out" 2>/dev/null
    writes=$(awk '$NF == "write" {print $4}' "$WORK/strace")
    echo "$server $mode: CPU ${c}s (budget 0.07), write syscalls ${writes:-0}, state $(( $(stored) - EMPTY )) B"
  done
done
rm -rf "$WORK/state"
run burst > "$WORK/answer.txt" 2>/dev/null
answer=$(stat -c %s "$WORK/answer.txt")
state=$(( $(stored) - EMPTY ))
echo "answer ${answer} B, state ${state} B: $(awk "BEGIN {printf \"%.2f\", $state / $answer}")x (budget 2x)"
c=$(cpu curl -s -N -X POST "http://127.0.0.1:$TRICKLE/v1/chat/completions" -d '{}')
echo "curl reading the trickle stream: CPU ${c}s"
