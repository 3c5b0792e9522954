# Sourced by the build scripts: LAUNCHER, the CMake arguments that compile
# through ccache when it is installed (none otherwise). Paths under the
# repository are hashed relative to it (CCACHE_BASEDIR) and the working
# directory is left out of the hash (CCACHE_NOHASHDIR), so that a clone in
# another folder -- CI's, a second checkout -- reuses this one's objects
# instead of compiling everything again. Expects ROOT, the repository root.
LAUNCHER=()
if command -v ccache >/dev/null 2>&1; then
  CCACHE_LAUNCH="env;CCACHE_BASEDIR=$ROOT;CCACHE_NOHASHDIR=true;ccache"
  LAUNCHER=("-DCMAKE_C_COMPILER_LAUNCHER=$CCACHE_LAUNCH" "-DCMAKE_CXX_COMPILER_LAUNCHER=$CCACHE_LAUNCH")
  if [ "${CCACHE_LAUNCH_CUDA:-0}" = "1" ]; then LAUNCHER+=("-DCMAKE_CUDA_COMPILER_LAUNCHER=$CCACHE_LAUNCH"); fi
fi
