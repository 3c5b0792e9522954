#!/usr/bin/env bash
# Engine benchmark on a synthetic Qwen2.5-Coder-0.5B-shaped model (exact shapes
# and vocabulary size, random weights) in Q8_0 and Q4_K_M: pp512 and tg128
# tokens/s with `quickfill bench`, and decode bandwidth (weight bytes read per
# token x tokens/s) against the machine's read bandwidth from bench_membw.
#
#   bench/engine/run_engine_bench.sh [BUILD_DIR]
#   env: THREADS (2), REPS (3), PP (512), TG (128), WORK (/tmp/qf-engine-bench),
#        PRESET (qwen2.5-coder-0.5b), TYPES ("q8_0 q4_k_m")
#
# The models are written once into WORK (about 1.9 GB for the F16 source and
# both quantized files) and reused. Figures are medians; the machine is shared,
# so also look at the per-CPU-second columns.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
THREADS=${THREADS:-2}
REPS=${REPS:-3}
PP=${PP:-512}
TG=${TG:-128}
WORK=${WORK:-/tmp/qf-engine-bench}
PRESET=${PRESET:-qwen2.5-coder-0.5b}
TYPES=${TYPES:-"q8_0 q4_k_m"}
QF="$BUILD/server/quickfill"
MEMBW="$BUILD/bench/kernels/bench_membw"
PY=/usr/bin/python3
for exe in "$QF" "$MEMBW"; do
  [ -x "$exe" ] || { echo "missing $exe (build the quickfill and bench_membw targets in $BUILD)" >&2; exit 1; }
done
mkdir -p "$WORK"
src="$WORK/$PRESET-f16.gguf"
[ -f "$src" ] || "$QF" gguf synth --preset "$PRESET" --type f16 -o "$src"
for t in $TYPES; do
  [ -f "$WORK/$PRESET-$t.gguf" ] || "$QF" gguf quantize "$src" "$WORK/$PRESET-$t.gguf" "$t"
done

echo "== memory bandwidth (bench_membw)"
"$MEMBW" --threads "1,$THREADS" | tee "$WORK/membw.txt"
for t in $TYPES; do
  echo "== $PRESET $t, $THREADS threads"
  "$QF" bench -m "$WORK/$PRESET-$t.gguf" -p "$PP" -n "$TG" -t "$THREADS" -r "$REPS" --json | tee "$WORK/bench-$t.json"
done

"$PY" - "$WORK" "$THREADS" "$PRESET" $TYPES <<'PYEOF'
import json, re, sys
work, threads, preset, types = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
bw, bw_cpu = None, None
for line in open(f"{work}/membw.txt"):
    m = re.match(r"threads (\d+): read bandwidth ([\d.]+) GB/s.*; ([\d.]+) GB per CPU-second", line)
    if m and int(m.group(1)) == threads:
        bw, bw_cpu = float(m.group(2)), float(m.group(3))
print()
print(f"| model | weights MiB | test | t/s (median) | t/CPU-s | decode GB/s | % of read bandwidth ({bw} GB/s, {threads} threads) |")
print("|---|---:|---|---:|---:|---:|---:|")
for t in types:
    for r in json.load(open(f"{work}/bench-{t}.json")):
        gb = r["weight_gb_per_s"]
        pct = f"{100 * gb / bw:.0f} %" if (bw and r["test"].startswith("tg")) else ""
        print(f"| {preset} {t} | {r['weight_bytes'] / 2**20:.0f} | {r['test']} | {r['tokens_per_s_median']:.2f} | "
              f"{r['tokens_per_cpu_s_median']:.2f} | {gb:.2f} | {pct} |" if r["test"].startswith("tg") else
              f"| {preset} {t} | {r['weight_bytes'] / 2**20:.0f} | {r['test']} | {r['tokens_per_s_median']:.2f} | "
              f"{r['tokens_per_cpu_s_median']:.2f} | | |")
if bw_cpu:
    print(f"\nread bandwidth per CPU-second ({threads} threads): {bw_cpu} GB/CPU-s")
PYEOF
