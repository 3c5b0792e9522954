#!/usr/bin/env bash
# Builds llama.cpp's llama-server (CPU only, Release) for the remote-source
# tests and benchmark (tests/server/remote, bench/remote): a real inference
# server on 127.0.0.1 that speaks /infill and /v1/completions.
#
# llama.cpp's sources come from npm: the package node-llama-cpp (pinned below)
# carries them as a git bundle, package/llama/gitRelease.bundle. `npm pack`
# fetches the package tarball into $BUILD_DIR/npm-cache (no install, no
# scripts run), the bundle is cloned into $BUILD_DIR/llama.cpp-src, and only the
# llama-server target, and llama-bench for the side-by-side engine figures
# (docs/benchmarks.md), are built, through ccache when it is installed, into
# $BUILD_DIR/llama-server (binaries in $BUILD_DIR/llama-server/bin).
# Everything not needed is off: tests, examples, the web UI (and its download),
# OpenSSL, CURL, BLAS, GPU backends.
#
# Safe to run again: a finished build of the same version is left as it is
# (a stamp in $BUILD_DIR/llama-server says which version was built; without
# it, ninja has nothing to do).
#
# Environment:
#   QUICKFILL_BUILD_DIR   build folder (default: build)
#   QUICKFILL_JOBS        parallel build jobs (default: nproc)
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=3.21.1  # node-llama-cpp; its llama/llama.cpp.info.json names the llama.cpp release
BUILD_DIR="${QUICKFILL_BUILD_DIR:-build}"
JOBS="${QUICKFILL_JOBS:-$(nproc)}"
CACHE="$BUILD_DIR/npm-cache"
SRC="$BUILD_DIR/llama.cpp-src"
OUT="$BUILD_DIR/llama-server"
STAMP="$SRC/.quickfill-node-llama-cpp-version"
BUILT="$OUT/.quickfill-built-version"

if [ "$(cat "$BUILT" 2>/dev/null)" = "$VERSION" ] && [ -x "$OUT/bin/llama-server" ] && [ -x "$OUT/bin/llama-bench" ]; then
  echo "build_llama_server: $OUT/bin/llama-server (node-llama-cpp@$VERSION) is built"
  exit 0
fi

for tool in npm git cmake ninja tar; do
  command -v "$tool" >/dev/null 2>&1 || { echo "build_llama_server: $tool is not installed" >&2; exit 1; }
done

mkdir -p "$CACHE"
TGZ="$CACHE/node-llama-cpp-$VERSION.tgz"
if [ ! -f "$TGZ" ]; then
  echo "build_llama_server: npm pack node-llama-cpp@$VERSION"
  (cd "$CACHE" && npm pack "node-llama-cpp@$VERSION" --silent --no-audit --no-fund >/dev/null)
fi

if [ "$(cat "$STAMP" 2>/dev/null)" != "$VERSION" ]; then
  echo "build_llama_server: extracting llama.cpp from node-llama-cpp@$VERSION"
  rm -rf "$SRC" "$CACHE/package"
  tar -xzf "$TGZ" -C "$CACHE" package/llama/gitRelease.bundle package/llama/llama.cpp.info.json
  git -c advice.detachedHead=false clone -q "$CACHE/package/llama/gitRelease.bundle" "$SRC"
  cp "$CACHE/package/llama/llama.cpp.info.json" "$SRC/.quickfill-llama.cpp.info.json"
  rm -rf "$CACHE/package"
  echo "$VERSION" >"$STAMP"
fi

# -march=native turns on AMX where the CPU lists it (Intel Xeon, Sapphire
# Rapids on), and ggml then multiplies through AMX tiles; in the VMs seen here
# that crashed llama-server at its first evaluation (SIGSEGV in
# ggml::cpu::amx::tensor_traits::compute_forward). Explicit -mno-* flags win
# over -march=native whatever their order, so the AMX path is left out.
NO_AMX="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"

ROOT="$PWD"
. scripts/ccache_launcher.sh
cmake -S "$SRC" -B "$OUT" -G Ninja -DCMAKE_BUILD_TYPE=Release "${LAUNCHER[@]}" \
  -DBUILD_SHARED_LIBS=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON \
  -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
  -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF -DLLAMA_LLGUIDANCE=OFF \
  -DGGML_NATIVE=ON -DGGML_BLAS=OFF -DGGML_CUDA=OFF -DGGML_VULKAN=OFF -DGGML_METAL=OFF -DGGML_RPC=OFF \
  "-DCMAKE_C_FLAGS=$NO_AMX" "-DCMAKE_CXX_FLAGS=$NO_AMX" \
  -DGGML_CCACHE=OFF -Wno-dev >/dev/null
nice cmake --build "$OUT" --target llama-server llama-bench -j "$JOBS"
echo "$VERSION" >"$BUILT"
echo "build_llama_server: built $OUT/bin/llama-server"
