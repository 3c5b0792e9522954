#!/usr/bin/env bash
# The GPU check, in one run: build with CUDA for the local GPU, run the CUDA
# tests against the CPU reference, then print pp512/tg128 tokens/s for
# synthetic Qwen2.5-Coder 0.5B- and 1.5B-shaped models in Q8_0 and Q4_K_M,
# the fraction of device memory bandwidth reached in decode, and keystroke
# replay latencies on the GPU. Meant to finish in well under 8 minutes on an
# H200. Usage: bash bench/gpu/check.sh [OUT_DIR]
# A dry run of the plumbing without a GPU: QF_DEVICE=cpu QF_SIZES=0.5b bash bench/gpu/check.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT="${1:-${OUT:-/tmp/quickfill-gpu}}"
mkdir -p "$OUT"
JOBS="$(nproc)"
B=build-gpu
DEV="${QF_DEVICE:-cuda}"
SIZES="${QF_SIZES:-0.5b 1.5b}"
step() { printf '\n=== %s (%ss)\n' "$1" "$SECONDS"; }

step "device"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
ARCH="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.')"
ARCH="${ARCH:-90}"

step "build (sm_${ARCH})"
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DQUICKFILL_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES="$ARCH" -DQUICKFILL_NATIVE=ON >"$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
# Only what this script runs: the whole test suite is the CPU machines' job.
cmake --build "$B" -j "$JOBS" --target quickfill inference_cuda_tests bench_gpu_membw keystroke_replay >"$OUT/build.log" 2>&1 ||
  { grep -E "error|Error" "$OUT/build.log" | head -40; exit 1; }
Q="$B/server/quickfill"

step "CUDA tests vs CPU reference"
"$B/tests/inference/backend/cuda/inference_cuda_tests" 2>&1 | tee "$OUT/cuda_tests.log" | grep -E "^\[ +(OK|FAILED|SKIPPED) +\]|cuda vs cpu|PASSED|FAILED" 

step "device memory bandwidth"
"$B/bench/gpu/bench_gpu_membw" | tee "$OUT/membw.txt"
BW="$(sed -n 's/.*median \([0-9.]*\) GB\/s.*/\1/p' "$OUT/membw.txt")"

step "synthetic models"
M="$OUT/models"
mkdir -p "$M"
for size in $SIZES; do
  [ -f "$M/$size-f16.gguf" ] || "$Q" gguf synth --arch qwen2 --preset "qwen2.5-coder-$size" --type f16 -o "$M/$size-f16.gguf" >/dev/null
  for t in q8_0 q4_k_m; do
    [ -f "$M/$size-$t.gguf" ] || "$Q" gguf quantize "$M/$size-f16.gguf" "$M/$size-$t.gguf" "$t" -t "$JOBS" >/dev/null
  done
done
ls -la "$M"

step "pp512 / tg128 on $DEV"
printf '%-8s %-7s %10s %10s %12s %8s\n' model type pp512 tg128 "GB/s(dec)" "of HBM"
for size in $SIZES; do
  for t in q8_0 q4_k_m; do
    f="$M/$size-$t.gguf"
    "$Q" bench -m "$f" -p 512 -n 128 -r 5 --device "$DEV" --json >"$OUT/bench-$size-$t.json" 2>"$OUT/bench-$size-$t.err" || { tail -5 "$OUT/bench-$size-$t.err"; continue; }
    /usr/bin/python3 - "$OUT/bench-$size-$t.json" "$size" "$t" "${BW:-0}" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
size, t, bw = sys.argv[2], sys.argv[3], float(sys.argv[4] or 0)
pp = next((r["tokens_per_s_median"] for r in rows if r["test"].startswith("pp")), 0)
tg = next((r["tokens_per_s_median"] for r in rows if r["test"].startswith("tg")), 0)
wb = rows[0]["weight_bytes"] if rows else 0
gbs = wb * tg / 1e9
frac = f"{100 * gbs / bw:.0f} %" if bw else "?"
print(f"{size:<8} {t:<7} {pp:10.0f} {tg:10.0f} {gbs:12.0f} {frac:>8}")
PY
  done
done

LAST="${SIZES##* }"
step "tg128 with direct launches instead of CUDA graphs ($LAST Q8_0)"
QUICKFILL_STEP_GRAPHS=0 "$Q" bench -m "$M/$LAST-q8_0.gguf" -p 0 -n 128 -r 5 --device "$DEV" 2>&1 | grep -E "^\| +[0-9]" || true

# A keystroke = the new prompt tokens + exactly 16 generated (stop rules off),
# closed loop, then typing every 100 ms (each request made stale by the next).
KS_SETTINGS='{"stopRules": false, "maxTokens": 16, "typeThrough": false, "autoTriggerMidWord": true,
              "prefixTokens": 256, "suffixTokens": 64, "extraTokens": 0}'
ks() {  # ks SIZE INTERVAL_MS
  step "keystroke replay on $DEV ($1 Q8_0, typing interval $2 ms)"
  "$B/bench/keystroke_replay/keystroke_replay" --quickfill "$Q" --model "$M/$1-q8_0.gguf" \
    --files /usr/lib/python3.11/textwrap.py,/usr/include/stdio.h --chars 150 --interval-ms "$2" \
    --deadline-ms 100 --device "$DEV" --settings "$KS_SETTINGS" --log "$OUT/keystroke_replay-$1-$2.server.log" \
    2>&1 | tee "$OUT/keystroke_replay-$1-$2.txt" | tail -12
}
for size in $SIZES; do ks "$size" 0; done
ks "${SIZES%% *}" 100
step "done"
