#!/bin/sh
# Builds the .deb with cpack, unpacks it into a scratch root and runs the
# packaged quickfill from there (registered with CTest in CMakeLists.txt).
# Usage: run_package_test.sh BUILD_DIR WORK_DIR
# Exit status: 0 pass, 1 fail.
set -u
build=$1; work=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work/out" "$work/root" "$work/home" || fail "cannot create $work"
command -v dpkg-deb >/dev/null 2>&1 || fail "dpkg-deb is not installed"

echo "== cpack (DEB) from $build"
cpack --config "$build/CPackConfig.cmake" -B "$work/out" || fail "cpack failed"
set -- "$work"/out/quickfill_*.deb
[ -f "$1" ] || fail "cpack made no quickfill_*.deb in $work/out"
deb=$1
echo "== $deb"
dpkg-deb --info "$deb" || fail "dpkg-deb --info failed"
dpkg-deb --contents "$deb" || fail "dpkg-deb --contents failed"
dpkg-deb --field "$deb" Package | grep -qx quickfill || fail "the package is not named quickfill"
dpkg-deb -x "$deb" "$work/root" || fail "dpkg-deb -x failed"

root=$work/root
for f in usr/bin/quickfill \
         usr/share/quickfill/models/quickfill-tiny-code.gguf \
         usr/share/quickfill/examples/sample.py \
         usr/share/man/man1/quickfill.1.gz \
         usr/lib/systemd/user/quickfill.service \
         usr/share/quickfill/editors/nvim/lua/quickfill/init.lua \
         usr/share/quickfill/editors/emacs/quickfill.el; do
  [ -f "$root/$f" ] || fail "/$f is not in the package"
done
set -- "$root"/usr/share/quickfill/editors/vscode/quickfill-vscode-*.vsix
if [ -f "$1" ]; then
  echo "vsix: /${1#"$root"/}"
elif grep -q '^QF_NODE:FILEPATH=.*-NOTFOUND' "$build/CMakeCache.txt" || [ ! -d "$(dirname "$0")/../../editors/vscode/node_modules/@vscode/vsce" ]; then
  echo "note: no .vsix in the package (node or the extension's npm modules are missing at configure time)"
else
  fail "no .vsix in /usr/share/quickfill/editors/vscode"
fi
[ -x "$root/usr/bin/quickfill" ] || fail "/usr/bin/quickfill is not executable"

# The man page is the binary's --help.
man=$(gzip -dc "$root/usr/share/man/man1/quickfill.1.gz") || fail "the man page is not gzip"
echo "$man" | grep -q '^\.TH QUICKFILL 1' || fail "the man page has no .TH header"
echo "$man" | grep -q 'quickfill demo \[--model PATH\]' || fail "the man page lacks the usage of --help"
grep -q '^ExecStart=/usr/bin/quickfill daemon' "$root/usr/lib/systemd/user/quickfill.service" ||
  fail "the systemd unit does not start /usr/bin/quickfill daemon"

# The packaged binary, its model and samples, away from the user's daemon and config.
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" XDG_CACHE_HOME="$work/home/.cache"
export XDG_DATA_HOME="$work/home/.local/share" QUICKFILL_NO_DAEMON=1
export QUICKFILL_SOCKET_DIR="$work/sock"
unset XDG_RUNTIME_DIR
echo "== $root/usr/bin/quickfill demo"
"$root/usr/bin/quickfill" demo --chars 30 --interval-ms 10 >"$work/demo.txt" 2>&1
rc=$?
cat "$work/demo.txt"
[ "$rc" -eq 0 ] || fail "quickfill demo exited with $rc"
grep -qF "($root/usr/share/quickfill/models/quickfill-tiny-code.gguf)" "$work/demo.txt" ||
  fail "the demo did not load the packaged model $root/usr/share/quickfill/models/quickfill-tiny-code.gguf"
grep -qF "of $root/usr/share/quickfill/examples/sample.py" "$work/demo.txt" ||
  fail "the demo did not type the packaged sample"
grep -q 'summary: 30 keystrokes' "$work/demo.txt" || fail "no demo summary"
grep -q 'server exited with code 0' "$work/demo.txt" || fail "the demo's server did not exit cleanly"

if "$root/usr/bin/quickfill" doctor --help >/dev/null 2>&1; then
  echo "== $root/usr/bin/quickfill doctor"
  "$root/usr/bin/quickfill" doctor >"$work/doctor.txt" 2>&1
  rc=$?
  cat "$work/doctor.txt"
  [ "$rc" -eq 0 ] || fail "quickfill doctor exited with $rc"
  grep -qF "$root/usr/share/quickfill/models/quickfill-tiny-code.gguf" "$work/doctor.txt" ||
    fail "quickfill doctor does not name the packaged model"
else
  echo "note: 'quickfill doctor --help' fails in this build: the doctor part of this test is skipped"
fi
echo "package ok"
