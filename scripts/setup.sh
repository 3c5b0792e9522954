#!/usr/bin/env bash
# Installs what quickfill needs on a fresh Debian 12 (bookworm) machine and
# builds the product in ./build (Release, CUDA where nvcc is found): the
# quickfill binary (and its CUDA module), its man page, and the VS Code
# extension's .vsix; then `./build/server/quickfill demo` runs. Safe to run
# again: installed packages are skipped and the build is incremental.
#
# Nothing here is for the tests only: `ctest --test-dir build` builds the test
# and benchmark executables on its first run and installs the tools the tests
# drive (scripts/setup-tests.sh, run by the test setup.test_tools; nginx,
# Chromium, editors, llama-server, code-server). The sanitizer builds' clang
# comes from scripts/sanitize.sh.
#
# This script is the one place that installs the product's system or npm
# packages. To add a dependency, add one line to the matching list below (apt)
# or one step to "Extra steps" (npm, generated files, ...); a test-only one goes
# to scripts/setup-tests.sh.
#
# Warnings in the project's own code are errors here (-DQUICKFILL_WERROR=ON,
# cmake/quickfill_flags.cmake): this is CI's build, with Debian 12's GCC 12.
#
# Environment:
#   QUICKFILL_JOBS        parallel build jobs (default: nproc)
#   QUICKFILL_CMAKE_ARGS  extra CMake arguments (e.g. -DQUICKFILL_CUDA=OFF;
#                         -DQUICKFILL_WERROR=OFF keeps warnings warnings)
#   QUICKFILL_BUILD_DIR   build folder (default: build)
#   QUICKFILL_SKIP_APT=1  do not touch system packages (already provisioned)
#   QUICKFILL_SKIP_VSCODE_REAL=1  configure -DQUICKFILL_VSCODE_REAL=OFF: the tests
#                         then skip editors.vscode-real and its 4-11 min npm step
#                         (scripts/setup-tests.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

# ---------------------------------------------------------------- packages --
# Toolchain.
APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config git ccache
)
# Libraries (Boost.JSON needs Boost >= 1.75: bookworm's default libboost-dev is 1.74).
# GoogleTest: the build is configured with its tests (find_package at configure time).
APT_PACKAGES+=(
  libboost1.81-dev libboost-json1.81-dev libspdlog-dev
  libgtest-dev libgmock-dev
)
# HTTPS for `quickfill model pull` (server/net/).
APT_PACKAGES+=(libssl-dev)
# Node: the VS Code extension (compiled and packaged into a .vsix) and the
# tree-sitter grammar sources come from npm.
APT_PACKAGES+=(nodejs npm)

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
# npm modules of the VS Code extension: its compiler and vsce, which packages
# the .vsix (pinned in its package-lock.json; its tests use them too).
if [ -f editors/vscode/package-lock.json ] && command -v npm >/dev/null 2>&1; then
  if [ ! -d editors/vscode/node_modules ] || [ editors/vscode/package-lock.json -nt editors/vscode/node_modules ]; then
    echo "setup: npm ci in editors/vscode"
    (cd editors/vscode && npm ci --no-audit --no-fund --loglevel=error)
  fi
fi

VSCODE_REAL_CMAKE=(-DQUICKFILL_VSCODE_REAL=ON)
if [ "${QUICKFILL_SKIP_VSCODE_REAL:-0}" = "1" ]; then
  VSCODE_REAL_CMAKE=(-DQUICKFILL_VSCODE_REAL=OFF)
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
ROOT="$PWD"
CCACHE_LAUNCH_CUDA=1
. scripts/ccache_launcher.sh
# shellcheck disable=SC2086
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DQUICKFILL_WERROR=ON "${LAUNCHER[@]}" "${VSCODE_REAL_CMAKE[@]}" \
  ${QUICKFILL_CMAKE_ARGS:-}
# The product only (target qf_product: quickfill, the CUDA module, the man page,
# the .vsix); the tests' executables are built by the first ctest run.
cmake --build "$BUILD_DIR" --target qf_product -j "$JOBS"
echo "setup: built $BUILD_DIR/server/quickfill"
echo "setup: try ./$BUILD_DIR/server/quickfill demo; ctest --test-dir $BUILD_DIR builds and prepares what the tests need on its first run"
