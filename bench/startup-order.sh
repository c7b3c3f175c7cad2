#!/usr/bin/env bash
# Regenerates build/startup.order: the functions the release binary runs
# from launch to an idle TUI and the first keys typed, then in `serve` up to
# its first requests, as callgrind saw them.
# build.rs hands the list to the linker (as a linker script), which
# puts those functions side by side at the start of .text, so the pages the
# kernel maps in (64 KB at a time) hold code that runs instead of neighbours
# that never do. Names carry no build-specific hash, so the list survives a
# toolchain or dependency update; tests/startup_order.rs fails once too many
# of its functions are gone (rerun this script then).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "startup-order: apt-get install valgrind" >&2; exit 2; }
command -v tmux >/dev/null || { echo "startup-order: apt-get install tmux" >&2; exit 2; }
AGENT_TUI_NO_ORDER=1 cargo build --release --quiet
BIN=$PWD/target/release/agent-tui
WORK=$(mktemp -d)
SOCK=agent-tui-order-$$
trap 'tmux -L $SOCK kill-server 2>/dev/null || true; sleep 1; rm -rf "$WORK"' EXIT
# A small git project with a change, as most roots are: the tree's git
# marks and the ignore rules run too.
mkdir -p "$WORK/home" "$WORK/project/src"
# A model on loopback, as configured providers are (its models listed: the
# TUI shows it online), and a team's serve setup: users and workspaces.
MPORT=$((20000 + RANDOM % 20000))
python3 bench/fake_openai.py "$MPORT" 20 &
MODEL=$!
trap 'tmux -L $SOCK kill-server 2>/dev/null || true; kill $MODEL 2>/dev/null || true; sleep 1; rm -rf "$WORK"' EXIT
cat >"$WORK/config.toml" <<TOML
provider = "local"
[providers.local]
kind = "openai"
base_url = "http://127.0.0.1:$MPORT/v1"
model = "bench"
api_key_env = "ORDER_KEY"
TOML
TEAM_TOKEN=order-team-token-0123456789abcdef
cp "$WORK/config.toml" "$WORK/team.toml"
cat >>"$WORK/team.toml" <<TOML
[[server.users]]
name = "order"
role = "admin"
token_sha256 = "$(printf %s "$TEAM_TOKEN" | sha256sum | cut -d' ' -f1)"
[[server.workspaces]]
id = "w"
name = "Order"
root = "$WORK/project"
users = ["*"]
TOML
export ORDER_KEY=key
printf 'fn main() {}\n' >"$WORK/project/src/main.rs"
printf 'target/\n*.log\n' >"$WORK/project/.gitignore"
git -C "$WORK/project" init -q
git -C "$WORK/project" add -A
git -C "$WORK/project" -c user.name=o -c user.email=o@o commit -qm start
printf 'fn main() { run() }\nfn run() {}\n' >"$WORK/project/src/main.rs"
printf 'pub fn lib() {}\n' >"$WORK/project/src/lib.rs"
tmux -L "$SOCK" new-session -d -s o -x 120 -y 36 \
  "AGENT_TUI_HOME=$WORK/home ORDER_KEY=key valgrind --tool=callgrind --callgrind-out-file=$WORK/cg.out \
   --dump-instr=no --compress-strings=no --compress-pos=no --demangle=no $BIN --config $WORK/config.toml \
   $WORK/project 2>$WORK/vg.log"
for _ in $(seq 1 120); do
  tmux -L "$SOCK" capture-pane -p -t o | grep -q "› " && break
  sleep 1
done
# Long enough under valgrind (~50x slower) for what an idle TUI finishes
# in its first seconds natively (the provider's probe, git marks, the
# tree's watch): code first seen later lands at the list's end, among the
# server's, where an idle TUI then pulls in pages it would not need.
sleep 20
tmux -L "$SOCK" send-keys -t o "hello wor @src/ma"
sleep 1
tmux -L "$SOCK" send-keys -t o Tab
sleep 2
tmux -L "$SOCK" send-keys -t o BSpace BSpace Tab Tab Tab
sleep 3
callgrind_control -d >/dev/null
sleep 2
tmux -L "$SOCK" kill-server 2>/dev/null || true
# Then `serve` idling and answering its first requests (the same list keeps
# an idle server's code together too).
AGENT_TUI_HOME=$WORK/home2 valgrind --tool=callgrind --callgrind-out-file="$WORK/cg-serve.out" \
  --dump-instr=no --compress-strings=no --compress-pos=no --demangle=no \
  "$BIN" --config "$WORK/config.toml" serve --bind 127.0.0.1:0 --port-file "$WORK/port" \
  --root "$WORK/project" >"$WORK/token" 2>"$WORK/vg-serve.log" &
