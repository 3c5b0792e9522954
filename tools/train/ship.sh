#!/usr/bin/env bash
# Turns the final training checkpoint into the shipped model: F32 GGUF export, Q8_0 with
# the engine's own quantizer (`quickfill gguf quantize`; falls back to the exporter's
# Q8_0 writer, same block layout, when no quickfill binary with a working quantizer is
# found), the golden file for tests/models, and the evaluation numbers for the card.
# Usage: tools/train/ship.sh [path/to/quickfill]
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=/usr/bin/python3
W=tools/train/work
QF=${1:-$(ls build-*/server/quickfill 2>/dev/null | head -n1 || true)}
$PY tools/train/export_gguf.py --out $W/quickfill-tiny-code-f32.gguf --type f32
$PY tools/train/export_gguf.py --out $W/quickfill-tiny-code-q8_0-py.gguf --type q8_0
if [ -n "$QF" ] && "$QF" gguf quantize $W/quickfill-tiny-code-f32.gguf $W/quickfill-tiny-code-q8_0.gguf q8_0; then
  echo "quantized with $QF"
  if cmp -s $W/quickfill-tiny-code-q8_0.gguf $W/quickfill-tiny-code-q8_0-py.gguf; then
    echo "engine Q8_0 file is byte-identical to the exporter's"
  else
    echo "engine Q8_0 file differs from the exporter's (metadata order or rounding); shipping the engine's"
  fi
else
  echo "no working 'quickfill gguf quantize': shipping the exporter's Q8_0"
  cp $W/quickfill-tiny-code-q8_0-py.gguf $W/quickfill-tiny-code-q8_0.gguf
fi
cp $W/quickfill-tiny-code-q8_0.gguf models/quickfill-tiny-code.gguf
$PY tools/train/golden.py
$PY tools/train/evaluate.py --model models/quickfill-tiny-code.gguf --json $W/eval.json "${@:2}"
