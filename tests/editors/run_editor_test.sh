#!/bin/sh
# Runs one editor test against the real quickfill binary (registered with CTest
# in CMakeLists.txt). Usage:
#   run_editor_test.sh KIND SOURCE_DIR QUICKFILL_BIN WORK_DIR [MODEL_CANDIDATE...]
# KIND: vscode | nvim | emacs. The model is the first of: $QUICKFILL_TEST_MODEL,
# then each MODEL_CANDIDATE that exists. Exit status: 0 pass, 1 fail, 77 skip
# (editor, eglot, node modules or model missing; the message says which).
set -u
kind=$1; src=$2; bin=$3; work=$4
shift 4

model=""
if [ -n "${QUICKFILL_TEST_MODEL:-}" ]; then
  if [ -f "$QUICKFILL_TEST_MODEL" ]; then model=$QUICKFILL_TEST_MODEL
  else echo "QUICKFILL_TEST_MODEL=$QUICKFILL_TEST_MODEL does not exist" >&2; exit 1; fi
fi
if [ -z "$model" ]; then
  for m in "$@"; do
    if [ -f "$m" ]; then model=$m; break; fi
  done
fi
if [ ! -x "$bin" ]; then echo "quickfill binary not found: $bin" >&2; exit 1; fi
echo "binary: $bin"
echo "model:  ${model:-<none found; tried: \$QUICKFILL_TEST_MODEL $*>}"

mkdir -p "$work"
export QUICKFILL_BIN="$bin"
export QUICKFILL_MODEL="$model"
no_model_skip() {
  echo "SKIP: no model file found (set QUICKFILL_TEST_MODEL, or commit models/quickfill-tiny-code.gguf);"
  echo "      the checks that need no model passed, completion items were not checked"
  exit 77
}

case "$kind" in
  vscode)
    command -v node >/dev/null 2>&1 || { echo "SKIP: node is not installed (apt install nodejs npm)"; exit 77; }
    ext="$src/editors/vscode"
    if [ ! -f "$ext/node_modules/vscode-jsonrpc/node.js" ] || [ ! -f "$ext/node_modules/typescript/bin/tsc" ]; then
      echo "SKIP: the extension's npm modules are missing (run: cd editors/vscode && npm ci)"
      exit 77
    fi
    out="$work/vscode-out"
    rm -rf "$out"
    node "$ext/node_modules/typescript/bin/tsc" -p "$ext" --outDir "$out" || exit 1
    # The compiled files live outside the extension folder: resolve its modules.
    export NODE_PATH="$ext/node_modules"
    node --test "$out/test/config.test.js" "$out/test/inline.test.js" "$out/test/status.test.js" \
      "$out/test/server.test.js" || exit 1
    [ -n "$model" ] || no_model_skip
    exit 0
    ;;
  nvim)
    command -v nvim >/dev/null 2>&1 || { echo "SKIP: nvim is not installed (apt install neovim)"; exit 77; }
    nvim --version | head -n 1
    # Keep Neovim's state and LSP log inside the build tree.
    export XDG_STATE_HOME="$work/nvim-state" XDG_CACHE_HOME="$work/nvim-cache" XDG_DATA_HOME="$work/nvim-data"
    export XDG_CONFIG_HOME="$work/nvim-config"
    nvim --headless -u NONE -i NONE --cmd "set rtp^=$src/editors/nvim" \
      -c "luafile $src/tests/editors/nvim_test.lua" </dev/null
    exit $?
    ;;
  emacs)
    command -v emacs >/dev/null 2>&1 || { echo "SKIP: emacs is not installed (apt install emacs-nox elpa-eglot)"; exit 77; }
    emacs --version | head -n 1
    HOME="$work/emacs-home" emacs --batch -L "$src/editors/emacs" -l "$src/tests/editors/emacs_test.el" </dev/null
    exit $?
    ;;
  *)
    echo "unknown editor test: $kind" >&2
    exit 2
    ;;
esac
