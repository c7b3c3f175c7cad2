#!/usr/bin/env bash
# Runs one fuzz target (issue 47) for SECONDS with the limits every finding
# is judged by: an input taking over 10 s is a hang, over 2 GiB an
# out-of-memory. New inputs go to fuzz/work/TARGET (not committed; FUZZ_WORK
# names another folder); the seeds in fuzz/corpus/TARGET are read, never
# written. A crash leaves its input in fuzz/artifacts/TARGET: fix it, then
# keep the input as fuzz/regressions/TARGET/NAME (tests/fuzz_corpus.rs
# replays it). Prints the final figures: executions per second, corpus
# size, coverage; the whole output stays in fuzz/work/TARGET.log.
# Usage: bench/fuzz.sh TARGET SECONDS   (nightly and cargo-fuzz: tests/run
# installs both). FUZZ_BUILD=dev builds without optimizations or
# AddressSanitizer (quicker to build, slower to run: CI's smoke).
set -euo pipefail
TARGET=${1:?usage: bench/fuzz.sh TARGET SECONDS}
SECONDS_TO_RUN=${2:?usage: bench/fuzz.sh TARGET SECONDS}
cd "$(dirname "$0")/.."
# Where new inputs go: fuzz/work, growing over the runs, unless FUZZ_WORK
# names another folder (CI's smoke starts from the committed seeds alone).
WORK=$(realpath -m "${FUZZ_WORK:-fuzz/work}")
mkdir -p "$WORK/$TARGET" "fuzz/corpus/$TARGET" "fuzz/artifacts/$TARGET"
# The run's whole output, kept to watch a long run (tail -f) and to read
# after it.
LOG="$WORK/$TARGET.log"
set +e
STARTED=$(date +%s)
BUILD=()
[ "${FUZZ_BUILD:-release}" = dev ] && BUILD=(--dev --sanitizer none)
(cd fuzz && cargo +nightly fuzz run "${BUILD[@]}" "$TARGET" "$WORK/$TARGET" "corpus/$TARGET" -- \
  -max_total_time="$SECONDS_TO_RUN" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="artifacts/$TARGET/") >"$LOG" 2>&1
CODE=$?
set -e
python3 - "$TARGET" "$SECONDS_TO_RUN" "$CODE" "$LOG" "$(( $(date +%s) - STARTED ))" <<'PY'
import re, sys
target, seconds, code, log = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
text = open(log, errors="replace").read()
# The time libFuzzer ran: its own count when it ran out the clock, else
# (a finding stopped it) the whole run's, build included.
done = re.search(r"Done \d+ runs in (\d+) second", text)
seconds = f"{done.group(1)} s" if done else f"{sys.argv[5]} s (build included)"
last = [l for l in text.splitlines() if re.match(r"#\d+\s+(DONE|pulse|NEW|REDUCE|INITED)", l)]
stats = dict(re.findall(r"stat::(\w+):\s+(\d+)", text))
line = last[-1] if last else ""
cov = re.search(r"cov: (\d+)", line)
ft = re.search(r"ft: (\d+)", line)
corp = re.search(r"corp: (\d+)/(\S+)", line)
execs = int(stats.get("number_of_executed_units", 0))
rate = stats.get("average_exec_per_sec", "?")
print(f"{target}: {seconds}, {execs} runs, {rate} exec/s, "
      f"corpus {corp.group(1) if corp else '?'} inputs ({corp.group(2) if corp else '?'}), "
      f"coverage {cov.group(1) if cov else '?'} edges / {ft.group(1) if ft else '?'} features, "
      f"peak rss {stats.get('peak_rss_mb', '?')} MB")
if code != 0:
    lines = text.splitlines()
    why = [l for i, l in enumerate(lines)
           if "panicked at" in l or (i and "panicked at" in lines[i - 1])
           or "ERROR: libFuzzer" in l or "ERROR: AddressSanitizer" in l
           or "Failing input" in l or (i and "Failing input" in lines[i - 1])]
    print(f"FAILED (exit {code}):\n" + "\n".join(why[:12]))
    sys.exit(1)
PY
