#!/usr/bin/env bash
# Installs everything quickfill needs on a fresh Debian 12 (bookworm) machine
# and builds it in ./build. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libboost1.81-dev libboost-json1.81-dev libspdlog-dev libtree-sitter-dev
  libgtest-dev libgmock-dev
  python3-numpy
  neovim emacs-nox elpa-eglot
  nodejs npm
)
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

JOBS="${QUICKFILL_JOBS:-$(nproc)}"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release ${QUICKFILL_CMAKE_ARGS:-}
cmake --build build -j "$JOBS"
