#!/bin/bash
# llama.vim (ggml-org's Vim plugin, unchanged, from ../shared/vendor/llama.vim)
# in Debian's Vim 9 against the real `quickfill serve --http`, driven under
# tmux as a person would: type into a new file one key at a time, wait until
# the plugin's ghost text shows a suggestion, press Tab to accept it, save,
# and compare the file with the screen the suggestion was shown on. Then
# checks the server counted the plugin's requests as the http source kind.
# Usage: llama_vim_test.sh SOURCE_DIR QUICKFILL_BIN WORK_DIR [MODEL_CANDIDATE...]
# The model: $QUICKFILL_TEST_MODEL, else the first candidate that exists (the
# bundled tiny code model), else one written by `quickfill gguf synth`.
# Exit status: 0 pass, 1 fail, 77 skip (the vendored plugin, vim, tmux or
# curl missing; the message says which).
set -u
src=$1; bin=$2; work=$3
shift 3
model=${QUICKFILL_TEST_MODEL:-}
if [ -z "$model" ]; then
  for m in "$@"; do if [ -f "$m" ]; then model=$m; break; fi; done
fi
vendor=${QUICKFILL_VENDOR:-$src/../shared/vendor}
plugin="$vendor/llama.vim"
[ -f "$plugin/autoload/llama.vim" ] || { echo "SKIP: llama.vim is not at $plugin (../shared/vendor; QUICKFILL_VENDOR names another folder)"; exit 77; }
command -v vim >/dev/null 2>&1 || { echo "SKIP: vim is not installed (apt install vim)"; exit 77; }
command -v tmux >/dev/null 2>&1 || { echo "SKIP: tmux is not installed (apt install tmux)"; exit 77; }
command -v curl >/dev/null 2>&1 || { echo "SKIP: curl is not installed (llama.vim runs it)"; exit 77; }
vim --version | head -n 1

mkdir -p "$work"
if [ -z "$model" ]; then
  model="$work/synth-tiny.gguf"
  [ -f "$model" ] || "$bin" gguf synth --preset tiny --ctx 2048 -o "$model" || { echo "FAIL: gguf synth"; exit 1; }
fi
echo "model: $model"
rm -f "$work"/*.py "$work"/screen-*.txt
log="$work/serve.log"
: > "$log"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" serve --http "127.0.0.1:$port" --config none --model "$model" >>"$log" 2>&1 &
serve_pid=$!
session="qf_llama_vim_$$"
sock="$work/tmux.sock"
cleanup() {
  tmux -S "$sock" kill-server 2>/dev/null
  kill "$serve_pid" 2>/dev/null
  wait "$serve_pid" 2>/dev/null
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  echo "--- screen:"; tmux -S "$sock" capture-pane -p -t "$session" 2>/dev/null
  echo "--- server log:"; tail -n 30 "$log"
  exit 1
}
for _ in $(seq 1 300); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health")" = 200 ] && break
  kill -0 "$serve_pid" 2>/dev/null || fail "quickfill serve exited"
  sleep 0.1
done
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health")" = 200 ] || fail "quickfill serve is not healthy"

# The plugin with its defaults, the endpoint ours; no info line next to the suggestion.
cat > "$work/vimrc" <<VIMRC
set nocompatible
set rtp^=$plugin
set noautoindent nosmartindent nocindent indentexpr= shortmess+=I noswapfile
filetype off
syntax off
let g:llama_config = {'endpoint_fim': 'http://127.0.0.1:$port/infill', 'show_info': 0}
VIMRC
file="$work/sample.py"
tmux -S "$sock" new-session -d -s "$session" -x 100 -y 30 "vim -N -u $work/vimrc -i NONE $file" || fail "tmux could not start vim"
screen() { tmux -S "$sock" capture-pane -p -t "$session"; }
for _ in $(seq 1 100); do screen | grep -q "sample.py" && break; sleep 0.1; done
# Type, one key at a time (each keystroke is a request; llama.vim stops the
# previous one's curl, which cancels it on the server).
typed='def add_numbers(a, b):
    total = a + b
    return '
tmux -S "$sock" send-keys -t "$session" i
sleep 0.3
while IFS= read -r -n1 ch; do
  if [ -z "$ch" ]; then tmux -S "$sock" send-keys -t "$session" Enter
  else tmux -S "$sock" send-keys -t "$session" -l "$ch"; fi
  sleep 0.05
done < <(printf '%s' "$typed")
# The ghost text: the screen's third line runs on past what was typed.
shown=""
for _ in $(seq 1 200); do
  s=$(screen)
  line3=$(printf '%s\n' "$s" | sed -n 3p)
  if [ "${line3%% }" != "    return" ] && [ "${line3#    return }" != "$line3" ] && [ -n "${line3#    return }" ]; then
    shown=$s
    break
  fi
  sleep 0.1
done
[ -n "$shown" ] || fail "no suggestion appeared after typing"
printf '%s\n' "$shown" > "$work/screen-suggestion.txt"
echo "suggestion shown:"; printf '%s\n' "$shown" | sed -n '1,8p'
tmux -S "$sock" send-keys -t "$session" Tab
sleep 0.5
tmux -S "$sock" send-keys -t "$session" Escape
sleep 0.2
tmux -S "$sock" send-keys -t "$session" ':w' Enter
for _ in $(seq 1 50); do [ -f "$file" ] && break; sleep 0.1; done
tmux -S "$sock" send-keys -t "$session" ':qa!' Enter
[ -f "$file" ] || fail "vim did not write the file"

# The file is what the screen showed with the suggestion: the text lines
# (not the '~' filler and the status line), trailing blanks aside.
expected=$(printf '%s\n' "$shown" | sed -e 's/[[:space:]]*$//' | awk '/^~$/{exit} {print}' | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}')
actual=$(sed -e 's/[[:space:]]*$//' "$file")
# The screen ends with the status line when the text fills it; the text here is short.
if [ "$actual" != "$expected" ]; then
  echo "--- expected (the screen with the suggestion):"; printf '%s\n' "$expected"
  echo "--- actual (the saved file):"; printf '%s\n' "$actual"
  fail "the saved file is not the text the suggestion showed"
fi
case "$actual" in
  "def add_numbers(a, b):
    total = a + b
    return "?*) ;;
  *) fail "the file does not start with the typed text followed by the accepted suggestion" ;;
esac
echo "accepted: $(sed -n 3p "$file")"

stats=$(curl -s "http://127.0.0.1:$port/quickfill/stats")
answered=$(printf '%s' "$stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["histograms"]["bySource"]["http"]["automatic"]["answered"])')
requests=$(printf '%s' "$stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["histograms"]["bySource"]["http"]["automatic"]["requests"])')
echo "server: $requests http requests, $answered answered"
[ "$answered" -ge 1 ] || fail "the server answered none of the plugin's requests"
echo "PASS"
