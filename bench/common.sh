# Shared set-up of the bench scripts (sourced): a release build, a scratch
# folder, and a loopback model with a config naming it.

cd "$(dirname "$0")/.."
# AGENT_TUI_BIN: another build to measure (an earlier release, side by
# side); else this tree's release build.
if [ -n "${AGENT_TUI_BIN:-}" ]; then
  BIN=$AGENT_TUI_BIN
else
  cargo build --release --quiet
  BIN=$PWD/target/release/agent-tui
fi
WORK=$(mktemp -d)
PORT=$((20000 + RANDOM % 20000))
SERVER=""
trap 'kill $SERVER 2>/dev/null || true; rm -rf "$WORK"' EXIT

# start_model SCRIPT ARGS...: runs bench/SCRIPT on $PORT and writes
# $WORK/config.toml naming it (provider "bench", context_window $WINDOW).
start_model() {
  local script=$1; shift
  python3 "bench/$script" "$PORT" "$@" &
  SERVER=$!
  cat > "$WORK/config.toml" <<TOML
provider = "bench"
[providers.bench]
kind = "openai"
base_url = "http://127.0.0.1:$PORT/v1"
model = "bench"
api_key_env = ""
context_window = ${WINDOW:-32768}
TOML
  sleep 0.5
}

# start_serve: the release `serve` on a free port with $WORK/config.toml
# and a tiny project as its root (state in $WORK/state); sets $SERVE, $BASE
# and $TOKEN (its one-run token).
start_serve() {
  mkdir -p "$WORK/root/src"
  printf 'fn main() {}\n' > "$WORK/root/src/main.rs"
  AGENT_TUI_HOME=$WORK/state "$BIN" --config "$WORK/config.toml" serve --bind 127.0.0.1:0 \
    --port-file "$WORK/port" --root "$WORK/root" > "$WORK/token" 2> "$WORK/serve.log" &
  SERVE=$!
  trap 'kill $SERVE $SERVER 2>/dev/null || true; rm -rf "$WORK"' EXIT
  until [ -s "$WORK/port" ] && [ -s "$WORK/token" ]; do sleep 0.05; done
  BASE=http://127.0.0.1:$(cat "$WORK/port")
  TOKEN=$(head -n 1 "$WORK/token")
}

# start_tui SOCK ROOT: the release TUI on ROOT in a 120x36 tmux pane on
# socket SOCK (state in $WORK/state), once its input is up; sets $pid.
start_tui() {
  local sock=$1 root=$2
  tmux -L "$sock" new-session -d -s s -x 120 -y 36 \
    "AGENT_TUI_HOME=$WORK/state $BIN --config $WORK/config.toml $root"
  until tmux -L "$sock" capture-pane -p -t s | grep -q "› "; do sleep 0.01; done
  # The pane's own process when the shell exec'd it, else its agent-tui
  # child (never the index build the TUI starts beside it).
  local pane
  pane=$(tmux -L "$sock" display -p -t s '#{pane_pid}')
  if [ "$(ps -o comm= -p "$pane")" = agent-tui ]; then
    pid=$pane
  else
    pid=$(pgrep -x -P "$pane" agent-tui | head -n 1)
  fi
}
