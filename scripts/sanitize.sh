#!/usr/bin/env bash
# Sanitizer builds and runs (docs/testing.md), each in its own build folder,
# clang, CPU only, -O1, no benchmarks, warnings in the project's code as
# errors (the presets' QUICKFILL_WERROR), through ccache:
#   asan  build-asan: the whole suite under AddressSanitizer + UBSan, and each
#         libFuzzer target of tests/fuzz for QUICKFILL_FUZZ_SECONDS (default 60)
#   tsan  build-tsan: the server, scheduler, daemon, step loop and LSP
#         transcript tests under ThreadSanitizer
# Usage: scripts/sanitize.sh [asan] [tsan]   (both when none is given)
# Tests left out, and why:
#   editors.*  drive Neovim, Emacs and Node against the server; they test the
#              editor clients, take minutes each even unsanitized, and the
#              server paths they reach are covered by the LSP transcripts.
# clang 14, its sanitizer and fuzzer runtimes and llvm-symbolizer are installed
# here when missing (scripts/setup.sh installs the product's toolchain only);
# QUICKFILL_SKIP_APT=1 leaves system packages alone. The tools the tests drive
# come from the suite's own first test, setup.test_tools (scripts/setup-tests.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${QUICKFILL_SKIP_APT:-0}" != "1" ]; then
  missing=()
  for p in clang-14 libclang-rt-14-dev llvm-14; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    echo "sanitize: installing ${missing[*]}"
    start=$(date +%s)
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    echo "sanitize: installed ${missing[*]} ($(( $(date +%s) - start )) s)"
  fi
fi
JOBS="${QUICKFILL_JOBS:-$(nproc)}"
stages=("$@")
if [ "${#stages[@]}" -eq 0 ]; then stages=(asan tsan); fi
ROOT="$PWD"
. scripts/ccache_launcher.sh
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/tsan.supp}"

for stage in "${stages[@]}"; do
  case "$stage" in
    asan)
      echo "sanitize: ASan+UBSan build (build-asan)"
      cmake --preset asan "${LAUNCHER[@]}" -DQUICKFILL_FUZZ_SECONDS="${QUICKFILL_FUZZ_SECONDS:-60}"
      cmake --build build-asan -j "$JOBS"
      ctest --test-dir build-asan --output-on-failure -j "$JOBS" -LE '^editors$'
      ;;
    tsan)
      echo "sanitize: TSan build (build-tsan)"
      cmake --preset tsan "${LAUNCHER[@]}"
      cmake --build build-tsan -j "$JOBS" --target server_tests server_routing_tests quickfill quickfill_test_server \
        lsp_transcript_runner server_daemon_tests quickfill_test_daemon server_completion_engine_tests
      ctest --test-dir build-tsan --output-on-failure -j "$JOBS" -L '^(server|transcript|daemon)$'
      ctest --test-dir build-tsan --output-on-failure -j "$JOBS" -R '^step_loop\.'
      ;;
    *)
      echo "sanitize: unknown stage '$stage' (asan, tsan)" >&2
      exit 2
      ;;
  esac
done