VG=$!
for _ in $(seq 1 120); do [ -s "$WORK/port" ] && [ -s "$WORK/token" ] && break; sleep 1; done
sleep 3
BASE=http://127.0.0.1:$(cat "$WORK/port")
AUTH="Authorization: Bearer $(head -n 1 "$WORK/token")"
curl -s "$BASE/api/v1/health" >/dev/null
curl -s -H "$AUTH" "$BASE/api/v1/agent/workspaces" >/dev/null
S=$(curl -s -H "$AUTH" -H 'Content-Type: application/json' -d '{"workspace_id":"default"}' \
  "$BASE/api/v1/agent/sessions" | sed -E 's/.*"session_id":"([^"]+)".*/\1/')
curl -s -H "$AUTH" "$BASE/api/v1/agent/sessions" >/dev/null
curl -s -H "$AUTH" "$BASE/api/v1/agent/sessions/$S" >/dev/null
sleep 3
callgrind_control -d "$VG" >/dev/null
sleep 2
kill "$VG" 2>/dev/null || true
wait "$VG" 2>/dev/null || true
# And a team's `serve`: users and workspaces from the config.
rm -f "$WORK/port"
AGENT_TUI_HOME=$WORK/home3 valgrind --tool=callgrind --callgrind-out-file="$WORK/cg-team.out" \
  --dump-instr=no --compress-strings=no --compress-pos=no --demangle=no \
  "$BIN" --config "$WORK/team.toml" serve --bind 127.0.0.1:0 --port-file "$WORK/port" \
  >/dev/null 2>"$WORK/vg-team.log" &
VG=$!
for _ in $(seq 1 120); do [ -s "$WORK/port" ] && break; sleep 1; done
sleep 3
BASE=http://127.0.0.1:$(cat "$WORK/port")
AUTH="Authorization: Bearer $TEAM_TOKEN"
curl -s "$BASE/api/v1/health" >/dev/null
curl -s -H "$AUTH" "$BASE/api/v1/agent/workspaces" >/dev/null
S=$(curl -s -H "$AUTH" -H 'Content-Type: application/json' -d '{"workspace_id":"w"}' \
  "$BASE/api/v1/agent/sessions" | sed -E 's/.*"session_id":"([^"]+)".*/\1/')
curl -s -H "$AUTH" "$BASE/api/v1/agent/sessions/$S" >/dev/null
sleep 3
callgrind_control -d "$VG" >/dev/null
sleep 2
kill "$VG" 2>/dev/null || true
wait "$VG" 2>/dev/null || true
# Every function run (fn=) or called (cfn=), in first-seen order, that the
# binary defines, each followed by the other names at its address: LLVM
# merges identical functions into one under several names, and the section
# the linker script picks is named after whichever name came first. Named
# without what changes from build to build: a crate's hash in a v0 name
# (`Cs<hash>_` -> `Cs*_`) and the `.llvm.<n>` ThinLTO gives a local one.
nm --defined-only "$BIN" | awk '$2 ~ /^[tTwW]$/ {print $1, $3}' >"$WORK/defined"
grep -hE '^c?fn=' "$WORK"/cg.out.* "$WORK"/cg-serve.out.* "$WORK"/cg-team.out.* | sed -E 's/^c?fn=(\([0-9]+\) )?//' \
  | awk '!seen[$0]++' >"$WORK/ran"
python3 - "$WORK/defined" "$WORK/ran" >build/startup.order <<'PY'
import re, sys
at, names = {}, {}
for line in open(sys.argv[1]):
    addr, name = line.split()
    at[name] = addr
    names.setdefault(addr, []).append(name)
print("# The functions from launch to an idle TUI and a serve's first requests, in the")
print("# order they first ran, each with its aliases (bench/startup-order.sh; build.rs")
print("# lays them out together).")
seen = set()
for name in (l.rstrip("\n") for l in open(sys.argv[2])):
    if name not in at:
        continue
    for alias in [name] + sorted(n for n in names[at[name]] if n != name):
        pattern = re.sub(r"Cs[0-9A-Za-z]+_", "Cs*_", re.sub(r"\.llvm\.[0-9]+$", "", alias))
        if pattern not in seen:
            seen.add(pattern)
            print(pattern)
PY
echo "build/startup.order: $(grep -vc '^#' build/startup.order) functions"
