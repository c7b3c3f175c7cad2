#!/usr/bin/env bash
# Crash torture of a multi-file apply (issue 13): a 40-file bundle is
# proposed once; then, TRIALS times (default 300), the project and state home
# are reset to that moment, `review --accept-all --apply` is started and
# killed with SIGKILL after a random delay, and the next command (`checkpoints
# list`) opens the root's state, which settles the interrupted apply. Counted:
# torn files (neither their old nor their new bytes), half-applied bundles
# (some files new, some old), broken audit chains (`audit verify`), stray temp
# files, and how each trial ended (killed before the apply started writing,
# undone, finished, or completed before the kill). Every count of damage must be 0.
set -euo pipefail
TRIALS=${TRIALS:-300}
N=40
source "$(dirname "$0")/common.sh"
start_model fake_propose.py $N
ROOT=$WORK/root
export AGENT_TUI_HOME=$WORK/state
mkdir -p "$ROOT"
for i in $(seq 0 $((N - 1))); do
  f=$(printf 'f%02d.txt' "$i")
  printf 'line one\nold line two of file %d\nline three\n' "$i" > "$ROOT/$f"
  printf 'line one\nnew line two of file %d\nline three\n' "$i" > "$WORK/new-$f"
done
"$BIN" --config "$WORK/config.toml" exec --root "$ROOT" "Change line two of every file." > /dev/null
cp -a "$ROOT" "$WORK/root.template"
cp -a "$AGENT_TUI_HOME" "$WORK/state.template"
# How long a whole apply takes here, to spread the kills over it.
/usr/bin/time -f %e -o "$WORK/t" "$BIN" --config "$WORK/config.toml" review --root "$ROOT" --accept-all --apply > /dev/null
span_ms=$(awk '{printf "%d", $1 * 1000 * 1.3 + 5}' "$WORK/t")
torn=0 half=0 broken=0 strays=0 before=0 undone=0 finished=0 completed=0
for trial in $(seq 1 "$TRIALS"); do
  rm -rf "$ROOT" "$AGENT_TUI_HOME"
  cp -a "$WORK/root.template" "$ROOT"
  cp -a "$WORK/state.template" "$AGENT_TUI_HOME"
  "$BIN" --config "$WORK/config.toml" review --root "$ROOT" --accept-all --apply > /dev/null 2>&1 &
  pid=$!
  sleep "$(awk -v s="$span_ms" -v r="$RANDOM" 'BEGIN {printf "%.4f", (r % s) / 1000}')"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null && ended=ok || ended=killed
  "$BIN" --config "$WORK/config.toml" checkpoints list --root "$ROOT" > /dev/null 2> "$WORK/said"
  new=0 old=0
  for i in $(seq 0 $((N - 1))); do
    f=$(printf 'f%02d.txt' "$i")
    if cmp -s "$ROOT/$f" "$WORK/new-$f"; then new=$((new + 1))
    elif cmp -s "$ROOT/$f" "$WORK/root.template/$f"; then old=$((old + 1))
    else torn=$((torn + 1)); fi
  done
  if [ "$new" -gt 0 ] && [ "$old" -gt 0 ]; then half=$((half + 1)); fi
  "$BIN" audit verify --root "$ROOT" > /dev/null 2>&1 || broken=$((broken + 1))
  strays=$((strays + $(find "$ROOT" -name '.agent-tui-*' | wc -l)))
  if grep -q "was undone" "$WORK/said"; then undone=$((undone + 1))
  elif grep -q "it stands" "$WORK/said"; then finished=$((finished + 1))
  elif [ "$new" -eq "$N" ]; then completed=$((completed + 1))
  else before=$((before + 1)); fi
done
echo "torture: $TRIALS kill -9 trials of a $N-file apply (kills spread over ${span_ms} ms)"
echo "  damage: torn files $torn, half-applied bundles $half, broken audit chains $broken, stray temp files $strays"
echo "  outcomes: killed before writing $before, interrupted and undone $undone, interrupted and finished $finished, completed before the kill $completed"
[ $((torn + half + broken + strays)) -eq 0 ]
