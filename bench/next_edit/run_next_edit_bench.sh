#!/usr/bin/env bash
# Next-edit latency on a synthetic Qwen2.5-Coder-0.5B-shaped model (exact
# shapes and vocabulary with its <|file_sep|> token, random weights) in Q8_0:
# bench_next_edit with a 20-line region.
#
#   bench/next_edit/run_next_edit_bench.sh [BUILD_DIR]
#   env: THREADS (2), REPS (5), REGION (20), WORK (/tmp/qf-engine-bench, shared
#        with bench/engine/run_engine_bench.sh), DEVICE (cpu)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
WORK=${WORK:-/tmp/qf-engine-bench}
PRESET=qwen2.5-coder-0.5b
QF="$BUILD/server/quickfill"
BENCH="$BUILD/bench/next_edit/bench_next_edit"
for exe in "$QF" "$BENCH"; do
  [ -x "$exe" ] || { echo "missing $exe (build the quickfill and bench_next_edit targets in $BUILD)" >&2; exit 1; }
done
mkdir -p "$WORK"
src="$WORK/$PRESET-f16.gguf"
[ -f "$src" ] || "$QF" gguf synth --preset "$PRESET" --type f16 -o "$src"
[ -f "$WORK/$PRESET-q8_0.gguf" ] || "$QF" gguf quantize "$src" "$WORK/$PRESET-q8_0.gguf" q8_0
"$BENCH" --model "$WORK/$PRESET-q8_0.gguf" --reps "${REPS:-5}" --region-lines "${REGION:-20}" \
  --threads "${THREADS:-2}" --device "${DEVICE:-cpu}"
