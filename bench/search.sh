#!/usr/bin/env bash
# Benchmark: `agent-tui tool search_project` against `rg --json` on a large real
# tree (the Linux kernel sources by default). Fails if any query is slower
# than 2x ripgrep.
#
#   bench/search.sh                 # corpus from Debian's linux-source package
#   CORPUS=/path/to/tree bench/search.sh
#
# Needs: rg and hyperfine (apt-get install ripgrep hyperfine); for the default
# corpus, apt-get install linux-source-6.1 (extracted once under target/).
set -euo pipefail
cd "$(dirname "$0")/.."

need() { command -v "$1" >/dev/null || { echo "bench: $1 not found ($2)" >&2; exit 2; }; }
need rg "apt-get install ripgrep"
need hyperfine "apt-get install hyperfine"
need jq "apt-get install jq"

if [ -z "${CORPUS:-}" ]; then
  tarball=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | head -n 1 || true)
  [ -n "$tarball" ] || { echo "bench: set CORPUS or apt-get install linux-source-6.1" >&2; exit 2; }
  CORPUS=target/bench-corpus/$(basename "$tarball" .tar.xz)
  if [ ! -d "$CORPUS" ]; then
    echo "bench: extracting $tarball to target/bench-corpus (once)" >&2
    mkdir -p target/bench-corpus
    tar -xJf "$tarball" -C target/bench-corpus
    # Debian's tarball adds a `/*` rule that ignores the whole top level; drop
    # it, and make the tree a git repository, so both tools see the kernel as
    # its developers do (rg honours .gitignore only inside a repository).
    sed -i '/^# Debian packaging/,$d' "$CORPUS/.gitignore"
    git -C "$CORPUS" init -q
  fi
fi

cargo build --release --quiet
BIN=$PWD/target/release/agent-tui
files=$(rg --files "$CORPUS" | wc -l)
size=$(du -sh "$CORPUS" | cut -f1)
echo "corpus: $CORPUS ($files searchable files, $size), $(nproc) cores"
echo

# name | our JSON arguments | the equivalent rg flags
queries=(
  "rare literal|{\"query\": \"spin_lock_irqsave_nested\"}|-F -S"
  "common literal|{\"query\": \"mutex_lock\"}|-F -S"
  "regex|{\"query\": \"static int \\\\w+_probe\\\\(\", \"regex\": true}|-S"
  "case-insensitive|{\"query\": \"GPL\", \"case_sensitive\": false}|-F -i"
  "glob *.h|{\"query\": \"ktime_t\", \"glob\": \"*.h\"}|-F -S -g *.h"
  "no match|{\"query\": \"agent_tui_no_such_token\"}|-F -S"
)

out=$(mktemp -d)
worst=0
printf '%-18s %10s %10s %7s\n' query rg_ms ours_ms ratio
for q in "${queries[@]}"; do
  IFS='|' read -r name args flags <<<"$q"
  pattern=$(jq -r .query <<<"$args")
  # shellcheck disable=SC2086
  hyperfine --warmup 2 --runs "${RUNS:-5}" --style none --export-json "$out/r.json" \
    -n rg "rg --json -C2 $flags '$pattern' '$CORPUS' > /dev/null || true" \
    -n ours "'$BIN' tool search_project '$args' --root '$CORPUS' > /dev/null" >/dev/null 2>&1
  rg_ms=$(jq '.results[0].median * 1000' "$out/r.json")
  ours_ms=$(jq '.results[1].median * 1000' "$out/r.json")
  ratio=$(jq -n "$ours_ms / $rg_ms")
  printf '%-18s %10.0f %10.0f %7.2f\n' "$name" "$rg_ms" "$ours_ms" "$ratio"
  worst=$(jq -n "[$worst, $ratio] | max")
done
rm -rf "$out"
echo
echo "worst ratio: $worst (budget: 2.00)"
jq -e -n "$worst <= 2" >/dev/null || { echo "bench: over budget" >&2; exit 1; }
